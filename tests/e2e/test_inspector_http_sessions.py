"""The MCP Inspector's CLI over Streamable HTTP, one process (one session) per call, against a
replay of a stateful server: the second process gets the second recorded answer.

The counter server (``tests/servers/counter_server.py``, an SDK server over HTTP) is recorded
through ``harn mcp mock record --url`` while the Inspector calls ``increment`` twice (``1``, then
``2``: two sessions in one cassette); ``replay --http --strict`` then serves two Inspector runs,
which print exactly what the recorded runs printed, and the report over both sessions is clean.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.http.test_replay_server_sessions import WAIT, counter_server, stop
from tests.serving import url_process

pytestmark = pytest.mark.e2e

INCREMENT = ("--transport", "http", "--method", "tools/call", "--tool-name", "increment")


def inspect(inspector: list[str], url: str) -> Any:
    """One Inspector process calling ``increment`` at ``url``: its JSON output."""
    run = subprocess.run([*inspector, url, *INCREMENT], capture_output=True, text=True, timeout=WAIT)
    assert run.returncode == 0, run.stderr
    return orjson.loads(run.stdout)


def test_each_inspector_process_gets_the_next_recorded_answer(
    inspector_command: list[str], tmp_path: Path
) -> None:
    cassette = tmp_path / "counter.cassette.json"
    with counter_server() as upstream:
        with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, url):
            recorded = [inspect(inspector_command, url), inspect(inspector_command, url)]
            stop(proc)
    assert [r["content"][0]["text"] for r in recorded] == ["1", "2"]

    report = tmp_path / "report.json"
    args = ["replay", "--http", "--strict", "--cassette", str(cassette), "--report", str(report)]
    with url_process(args) as (proc, url):
        replayed = [inspect(inspector_command, url), inspect(inspector_command, url)]
        stop(proc)
    assert replayed == recorded  # without the fix the second process got "1" again
    summary = orjson.loads(report.read_bytes())
    assert summary["ok"] is True, summary
