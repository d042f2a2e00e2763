"""The real stack for the SDK's tests, started by the test run: the repository's API (from source) on a free port,
a fresh database on the local Postgres (migrated with the project's own command), a Redis key prefix of its own on the
local Redis, an organization with two job types, a member API key and a worker API key. Nothing is mocked.

Settings: CONVEYOR_TEST_DATABASE (server URL, default postgresql://postgres@127.0.0.1:5432), CONVEYOR_TEST_REDIS
(default redis://127.0.0.1:6379), CONVEYOR_TEST_PORTS (a range such as 3300-3399 to take the API's port from),
CONVEYOR_TEST_DB_PREFIX (default conveyor_pytest).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Stack:
    url: str
    token: str
    api_key: str
    worker_key: str
    env: dict[str, str]

    def admin(self) -> httpx.Client:
        """An httpx client with the owner's token (for what only people may do: types, keys)."""
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30)


def _free_port() -> int:
    low, _, high = os.environ.get("CONVEYOR_TEST_PORTS", "").partition("-")
    candidates = range(int(low), int(high) + 1) if low and high else [0]
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError("no free port for the API")


def _node_env() -> dict[str, str]:
    env = dict(os.environ)
    # As npm scripts do: the repository's pinned Node.js first.
    env["PATH"] = f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    server = os.environ.get("CONVEYOR_TEST_DATABASE", "postgresql://postgres@127.0.0.1:5432").rstrip("/")
    name = f"{os.environ.get('CONVEYOR_TEST_DB_PREFIX', 'conveyor_pytest')}_{secrets.token_hex(4)}"
    database_url = f"{server}/{name}"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = _node_env() | {
        "NODE_ENV": "development",
        "LOG_LEVEL": "warn",
        "PORT": str(port),
        "PUBLIC_URL": url,
        "DATABASE_URL": database_url,
        "REDIS_URL": os.environ.get("CONVEYOR_TEST_REDIS", "redis://127.0.0.1:6379"),
        "REDIS_PREFIX": name,
        "JWT_SECRET": secrets.token_hex(32),
        "BCRYPT_COST": "4",
        "AUTH_RATE_LIMIT_PER_MIN": "0",
        "API_RATE_LIMIT_PER_SEC": "0",
    }
    tsx = ["tsx", "--conditions=conveyor-source"]
    subprocess.run([*tsx, "packages/db/src/cli/migrate.ts"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=180)
    log = open(ROOT / "sdk" / "python" / ".api-test.log", "w")  # noqa: SIM115 (closed at the end of the session)
    api = subprocess.Popen([*tsx, "apps/api/src/server.ts"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if api.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the API did not start; see {log.name}")
            time.sleep(0.3)
        signup = httpx.post(
            f"{url}/auth/signup",
            json={"email": f"owner-{secrets.token_hex(3)}@example.com", "password": "a long enough password", "org_name": "Python SDK tests"},
        )
        signup.raise_for_status()
        token = signup.json()["token"]
        admin = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        schema = {"type": "object", "properties": {"url": {"type": "string"}, "width": {"type": "integer", "minimum": 1}}, "required": ["url", "width"]}
        for type_name, payload_schema in [("resize", schema), ("echo", {"type": "object"})]:
            admin.post("/job-types", json={"name": type_name, "payload_schema": payload_schema}).raise_for_status()
        api_key = admin.post("/api-keys", json={"name": "service"}).json()["key"]
        worker_key = admin.post("/api-keys", json={"name": "python workers", "role": "worker"}).json()["key"]
        yield Stack(url=url, token=token, api_key=api_key, worker_key=worker_key, env=env)
    finally:
        api.terminate()
        try:
            api.wait(15)
        except subprocess.TimeoutExpired:
            api.kill()
        log.close()
        subprocess.run(["psql", f"{server}/postgres", "-qc", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'], capture_output=True, timeout=60)
