"""The SDK against the real stack (conftest.py): the client, the worker (steps, progress, waitpoints, retries,
shutdown), a worker SIGKILLed mid-job, the worker key's limits, and the README's examples run as written."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conveyor import Client, Context, Forbidden, PermanentError, ValidationError, Worker, verify_webhook
from conveyor.errors import ConveyorError

from .conftest import ROOT, Stack

EXAMPLES = ROOT / "sdk" / "python" / "examples"


@pytest.fixture()
def client(stack: Stack) -> Iterator[Client]:
    with Client(stack.url, api_key=stack.api_key) as c:
        yield c


def eventually(check: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def running_worker(stack: Stack, tasks: dict[str, Callable[[Any, Context], Any]], **options: Any) -> Worker:
    worker = Worker(stack.url, api_key=stack.worker_key, poll_seconds=2, **options)
    for type_name, fn in tasks.items():
        worker.task(type_name)(fn)
    worker.start()
    return worker


def test_enqueue_is_validated_against_the_type_schema(client: Client) -> None:
    with pytest.raises(ValidationError) as raised:
        client.enqueue("resize", {"url": 5})
    paths = {d["path"] for d in raised.value.details}
    assert {"payload.url", "payload.width"} <= paths


def test_idempotency_key_creates_one_job(client: Client) -> None:
    first = client.enqueue("echo", {"n": 1}, idempotency_key="same-key-1")
    second = client.enqueue("echo", {"n": 1}, idempotency_key="same-key-1")
    assert first["id"] == second["id"]
    client.cancel(first["id"])


def test_a_worker_runs_jobs_concurrently_and_reports_results(stack: Stack, client: Client) -> None:
    seen: list[str] = []
    worker = running_worker(stack, {"echo": lambda payload, ctx: (seen.append(ctx.job_id), {"echo": payload})[1]}, concurrency=5)
    try:
        ids = [a["id"] for a in client.enqueue_batch([{"type": "echo", "payload": {"n": n}} for n in range(12)])]
        jobs = [client.wait(i, timeout=30) for i in ids]
        assert [j["status"] for j in jobs] == ["done"] * 12
        assert [j["result"] for j in jobs] == [{"echo": {"n": n}} for n in range(12)]
        assert sorted(seen) == sorted(ids)
        workers = client._transport.request("GET", "/workers")
        assert any(w.get("kind") == "protocol" and w["id"] == worker.id for w in workers)
    finally:
        worker.stop()


def test_steps_progress_and_a_waitpoint(stack: Stack, client: Client) -> None:
    measured: list[int] = []

    def resize(payload: dict[str, Any], ctx: Context) -> dict[str, Any]:
        size = ctx.step("measure", lambda: measured.append(1) or {"w": payload["width"]})
        ctx.progress(0.5, "measured")
        ctx.log("waiting for approval")
        approval = ctx.wait_for("approval", timeout_seconds=600)
        ctx.progress(1.0, "done")
        return {"size": size, "approval": approval}

    worker = running_worker(stack, {"resize": resize})
    try:
        job_id = client.enqueue("resize", {"url": "https://example.com/a.png", "width": 40})["id"]
        job = eventually(lambda: (j := client.get(job_id))["waiting_for"] == "waitpoint" and j, what="the job to wait on its waitpoint")
        assert job["progress"]["fraction"] == 0.5
        waitpoint_id = next(s for s in job["steps"] if s["name"] == "approval")["waitpoint_id"]
        client.complete_waitpoint(waitpoint_id, {"approved": True})
        done = client.wait(job_id, timeout=30)
        assert done["status"] == "done"
        assert done["result"] == {"size": {"w": 40}, "approval": {"approved": True}}
        assert done["retries"] == 0
        assert measured == [1], "the step ran once, and was replayed from its stored result"
        assert done["progress"]["fraction"] == 1.0
    finally:
        worker.stop()


def test_failures_are_retried_and_permanent_ones_are_not(stack: Stack, client: Client) -> None:
    attempts: dict[str, int] = {}

    def flaky(payload: dict[str, Any], ctx: Context) -> str:
        attempts[ctx.job_id] = ctx.attempt
        if payload.get("permanent"):
            raise PermanentError("bad input")
        if ctx.attempt == 1:
            raise RuntimeError("first attempt fails")
        return "ok"

    worker = running_worker(stack, {"echo": flaky})
    try:
        retried = client.enqueue("echo", {"n": 1}, max_retries=2)["id"]
        broken = client.enqueue("echo", {"permanent": True}, max_retries=2)["id"]
        done = client.wait(retried, timeout=30)
        assert (done["status"], done["retries"], done["result"]) == ("done", 1, "ok")
        failed = client.wait(broken, timeout=30)
        assert (failed["status"], failed["retries"]) == ("failed", 0)
        assert "bad input" in (failed["error"] or "")
    finally:
        worker.stop()


def test_a_worker_killed_mid_job_leaves_the_job_to_be_retried_once_its_lease_lapses(stack: Stack, client: Client, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    script = textwrap.dedent(
        f"""
        import time
        from conveyor import Worker
        worker = Worker({stack.url!r}, api_key={stack.worker_key!r}, lease_seconds=2, poll_seconds=1)
        @worker.task("echo")
        def hang(payload, ctx):
            open({str(marker)!r}, "w").write(ctx.job_id)
            time.sleep(600)
        worker.run()
        """
    )
    job_id = client.enqueue("echo", {"kill": True})["id"]
    victim = subprocess.Popen([sys.executable, "-c", script])
    try:
        eventually(marker.exists, what="the task to start")
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        assert client.get(job_id)["status"] == "processing"
        worker = running_worker(stack, {"echo": lambda payload, ctx: {"attempt": ctx.attempt}})
        try:
            done = client.wait(job_id, timeout=30)
            assert done["status"] == "done"
            # An interruption, not a failure: the same attempt number, no retry spent.
            assert (done["result"], done["retries"]) == ({"attempt": 1}, 0)
        finally:
            worker.stop()
    finally:
        victim.kill()


def test_graceful_shutdown_hands_back_what_is_still_running(stack: Stack, client: Client, caplog: pytest.LogCaptureFixture) -> None:
    started = threading.Event()

    def slow(payload: dict[str, Any], ctx: Context) -> None:
        started.set()
        time.sleep(5)

    worker = running_worker(stack, {"echo": slow}, shutdown_timeout=0.3)
    job_id = client.enqueue("echo", {"slow": True})["id"]
    assert started.wait(20)
    with caplog.at_level(logging.INFO, logger="conveyor.worker"):
        worker.stop()
        job = eventually(lambda: (j := client.get(job_id))["status"] == "pending" and j, what="the job handed back")
        eventually(lambda: "1 job(s) handed back" in caplog.text, what="the worker's last log line")
    assert job["retries"] == 0
    client.cancel(job_id)


def test_stop_ends_the_waiting_long_poll_at_once(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    # Idle, the worker waits in a 30 s long-poll; stop() tells the API, which answers that poll now.
    worker = Worker(stack.url, api_key=stack.worker_key, poll_seconds=30)
    worker.task("echo")(lambda payload, ctx: payload)
    thread = worker.start()
    with stack.admin() as admin:
        eventually(lambda: any(w["id"] == worker.id for w in admin.get("/workers").json()), what="the worker's first lease call")
    time.sleep(0.5)  # its poll is waiting now (or about to be: a call that arrives after the stop leases nothing either)
    with caplog.at_level(logging.INFO, logger="conveyor.worker"):
        worker.stop()
        thread.join(timeout=15)
        assert not thread.is_alive(), "the worker still waited for its long-poll"
    assert "0 job(s) handed back" in caplog.text


def test_a_worker_key_runs_jobs_and_does_nothing_else(stack: Stack) -> None:
    with Client(stack.url, api_key=stack.worker_key) as as_worker:
        with pytest.raises(Forbidden):
            as_worker.enqueue("echo", {})
        with pytest.raises(Forbidden):
            as_worker.list()


def test_webhook_signatures_are_verified() -> None:
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    body = json.dumps({"type": "conveyor.job.succeeded"})
    stamp = str(int(time.time()))
    signature = base64.b64encode(hmac.new(base64.b64decode(secret[6:]), f"evt_1.{stamp}.{body}".encode(), hashlib.sha256).digest()).decode()
    headers = {"webhook-id": "evt_1", "webhook-timestamp": stamp, "webhook-signature": f"v1,{signature}"}
    assert verify_webhook(secret, headers, body) == {"type": "conveyor.job.succeeded"}
    with pytest.raises(ConveyorError):
        verify_webhook(secret, headers, body + " ")


def test_the_readme_examples_run_as_written(stack: Stack, client: Client) -> None:
    env = dict(os.environ) | {"CONVEYOR_URL": stack.url, "CONVEYOR_API_KEY": stack.api_key, "CONVEYOR_WORKER_KEY": stack.worker_key, "WAIT_SECONDS": "60"}

    def running_workers() -> set[str]:
        with stack.admin() as admin:
            return {w["name"] for w in admin.get("/workers").json() if w.get("kind") == "protocol" and w["state"] == "running"}

    # An earlier test's SIGKILLed worker is listed until it misses its beats: only what this test adds is looked at.
    before = running_workers()
    worker = subprocess.Popen([sys.executable, str(EXAMPLES / "worker.py")], env=env)
    try:
        enqueue = subprocess.Popen([sys.executable, str(EXAMPLES / "enqueue.py")], env=env, stdout=subprocess.PIPE, text=True)
        # The example's job waits for an approval: give it, as a person would in the console.
        job = eventually(
            lambda: next((j for j in client.list(type="resize") if j["status"] == "pending" and j.get("waiting_for") == "waitpoint"), None),
            what="the example job to wait for its approval",
        )
        waitpoint_id = next(s for s in client.get(job["id"])["steps"] if s["name"] == "approval")["waitpoint_id"]
        client.complete_waitpoint(waitpoint_id, {"approved": True})
        out, _ = enqueue.communicate(timeout=90)
        assert enqueue.returncode == 0, out
        assert "finished done" in out
        assert "'approved': True" in out
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0
    # Stopped cleanly, it said so: the organization's workers no longer list it (nor list again any that stopped before).
    assert running_workers() - before == set()
