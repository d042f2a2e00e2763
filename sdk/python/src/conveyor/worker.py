"""A worker of your own job types, over Conveyor's worker protocol (docs/reference/lifecycle.md#your-own-workers).

    worker = Worker("http://localhost:3000", api_key="cvk_...", concurrency=10)

    @worker.task("resize")
    def resize(payload, ctx):
        url = ctx.step("download", lambda: download(payload["url"]))
        ctx.progress(0.5, "downloaded")
        return {"url": url}

    worker.run()  # until SIGTERM or SIGINT

One thread leases jobs (a long-poll for as many as there are free slots), a pool of ``concurrency`` threads runs the
tasks, one thread reports their outcomes (what finished since its last call, in one POST /worker/outcomes), and one
thread heartbeats every running job's lease (carrying its progress and log lines). On SIGTERM the worker
stops leasing (it tells the API, which ends its waiting long-poll at once), hands back what it has not started, and
gives running tasks ``shutdown_timeout`` seconds to finish; those still running then are handed back too (another
worker leases them again).
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ._http import USER_AGENT, Transport
from .errors import ConveyorError, LeaseLost, PermanentError, WaitpointFailed

logger = logging.getLogger("conveyor.worker")

T = TypeVar("T")
Task = Callable[[Any, "Context"], Any]

#: Progress reports sent per second per job at most (the API's job.progress events are coalesced the same way).
PROGRESS_PER_SECOND = 4
#: Most outcomes in one POST /worker/outcomes (the API takes up to 200).
OUTCOMES_PER_CALL = 200


class _Suspended(BaseException):
    """Ends a task's attempt for a sleep or a wait (a BaseException, so a task's ``except Exception`` lets it pass)."""


class _Lost(BaseException):
    """The lease is gone (lapsed, taken over, or cancelled away): the task stops without reporting."""


@dataclass
class _Running:
    job: dict[str, Any]
    token: str
    ctx: Context
    lock: threading.Lock = field(default_factory=threading.Lock)
    logs: list[dict[str, str]] = field(default_factory=list)
    progress: dict[str, Any] | None = None
    progress_sent_at: float = 0.0
    finished: bool = False


class Context:
    """What a task gets besides its payload: its job, its attempt, durable steps, sleeps, waits, progress and output."""

    def __init__(self, worker: Worker, job: dict[str, Any]) -> None:
        self._worker = worker
        self._job = job
        self._steps: dict[str, dict[str, Any]] = {s["name"]: s for s in job.get("steps", [])}
        self._seen: set[str] = set()
        self._running: _Running | None = None
        #: Set when someone asked to cancel the job (seen at the last heartbeat): stop, and raise.
        self.cancel_requested = False

    @property
    def job_id(self) -> str:
        return str(self._job["id"])

    @property
    def type(self) -> str:
        return str(self._job["type"])

    @property
    def attempt(self) -> int:
        """This attempt's number: 1 for the first."""
        return int(self._job["attempt"])

    @property
    def dependencies(self) -> list[dict[str, Any]]:
        """The jobs and waitpoints this job depends on, with their results."""
        deps: list[dict[str, Any]] = self._job.get("dependencies", [])
        return deps

    def _path(self, action: str) -> str:
        return f"/worker/jobs/{self.job_id}/{action}"

    def _call(self, action: str, body: dict[str, Any]) -> Any:
        assert self._running is not None
        try:
            return self._worker._transport.request("POST", self._path(action), json={"lease_token": self._running.token, **body})
        except LeaseLost as error:
            raise _Lost() from error

    def _begin(self, name: str) -> dict[str, Any] | None:
        if not name or len(name) > 200:
            raise PermanentError("a step's name must be 1 to 200 characters")
        if name in self._seen:
            raise PermanentError(f'the step name "{name}" is used twice; step names are unique per job')
        self._seen.add(name)
        return self._steps.get(name)

    def step(self, name: str, fn: Callable[[], T]) -> T:
        """Runs ``fn`` at most once to success per job: its JSON result is stored, and a later attempt (after a crash,
        a failure of a later step, a sleep or a wait) gets the stored result without running ``fn`` again."""
        stored = self._begin(name)
        if stored is not None and stored.get("kind") == "step":
            result: T = stored.get("result")
            return result
        value = fn()
        answer = self._call(f"steps/{name}", {"result": value})
        recorded: T = answer["result"]
        return recorded

    def sleep(self, name: str, seconds: float) -> None:
        """Ends this attempt until ``seconds`` from now without spending a retry (the worker's slot is free
        meanwhile); the job runs again then, replaying the steps before this one, and this call returns."""
        self._begin(name)
        assert self._running is not None
        self._worker._flush(self._running)  # its log lines and progress before the attempt ends
        answer = self._call("sleep", {"name": name, "duration_ms": max(0, int(seconds * 1000))})
        if answer["outcome"] == "suspended":
            raise _Suspended()

    def wait_for(self, name: str, waitpoint_id: str | None = None, *, timeout_seconds: int = 86_400) -> Any:
        """Ends this attempt until a waitpoint completes (the one given, or a new one that expires after
        ``timeout_seconds``; complete it with POST /waitpoints/{id}/complete) and answers its data. Raises
        WaitpointFailed when it expired or was cancelled instead."""
        self._begin(name)
        body: dict[str, Any] = {"name": name}
        if waitpoint_id is not None:
            body["waitpoint_id"] = waitpoint_id
        else:
            body["timeout_seconds"] = timeout_seconds
        assert self._running is not None
        self._worker._flush(self._running)  # its log lines and progress before the attempt ends
        answer = self._call("wait-for", body)
        if answer["outcome"] == "suspended":
            logger.info("job %s waits for waitpoint %s", self.job_id, answer.get("waitpoint_id"))
            raise _Suspended()
        if answer.get("status") != "completed":
            raise WaitpointFailed(str(answer.get("waitpoint_id")), str(answer.get("status")))
        return answer.get("data")

    def progress(self, fraction: float, message: str | None = None) -> None:
        """Reports how far the job is (0 to 1): job.progress events for front ends. Sent at most a few times a
        second; the latest always arrives."""
        assert self._running is not None
        running = self._running
        with running.lock:
            running.progress = {"fraction": min(1.0, max(0.0, float(fraction))), "message": message}
            due = time.monotonic() - running.progress_sent_at >= 1 / PROGRESS_PER_SECOND
        if due:
            self._worker._beat(running)

    def output(self, text: str) -> None:
        """Appends text to the job's output (job.output events, GET /jobs/{id}/output)."""
        self._call("heartbeat", {"output": text})

    def log(self, message: str, level: str = "info") -> None:
        """A line in the job's log for this attempt (sent with the next heartbeat or the outcome)."""
        assert self._running is not None
        with self._running.lock:
            self._running.logs.append({"level": level, "message": message})


