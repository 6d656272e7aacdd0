# A job that hangs: rank HANG_RANK blocks forever in a function of its own
# while every other rank waits for it in a barrier (Gloo). With
# $HANG_ONCE_FILE set, only the first generation hangs (the file marks it):
# the next one passes the barrier and ends.
import os
import time

import torch.distributed as dist


def block_forever():
    while True:
        time.sleep(1000)


def main():
    dist.init_process_group("gloo")
    once = os.environ.get("HANG_ONCE_FILE", "")
    hang = os.environ["RANK"] == os.environ["HANG_RANK"]
    if once and os.path.exists(once):
        hang = False
    print(f"rank {os.environ['RANK']} ready", flush=True)
    if hang:
        if once:
            open(once, "w").close()
        block_forever()
    dist.barrier()
    print(f"rank {os.environ['RANK']} passed the barrier", flush=True)


if __name__ == "__main__":
    main()
