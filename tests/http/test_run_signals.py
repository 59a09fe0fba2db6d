"""Stop signals over HTTP: `replay --http` writes its report and exits 128 + N; `record --url`
writes the cassette (exit 0), or, when no client message came, keeps the old one (exit 5).
Real processes; each signal is sent after a real event (the URL line, an SDK session's answers)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import mcp
import orjson
import pytest

from harn_mcp_mock.cassette.model import journal_path, load_cassette
from tests.serving import url_process

from .conftest import serve_cassette

HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60


async def _list_and_call(url: str) -> None:
    with anyio.fail_after(WAIT):
        async with mcp.Client(url, mode="legacy") as client:
            tools = await client.session.list_tools()
            assert "read_note" in {t.name for t in tools.tools}
            await client.session.call_tool("read_note", {"name": "welcome"})


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
async def test_replay_http_stopped_by_a_signal_writes_its_report_and_exits_128_plus_n(
    tmp_path: Path, notes_cassette: Path, sig: signal.Signals
) -> None:
    report = tmp_path / "report.json"
    args = ["replay", "--http", "--port", "0", "--cassette", str(notes_cassette), "--report", str(report)]
    with url_process(args) as (proc, url):
        await _list_and_call(url)
        proc.send_signal(sig)
        assert proc.wait(timeout=WAIT) == 128 + sig
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr
    summary = orjson.loads(report.read_bytes())
    assert summary["hits"] >= 3 and summary["misses"] == []  # initialize, tools/list, tools/call


async def test_record_url_stopped_by_sigterm_writes_the_cassette(
    tmp_path: Path, notes_cassette: Path
) -> None:
    cassette = tmp_path / "proxied.cassette.json"
    with serve_cassette(notes_cassette) as (upstream, _engines):
        with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, url):
            await _list_and_call(url)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=WAIT) == 0
            assert proc.stderr is not None
            stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr
    loaded = load_cassette(cassette)
    assert loaded.meta["exit"]["reason"] == "signal:SIGTERM"
    methods = [m.method for m in loaded.messages if m.direction == "client" and m.kind == "request"]
    assert methods == ["initialize", "tools/list", "tools/call"]
    assert not journal_path(cassette).exists()


def test_record_url_without_a_single_request_keeps_the_cassette(tmp_path: Path, notes_cassette: Path) -> None:
    cassette = tmp_path / "kept.cassette.json"
    cassette.write_bytes(notes_cassette.read_bytes())
    before = cassette.read_bytes()
    with serve_cassette(notes_cassette) as (upstream, _engines):
        with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, _url):
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=WAIT) == 5
            assert proc.stderr is not None
            lines = proc.stderr.read().decode().splitlines()
    assert len(lines) == 1 and "nothing recorded" in lines[0] and "kept the existing cassette" in lines[0]
    assert cassette.read_bytes() == before
    assert not journal_path(cassette).exists()
