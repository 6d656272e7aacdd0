"""A small DDP script as users write one for torchrun: the process group
from the environment, one training step of a DistributedDataParallel model,
and a line saying which Python ran it."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.full((8, 4), float(rank))).sum()
    loss.backward()
    optimizer.step()
    # Every rank holds the same weights after the averaged step.
    weight = model.module.weight.detach().clone()
    gathered = [torch.zeros_like(weight) for _ in range(world)]
    dist.all_gather(gathered, weight)
    same = all(torch.equal(weight, other) for other in gathered)
    print(f"rank {rank} of {world} local {os.environ['LOCAL_RANK']} "
          f"prefix {sys.prefix} same {same}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
