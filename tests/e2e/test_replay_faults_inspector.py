"""The MCP Inspector's CLI (a TypeScript client we did not write) against ``replay --faults``:
the injected error reaches it as the server's error, and the recorded answer comes back on the
next session (each Inspector run is its own session, so ordinals start again)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.e2e.peers import WAIT

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TIME = str(ROOT / "cassettes" / "time.cassette.json")
CALL = [
    "--method",
    "tools/call",
    "--tool-name",
    "convert_time",
    "--tool-arg",
    "source_timezone=Europe/Paris",
    "--tool-arg",
    "time=09:30",
    "--tool-arg",
    "target_timezone=Asia/Tokyo",
]


def test_the_inspector_sees_the_injected_errors(inspector_command: list[str], tmp_path: Path) -> None:
    rules = tmp_path / "faults.json"
    rules.write_bytes(
        orjson.dumps(
            [
                {"id": "rl", "tool": "convert_time", "kind": "rate_limit", "on_calls": [1]},
            ]
        )
    )
    replay = [sys.executable, "-m", "harn_mcp_mock", "replay", "--cassette", TIME, "--faults", str(rules)]

    def inspect(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*inspector_command, *args], capture_output=True, text=True, timeout=WAIT, cwd=tmp_path
        )

    limited = inspect(*replay, *CALL)
    assert limited.returncode != 0
    assert (
        "Failed to call tool convert_time: MCP error -32000: rate limited: retry after 1 s" in limited.stderr
    ), limited.stderr

    listed = inspect(*replay, "--method", "tools/list")  # a new session: its first tools/list is fine
    assert listed.returncode == 0, listed.stderr
    assert {t["name"] for t in orjson.loads(listed.stdout)["tools"]} == {"convert_time", "get_current_time"}

    down = tmp_path / "down.json"  # a rule on a method: the Inspector's first request after the handshake
    down.write_bytes(
        orjson.dumps([{"id": "down", "method": "tools/list", "kind": "unavailable", "on_calls": [1]}])
    )
    refused = inspect(
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "replay",
        "--cassette",
        TIME,
        "--faults",
        str(down),
        "--method",
        "tools/list",
    )
    assert refused.returncode != 0
    assert "MCP error -32000: service unavailable: the service is down" in refused.stderr, refused.stderr

    no_rules = inspect(sys.executable, "-m", "harn_mcp_mock", "replay", "--cassette", TIME, *CALL)
    assert no_rules.returncode == 0, no_rules.stderr
    assert "Europe/Paris" in no_rules.stdout