class Worker:
    """Runs your tasks for your organization's job types. ``api_key`` is a key of the ``worker`` role."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        concurrency: int = 10,
        name: str | None = None,
        lease_seconds: int = 30,
        poll_seconds: int = 20,
        shutdown_timeout: float = 30.0,
        timeout: float = 30.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.name = name or f"{socket.gethostname()}:{uuid.uuid4().hex[:6]}"
        self.id = str(uuid.uuid4())
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.shutdown_timeout = shutdown_timeout
        self._tasks: dict[str, Task] = {}
        self._transport = Transport(base_url, api_key=api_key, timeout=max(timeout, poll_seconds + 10), max_connections=concurrency * 2 + 8)
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self._free = threading.Semaphore(concurrency)
        self._stopping = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        # Outcomes waiting to be reported: (job id, token, body), sent by the reporter thread in batches.
        self._outcomes: deque[tuple[str, str, dict[str, Any]]] = deque()
        self._outcomes_ready = threading.Condition()
        self._reporter_stop = False
        self._handed_back = 0

    def task(self, type: str) -> Callable[[Task], Task]:
        """Registers the decorated function ``fn(payload, ctx)`` for jobs of ``type``; its return value (JSON) is
        the job's result. Raise PermanentError to fail without retries; any other exception is retried."""

        def register(fn: Task) -> Task:
            self._tasks[type] = fn
            return fn

        return register

    # Running ----------------------------------------------------------------------------------------------------

    def run(self, *, install_signal_handlers: bool = True) -> None:
        """Leases and runs jobs until stop() (or SIGTERM / SIGINT, in the main thread)."""
        if not self._tasks:
            raise ValueError("register at least one task with @worker.task(type)")
        if install_signal_handlers and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop())
        # Twice the slots: a finished task's thread may still send its log lines (before its outcome is queued) while
        # the next task already runs.
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency * 2, thread_name_prefix="conveyor-task")
        beats = threading.Thread(target=self._heartbeats, name="conveyor-heartbeat", daemon=True)
        beats.start()
        self._reporter_stop = False
        reporter = threading.Thread(target=self._report_loop, name="conveyor-outcomes", daemon=True)
        reporter.start()
        logger.info("worker %s runs %s with concurrency %d", self.name, ", ".join(self._tasks), self.concurrency)
        # Two lease calls in flight (from concurrency 8 on): while one waits for its answer, the other brings the next
        # batch, so the slots are not idle for a lease's round trip.
        leasers = [threading.Thread(target=self._lease_loop, name=f"conveyor-lease-{i}", daemon=True) for i in range(2 if self.concurrency >= 8 else 1)]
        try:
            for thread in leasers:
                thread.start()
            while any(thread.is_alive() for thread in leasers):
                for thread in leasers:
                    thread.join(timeout=0.2)
        finally:
            self._shutdown(reporter)

    def start(self) -> threading.Thread:
        """Runs the worker in a background thread (no signal handlers); stop() ends it."""
        thread = threading.Thread(target=lambda: self.run(install_signal_handlers=False), name="conveyor-worker", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stops leasing; running tasks get ``shutdown_timeout`` seconds to finish."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        # The API answers this worker's waiting long-poll now instead of after up to poll_seconds (a signal handler
        # must not block on HTTP: a thread says it).
        otherwise = f"its long-poll ends within {self.poll_seconds} s instead"
        threading.Thread(target=self._say_stopped, args=(otherwise,), name="conveyor-stop", daemon=True).start()

    def _say_stopped(self, otherwise: str) -> None:
        """POST /worker/stop; `otherwise` says what happens if it cannot be said."""
        try:
            self._transport.request("POST", "/worker/stop", json={"worker_id": self.id})
        except ConveyorError as error:
            logger.warning("could not say this worker stops (%s): %s", otherwise, error)

    def _lease_loop(self) -> None:
        types = sorted(self._tasks)
        while not self._stopping.is_set():
            self._free.acquire()
            free = 1
            # While tasks run, slots free one by one: gather a few (a quarter of them, or what frees within 10 ms)
            # so one lease call brings a batch rather than one lease call per job.
            batch = max(1, self.concurrency // 4)
            gather_until = time.monotonic() + (0.01 if self._running else 0)
            while free < self.concurrency:
                if self._free.acquire(blocking=False):
                    free += 1
                elif free >= batch or time.monotonic() >= gather_until:
                    break
                else:
                    time.sleep(0.001)
            try:
                jobs = self._transport.request(
                    "POST",
                    "/worker/lease",
                    json={
                        "types": types,
                        "max": free,
                        # Short polls while stopping would lease work we then hand back; the stop flag is checked between.
                        "wait_seconds": self.poll_seconds,
                        "lease_seconds": self.lease_seconds,
                        "worker_id": self.id,
                        "worker_name": self.name,
                        "worker_version": USER_AGENT,
                        "concurrency": self.concurrency,
                    },
                )
            except ConveyorError as error:
                for _ in range(free):
                    self._free.release()
                logger.warning("lease failed; retrying in 1 s: %s", error)
                self._stopping.wait(1.0)
                continue
            for _ in range(free - len(jobs)):
                self._free.release()
            for job in jobs:
                if self._stopping.is_set():
                    self._hand_back(job["id"], job["lease_token"])
                    self._free.release()
                    continue
                self._start(job)

    def _start(self, job: dict[str, Any]) -> None:
        ctx = Context(self, job)
        running = _Running(job=job, token=job["lease_token"], ctx=ctx)
        ctx._running = running
        with self._lock:
            self._running[job["id"]] = running
        assert self._pool is not None
        self._pool.submit(self._execute, running)

    def _execute(self, running: _Running) -> None:
        job, ctx = running.job, running.ctx
        slot_held = True

        def free_slot() -> None:
            # The task's slot is free once its function returns: its outcome is reported meanwhile (as the built-in
            # workers record theirs by group commit), so a slow report does not keep the next job waiting.
            nonlocal slot_held
            running.finished = True
            if slot_held:
                slot_held = False
                self._free.release()

        try:
            task = self._tasks[job["type"]]
            try:
                result = task(job["payload"], ctx)
            except _Suspended:
                return
            except _Lost:
                logger.warning("job %s: the lease was lost (lapsed or taken over); its outcome is not reported", job["id"])
                return
            except Exception as error:  # the task failed: retried unless permanent
                free_slot()
                self._report_failure(running, error)
                return
            free_slot()
            self._report(running, "complete", {"result": result})
        except Exception:
            logger.error("job %s: could not report its outcome\n%s", job["id"], traceback.format_exc())
        finally:
            free_slot()
            with self._lock:
                self._running.pop(job["id"], None)

    def _report_failure(self, running: _Running, error: Exception) -> None:
        if isinstance(error, WaitpointFailed):
            body: dict[str, Any] = {"error": str(error), "retryable": False}
        else:
            body = {"error": f"{type(error).__name__}: {error}", "retryable": not isinstance(error, PermanentError)}
            retry_after = getattr(error, "retry_after", None)
            if isinstance(retry_after, (int, float)) and retry_after > 0:
                body["retry_after_ms"] = int(retry_after * 1000)
        running.ctx.log("".join(traceback.format_exception(error))[-4000:], "error")
        self._report(running, "fail", body)

    def _report(self, running: _Running, action: str, body: dict[str, Any]) -> None:
        """Queues the outcome for the reporter thread (its log lines and progress go first, in a heartbeat)."""
        self._flush(running)
        with self._outcomes_ready:
            self._outcomes.append((running.job["id"], running.token, {"outcome": action, **body}))
            self._outcomes_ready.notify()

    def _report_loop(self) -> None:
        """Sends the queued outcomes: everything finished since the last call, in one request. While one call is on
        the way the next batch gathers, so a worker at concurrency 50 makes a few calls per lease, not one per job."""
        while True:
            with self._outcomes_ready:
                while not self._outcomes and not self._reporter_stop:
                    self._outcomes_ready.wait()
                if not self._outcomes:
                    return
                batch = [self._outcomes.popleft() for _ in range(min(OUTCOMES_PER_CALL, len(self._outcomes)))]
            self._send_outcomes(batch)

    def _send_outcomes(self, batch: list[tuple[str, str, dict[str, Any]]]) -> None:
        body = {"outcomes": [{"job_id": job_id, "lease_token": token, **report} for job_id, token, report in batch]}
        for attempt in range(3):
            try:
                answer = self._transport.request("POST", "/worker/outcomes", json=body)
            except ConveyorError as error:
                # Transport already retried connection errors, 429 and 503; a lease that lapses meanwhile is run again.
                logger.warning("could not report %d outcome(s) (attempt %d): %s", len(batch), attempt + 1, error)
                time.sleep(0.5 * (attempt + 1))
                continue
            for result in answer.get("results", []):
                if result.get("lease_lost"):
                    logger.warning("job %s: the lease was lost before its outcome was reported", result.get("job_id"))
            return
        logger.error("gave up reporting %d outcome(s); their leases lapse and the jobs run again", len(batch))

    def _hand_back(self, job_id: str, token: str) -> None:
        try:
            self._transport.request("POST", f"/worker/jobs/{job_id}/release", json={"lease_token": token})
            with self._lock:
                self._handed_back += 1
        except ConveyorError as error:
            logger.warning("could not hand job %s back (its lease will lapse instead): %s", job_id, error)

    # Heartbeats -------------------------------------------------------------------------------------------------

    def _beat(self, running: _Running) -> None:
        """One heartbeat for a running job: extends its lease, carries its progress and log lines."""
        with running.lock:
            body: dict[str, Any] = {"lease_token": running.token, "lease_seconds": self.lease_seconds}
            if running.progress is not None:
                body["progress"] = running.progress
                running.progress = None
                running.progress_sent_at = time.monotonic()
            if running.logs:
                body["logs"], running.logs = running.logs[:100], running.logs[100:]
        try:
            answer = self._transport.request("POST", f"/worker/jobs/{running.job['id']}/heartbeat", json=body)
            running.ctx.cancel_requested = bool(answer.get("cancel_requested"))
        except LeaseLost:
            # A job that finished while its heartbeat was on the way has no lease any more: nothing was lost.
            if not running.finished:
                logger.warning("job %s: the lease was lost", running.job["id"])
        except ConveyorError as error:
            if not running.finished:
                logger.warning("job %s: heartbeat failed: %s", running.job["id"], error)

    def _flush(self, running: _Running) -> None:
        if running.logs or running.progress is not None:
            self._beat(running)

    def _heartbeats(self) -> None:
        interval = max(0.5, self.lease_seconds / 3)
        while True:
            time.sleep(interval)
            with self._lock:
                running = list(self._running.values())
            for item in running:
                if not item.finished:
                    self._beat(item)

    def _shutdown(self, reporter: threading.Thread) -> None:
        assert self._pool is not None
        deadline = time.monotonic() + self.shutdown_timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._running:
                    break
            time.sleep(0.05)
        with self._lock:
            left = list(self._running.values())
        for item in left:
            self._hand_back(item.job["id"], item.token)
        self._pool.shutdown(wait=False, cancel_futures=True)
        # The outcomes still queued are sent before the connection closes.
        with self._outcomes_ready:
            self._reporter_stop = True
            self._outcomes_ready.notify_all()
        reporter.join(timeout=max(1.0, deadline - time.monotonic() + 5))
        # It leaves GET /workers, and its types' count of workers, now rather than after three missed lease calls.
        self._say_stopped("it is forgotten once its lease calls stop")
        self._transport.close()
        logger.info("worker %s stopped (%d job(s) handed back)", self.name, self._handed_back)
