#!/usr/bin/python3
"""Python PyTorch DDP baseline for bench/trainer_bench.sh.

The same models as //trainer:train (its small CNN, and torchvision-style
ResNet-18/50 written out here because Debian has no python3-torchvision), the
same data (Fashion-MNIST from the Debian package, sharded and shuffled per
epoch, or synthetic images), batch size, optimizer, learning-rate schedule and
Gloo process group. Ranks come from the torchrun environment; rank 0 prints
one JSON line per epoch with the training throughput of that epoch, as the
C++ trainer does.
"""

import argparse
import gzip
import json
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530


class SmallCnn(nn.Module):
    """trainer/models.cc's SmallCnn."""

    def __init__(self, channels, image_size, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc1 = nn.Linear(32 * (image_size // 4) ** 2, 64)
        self.fc2 = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


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


def read_idx(path):
    """An IDX file (Fashion-MNIST's format) as a uint8 tensor."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def fashion_mnist(split):
    images = read_idx(f"{FASHION_MNIST}/{split}-images-idx3-ubyte.gz")
    labels = read_idx(f"{FASHION_MNIST}/{split}-labels-idx1-ubyte.gz")
    return ((images.unsqueeze(1).float() / 255 - MEAN) / STD), labels.long()


class ShardedData:
    """Each epoch a permutation all ranks agree on, strided across ranks."""

    def __init__(self, images, labels, rank, world_size, batch_size):
        self.images, self.labels = images, labels
        self.rank, self.world_size, self.batch_size = rank, world_size, batch_size
        self.shard_size = math.ceil(len(images) / world_size)
        self.steps_per_epoch = math.ceil(self.shard_size / batch_size)

    def epoch(self, epoch):
        order = torch.randperm(len(self.images), generator=torch.Generator().manual_seed(epoch))
        shard = order.repeat(2)[self.rank:self.shard_size * self.world_size:self.world_size]
        for step in range(self.steps_per_epoch):
            index = shard[step * self.batch_size:(step + 1) * self.batch_size]
            yield self.images.index_select(0, index), self.labels.index_select(0, index)


class SyntheticData:
    def __init__(self, rank, channels, image_size, batch_size, steps_per_epoch):
        generator = torch.Generator().manual_seed(rank)
        self.pool = [(torch.randn(batch_size, channels, image_size, image_size, generator=generator),
                      torch.randint(10, (batch_size,), generator=generator)) for _ in range(4)]
        self.steps_per_epoch = steps_per_epoch

    def epoch(self, epoch):
        for step in range(self.steps_per_epoch):
            yield self.pool[(epoch * self.steps_per_epoch + step) % len(self.pool)]


def learning_rate(base, world_size, step, total, warmup):
    """trainer/lr_schedule.cc: linear warm-up to base * world_size, then cosine."""
    peak = base * world_size
    if step < warmup:
        return base + (peak - base) * step / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * 0.5 * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def evaluate(model, images, labels, rank, world_size):
    model.eval()
    mine = torch.arange(rank, len(images), world_size)
    correct = sum(int((model(images[c]).argmax(1) == labels[c]).sum())
                  for c in mine.split(1000))
    model.train()
    counts = torch.tensor([correct, len(mine)], dtype=torch.float64)
    if world_size > 1:
        dist.all_reduce(counts)
    return float(counts[0] / counts[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18", choices=["cnn", "resnet18", "resnet50"])
    parser.add_argument("--dataset", default="synthetic", choices=["synthetic", "fashion-mnist"])
    parser.add_argument("--image-size", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.03)
    args = parser.parse_args()

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    channels = 1 if args.arch == "cnn" else 3
    image_size = args.image_size or (28 if args.arch == "cnn" else 64)
    if args.arch == "cnn":
        model = SmallCnn(channels, image_size)
    else:
        model = ResNet([2, 2, 2, 2], False) if args.arch == "resnet18" else ResNet([3, 4, 6, 3], True)
    if world_size > 1:
        dist.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    test = None
    if args.dataset == "fashion-mnist":
        data = ShardedData(*fashion_mnist("train"), rank, world_size, args.batch_size)
        test = fashion_mnist("t10k")
    else:
        data = SyntheticData(rank, channels, image_size, args.batch_size, args.steps_per_epoch)
    total = data.steps_per_epoch * args.epochs
    warmup = min(100, total // 10) if world_size > 1 else 0

    step = 0
    for epoch in range(args.epochs):
        start, samples, loss_sum = time.perf_counter(), 0, 0.0
        for images, labels in data.epoch(epoch):
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(args.lr, world_size, step, total, warmup)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(images)
            samples += len(images)
            step += 1
        seconds = time.perf_counter() - start
        record = {"event": "epoch", "epoch": epoch, "world_size": world_size,
                  "loss": loss_sum / samples, "samples_per_sec": samples * world_size / seconds}
        if test is not None:
            record["test_accuracy"] = evaluate(model, *test, rank, world_size)
        if rank == 0:
            print(json.dumps(record, separators=(",", ":")), flush=True)
    if world_size > 1:
        # Every rank past its last collective, then out without tearing the
        # process group down: in Debian's PyTorch 1.13, freeing DDP's reducer
        # joins Gloo's worker threads while holding the GIL, and a worker
        # still freeing a tensor that Python owned waits for the GIL: the
        # rank hangs at exit (seen in gdb now and then, one run in ~15).
        dist.barrier()
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
