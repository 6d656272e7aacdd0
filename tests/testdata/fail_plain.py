# A rank without @record: rank FAIL_RANK prints 20 lines, then dies of an
# uncaught exception (its traceback on stderr); the others wait.
import os
import time

if os.environ["RANK"] == os.environ["FAIL_RANK"]:
    for step in range(20):
        print(f"step {step}", flush=True)
    1 / 0
while True:
    time.sleep(0.2)
