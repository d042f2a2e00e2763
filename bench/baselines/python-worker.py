"""The Python SDK's worker under benchmark (bench/scenarios/own-workers.ts): a no-op task for TYPE, CONCURRENCY
slots. With PRINT_STARTS=1 each task prints `START <job id> <epoch ms>` as it begins, for the lone-job latency."""

import os
import sys
import time

from conveyor import Worker

worker = Worker(os.environ["CONVEYOR_URL"], api_key=os.environ["CONVEYOR_WORKER_KEY"], concurrency=int(os.environ.get("CONCURRENCY", "50")))
print_starts = os.environ.get("PRINT_STARTS") == "1"


@worker.task(os.environ.get("TYPE", "bench_py_noop"))
def noop(payload, ctx):
    if print_starts:
        sys.stdout.write(f"START {ctx.job_id} {time.time() * 1000:.3f}\n")
        sys.stdout.flush()
    return None


print("READY", flush=True)
worker.run()
