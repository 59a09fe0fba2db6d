"""The check registry: what a conformance check is, its outcomes, and the shared run context.

A :class:`Check` names one observable requirement of the spec (its ``id``, ``level``, the
``section`` and the exact ``spec`` sentence it tests, and whether the spec says MUST or SHOULD).
Its function either returns (pass; optionally a short note), or raises :class:`Fail`,
:class:`Skip` or :class:`Prerequisite` (the check could not run: an *error* outcome).

The :class:`Context` holds the client, the settings and memoised fixtures shared between checks
(the probe task is submitted once and awaited once, its events read once), so any subset of checks
can run in any order.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeVar

from harn_mcp_mock.agents.conform.client import ConformClient
from harn_mcp_mock.errors import UsageError

__all__ = [
    "CHECKS",
    "LEVELS",
    "Check",
    "CheckAbort",
    "Context",
    "Fail",
    "Level",
    "Outcome",
    "Prerequisite",
    "Settings",
    "Skip",
    "check",
    "levels_for",
    "select",
]

T = TypeVar("T")


class Level(StrEnum):
    CORE = "core"
    RECEIPTS = "receipts"
    REPLAY = "replay"


#: ``--level`` values and the check levels each runs (Receipts and Replay each require Core).
LEVELS: Mapping[str, tuple[Level, ...]] = {
    "core": (Level.CORE,),
    "receipts": (Level.CORE, Level.RECEIPTS),
    "replay": (Level.CORE, Level.REPLAY),
    "all": (Level.CORE, Level.RECEIPTS, Level.REPLAY),
}


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # a MUST is broken
    WARN = "warn"  # a SHOULD is not met (advisory: never changes the exit code)
    SKIP = "skip"  # not applicable to this Harness (a reason says why)
    ERROR = "error"  # the check could not run (a prerequisite failed)


class CheckAbort(Exception):
    """Ends a check with a one-line reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Fail(CheckAbort):
    """The Harness broke the requirement: expected ..., got ..."""


class Skip(CheckAbort):
    """The requirement cannot be observed on this Harness (e.g. no replay route)."""


class Prerequisite(CheckAbort):
    """Something the check needs (the probe task, its events) is unavailable."""


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    level: Level
    requirement: Literal["MUST", "SHOULD"]
    section: str
    spec: str
    run: Callable[[Context], str | None]


CHECKS: list[Check] = []


def check(
    id: str, level: Level, section: str, spec: str, *, requirement: Literal["MUST", "SHOULD"] = "MUST"
) -> Callable[[Callable[[Context], str | None]], Callable[[Context], str | None]]:
    """Register a check (registration order is run order)."""

    def register(fn: Callable[[Context], str | None]) -> Callable[[Context], str | None]:
        if any(c.id == id for c in CHECKS):
            raise ValueError(f"duplicate check id {id!r}")
        CHECKS.append(Check(id, level, requirement, section, " ".join(spec.split()), fn))
        return fn

    return register


def levels_for(level: str) -> tuple[Level, ...]:
    try:
        return LEVELS[level]
    except KeyError:
        raise UsageError(
            f"unknown level {level!r} (use one of {', '.join(LEVELS)})", where="--level"
        ) from None


def select(level: str, patterns: Iterable[str] = ()) -> list[Check]:
    """The checks of ``level`` (cumulative), or, when ``patterns`` are given, every check whose id
    matches one of them (``fnmatch``: ``core.sse.*``), whatever its level."""
    wanted = list(patterns)
    if not wanted:
        levels = levels_for(level)
        return [c for c in CHECKS if c.level in levels]
    for pattern in wanted:
        if not any(fnmatch.fnmatchcase(c.id, pattern) for c in CHECKS):
            raise UsageError(f"no check matches {pattern!r} (list them with --list)", where="--check")
    return [c for c in CHECKS if any(fnmatch.fnmatchcase(c.id, p) for p in wanted)]


@dataclass(frozen=True, slots=True)
class Settings:
    url: str
    api_key: str
    task_input: Mapping[str, Any] = field(default_factory=lambda: {"text": "conformance probe"})
    task_timeout: float = 10.0  # seconds for a task to reach a terminal state
    stream_timeout: float = 5.0  # seconds for one SSE read
    request_timeout: float = 10.0
    concurrency: int = 8  # threads for the concurrent idempotent submit


class Context:
    """What checks share: the client, the settings and memoised fixtures."""

    def __init__(self, settings: Settings, client: ConformClient | None = None) -> None:
        self.settings = settings
        self.client = client or ConformClient(
            settings.url, settings.api_key, timeout=settings.request_timeout
        )
        self._memo: dict[str, tuple[bool, Any]] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.client.close()

    def once(self, name: str, make: Callable[[], T]) -> T:
        """``make()`` the first time, the same value (or the same exception) afterwards."""
        with self._lock:
            if name in self._memo:
                ok, value = self._memo[name]
                if ok:
                    return value  # type: ignore[no-any-return]
                raise value
        try:
            made = make()
        except (CheckAbort, Exception) as exc:
            self._memo[name] = (False, exc)
            raise
        self._memo[name] = (True, made)
        return made
