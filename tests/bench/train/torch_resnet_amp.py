"""PyTorch side of the mixed-precision ResNet benchmark (msl_resnet_amp.msl
is MSL's): the ResNet of torch_resnet.py, one training step in float32 and
one under torch.autocast("cpu", dtype=torch.bfloat16), both timed in the
same run (median of N after two warm-up steps).

Usage: /usr/bin/python3 torch_resnet_amp.py resnet18|resnet50 BATCH [steps] [threads]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_resnet import Basic, Bottleneck, ResNet, time_steps  # noqa: E402


def build(arch):
    torch.manual_seed(0)
    if arch == "resnet18":
        return ResNet(Basic, [2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2])
    return ResNet(Bottleneck, [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048], [1, 2, 2, 2])


def main():
    arch, batch = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 2)
    x = torch.randn(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))
    f32 = time_steps(build(arch), x, y, steps, False)
    bf16 = time_steps(build(arch), x, y, steps, True)
    print("torch %s batch %d float32: %.1f ms per training step (median of %d)" % (arch, batch, f32 * 1e3, steps))
    print("torch %s batch %d autocast bfloat16: %.1f ms per training step (median of %d)" %
          (arch, batch, bf16 * 1e3, steps))


if __name__ == "__main__":
    main()
