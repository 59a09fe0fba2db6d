"""plan_session: the one decision of what a session is (replay, record, episodes), for every
record mode, cassette state and live server; the claim it holds; and that every transport asks it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harn_mcp_mock.cassette.claim import CassetteClaim, claim_path
from harn_mcp_mock.cassette.model import journal_path
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, parse_record_mode, plan_session
from harn_mcp_mock.errors import CassetteBusyError, CassetteError, UsageError
from tests.echo_cassette import echo_cassette

REPO = Path(__file__).resolve().parents[2]
REPLAY, RECORD, EPISODES = SessionKind.REPLAY, SessionKind.RECORD, SessionKind.EPISODES


@pytest.mark.parametrize(
    ("mode", "exists", "kind"),
    [
        ("none", True, REPLAY),
        ("none", False, REPLAY),  # replaying a missing cassette fails where it is opened
        ("once", True, REPLAY),
        ("once", False, RECORD),
        ("new_episodes", True, EPISODES),
        ("new_episodes", False, RECORD),  # nothing to replay yet: every request is new
        ("all", True, RECORD),
        ("all", False, RECORD),
        ("rewrite", True, RECORD),  # X07 aliases plan as their modes
        ("record_missing", True, EPISODES),
    ],
)
def test_each_mode_and_cassette_state_plans_one_kind_of_session(
    tmp_path: Path, mode: str, exists: bool, kind: SessionKind
) -> None:
    path = tmp_path / "c.cassette.json"
    if exists:
        echo_cassette(path, "hi")
    with plan_session(mode, path, live=True) as plan:
        assert plan.kind is kind and plan.mode is parse_record_mode(mode)
        assert plan.records is (kind is not REPLAY)
        # a session that writes the cassette holds its claim; a replay holds nothing
        assert (plan.claim is not None and plan.claim.held) is plan.records
        assert claim_path(path).exists() is plan.records
    assert not claim_path(path).exists()  # released on the way out


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all"])
def test_a_session_that_records_without_a_live_server_says_what_to_give(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "missing.cassette.json"
    with pytest.raises(
        UsageError, match=rf"record mode {mode} records .*missing\.cassette\.json, so it needs -- CMD"
    ):
        plan_session(mode, path, live=False, needs_live="-- CMD")
    assert not claim_path(path).exists()


def test_replay_needs_no_live_server_and_takes_no_claim(tmp_path: Path) -> None:
    path = tmp_path / "c.cassette.json"
    echo_cassette(path, "hi")
    for mode in ("none", "once"):
        plan = plan_session(mode, path, live=False)
        assert plan.kind is REPLAY and plan.claim is None


def test_all_and_new_episodes_refuse_a_held_cassette_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.cassette.json"
    echo_cassette(path, "hi")
    other = CassetteClaim(path).acquire()  # another recorder (a second lock in this process)
    try:
        for mode in ("all", "new_episodes"):
            with pytest.raises(CassetteBusyError, match="is recording this cassette"):
                plan_session(mode, path, live=True)
    finally:
        other.release()


def test_a_dead_recorders_journal_in_the_way_is_refused_and_the_claim_let_go(tmp_path: Path) -> None:
    path = tmp_path / "c.cassette.json"
    journal_path(path).write_text('{"format": "harn-mcp-cassette-journal"}\n')
    with pytest.raises(CassetteError, match="harn mcp mock recover"):
        plan_session(RecordMode.ALL, path, live=True)
    assert not claim_path(path).exists()


SESSION_MAKERS = {
    "harn_mcp_mock/stdio/run.py": "run_replay",
    "harn_mcp_mock/api.py": "cassette_transport",
    "harn_mcp_mock/pytest_plugin.py": "_plan",
    "harn_mcp_mock/http/run.py": "run_http_session",
}


def test_every_transport_asks_plan_session_and_none_decides_by_itself() -> None:
    """stdio replay, the API, the pytest plugin and HTTP call plan_session; no other module
    compares a RecordMode member or takes a claim for a mode (the copies are gone)."""
    deciders = []
    for path in sorted((REPO / "harn_mcp_mock").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel == "harn_mcp_mock/cassette/modes.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        if rel in SESSION_MAKERS:
            assert "plan_session" in calls, f"{rel} does not ask plan_session"
        compared = [
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "RecordMode"
            and node.attr in ("ONCE", "ALL", "NEW_EPISODES")
        ]
        if compared or "claim_once" in calls:
            deciders.append(f"{rel}: {compared or 'claim_once'}")
    assert deciders == []


def test_a_claim_planned_for_later_is_taken_by_the_recorder_when_it_starts(tmp_path: Path) -> None:
    """The Python API plans at construction and records when the transport is entered."""
    from harn_mcp_mock.cassette.claim import recording_claim

    path = tmp_path / "c.cassette.json"
    echo_cassette(path, "hi")
    other = CassetteClaim(path).acquire()
    plans = [plan_session(mode, path, live=True, claim_now=False) for mode in ("all", "new_episodes")]
    assert [p.kind for p in plans] == [RECORD, EPISODES]
    assert all(p.claim is not None and not p.claim.held for p in plans)
    with pytest.raises(CassetteBusyError):  # the recorder's turn: now it is refused
        with recording_claim(path, plans[0].claim):
            pass
    other.release()
    with recording_claim(path, plans[1].claim) as claim:
        assert claim.held
    assert not claim_path(path).exists()
