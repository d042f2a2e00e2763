"""A Python service enqueueing jobs of your own type, and following one to its end.

    CONVEYOR_URL=http://localhost:3000 CONVEYOR_API_KEY=cvk_... python examples/enqueue.py
"""

import os

from conveyor import Client

client = Client(os.environ.get("CONVEYOR_URL", "http://localhost:3000"), api_key=os.environ["CONVEYOR_API_KEY"])

# The idempotency key makes a retried request (a timeout, a deploy) create the job once.
accepted = client.enqueue("resize", {"url": "https://example.com/cat.png", "width": 400}, idempotency_key="order-1042-cat", max_retries=3)
print("enqueued", accepted["id"], accepted["status"])

job = client.wait(accepted["id"], timeout=float(os.environ.get("WAIT_SECONDS", "60")))
print("finished", job["status"], job.get("result"))
