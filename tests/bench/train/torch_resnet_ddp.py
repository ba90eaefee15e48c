"""PyTorch side of the data-parallel benchmark (msl_resnet_dp.msl is MSL's):
the ResNet of torch_resnet.py trained by DistributedDataParallel over gloo
(PyTorch's CPU backend), N processes of one thread, each on BATCH/N.
DDP buckets gradients (25 MB) and starts each bucket's all-reduce from the
backward pass, so its step overlaps communication with computation.

Usage: /usr/bin/python3 torch_resnet_ddp.py resnet18|resnet50 BATCH [steps] [processes] [channels_last]"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_resnet import Basic, Bottleneck, ResNet  # noqa: E402


def run(rank, size, arch, batch, steps, port, channels_last):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=size)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if arch == "resnet18":
        net = ResNet(Basic, [2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2])
    else:
        net = ResNet(Bottleneck, [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048], [1, 2, 2, 2])
    per_rank = batch // size
    x = torch.randn(per_rank, 3, 32, 32)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    ddp = nn.parallel.DistributedDataParallel(net)
    y = torch.randint(0, 10, (per_rank,))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    times = []
    for i in range(steps + 2):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    if rank == 0:
        print("torch DDP (gloo) %s batch %d as %d processes x %d%s: %.1f ms per training step (median of %d)" %
              (arch, batch, size, per_rank, " channels_last" if channels_last else "",
               statistics.median(times) * 1e3, steps))
    dist.destroy_process_group()


def main():
    arch, batch = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    channels_last = len(sys.argv) > 5 and sys.argv[5] == "channels_last"
    mp.spawn(run, args=(size, arch, batch, steps, 29500 + os.getpid() % 1000, channels_last), nprocs=size)


if __name__ == "__main__":
    main()
