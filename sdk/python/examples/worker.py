"""A Python worker for the "resize" type: a durable step, progress reports, and a waitpoint (an approval).

    CONVEYOR_URL=http://localhost:3000 CONVEYOR_WORKER_KEY=cvk_... python examples/worker.py

Stop it with Ctrl-C or SIGTERM: it finishes (or hands back) what it runs.
"""

import logging
import os

from conveyor import Context, Worker

logging.basicConfig(level=logging.INFO)

worker = Worker(os.environ.get("CONVEYOR_URL", "http://localhost:3000"), api_key=os.environ["CONVEYOR_WORKER_KEY"], concurrency=10)


@worker.task("resize")
def resize(payload: dict, ctx: Context) -> dict:
    # Runs once per job, whatever happens after it: a later attempt gets the stored result.
    size = ctx.step("measure", lambda: {"width": payload["width"], "height": payload["width"] * 3 // 4})
    ctx.progress(0.5, "measured")
    ctx.log(f"resizing {payload['url']} to {size['width']}x{size['height']}")
    # Ends this attempt (the slot is free) until someone completes the waitpoint, e.g. in the console or with
    # POST /waitpoints/{id}/complete {"data": {"approved": true}}; the job then runs again from the top, replaying
    # the step above, and this call answers the waitpoint's data.
    approval = ctx.wait_for("approval", timeout_seconds=3600)
    ctx.progress(1.0, "done")
    return {"size": size, "approved": approval.get("approved", False)}


if __name__ == "__main__":
    worker.run()
