"""The whole redaction corpus through ``harn mcp mock record`` as a real process.

Every credential of tests/redaction_corpus is planted in the environment and on the command line
(``--flag value`` and ``--flag=value``) of a scripted server (tests/servers/planted_server.py),
which prints them back in tool results, structuredContent, a log notification, an error and
resources (text, JSON and a base64 text blob over 4 KiB); the client also sends each one under
its own name as a tool argument. The client's stdout proves they crossed the wire; then no byte
the recorder wrote (cassette, sidecar blobs, tape, its stderr) holds any of them in raw,
JSON-escaped, URL-encoded or base64 form.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from tests.e2e.peers import WAIT
from tests.redaction_corpus import corpus, harness

pytestmark = pytest.mark.e2e

SERVER = str(Path(__file__).parents[1] / "servers" / "planted_server.py")


def line(i: int, method: str, **params: object) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


def test_no_corpus_credential_reaches_any_byte_the_recorder_writes(tmp_path: Path) -> None:
    secrets = corpus.secrets()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARN_")}
    env.update({s.env: s.value for s in secrets})
    argv: list[str] = []
    for i, s in enumerate(secrets):
        argv += [s.flag, s.value] if i % 2 else [f"{s.flag}={s.value}"]
    cassette, tape = tmp_path / "out" / "c.cassette.json", tmp_path / "out" / "c.tape.jsonl"
    stdin = line(
        0,
        "initialize",
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    stdin += b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    stdin += line(1, "tools/call", name="echo", arguments={s.key: s.value for s in secrets})
    stdin += line(2, "tools/call", name="fail", arguments={})
    stdin += line(3, "resources/read", uri="file:///env.txt")
    cassette.parent.mkdir()
    command = [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette)]
    result = subprocess.run(
        [*command, "--emit-tape", str(tape), "--", sys.executable, SERVER, *argv],
        input=stdin,
        capture_output=True,
        timeout=WAIT,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert all(
        s.value.encode() in result.stdout.replace(b"\\n", b"\n") for s in secrets if "\n" not in s.value
    )
    assert b"[REDACTED:" in tape.read_bytes()
    blobs = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and p.parent.name.endswith(".cas")]
    assert blobs, "the outputs over 4 KiB went to sidecar blobs"
    (tmp_path / "out" / "stderr.txt").write_bytes(result.stderr)
    assert harness.leaked(tmp_path / "out", secrets) == []
    recorded = load_cassette(cassette)
    assert len(recorded.meta["command"]) == len(argv) + 2
    assert recorded.meta["redaction"]["fingerprints"]["values"]
