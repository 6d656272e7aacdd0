# A rank the kernel's OOM killer ends: rank OOM_RANK touches memory 16 MiB
# at a time until its container's limit is reached; the others wait.
import os
import time

if os.environ["RANK"] == os.environ["OOM_RANK"]:
    held = []
    while True:
        held.append(bytearray(16 << 20))  # zero-filled: every page touched
        print(f"holding {len(held) * 16} MiB", flush=True)
while True:
    time.sleep(0.2)
