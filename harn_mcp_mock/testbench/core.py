"""``Testbench``: compose the axes, activate them as a context manager, finalize the artifacts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from harn_mcp_mock.clock import Clock, PausedClock, SystemClock
from harn_mcp_mock.errors import LlmFixtureError, TestbenchError
from harn_mcp_mock.testbench import _guard
from harn_mcp_mock.testbench.clock import ClockPatch, RealClock, VirtualTime
from harn_mcp_mock.testbench.llm import LlmFixtures, LlmRequest, LlmResponse, Match, Provider, request_digest
from harn_mcp_mock.testbench.network import NetworkPolicy
from harn_mcp_mock.testbench.overlay import FsChange, OverlayFs, render_unified_diff
from harn_mcp_mock.testbench.process import ProcessAxis, ProcessEntry

DEFAULT_START_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z, the default virtual wall-clock start."""

ClockMode = Literal["paused", "recorded", "real"]


def current() -> Testbench | None:
    """The active testbench, if any."""
    return _guard.active


def is_active() -> bool:
    return _guard.active is not None


@dataclass(frozen=True, slots=True)
class TestbenchResult:
    """What :meth:`Testbench.finalize` hands back (and wrote to disk)."""

    __test__ = False

    fs_diff: list[FsChange] = field(default_factory=list)
    llm_recorded: list[dict[str, Any]] = field(default_factory=list)
    process_recorded: list[ProcessEntry] = field(default_factory=list)
    unused_llm_fixtures: int = 0
    unused_process_entries: list[ProcessEntry] = field(default_factory=list)
    denied_connections: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)

    def unified_diff(self) -> str:
        return render_unified_diff(self.fs_diff)


@dataclass(slots=True)
class _Config:
    clock_mode: ClockMode = "real"
    clock: Clock | None = None
    start_ms: int = DEFAULT_START_MS
    llm: tuple[Literal["replay", "record"], Path, Match, Provider | None] | None = None
    llm_fixtures: LlmFixtures | None = None
    fs_root: Path | None = None
    process: tuple[Literal["record", "replay"], Path] | None = None
    network: NetworkPolicy | None = None
    tape: Path | None = None
    tape_script: str | None = None
    tape_argv: tuple[str, ...] = ()
    emit_diff: Path | None = None


class TestbenchBuilder:
    """Fluent configuration; every axis is off until asked for."""

    __test__ = False

    def __init__(self) -> None:
        self._c = _Config()

    def paused_clock_at_ms(self, start_ms: int = DEFAULT_START_MS) -> TestbenchBuilder:
        self._c.clock_mode, self._c.start_ms, self._c.clock = "paused", start_ms, None
        return self

    def clock(self, clock: Clock) -> TestbenchBuilder:
        """Install any :class:`Clock`; a ``PausedClock`` behaves as ``paused``, others as ``recorded``."""
        self._c.clock_mode = "paused" if isinstance(clock, PausedClock) else "recorded"
        self._c.clock = RealClock() if isinstance(clock, SystemClock) else clock
        return self

    def recorded_clock(self) -> TestbenchBuilder:
        self._c.clock_mode, self._c.clock = "recorded", None
        return self

    def real_clock(self) -> TestbenchBuilder:
        self._c.clock_mode, self._c.clock = "real", None
        return self

    def replay_llm(self, path: str | os.PathLike[str], *, match: Match = "order") -> TestbenchBuilder:
        self._c.llm, self._c.llm_fixtures = ("replay", Path(path), match, None), None
        return self

    def record_llm(self, path: str | os.PathLike[str], provider: Provider | None = None) -> TestbenchBuilder:
        self._c.llm, self._c.llm_fixtures = ("record", Path(path), "order", provider), None
        return self

    def llm_fixtures(self, fixtures: LlmFixtures) -> TestbenchBuilder:
        """Use an in-memory :class:`LlmFixtures` (tests)."""
        self._c.llm, self._c.llm_fixtures = None, fixtures
        return self

    def fs_overlay(self, root: str | os.PathLike[str]) -> TestbenchBuilder:
        self._c.fs_root = Path(root)
        return self

    def replay_subprocesses(self, tape: str | os.PathLike[str]) -> TestbenchBuilder:
        self._c.process = ("replay", Path(tape))
        return self

    def record_subprocesses(self, tape: str | os.PathLike[str]) -> TestbenchBuilder:
        self._c.process = ("record", Path(tape))
        return self

    def deny_network(
        self, allow_hosts: Sequence[str] = (), *, allow_loopback: bool = True
    ) -> TestbenchBuilder:
        self._c.network = NetworkPolicy(allow_hosts, allow_loopback=allow_loopback)
        return self

    def real_network(self) -> TestbenchBuilder:
        self._c.network = None
        return self

    def emit_tape(
        self, path: str | os.PathLike[str], *, script_path: str | None = None, argv: Sequence[str] = ()
    ) -> TestbenchBuilder:
        self._c.tape, self._c.tape_script, self._c.tape_argv = Path(path), script_path, tuple(argv)
        return self

    def emit_diff(self, path: str | os.PathLike[str]) -> TestbenchBuilder:
        """Write the unified diff of the overlay to ``path`` on :meth:`Testbench.finalize`."""
        self._c.emit_diff = Path(path)
        return self

    def build(self) -> Testbench:
        return Testbench(self._c)


