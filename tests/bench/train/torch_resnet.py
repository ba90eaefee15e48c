"""PyTorch side of the ResNet training-step benchmark: the same ResNet-18/50
as examples/resnet.msl (model-zoo layout: 7x7/2 stem + max pool, basic or
bottleneck blocks, global mean, dense), 32x32 inputs, Momentum 0.9, one
training step timed (median of N after warm-up).

Usage: /usr/bin/python3 torch_resnet.py resnet18|resnet50 BATCH [steps] [threads] [channels_last]"""
import statistics
import sys
import time

import torch
import torch.nn as nn


class Basic(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout, eps=1e-4, momentum=0.1)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout, eps=1e-4, momentum=0.1)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout, eps=1e-4))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, cout, stride):
        super().__init__()
        ch = cout // 4
        self.c1 = nn.Conv2d(cin, ch, 1, bias=False)
        self.b1 = nn.BatchNorm2d(ch, eps=1e-4)
        self.c2 = nn.Conv2d(ch, ch, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(ch, eps=1e-4)
        self.c3 = nn.Conv2d(ch, cout, 1, bias=False)
        self.b3 = nn.BatchNorm2d(cout, eps=1e-4)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout, eps=1e-4))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self, block, nums, cins, couts, strides, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64, eps=1e-4), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers = []
        for n, ci, co, s in zip(nums, cins, couts, strides):
            blocks = [block(ci, co, s)] + [block(co, co, 1) for _ in range(n - 1)]
            layers.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(couts[-1], classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(x.mean((2, 3)))


def time_steps(net, x, y, steps, autocast=False):
    """Median seconds of one training step (SGD momentum 0.9, weight decay
    1e-4, label smoothing 0.1) after two warm-up steps; autocast runs the
    forward pass under torch.autocast("cpu", dtype=torch.bfloat16)."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    times = []
    for i in range(steps + 2):
        t0 = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    arch, batch = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    channels_last = len(sys.argv) > 5 and sys.argv[5] == "channels_last"
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if arch == "resnet18":
        net = ResNet(Basic, [2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2])
    else:
        net = ResNet(Bottleneck, [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048], [1, 2, 2, 2])
    x = torch.randn(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    print("torch %s batch %d%s: %.1f ms per training step (median of %d)" %
          (arch, batch, " channels_last" if channels_last else "", time_steps(net, x, y, steps) * 1e3, steps))


if __name__ == "__main__":
    main()
