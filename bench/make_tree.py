#!/usr/bin/env python3
"""Writes the benchmarks' source tree: COUNT files, exactly BYTES bytes of
incompressible data, sizes log-normal (most a few KiB, a few over 1 MiB), in
41 folders two deep, every 50th file executable. Seeded, so every run syncs
the same tree. With COUNT 1, one file of BYTES.

    make_tree.py ROOT [COUNT [BYTES]]      (default: 2000 files, 40 MiB)
"""
import os
import random
import sys

root = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
total = int(sys.argv[3]) if len(sys.argv) > 3 else 40 << 20
rng = random.Random(20240601)
weights = [rng.lognormvariate(0, 1.6) for _ in range(count)]
sizes = [max(1, int(w * total / sum(weights))) for w in weights]
sizes[0] += total - sum(sizes)
dirs = [""] + [f"pkg{a}" for a in range(8)] + [f"pkg{a}/sub{b}" for a in range(8) for b in range(4)]
for i, size in enumerate(sizes):
    d = os.path.join(root, dirs[i % len(dirs)])
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"f{i:04d}.dat")
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = min(left, 1 << 24)
            f.write(rng.randbytes(chunk))
            left -= chunk
    os.chmod(path, 0o755 if i % 50 == 0 else 0o644)