class Testbench:
    """One hermetic session. Use as ``with bench:``; everything is restored on exit.

    ``finalize()`` (inside or after the ``with``) writes recorded LLM/process tapes, the diff and
    the event tape, and returns a :class:`TestbenchResult`. It is idempotent.
    """

    __test__ = False

    def __init__(self, config: _Config) -> None:
        self._c = config
        self.clock: Clock | None = None
        self.vt: VirtualTime | None = None
        self.overlay: OverlayFs | None = None
        self.process: ProcessAxis | None = None
        self.llm: LlmFixtures | None = None
        self.network = config.network
        self._clock_patch: ClockPatch | None = None
        self._tape: Any = None
        self._active = False
        self._result: TestbenchResult | None = None

    @staticmethod
    def builder() -> TestbenchBuilder:
        return TestbenchBuilder()

    # -- the event tape ----------------------------------------------------------------------
    def emit(self, kind: str, *, payloads: dict[str, bytes | str] | None = None, **fields: Any) -> None:
        """Record one event on the tape (no-op without ``emit_tape``, or inside testbench code)."""
        if self._tape is None or _guard.is_quiet():
            return
        with _guard.quiet():
            self._tape.record(kind, payloads=payloads, **fields)

    def _open_tape(self) -> None:
        if self._c.tape is None:
            return
        try:
            from harn_mcp_mock.tape import TapeWriter
        except ImportError as exc:
            raise TestbenchError(
                f"--emit-tape needs the harn_mcp_mock.tape module, which is not installed ({exc})"
            ) from None
        with _guard.quiet():
            self._tape = TapeWriter(
                self._c.tape, clock=self.clock, script_path=self._c.tape_script, argv=self._c.tape_argv
            )

    # -- activation ----------------------------------------------------------------------------
    def __enter__(self) -> Testbench:
        with _guard.active_lock:
            if _guard.active is not None:
                raise TestbenchError("a testbench is already active in this process")
            if self._active or self._result is not None:
                raise TestbenchError("a Testbench activates once; build a new one")
            _guard.active = self
        try:
            self._activate()
        except BaseException:
            self._deactivate()
            raise
        return self

    def _activate(self) -> None:
        c = self._c
        if c.clock_mode == "paused":
            self.clock = c.clock or PausedClock(c.start_ms)
        elif c.clock_mode == "recorded":
            self.clock = c.clock or RealClock()
        else:
            self.clock = RealClock()
        self.vt = VirtualTime(self.clock, self.emit)
        self._open_tape()
        if c.llm_fixtures is not None:
            self.llm = c.llm_fixtures
        elif c.llm is not None:
            mode, path, match, provider = c.llm
            self.llm = (
                LlmFixtures.replay(path, match=match)
                if mode == "replay"
                else LlmFixtures.recording(path, provider)
            )
        if c.process is not None:
            vt = self.vt
            self.process = ProcessAxis(c.process[0], c.process[1], emit=self.emit, advance=vt.advance)
        if c.fs_root is not None:
            self.overlay = OverlayFs(c.fs_root, emit=self.emit)
        self._active = True
        if c.clock_mode != "real":
            self._clock_patch = ClockPatch(self.vt)
            self._clock_patch.install()
        if self.network is not None:
            self.network.install()
        if self.process is not None:
            self.process.install()
        if self.overlay is not None:
            self.overlay.install()

    def _deactivate(self) -> None:
        for axis in (self.overlay, self.process, self.network, self._clock_patch):
            if axis is not None:
                axis.restore()
        self._active = False
        with _guard.active_lock:
            if _guard.active is self:
                _guard.active = None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._deactivate()

    @property
    def active(self) -> bool:
        return self._active

    # -- axes used by the public helpers -------------------------------------------------------
    def _llm_call(self, request: LlmRequest, provider: Provider | None) -> LlmResponse:
        if self.llm is None:
            raise LlmFixtureError(
                "no LLM fixture installed: this testbench has no --llm-fixture/--llm-record, and it never "
                "falls through to a real provider"
            )
        response = self.llm.next(request, provider=provider)
        import json

        self.emit(
            "llm_call",
            request_digest=request_digest(request),
            payloads={"response": json.dumps(response, sort_keys=True, ensure_ascii=False)},
        )
        return response

    def fs_diff(self) -> list[FsChange]:
        return self.overlay.diff() if self.overlay is not None else []

    def advance(self, seconds: float) -> None:
        """Move the paused clock on (no-op for a real clock)."""
        if self.vt is not None:
            self.vt.advance(seconds)

    # -- finalize ----------------------------------------------------------------------------
    def finalize(self) -> TestbenchResult:
        if self._result is not None:
            return self._result
        written: list[Path] = []
        if self.llm is not None and (path := self.llm.save()) is not None:
            written.append(path)
        if self.process is not None and (path := self.process.save()) is not None:
            written.append(path)
        diff = self.fs_diff()
        if self._c.emit_diff is not None:
            with _guard.quiet(), _guard.REAL_OPEN(self._c.emit_diff, "w", encoding="utf-8") as fh:
                fh.write(render_unified_diff(diff))
            written.append(self._c.emit_diff)
        if self._tape is not None:
            with _guard.quiet():
                self._tape.close()
            self._tape = None
            assert self._c.tape is not None
            written.append(self._c.tape)
        self._result = TestbenchResult(
            fs_diff=diff,
            llm_recorded=list(self.llm.recorded) if self.llm is not None else [],
            process_recorded=list(self.process.recorded) if self.process is not None else [],
            unused_llm_fixtures=self.llm.unused_count()
            if self.llm is not None and not self.llm.recording_mode
            else 0,
            unused_process_entries=self.process.unused() if self.process is not None else [],
            denied_connections=list(self.network.denied) if self.network is not None else [],
            written=written,
        )
        return self._result
