"""The conformance checker against our mock Harness (it conforms) and against deliberately broken
wrappers of it (each breaks one MUST, and the checker names the check that catches it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.agents.conform import (
    CHECKS,
    LEVELS,
    Level,
    Outcome,
    Report,
    Settings,
    run_conformance,
    select,
)
from harn_mcp_mock.agents.conform.render import render_json, render_table
from harn_mcp_mock.errors import UsageError
from tests.agents.test_conform_servers import (
    KEY,
    Gate,
    Rewrite,
    Scope,
    header,
    serve_mock,
    without_header,
)

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("agents/test_conform")

SPEC = Path(__file__).resolve().parent / "spec" / "agents-protocol-v1.md"


@pytest.fixture(scope="module")
def mock_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_mock(tmp_path_factory.mktemp("conform") / "harness.sqlite3") as url:
        yield url


def conform(url: str, level: str = "core", *patterns: str) -> Report:
    return run_conformance(Settings(url=url, api_key=KEY), level=level, patterns=patterns)


def outcomes(report: Report) -> dict[str, str]:
    return {r.id: f"{r.outcome.value}: {r.reason}" for r in report.results}


# --------------------------------------------------------------------------- the registry


def test_every_check_quotes_its_spec_sentence_verbatim() -> None:
    spec = re.sub(r"\s+", "", SPEC.read_text(encoding="utf-8"))
    for c in CHECKS:
        for piece in re.split(r" / | \[\.\.\.\] ", c.spec):
            assert re.sub(r"\s+", "", piece) in spec, (c.id, piece)
        assert ("SHOULD" in c.spec) == (c.requirement == "SHOULD"), c.id


def test_levels_are_cumulative_over_core() -> None:
    def levels(name: str) -> set[Level]:
        return {c.level for c in select(name)}

    assert levels("core") == {Level.CORE}
    assert levels("receipts") == {Level.CORE, Level.RECEIPTS}
    assert levels("replay") == {Level.CORE, Level.REPLAY}
    assert levels("all") == set(Level)
    assert set(LEVELS) == {"core", "receipts", "replay", "all"}


def test_check_patterns_select_across_levels_and_unknown_ones_are_usage_errors() -> None:
    assert [c.id for c in select("core", ["receipts.hash"])] == ["receipts.hash"]
    assert {c.id for c in select("core", ["core.sse.*"])} == {
        "core.sse.frames", "core.sse.resume", "core.sse.resume_replays", "core.sse.cursor_expired",
    }  # fmt: skip
    with pytest.raises(UsageError, match="no check matches"):
        select("core", ["core.nope"])
    with pytest.raises(UsageError, match="unknown level"):
        select("extended")


# --------------------------------------------------------------------------- our mock conforms


@pytest.mark.parametrize("level", ["core", "receipts", "replay"])
def test_the_mock_passes_every_level(mock_url: str, level: str) -> None:
    report = conform(mock_url, level)
    assert [r.id for r in report.results] == [c.id for c in select(level)]
    bad = {k: v for k, v in outcomes(report).items() if not v.startswith(("pass", "skip"))}
    assert bad == {}
    assert report.ok and report.exit_code == 0
    skipped = {r.id for r in report.results if r.outcome is Outcome.SKIP}
    # only the two checks that need to catch a task before the (fast) mock agent finishes it
    assert skipped <= {"core.cancel.never_completed", "replay.source.non_terminal.409"}


def test_a_mock_whose_agent_waits_for_the_next_request_passes_every_check_without_skips(
    tmp_path: Path,
) -> None:
    gate = Gate()
    with serve_mock(tmp_path / "h.sqlite3", gate.install) as url:
        report = conform(url, "all")
    assert {r.id: r.outcome for r in report.results} == {c.id: Outcome.PASS for c in CHECKS}, outcomes(report)


def test_the_renderings_name_every_check_and_never_the_key(mock_url: str) -> None:
    report = conform(mock_url, "core", "core.auth.*", "core.version.*")
    table = render_table(report)
    assert "core.auth.bad_key.401" in table and "PASS" in table
    assert table.rstrip().splitlines()[-1].startswith("CONFORMS at level core: 6 checks, 6 passed")
    assert KEY not in table and KEY not in render_json(report)
    assert report.to_dict()["results"][0].keys() == {
        "id", "level", "requirement", "section", "spec", "outcome", "reason", "duration_ms",
    }  # fmt: skip


# --------------------------------------------------------------------------- broken Harnesses


def cancel_accepts_terminal(app: Any) -> Any:
    """Answers 200 CANCELED to a cancel of a COMPLETED/FAILED task and shows it CANCELED after."""
    canceled: set[str] = set()

    def response(scope: Scope, status: int, body: Any) -> tuple[int, Any]:
        path = scope["path"]
        if path.endswith("/cancel") and status == 400:
            task_id = path.split("/")[3]
            canceled.add(task_id)
            return 200, {"id": task_id, "object": "task", "status": "CANCELED"}
        if scope["method"] == "GET" and isinstance(body, dict) and body.get("id") in canceled:
            return status, {**body, "status": "CANCELED"}
        return status, body

    return Rewrite(app, response=response)


def ignores_idempotency_key(app: Any) -> Any:
    return Rewrite(app, request=lambda scope: without_header(scope, "idempotency-key"))


def answers_400_for_bad_versions(app: Any) -> Any:
    def response(scope: Scope, status: int, body: Any) -> tuple[int, Any]:
        if status == 426:
            body["error"].update(code="invalid_request", type="request_error")
            return 400, body
        return status, body

    return Rewrite(app, response=response)


def echoes_the_key_in_errors(app: Any) -> Any:
    def response(scope: Scope, status: int, body: Any) -> tuple[int, Any]:
        if status >= 400 and isinstance(body, dict) and "error" in body:
            body["error"]["details"]["authorization"] = header(scope, "authorization")
        return status, body

    return Rewrite(app, response=response)


def forgets_last_event_id(app: Any) -> Any:
    """Ignores Last-Event-ID: a resume or an unknown cursor restarts the stream from the top."""
    return Rewrite(app, request=lambda scope: without_header(scope, "last-event-id"))


def tampers_with_receipts(app: Any) -> Any:
    def response(scope: Scope, status: int, body: Any) -> tuple[int, Any]:
        if scope["path"].startswith("/v1/receipts/") and status == 200 and "chain" in body:
            body["cost"] = {"total_usd": 1, "providers": {}}  # changed after sealing
        return status, body

    return Rewrite(app, response=response)


BROKEN: dict[str, tuple[Callable[[Any], Any], str, set[str]]] = {
    "cancel of a terminal task accepted": (
        cancel_accepts_terminal, "core", {"core.cancel.terminal_rejected"},
    ),
    "Idempotency-Key ignored": (
        ignores_idempotency_key, "core",
        {"core.idempotency.same_body", "core.idempotency.different_body.409", "core.idempotency.concurrent"},
    ),
    "400 instead of 426": (
        answers_400_for_bad_versions, "core", {"core.version.missing.426", "core.version.unsupported.426"},
    ),
    "API key echoed in errors": (
        echoes_the_key_in_errors, "core", {"core.auth.key_not_echoed", "core.auth.bad_key.401"},
    ),
    "Last-Event-ID ignored": (
        forgets_last_event_id, "core", {"core.sse.resume", "core.sse.cursor_expired"},
    ),
    "receipt altered after sealing": (
        tampers_with_receipts, "receipts", {"receipts.hash"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_harness_fails_the_check_for_the_must_it_breaks(tmp_path: Path, name: str) -> None:
    wrap, level, expected = BROKEN[name]
    gate = Gate()  # deterministic: every other check passes (nothing is skipped for timing)
    with serve_mock(tmp_path / "h.sqlite3", lambda app: wrap(gate.install(app))) as url:
        report = conform(url, level)
    failed = {r.id for r in report.results if r.outcome is Outcome.FAIL}
    assert failed == expected, outcomes(report)
    others = {r.outcome for r in report.results if r.id not in expected and r.requirement == "MUST"}
    assert others == {Outcome.PASS}, outcomes(report)
    assert not report.ok and report.exit_code == 1
    for check_id in expected:
        assert report.result(check_id).reason, check_id  # says what was expected and what came back
