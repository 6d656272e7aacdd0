# A rank whose script is decorated with torch's @record: rank FAIL_RANK
# raises (its message holding the job's secret), the others wait to be
# stopped.
import os
import time

from torch.distributed.elastic.multiprocessing.errors import record


def load(shard):
    raise ValueError(f"bad shard {shard} with token {os.environ.get('API_TOKEN', '')}")


@record
def main():
    if os.environ["RANK"] == os.environ["FAIL_RANK"]:
        load(7)
    while True:
        time.sleep(0.2)


if __name__ == "__main__":
    main()
