"""Deeply nested JSON through real processes: up to orjson's 1,024 levels it is forwarded,
recorded and replayed; deeper lines are forwarded byte for byte and recorded as invalid. Never
a dead pump thread, never exit 70."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock import deepjson
from harn_mcp_mock.cassette.model import load_cassette

FAKE = str(Path(__file__).parent / "servers" / "fake_server.py")
WAIT = 60


def deep_call(depth: int) -> bytes:
    arg = b"[" * depth + b"1" + b"]" * depth
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":'
        + arg
        + b"}}}\n"
    )


def harn(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", *args], input=stdin, capture_output=True, timeout=WAIT
    )


def test_deepjson_writes_what_orjson_parses_at_every_depth() -> None:
    for depth in (1, 254, 255, 1000, deepjson.MAX_DEPTH):
        line = b'{"a":' * depth + b"[1]" + b"}" * depth
        if depth + 1 > deepjson.MAX_DEPTH:
            continue
        value = orjson.loads(line)
        assert deepjson.dumps(value) == line
        assert deepjson.depth(value) == depth + 1
    with pytest.raises(orjson.JSONDecodeError, match="depth limit"):
        orjson.loads(b"[" * (deepjson.MAX_DEPTH + 1) + b"]" * (deepjson.MAX_DEPTH + 1))


@pytest.mark.parametrize("depth", [250, 1000])
def test_deep_arguments_are_recorded_and_replayed(tmp_path: Path, depth: int) -> None:
    cassette = tmp_path / "deep.cassette.json"
    line = deep_call(depth)
    direct = subprocess.run([sys.executable, FAKE, "echo"], input=line, capture_output=True, timeout=WAIT)
    recorded = harn("record", "--cassette", str(cassette), "--", sys.executable, FAKE, "echo", stdin=line)
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout == direct.stdout and recorded.stdout.startswith(b'{"result"')
    messages = load_cassette(cassette).messages
    assert [(m.direction, m.kind) for m in messages] == [("client", "request"), ("server", "response")]
    assert messages[0].message == orjson.loads(line)
    replayed = harn("replay", "--cassette", str(cassette), stdin=line)
    assert replayed.returncode == 0, replayed.stderr
    assert orjson.loads(replayed.stdout) == orjson.loads(direct.stdout)


def test_a_line_deeper_than_the_parser_is_forwarded_and_recorded_as_invalid(tmp_path: Path) -> None:
    cassette = tmp_path / "deeper.cassette.json"
    line = deep_call(2000)
    direct = subprocess.run([sys.executable, FAKE, "echo"], input=line, capture_output=True, timeout=WAIT)
    recorded = harn("record", "--cassette", str(cassette), "--", sys.executable, FAKE, "echo", stdin=line)
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout == direct.stdout  # forwarded byte for byte both ways
    messages = load_cassette(cassette).messages
    assert [m.kind for m in messages] == ["invalid", "invalid"]
    assert all("depth limit exceeded" in (m.invalid or "") for m in messages)
    assert b"Traceback" not in recorded.stderr


def test_replay_answers_a_too_deep_request_with_a_parse_error(tmp_path: Path) -> None:
    cassette = tmp_path / "deep.cassette.json"
    harn("record", "--cassette", str(cassette), "--", sys.executable, FAKE, "echo", stdin=deep_call(3))
    replayed = harn("replay", "--cassette", str(cassette), stdin=deep_call(2000))
    assert replayed.returncode == 0, replayed.stderr
    answer = orjson.loads(replayed.stdout)
    assert answer["error"]["code"] == -32700
    lines = replayed.stderr.decode().splitlines()
    assert len(lines) == 1 and "depth limit exceeded" in lines[0]


@pytest.mark.parametrize(("depth", "code"), [(300, 0), (1020, 0), (2000, 2)])
def test_world_check_takes_any_depth_the_parser_accepts(tmp_path: Path, depth: int, code: int) -> None:
    spec = (Path(__file__).parents[1] / "worlds" / "notes" / "notes.world.json").read_text()
    deep = "[" * depth + "]" * depth
    spec = spec.replace('"notes": {', f'"deep": {deep}, "notes": {{', 1)
    path = tmp_path / "deep.world.json"
    path.write_text(spec)
    done = harn("world", "check", "--spec", str(path), stdin=b"")
    assert done.returncode == code, done.stderr
    if code:
        assert "depth limit exceeded" in done.stderr.decode() and len(done.stderr.splitlines()) == 1
