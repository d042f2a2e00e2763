"""The Conveyor client: enqueue jobs (with idempotency keys, in batches), read, wait for, list and cancel them,
waitpoints, the event stream with resumption, and Standard Webhooks signature checks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json as jsonlib
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, TypedDict

import httpx

from ._http import Transport
from .errors import ConveyorError

FINAL_STATUSES = frozenset({"done", "failed", "cancelled"})


class Accepted(TypedDict, total=False):
    """What POST /jobs answers: the job's id and status (and whether a dedupe key or debounce matched)."""

    id: str
    status: str
    deduplicated: bool
    debounced: bool


class Job(TypedDict, total=False):
    """A job as GET /jobs/{id} shows it (the fields most callers read; the API sends more)."""

    id: str
    type: str
    status: str
    payload: dict[str, Any]
    result: Any
    error: str | None
    retries: int
    max_retries: int
    progress: dict[str, Any] | None
    steps: list[dict[str, Any]]
    waiting_for: str | None
    created_at: str
    updated_at: str


class Event(TypedDict):
    """One event of GET /events (docs/reference/events.md#events): its id (resume after it), type and data."""

    id: str
    type: str
    data: dict[str, Any]


class Client:
    """A client of one Conveyor deployment, with an organization API key (or a user token).

    >>> client = Client("http://localhost:3000", api_key="cvk_...")
    >>> job = client.enqueue("resize", {"url": "https://example.com/cat.png", "width": 400})
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
    ) -> None:
        if api_key is None and token is None:
            raise ValueError("give an api_key (cvk_...) or a user token")
        self._transport = Transport(base_url, api_key=api_key, token=token, timeout=timeout, max_retries=max_retries)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # Jobs -------------------------------------------------------------------------------------------------------

    def enqueue(
        self,
        type: str,
        payload: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Accepted:
        """POST /jobs. ``fields`` are the API's optional job fields (max_retries, run_at, priority, concurrency_key,
        depends_on, ...). Retried on 429/503 with the same idempotency key (one is made when none is given), so a
        retry never creates the job twice."""
        key = idempotency_key or str(uuid.uuid4())
        body = {"type": type, "payload": dict(payload), **fields}
        answer: Accepted = self._transport.request("POST", "/jobs", json=body, headers={"Idempotency-Key": key})
        return answer

    def enqueue_batch(self, jobs: list[Mapping[str, Any]]) -> list[Accepted]:
        """POST /jobs/batch: 1 to 1,000 jobs (each ``{type, payload, ...}``), all or nothing."""
        answer: list[Accepted] = self._transport.request("POST", "/jobs/batch", json={"jobs": [dict(j) for j in jobs]})
        return answer

    def get(self, job_id: str) -> Job:
        """GET /jobs/{id}."""
        job: Job = self._transport.request("GET", f"/jobs/{job_id}")
        return job

    def list(self, *, status: str | None = None, type: str | None = None, limit: int | None = 100, **filters: Any) -> list[Job]:
        """GET /jobs with its filters (status, type, q, created_after, ...), newest first."""
        jobs: list[Job] = self._transport.request("GET", "/jobs", params={"status": status, "type": type, "limit": limit, **filters})
        return jobs

    def cancel(self, job_id: str) -> Job:
        """POST /jobs/{id}/cancel."""
        job: Job = self._transport.request("POST", f"/jobs/{job_id}/cancel")
        return job

    def wait(self, job_id: str, *, timeout: float = 60.0, poll_interval: float = 0.2) -> Job:
        """Polls the job until it is final (done, failed or cancelled); TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.get(job_id)
            if job.get("status") in FINAL_STATUSES:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job.get('status')} after {timeout} s")
            time.sleep(poll_interval)

    # Waitpoints -------------------------------------------------------------------------------------------------

    def create_waitpoint(self, *, timeout_seconds: int = 86_400, description: str | None = None, tags: list[str] | None = None) -> dict[str, Any]:
        """POST /waitpoints: a point jobs can wait on until someone completes it."""
        body: dict[str, Any] = {"timeout_seconds": timeout_seconds}
        if description is not None:
            body["description"] = description
        if tags is not None:
            body["tags"] = tags
        answer: dict[str, Any] = self._transport.request("POST", "/waitpoints", json=body)
        return answer

    def complete_waitpoint(self, waitpoint_id: str, data: Any = None) -> dict[str, Any]:
        """POST /waitpoints/{id}/complete: the jobs waiting on it go on, with ``data``."""
        answer: dict[str, Any] = self._transport.request("POST", f"/waitpoints/{waitpoint_id}/complete", json={"data": data})
        return answer

    def get_waitpoint(self, waitpoint_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = self._transport.request("GET", f"/waitpoints/{waitpoint_id}")
        return answer

    # Events -----------------------------------------------------------------------------------------------------

    def events(
        self,
        *,
        job_id: str | None = None,
        type: str | None = None,
        last_event_id: str | None = None,
        reconnect: bool = True,
    ) -> Iterator[Event]:
        """Yields the organization's events (GET /events, server-sent events). A dropped connection is resumed
        after the last event seen (Last-Event-ID), so no event is missed while they are retained."""
        last = last_event_id
        path = f"/jobs/{job_id}/events" if job_id is not None else "/events"
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = last
            params = {"type": type} if type is not None and job_id is None else None
            try:
                with self._transport.http.stream("GET", path, headers=headers, params=params, timeout=httpx.Timeout(30.0, read=None)) as response:
                    if response.status_code >= 400:
                        response.read()
                        from .errors import error_from_response

                        raise error_from_response(response.status_code, response.json(), response.headers)
                    for event in _parse_sse(response.iter_lines()):
                        last = event["id"]
                        yield event
                if job_id is not None or not reconnect:
                    return
            except httpx.TransportError:
                if not reconnect:
                    raise
                time.sleep(1.0)


def _parse_sse(lines: Iterator[str]) -> Iterator[Event]:
    event_id, event_type, data = "", "message", []
    for line in lines:
        if line == "":
            if data:
                yield Event(id=event_id, type=event_type, data=jsonlib.loads("\n".join(data)))
            event_id, event_type, data = "", "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                event_id = value
            elif field == "event":
                event_type = value
            elif field == "data":
                data.append(value)


def verify_webhook(secret: str, headers: Mapping[str, str], body: bytes | str, *, tolerance_seconds: int = 300) -> dict[str, Any]:
    """Checks a webhook delivery's Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature)
    with the endpoint's ``whsec_...`` secret and answers the parsed body; raises ConveyorError when it does not match
    or is older than ``tolerance_seconds``."""
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id, timestamp, signatures = lower.get("webhook-id"), lower.get("webhook-timestamp"), lower.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise ConveyorError("missing webhook signature headers", code="invalid_signature")
    if abs(time.time() - int(timestamp)) > tolerance_seconds:
        raise ConveyorError("webhook timestamp is too old or in the future", code="invalid_signature")
    raw = body.encode() if isinstance(body, str) else body
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()).decode()
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            parsed: dict[str, Any] = jsonlib.loads(raw)
            return parsed
    raise ConveyorError("webhook signature does not match", code="invalid_signature")
