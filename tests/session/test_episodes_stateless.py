"""``replay --mode new_episodes`` for a 2026-07-28 client, which sends no ``initialize``
(:mod:`harn_mcp_mock.replay.episodes`, docs/replay.md): the replay opens its own session with
the live server for the first miss (``server/discover``; a classic ``initialize`` of its own
when the live server refuses that), forwards the miss, appends it, and the grown cassette then
replays strictly. The client here is a script of JSON lines on the replay's stdin, stamped as the
SDK's ``mcp.Client`` stamps them (tests/e2e/test_replay_eras_episodes.py runs the real clients).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette

NOTES = str(Path(__file__).parents[2] / "examples" / "servers" / "notes_server.py")
FAKE = str(Path(__file__).parents[1] / "servers" / "fake_server.py")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}


def modern(i: int, method: str, **params: Any) -> bytes:
    """A request as a 2026-07-28 client sends it: its envelope in ``params._meta``."""
    message = {"jsonrpc": "2.0", "id": i, "method": method, "params": {**params, "_meta": ENVELOPE}}
    return orjson.dumps(message) + b"\n"


FIRST = modern(1, "server/discover") + modern(2, "tools/list")
MISS = modern(3, "tools/call", name="read_note", arguments={"name": "welcome"})


def run(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*HARN, *args], input=stdin, capture_output=True, timeout=WAIT)


def replies(out: bytes) -> dict[Any, Any]:
    return {m.get("id"): m for m in map(orjson.loads, out.splitlines())}


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """The notes server recorded by a 2026-07-28 client: ``server/discover`` and ``tools/list``."""
    path = tmp_path / "notes.cassette.json"
    result = run(["record", "--quiet", "--cassette", str(path), "--", sys.executable, NOTES], FIRST)
    assert result.returncode == 0, result.stderr
    assert [m.method for m in load_cassette(path).requests()] == ["server/discover", "tools/list"]
    return path


def test_a_miss_goes_to_a_stateless_live_server_as_it_is_and_the_grown_cassette_replays(
    cassette: Path,
) -> None:
    episodes = ["replay", "--mode", "new_episodes", "--cassette", str(cassette)]

    result = run([*episodes, "--", sys.executable, NOTES], FIRST + MISS)

    assert result.returncode == 0, result.stderr
    answer = replies(result.stdout)[3]
    assert answer["result"]["structuredContent"]["name"] == "welcome", answer
    assert answer["result"]["resultType"] == "complete"  # the live server's own 2026-07-28 answer
    appended = [m for m in load_cassette(cassette).requests() if m.method == "tools/call"]
    assert [m.message["params"]["_meta"] for m in appended] == [ENVELOPE]  # forwarded as it was
    assert "initialize" not in [m.method for m in load_cassette(cassette).requests()]

    again = run(["replay", "--strict", "--cassette", str(cassette)], FIRST + MISS)
    assert again.returncode == 0, again.stderr
    assert replies(again.stdout) == replies(result.stdout)


def test_a_live_server_that_refuses_server_discover_gets_an_initialize_of_the_replays_own(
    cassette: Path,
) -> None:
    """fake_server.py answers anything with ``{"echo": params}``: no ``supportedVersions`` in its
    discover answer, so the replay opens a classic session; the miss goes without the envelope
    and its answer reaches the client as a 2026-07-28 result."""
    episodes = ["replay", "--mode", "new_episodes", "--cassette", str(cassette)]

    result = run([*episodes, "--", sys.executable, FAKE, "echo"], FIRST + MISS)

    assert result.returncode == 0, result.stderr
    answer = replies(result.stdout)[3]
    sent = {"name": "read_note", "arguments": {"name": "welcome"}}
    assert answer["result"] == {"echo": sent, "resultType": "complete"}, answer
    [appended] = [m for m in load_cassette(cassette).requests() if m.method == "tools/call"]
    assert appended.message["params"] == sent  # what the live server was sent

    again = run(["replay", "--strict", "--cassette", str(cassette)], FIRST + MISS)
    assert again.returncode == 0, again.stderr
    assert replies(again.stdout)[3] == answer
