"""Errors of the Conveyor API, one class per kind of refusal (the API's error codes, docs/reference/http.md#errors)."""

from __future__ import annotations

from typing import Any


class ConveyorError(Exception):
    """A refusal of the API: its HTTP status, error code, message and details (``[{path, message}]``)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "error",
        details: list[dict[str, Any]] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = details or []
        self.request_id = request_id

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"


class ValidationError(ConveyorError):
    """400: the request or the payload does not fit (``details`` names each bad field)."""


class Unauthorized(ConveyorError):
    """401: the API key or token is missing, wrong, revoked or expired."""


class Forbidden(ConveyorError):
    """403: the credential is valid but may not do this (e.g. a worker key outside the worker protocol)."""


class NotFound(ConveyorError):
    """404: absent, or another organization's."""


class Conflict(ConveyorError):
    """409: the state does not allow it (an idempotency key reused with another body, a finished job...)."""


class LeaseLost(Conflict):
    """409 lease_lost: the lease lapsed or a newer lease took the job over; the worker must stop working on it."""


class RateLimited(ConveyorError):
    """429: rate limited, over a quota, or the deployment is overloaded. ``retry_after`` is in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class Unavailable(ConveyorError):
    """503: the service cannot reach its database right now; retry later."""


class PermanentError(Exception):
    """Raise from a task to fail its job at once, without spending retries (bad input, a provider's 4xx)."""


class WaitpointFailed(Exception):
    """A waitpoint a task waited for expired or was cancelled instead of completing."""

    def __init__(self, waitpoint_id: str, status: str) -> None:
        super().__init__(f"waitpoint {waitpoint_id} ended {status}, not completed")
        self.waitpoint_id = waitpoint_id
        self.status = status


_BY_STATUS: dict[int, type[ConveyorError]] = {
    400: ValidationError,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
    503: Unavailable,
}


def error_from_response(status: int, body: Any, headers: Any) -> ConveyorError:
    """The error an API answer stands for."""
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code", "error")) if isinstance(error, dict) else "error"
    message = str(error.get("message", f"HTTP {status}")) if isinstance(error, dict) else f"HTTP {status}"
    details = error.get("details") if isinstance(error, dict) else None
    request_id = headers.get("x-request-id") if headers is not None else None
    kwargs: dict[str, Any] = {"status": status, "code": code, "details": details, "request_id": request_id}
    if code == "lease_lost":
        return LeaseLost(message, **kwargs)
    if status == 429:
        return RateLimited(message, retry_after=retry_after_seconds(headers), **kwargs)
    cls = _BY_STATUS.get(status, ConveyorError)
    return cls(message, **kwargs)


def retry_after_seconds(headers: Any) -> float | None:
    """The Retry-After header in seconds (only the delay-seconds form is sent by Conveyor)."""
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
