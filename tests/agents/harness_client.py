"""Shared by the mock Harness tests: constants, request helpers and the in-process fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.server import Harness, create_app
from harn_mcp_mock.clock import PausedClock

REPO = Path(__file__).resolve().parents[2]
WORLD = "worlds/tickets/tickets.world.json"
CLOSE_BUG = {"world": WORLD, "world_task": "close-login-bug"}
KEYS = {"key-alice-s3cr3t": "alice", "key-bob-s3cr3t": "bob", "key-reader-s3cr3t": "reader"}
PERMISSIONS = {"reader": frozenset({"tasks:read"})}


def headers(key: str = "key-alice-s3cr3t", **extra: str) -> dict[str, str]:
    return {VERSION_HEADER: PROTOCOL_VERSION, "Authorization": f"Bearer {key}", **extra}


@pytest.fixture
def clock() -> PausedClock:
    return PausedClock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "harness.sqlite3"


@pytest.fixture
def store(db: Path, clock: PausedClock) -> Iterator[ProtocolStore]:
    s = ProtocolStore(db, clock=clock)
    yield s
    s.close()


@pytest.fixture
def client(store: ProtocolStore, clock: PausedClock) -> TestClient:
    app = create_app(store, KEYS, clock, permissions=PERMISSIONS, world_root=REPO)
    return TestClient(app)


def harness(client: TestClient) -> Harness:
    h: Harness = client.app.state.harness  # type: ignore[attr-defined]
    return h


def submit(client: TestClient, body: dict[str, Any] | None = None, **extra: str) -> dict[str, Any]:
    r = client.post("/v1/tasks", json=body or {"input": CLOSE_BUG}, headers=headers(**extra))
    assert r.status_code == 201, r.text
    out: dict[str, Any] = r.json()
    return out


def sse_frames(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if fields:
            frames.append(fields)
    return frames
