"""The clock axis: make ``time``, ``datetime`` and asyncio observe one injectable clock.

Modes (``--clock``):

* ``paused`` -- a :class:`~harn_mcp_mock.clock.PausedClock`; ``time.sleep`` and ``asyncio.sleep``
  advance it instantly, and an asyncio loop with only timers pending jumps to the next timer.
* ``recorded`` -- the real clock, patched only so every read and sleep lands on the event tape.
* ``real`` -- nothing is patched.

Patched while active: ``time.time/time_ns/monotonic/monotonic_ns/perf_counter/perf_counter_ns/
sleep/localtime/gmtime/ctime``, ``datetime.datetime`` and ``datetime.date`` (subclasses whose
``now/utcnow/today`` read the clock; ``isinstance`` still works on real instances),
``asyncio.BaseEventLoop.time`` and ``asyncio.sleep``. See ``docs/testbench.md`` for the limits.
"""

from __future__ import annotations

import asyncio
import asyncio.base_events
import asyncio.tasks
import datetime as _dt
import time
import weakref
from collections.abc import Callable
from typing import Any

from harn_mcp_mock.clock import Clock, PausedClock
from harn_mcp_mock.testbench import _guard

Emit = Callable[..., None]

_REAL_DATETIME = _dt.datetime
_REAL_DATE = _dt.date
_REAL_LOCALTIME = time.localtime
_REAL_GMTIME = time.gmtime
_REAL_CTIME = time.ctime
_REAL_ASYNCIO_SLEEP = asyncio.sleep


class RealClock:
    """The real clock, read through the originals captured before any patch (no recursion)."""

    def monotonic_ns(self) -> int:
        return _guard.REAL_MONOTONIC_NS()

    def wall_ms(self) -> int:
        return _guard.REAL_TIME_NS() // 1_000_000

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            _guard.REAL_SLEEP(seconds)


class VirtualTime:
    """Reads of one :class:`Clock`, in the units ``time`` uses, reporting to the event tape."""

    def __init__(self, clock: Clock, emit: Emit) -> None:
        self.clock = clock
        self._emit = emit

    def wall_ns(self, *, record: bool = True) -> int:
        if isinstance(self.clock, RealClock):
            ns = _guard.REAL_TIME_NS()
        else:
            # wall_ms is epoch + mono//1e6, so adding mono%1e6 gives the exact nanosecond.
            mono = self.clock.monotonic_ns()
            ns = self.clock.wall_ms() * 1_000_000 + mono % 1_000_000
        if record:
            self._emit("clock_read", source="wall", value_ms=ns // 1_000_000)
        return ns

    def monotonic_ns(self, *, record: bool = True) -> int:
        ns = self.clock.monotonic_ns()
        if record:
            self._emit("clock_read", source="monotonic", value_ms=ns // 1_000_000)
        return ns

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self._emit("clock_sleep", duration_ms=round(seconds * 1000))
        self.clock.sleep(seconds)

    def advance(self, seconds: float) -> None:
        """Move virtual time on (no-op for a real clock); used for replayed subprocess durations."""
        if isinstance(self.clock, PausedClock) and seconds > 0:
            self.clock.advance(seconds)


class _FakeDatetimeMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _REAL_DATETIME)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _REAL_DATETIME)


class _FakeDateMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _REAL_DATE)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _REAL_DATE)


_ACTIVE: list[VirtualTime] = []


def _wall_seconds() -> float:
    return _ACTIVE[-1].wall_ns() / 1e9


class FakeDatetime(_REAL_DATETIME, metaclass=_FakeDatetimeMeta):
    """``datetime.datetime`` while the clock axis is active; instances stay real datetimes."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _dt.datetime:  # type: ignore[override]
        return _REAL_DATETIME.fromtimestamp(_wall_seconds(), tz)

    @classmethod
    def utcnow(cls) -> _dt.datetime:  # type: ignore[override]
        return _REAL_DATETIME.fromtimestamp(_wall_seconds(), _dt.UTC).replace(tzinfo=None)

    @classmethod
    def today(cls) -> _dt.datetime:  # type: ignore[override]
        return cls.now()


class FakeDate(_REAL_DATE, metaclass=_FakeDateMeta):
    @classmethod
    def today(cls) -> _dt.date:  # type: ignore[override]
        return _REAL_DATETIME.fromtimestamp(_wall_seconds()).date()


class ClockPatch:
    """Install a :class:`VirtualTime` as the process clock; :meth:`restore` undoes all of it."""

    def __init__(self, vt: VirtualTime) -> None:
        self.vt = vt
        self._patcher = _guard.Patcher()
        self._loops: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

    def install(self) -> None:
        vt, p = self.vt, self._patcher
        p.set(time, "time", lambda: vt.wall_ns() / 1e9)
        p.set(time, "time_ns", lambda: vt.wall_ns())
        p.set(time, "monotonic", lambda: vt.monotonic_ns() / 1e9)
        p.set(time, "monotonic_ns", lambda: vt.monotonic_ns())
        p.set(time, "perf_counter", lambda: vt.monotonic_ns() / 1e9)
        p.set(time, "perf_counter_ns", lambda: vt.monotonic_ns())
        p.set(time, "sleep", vt.sleep)

        def _secs(secs: float | None) -> float:
            return vt.wall_ns() / 1e9 if secs is None else secs

        p.set(time, "localtime", lambda secs=None: _REAL_LOCALTIME(_secs(secs)))
        p.set(time, "gmtime", lambda secs=None: _REAL_GMTIME(_secs(secs)))
        p.set(time, "ctime", lambda secs=None: _REAL_CTIME(_secs(secs)))
        _ACTIVE.append(vt)
        p.set(_dt, "datetime", FakeDatetime)
        p.set(_dt, "date", FakeDate)

        if isinstance(vt.clock, PausedClock):
            self._install_asyncio()

    def _install_asyncio(self) -> None:
        vt, p, patch = self.vt, self._patcher, self

        def loop_time(loop: asyncio.base_events.BaseEventLoop) -> float:
            patch._autojump(loop)
            return vt.monotonic_ns(record=False) / 1e9

        async def sleep(delay: float, result: Any = None) -> Any:
            if delay > 0:
                vt._emit("clock_sleep", duration_ms=round(delay * 1000))
            return await _REAL_ASYNCIO_SLEEP(delay, result)

        p.set(asyncio.base_events.BaseEventLoop, "time", loop_time)
        p.set(asyncio, "sleep", sleep)
        p.set(asyncio.tasks, "sleep", sleep)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if isinstance(running, asyncio.base_events.BaseEventLoop):
            self._autojump(running)

    def _autojump(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make ``loop`` jump virtual time to its next timer instead of waiting for it.

        Trio's ``MockClock(autojump_threshold=0)``: when the selector would wait ``timeout``
        seconds and no I/O is ready now, advance the clock by ``timeout`` and return.
        """
        if loop in self._loops:
            return
        selector = getattr(loop, "_selector", None)
        if selector is None:
            return
        real_select = selector.select
        vt = self.vt

        def select(timeout: float | None = None) -> Any:
            if timeout is None or timeout <= 0:
                return real_select(timeout)
            events = real_select(0)
            if not events:
                vt.advance(timeout)
            return events

        selector.select = select
        self._loops.add(loop)

    def restore(self) -> None:
        self._patcher.restore()
        for loop in list(self._loops):
            selector = getattr(loop, "_selector", None)
            if selector is not None and "select" in vars(selector):
                del selector.select
        self._loops = weakref.WeakSet()
        if self.vt in _ACTIVE:
            _ACTIVE.remove(self.vt)
