"""``open_session``: the one place a session's engines are built, with the tape and the fault
marking wired once whatever the transport serves them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.cassette.modes import SessionKind, SessionPlan
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.options import LiveTarget, ReplayOptions
from harn_mcp_mock.session.open import Refusing, open_session
from harn_mcp_mock.tape import load_tape

ROOT = Path(__file__).resolve().parents[2]
TIME = ROOT / "cassettes" / "time.cassette.json"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
MISSING = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}


def exchanges(path: Path) -> list[dict[str, Any]]:
    return [r.fields for r in load_tape(path).records if r.kind == "mcp_json_rpc"]


def test_every_client_session_of_a_replay_goes_on_one_tape_and_one_report(tmp_path: Path) -> None:
    tape = tmp_path / "t.tape.jsonl"
    plan = SessionPlan.of(SessionKind.REPLAY, TIME)
    with open_session(plan, tape=tape, tape_argv=["replay", "--http"]) as session:
        first, second = session.engine(), session.engine()
        for engine in (first, second):
            engine.receive(INIT)
        first.receive(LIST)
        second.receive(MISSING)
        session.retire(first)
        session.retire(second)
        report = session.report()
    assert (report.requests, report.hits, len(report.misses)) == (4, 3, 1)
    assert load_tape(tape).header["argv"] == ["replay", "--http"]
    methods = [x.get("method") for x in exchanges(tape)]
    assert methods.count("initialize") == 2 and "tools/list" in methods and "tools/call" in methods


def test_a_replay_with_fault_rules_marks_the_faulted_exchange_on_the_tape(tmp_path: Path) -> None:
    tape = tmp_path / "t.tape.jsonl"
    rules = [{"id": "boom", "method": "tools/list", "kind": "rate_limit", "on_calls": [1]}]
    options = ReplayOptions.build(faults=rules)
    with open_session(SessionPlan.of(SessionKind.REPLAY, TIME), None, options, tape=tape) as session:
        engine = session.engine()
        engine.receive(INIT)
        [faulted] = engine.receive(LIST)
        session.retire(engine)
    assert "error" in faulted.message
    [marked] = [x for x in exchanges(tape) if x.get("method") == "tools/list"]
    assert marked["fault"] == {"id": "boom", "kind": "rate_limit"}


def test_without_a_session_the_replay_reports_the_cassette_as_it_stands() -> None:
    session = open_session(SessionPlan.of(SessionKind.REPLAY, TIME))
    report = session.report()
    assert report.requests == 0 and report.unused  # every interaction unused: nothing was asked


def test_a_recording_whose_server_cannot_start_refuses_the_session_and_writes_nothing(tmp_path: Path) -> None:
    cassette = tmp_path / "c.cassette.json"
    live = LiveTarget([str(tmp_path / "no-such-server")])
    with open_session(SessionPlan.of(SessionKind.RECORD, cassette), live) as session:
        engine = session.engine()
        assert isinstance(engine, Refusing)
        [answer] = engine.receive(INIT)
        assert "could not be started" in answer.message["error"]["message"]
        session.retire(engine)
        with pytest.raises(Exception, match="nothing was recorded"):
            session.recorded()
    assert not cassette.exists()


def test_a_session_that_writes_the_cassette_holds_its_claim(tmp_path: Path) -> None:
    from harn_mcp_mock.cassette.claim import CassetteClaim
    from harn_mcp_mock.errors import CassetteBusyError

    cassette = tmp_path / "c.cassette.json"
    live = LiveTarget(["python", "-c", "pass"])
    with open_session(SessionPlan.of(SessionKind.RECORD, cassette), live):
        with pytest.raises(CassetteBusyError):
            CassetteClaim(cassette).acquire()
    CassetteClaim(cassette).acquire()  # let go on the way out


def test_a_live_target_is_one_server_given_once() -> None:
    with pytest.raises(UsageError, match="not both"):
        LiveTarget(["server"], url="http://127.0.0.1:1/mcp")
    with pytest.raises(UsageError, match="--url only"):
        LiveTarget(["server"], headers=["A:b"])
    with pytest.raises(UsageError, match="NAME:VALUE"):
        LiveTarget(url="http://127.0.0.1:1/mcp", headers=["A=b"])
    target = LiveTarget(url="http://h/mcp", headers=["Authorization: Bearer x:y"])
    assert target.argv == ["--url", "http://h/mcp", "--header", "Authorization: Bearer x:y"]
    assert target.header_map() == {"Authorization": "Bearer x:y"}
    assert LiveTarget.of("http://h/mcp", headers=["Authorization: Bearer x:y"]) == target
    assert LiveTarget.of(["python", "s.py"]).argv == ["python", "s.py"] and not LiveTarget()


def test_the_transports_runs_wire_no_tape_and_no_engine_of_their_own() -> None:
    """stdio's and HTTP's runs serve what open_session builds: neither wraps an engine for the
    tape, opens a tape, builds a replay engine or an episodes session itself."""
    import ast

    wired = {"TapedEngine", "McpTapeObserver", "TapeWriter", "RecordingTape", "engine_factory"}
    wired |= {"open_engine", "NewEpisodes", "EpisodesEngine", "RecordEngine", "open_record"}
    found = {}
    for rel in ("harn_mcp_mock/stdio/run.py", "harn_mcp_mock/http/run.py"):
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        found[rel] = sorted(names & wired)
    assert found == {"harn_mcp_mock/stdio/run.py": [], "harn_mcp_mock/http/run.py": []}
