# Seed 002's torch.distributed.launch example (shared/seeds/002_*.txt) made
# strict: the script must be given `--local_rank`, as scripts written for the
# old torch.distributed.launch are, and it must match LOCAL_RANK.
import os
import argparse

import torch
import torch.distributed as dist

# Environment variables set by torch.distributed.launch
LOCAL_RANK = int(os.environ['LOCAL_RANK'])
WORLD_SIZE = int(os.environ['WORLD_SIZE'])
WORLD_RANK = int(os.environ['RANK'])

def run(backend):
    tensor = torch.zeros(1)
    if WORLD_RANK == 0:
        for rank_recv in range(1, WORLD_SIZE):
            dist.send(tensor=tensor, dst=rank_recv)
            print('Rank {} sent data to Rank {}\n'.format(0, rank_recv))
    else:
        dist.recv(tensor=tensor, src=0)
        print('Rank {} has received data from rank {}\n'.format(WORLD_RANK, 0))

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, required=True,
                        help="Local rank. Passed by the torch.distributed.launch utility.")
    parser.add_argument("--backend", type=str, default="nccl", choices=['nccl', 'gloo'])
    args = parser.parse_args()
    assert args.local_rank == LOCAL_RANK, (args.local_rank, LOCAL_RANK)
    print('Rank {} got --local_rank={}'.format(WORLD_RANK, args.local_rank))
    dist.init_process_group(args.backend, rank=WORLD_RANK, world_size=WORLD_SIZE)
    run(args.backend)
