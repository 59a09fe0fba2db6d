"""`harn protocol serve` as a real process: URL on the first stdout line, SSE live, survives a kill.

Real subprocess I/O has no deterministic stand-in, so waits here are bounded by named timeouts.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from typer.testing import CliRunner

from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.cli.protocol import app, parse_api_keys

REPO = Path(__file__).resolve().parents[2]
KEY = "k-process-s3cr3t"
HEADERS = {VERSION_HEADER: PROTOCOL_VERSION, "Authorization": f"Bearer {KEY}"}
STARTUP_TIMEOUT_S = 20.0
REQUEST_TIMEOUT_S = 20.0
CLOSE_BUG = {"world": "worlds/tickets/tickets.world.json", "world_task": "close-login-bug"}


class Served:
    def __init__(self, db: Path, keys: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        code = "from harn_mcp_mock.cli.protocol import app; app(prog_name='harn protocol')"
        keys = keys if keys is not None else ["--api-key-for", f"alice={KEY}"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "serve", "--db", str(db), *keys, "--world-root", str(REPO)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )  # fmt: skip
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
        try:
            self.url = lines.get(timeout=STARTUP_TIMEOUT_S).strip()
        except queue.Empty:
            self.proc.kill()
            raise AssertionError("harn protocol serve printed no URL in time") from None
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def kill(self) -> str:
        self.proc.kill()  # SIGKILL: no shutdown hooks run
        _, err = self.proc.communicate(timeout=STARTUP_TIMEOUT_S)
        return err


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "served.sqlite3"


def stream_until_terminal(http: httpx2.Client, url: str, task_id: str) -> list[dict[str, Any]]:
    events = []
    with http.stream("GET", f"{url}/v1/tasks/{task_id}/stream", headers=HEADERS) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(orjson.loads(line[6:]))
    return events


def test_serve_prints_its_url_runs_tasks_live_and_keeps_them_across_a_kill(db: Path) -> None:
    served = Served(db)
    try:
        with httpx2.Client(timeout=REQUEST_TIMEOUT_S) as http:
            r = http.post(f"{served.url}/v1/tasks", json={"input": CLOSE_BUG}, headers=HEADERS)
            assert r.status_code == 201
            task_id = r.json()["id"]
            events = stream_until_terminal(http, served.url, task_id)
            assert events[-2]["event"] == "task.completed" and events[-1]["event"] == "receipt.issued"
            pending = http.post(
                f"{served.url}/v1/tasks", json={"input": {"text": "hi"}}, headers=HEADERS
            ).json()["id"]
    finally:
        err = served.kill()
    assert KEY not in err

    again = Served(db)
    try:
        with httpx2.Client(timeout=REQUEST_TIMEOUT_S) as http:
            task = http.get(f"{again.url}/v1/tasks/{task_id}", headers=HEADERS).json()
            assert task["status"] == "COMPLETED"
            check = http.get(f"{again.url}/v1/receipts/{task['receipt_id']}/verification", headers=HEADERS)
            assert check.json()["ok"] is True
            # whatever state the kill left the second task in, the restarted Harness finishes it
            events = stream_until_terminal(http, again.url, pending)
            assert events[-2]["event"] in {"task.completed", "task.failed"}
    finally:
        err = again.kill()
    assert KEY not in err


# Keys made of every base64 / base64url / URL character that a naive split would trip on.
ODD_KEYS = ["c2VjcmV0LWtleS0xMjM0NQ==", "dG9rZW4=:a+b/c-d_e.f~g", "==leading=equals==x", "a:b:c:d:e:f:g:h:i"]


def test_api_keys_are_taken_whole_and_actor_keys_split_at_the_first_equals() -> None:
    keys = parse_api_keys(
        ODD_KEYS[:2], ["bob=" + ODD_KEYS[2]], ["carol=" + ODD_KEYS[3], "plain-env-key-0123"]
    )
    assert keys == {
        ODD_KEYS[0]: "actor_1",
        ODD_KEYS[1]: "actor_2",
        ODD_KEYS[2]: "bob",
        ODD_KEYS[3]: "carol",
        "plain-env-key-0123": "actor_5",
    }


@pytest.mark.parametrize(
    ("args", "env", "where"),
    [
        (["--api-key", "short=key"], "", "--api-key #1"),
        (["--api-key-for", "bob=c2VjcmV0=="], "", "--api-key-for #1"),
        (["--api-key-for", "b ob=" + "k" * 20], "", "--api-key-for #1"),
        ([], "c2VjcmV0LWtleQ==", "$HARN_PROTOCOL_API_KEYS entry 1"),
    ],
)
def test_short_keys_and_bad_actors_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, args: list[str], env: str, where: str
) -> None:
    monkeypatch.setenv("HARN_PROTOCOL_API_KEYS", env)
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and where in lines[0], result.output
    assert "c2VjcmV0" not in result.output and "Traceback" not in result.output


def test_keys_with_base64_and_url_characters_authenticate_over_real_http(tmp_path: Path) -> None:
    served = Served(
        tmp_path / "k.sqlite3",
        ["--api-key", ODD_KEYS[0], "--api-key", ODD_KEYS[1], "--api-key-for", f"bob={ODD_KEYS[2]}"],
        {"HARN_PROTOCOL_API_KEYS": f"dave={ODD_KEYS[3]}"},
    )
    url = served.url
    try:
        with httpx2.Client(timeout=REQUEST_TIMEOUT_S) as http:

            def status(key: str) -> int:
                auth = {VERSION_HEADER: PROTOCOL_VERSION, "Authorization": f"Bearer {key}"}
                return http.get(f"{url}/v1/tasks", headers=auth).status_code

            assert [status(k) for k in ODD_KEYS] == [200, 200, 200, 200]
            for wrong in ("=", "==", "c2VjcmV0LWtleS0xMjM0NQ", "dG9rZW4=", "bob=" + ODD_KEYS[2], "a"):
                assert status(wrong) == 401, wrong
    finally:
        err = served.kill()
    assert not any(k in err for k in ODD_KEYS)


def test_serve_without_an_api_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARN_PROTOCOL_API_KEYS", raising=False)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "no API key" in result.output


def test_the_served_runner_executes_replays_and_cassette_tasks(db: Path) -> None:
    served = Served(db)
    try:
        with httpx2.Client(timeout=REQUEST_TIMEOUT_S) as http:
            body = {"input": {"cassette": "cassettes/time.cassette.json"}}
            source = http.post(f"{served.url}/v1/tasks", json=body, headers=HEADERS).json()
            assert stream_until_terminal(http, served.url, source["id"])[-2]["event"] == "task.completed"
            r = http.post(
                f"{served.url}/v1/tasks/{source['id']}/replay", json={"mode": "exact"}, headers=HEADERS
            )
            assert r.status_code == 201, r.text
            events = stream_until_terminal(http, served.url, r.json()["id"])
            assert [e["event"] for e in events][-3:] == [
                "replay.completed",
                "task.completed",
                "receipt.issued",
            ]
            replayed = [e for e in events if e["metadata"].get("replayed")]
            assert [e["event"] for e in replayed] == [
                *["agent.mcp_tool_use", "agent.tool_result"] * 2, "agent.message",
            ]  # fmt: skip
    finally:
        served.kill()


@pytest.mark.parametrize("content", [None, b"this is not a database, it is a text file\n" * 20])
def test_an_unusable_store_file_is_one_line_and_exit_3(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "missing-folder" / "h.sqlite3"
    if content is not None:
        path = tmp_path / "h.sqlite3"
        path.write_bytes(content)
    result = CliRunner().invoke(app, ["serve", "--db", str(path), "--api-key", KEY])
    assert result.exit_code == 3
    lines = [line for line in result.output.splitlines() if "error" in line]
    assert len(lines) == 1 and str(path) in lines[0] and "Harness store" in lines[0]
    assert "Traceback" not in result.output
