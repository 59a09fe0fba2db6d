"""Run a selection of checks against a Harness and collect a :class:`Report`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.conform.client import ConformClient, ConnectionFailed
from harn_mcp_mock.agents.conform.registry import (
    Check,
    CheckAbort,
    Context,
    Fail,
    Outcome,
    Prerequisite,
    Settings,
    Skip,
    select,
)

__all__ = ["CheckResult", "Report", "run_check", "run_checks", "run_conformance"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    id: str
    level: str
    requirement: str
    section: str
    spec: str
    outcome: Outcome
    reason: str
    duration_ms: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "requirement": self.requirement,
            "section": self.section,
            "spec": self.spec,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "duration_ms": self.duration_ms,
        }


@dataclass(frozen=True, slots=True)
class Report:
    url: str
    level: str
    results: list[CheckResult] = field(default_factory=list)
    duration_ms: int = 0

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(r.outcome.value for r in self.results)
        return {o.value: counted.get(o.value, 0) for o in Outcome}

    @property
    def ok(self) -> bool:
        """Every MUST check passed or was skipped (SHOULD checks only warn)."""
        return not any(r.outcome in (Outcome.FAIL, Outcome.ERROR) for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def result(self, check_id: str) -> CheckResult:
        return next(r for r in self.results if r.id == check_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "level": self.level,
            "protocol_version": PROTOCOL_VERSION,
            "ok": self.ok,
            "summary": {"total": len(self.results), **self.counts},
            "duration_ms": self.duration_ms,
            "results": [r.to_dict() for r in self.results],
        }


def _ms(start: float) -> int:
    return int((time.perf_counter() - start) * 1000)


def run_check(check: Check, ctx: Context) -> CheckResult:
    """One check; never raises (a connection failure mid-run is an ``error`` outcome)."""
    start = time.perf_counter()
    outcome, reason = Outcome.PASS, ""
    try:
        note = check.run(ctx)
        reason = note or ""
    except Fail as exc:
        outcome, reason = (Outcome.FAIL if check.requirement == "MUST" else Outcome.WARN), exc.reason
    except Skip as exc:
        outcome, reason = Outcome.SKIP, exc.reason
    except Prerequisite as exc:
        outcome, reason = Outcome.ERROR, f"prerequisite: {exc.reason}"
    except CheckAbort as exc:
        outcome, reason = Outcome.ERROR, exc.reason
    except ConnectionFailed as exc:
        outcome, reason = Outcome.ERROR, exc.message
    except Exception as exc:  # a check must never take the whole run down
        outcome, reason = Outcome.ERROR, f"{type(exc).__name__}: {exc}"
    if outcome is Outcome.ERROR and check.requirement == "SHOULD":
        outcome = Outcome.WARN
    reason = reason.replace(ctx.settings.api_key, "<api-key>") if ctx.settings.api_key else reason
    return CheckResult(
        id=check.id,
        level=check.level.value,
        requirement=check.requirement,
        section=check.section,
        spec=check.spec,
        outcome=outcome,
        reason=" ".join(reason.split()),
        duration_ms=_ms(start),
    )


def run_checks(
    checks: Iterable[Check],
    settings: Settings,
    *,
    level: str = "core",
    on_result: Callable[[CheckResult], None] | None = None,
) -> Report:
    """Preflight (the URL answers at all; ``ConnectionFailed`` otherwise), then every check."""
    start = time.perf_counter()
    client = ConformClient(settings.url, settings.api_key, timeout=settings.request_timeout)
    ctx = Context(settings, client)
    try:
        client.get("/.well-known/harn-agent-card.json", version=None, auth=None)  # reachability only
        results = []
        for check in checks:
            result = run_check(check, ctx)
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        ctx.close()
    return Report(url=settings.url, level=level, results=results, duration_ms=_ms(start))


def run_conformance(
    settings: Settings,
    *,
    level: str = "core",
    patterns: Iterable[str] = (),
    on_result: Callable[[CheckResult], None] | None = None,
) -> Report:
    """Select the checks (``level`` cumulative, or ``patterns``) and run them."""
    checks = select(level, patterns)
    return run_checks(checks, settings, level=level, on_result=on_result)
