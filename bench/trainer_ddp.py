#!/usr/bin/python3
"""Python PyTorch DDP baseline for bench/trainer_bench.sh.

The same model (torchvision-style ResNet-18/50, written out here because
Debian has no python3-torchvision), synthetic data, batch size, optimizer and
Gloo process group as //trainer:train --dataset=synthetic. Ranks come from
the torchrun environment; rank 0 prints one JSON line with the throughput of
the second epoch (the first warms up).
"""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, cin, planes, stride, bottleneck):
        super().__init__()
        cout = planes * 4 if bottleneck else planes
        shapes = ([(cin, planes, 1, 1), (planes, planes, 3, stride), (planes, cout, 1, 1)]
                  if bottleneck else [(cin, planes, 3, stride), (planes, planes, 3, 1)])
        self.convs = nn.ModuleList(
            nn.Conv2d(i, o, k, s, k // 2, bias=False) for i, o, k, s in shapes)
        self.norms = nn.ModuleList(nn.BatchNorm2d(o) for _, o, _, _ in shapes)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = x
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            y = norm(conv(y))
            if i + 1 < len(self.convs):
                y = F.relu(y)
        return F.relu(y + (self.downsample(x) if self.downsample else x))


class ResNet(nn.Module):
    def __init__(self, blocks, bottleneck, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        layers, cin = [], 64
        for stage, planes in enumerate([64, 128, 256, 512]):
            for b in range(blocks[stage]):
                layers.append(Block(cin, planes, 2 if b == 0 and stage > 0 else 1, bottleneck))
                cin = planes * 4 if bottleneck else planes
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18", choices=["resnet18", "resnet50"])
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.03)
    args = parser.parse_args()

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    model = ResNet([2, 2, 2, 2], False) if args.arch == "resnet18" else ResNet([3, 4, 6, 3], True)
    if world_size > 1:
        dist.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * world_size, momentum=0.9)
    generator = torch.Generator().manual_seed(rank)
    pool = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size, generator=generator),
             torch.randint(10, (args.batch_size,), generator=generator)) for _ in range(4)]

    for epoch in range(2):
        start = time.perf_counter()
        for step in range(args.steps_per_epoch):
            images, labels = pool[(epoch * args.steps_per_epoch + step) % len(pool)]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
        seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"event": "epoch", "epoch": 1, "world_size": world_size,
                          "loss": loss.item(),
                          "samples_per_sec": args.steps_per_epoch * args.batch_size * world_size / seconds},
                         separators=(",", ":")),
              flush=True)
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
