"""Conveyor's Python SDK: a client to enqueue and follow jobs, and a worker to run your own job types."""

from .client import Accepted, Client, Event, Job, verify_webhook
from .errors import (
    Conflict,
    ConveyorError,
    Forbidden,
    LeaseLost,
    NotFound,
    PermanentError,
    RateLimited,
    Unauthorized,
    Unavailable,
    ValidationError,
    WaitpointFailed,
)
from .worker import Context, Worker

__all__ = [
    "Accepted",
    "Client",
    "Conflict",
    "Context",
    "ConveyorError",
    "Event",
    "Forbidden",
    "Job",
    "LeaseLost",
    "NotFound",
    "PermanentError",
    "RateLimited",
    "Unauthorized",
    "Unavailable",
    "ValidationError",
    "WaitpointFailed",
    "Worker",
    "verify_webhook",
]
__version__ = "0.1.0"
