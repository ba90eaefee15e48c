"""PyTorch side of the training benchmark: LeNet-5 or an MLP (784-256-10) on
Fashion-MNIST, batch 64, SGD momentum 0.9, lr 0.01, PyTorch's default
initialization (kaiming-uniform(a=sqrt 5) weights, uniform biases), which is
MSL's (and MindSpore 2.x's) default too. Prints seconds
per epoch and test accuracy per epoch.

Usage: /usr/bin/python3 torch_fashion.py lenet|mlp EPOCHS [threads]
Run with OPENBLAS_NUM_THREADS=1 for PyTorch's best small-model setting."""
import gzip
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

ROOT = "/usr/share/datasets/fashion-mnist/"


def idx(name):
    with gzip.open(ROOT + name, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=0, bias=False)  # MSL's Conv2d: has_bias=False
        self.conv2 = nn.Conv2d(6, 16, 5, padding=0, bias=False)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.pool = nn.MaxPool2d(2, 2)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(torch.flatten(x, 1))))


def main():
    arch, epochs = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    xtr = torch.from_numpy(idx("train-images-idx3-ubyte.gz").astype(np.float32) / 255.0).unsqueeze(1)
    ytr = torch.from_numpy(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    xte = torch.from_numpy(idx("t10k-images-idx3-ubyte.gz").astype(np.float32) / 255.0).unsqueeze(1)
    yte = torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
    # LeNet takes 32x32 as in MindSpore's LeNet-5 (Resize); pad 2 on each side.
    if arch == "lenet":
        xtr = nn.functional.pad(xtr, (2, 2, 2, 2))
        xte = nn.functional.pad(xte, (2, 2, 2, 2))
        model = LeNet5()
        model.fc1 = nn.Linear(16 * 5 * 5, 120)
    else:
        model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    n = xtr.shape[0]
    for epoch in range(epochs):
        perm = torch.randperm(n)
        model.train()
        t0 = time.perf_counter()
        for i in range(0, n - 63, 64):
            idxs = perm[i:i + 64]
            opt.zero_grad()
            loss = loss_fn(model(xtr[idxs]), ytr[idxs])
            loss.backward()
            opt.step()
        t1 = time.perf_counter()
        model.eval()
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print("torch %s epoch %d: %.3f s, test accuracy %.4f" % (arch, epoch + 1, t1 - t0, acc))


if __name__ == "__main__":
    main()
