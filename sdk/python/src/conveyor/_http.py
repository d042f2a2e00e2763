"""The one HTTP path of the SDK: httpx, JSON bodies, typed errors, and 429/503 retried after Retry-After."""

from __future__ import annotations

import logging
import random
import time
from typing import Any

import httpx

from .errors import ConveyorError, error_from_response, retry_after_seconds

logger = logging.getLogger("conveyor")

USER_AGENT = "conveyor-python/0.1.0"


class Transport:
    """Holds the base URL, the credential, timeouts and the retry policy; thread-safe (one httpx.Client)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_connections: int = 100,
    ) -> None:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        elif api_key is not None:
            headers["X-API-Key"] = api_key
        self.max_retries = max_retries
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    def close(self) -> None:
        self.http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Sends one request; retries 429 and 503 (after Retry-After, else a short backoff) and connection errors."""
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    method,
                    path,
                    json=json,
                    params={k: v for k, v in (params or {}).items() if v is not None},
                    headers=headers,
                    timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TransportError as error:
                if attempt >= self.max_retries:
                    raise ConveyorError(f"could not reach Conveyor: {error}", code="connection_error") from error
                attempt += 1
                time.sleep(_backoff(attempt))
                continue
            if response.status_code in (429, 503) and attempt < self.max_retries:
                attempt += 1
                wait = retry_after_seconds(response.headers)
                wait = _backoff(attempt) if wait is None else wait
                logger.info("Conveyor answered %s; retrying in %.2f s", response.status_code, wait)
                time.sleep(wait)
                continue
            if response.status_code == 204:
                return None
            body = _json(response)
            if response.status_code >= 400:
                raise error_from_response(response.status_code, body, response.headers)
            return body


def _json(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return {"error": {"code": "bad_response", "message": response.text[:200]}}


def _backoff(attempt: int) -> float:
    return min(10.0, 0.2 * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
