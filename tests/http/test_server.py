"""The loopback HTTP server every HTTP command listens with (harn_mcp_mock/http/server.py): what it
refuses before it binds, as one line naming the flag, exit 2 (the error is the last line of stderr)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.http.server import HttpServer

ROOT = Path(__file__).resolve().parents[2]
HARN = [sys.executable, "-m", "harn_mcp_mock"]


async def _app(scope: object, receive: object, send: object) -> None:  # never called
    raise AssertionError("not served")


@pytest.mark.parametrize("port", [-1, 65536, 99999, 2**70])
def test_a_port_outside_0_to_65535_is_a_usage_error_naming_the_flag(port: int) -> None:
    with pytest.raises(UsageError) as raised:
        HttpServer(_app, host="127.0.0.1", port=port)
    assert raised.value.where == "--port" and "0 to 65535" in str(raised.value)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "--http", "--port", "99999", "--cassette", str(ROOT / "cassettes" / "time.cassette.json")],
        ["record", "--cassette", "x.cassette.json", "--url", "http://127.0.0.1:9/mcp", "--port", "99999"],
    ],
    ids=["replay --http", "record --url"],
)
def test_the_commands_say_so_in_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    done = subprocess.run([*HARN, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    *_notes, error = done.stderr.splitlines()  # (replay first notes the cassette's older policy)
    assert error.endswith("error: --port: 99999 is not a TCP port (0 to 65535; 0 picks a free one)")
    assert "Traceback" not in done.stderr and not (tmp_path / "x.cassette.json").exists()
