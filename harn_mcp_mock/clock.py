"""The one injectable clock.

Record latency, replay pacing, world time and the testbench all read time here, so a test
can substitute :class:`PausedClock` and get byte-identical results. Modelled on trio's
``MockClock``: a paused clock only moves when told to (``advance``) or when code sleeps on it.
"""

from __future__ import annotations

import _thread  # threading.Lock is _thread.allocate_lock; threading itself costs ~0.6 ms at start-up
import time

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # a protocol for the type checker; a plain base class at run time


class Clock(Protocol):
    def monotonic_ns(self) -> int:
        """Nanoseconds on a clock that never goes back; only differences mean anything."""

    def wall_ms(self) -> int:
        """Milliseconds since the Unix epoch."""

    def sleep(self, seconds: float) -> None:
        """Block (system clock) or advance virtual time instantly (paused clock)."""


class SystemClock:
    """The real clock."""

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class PausedClock:
    """Virtual time that moves only on :meth:`advance` or :meth:`sleep` (which returns at once).

    ``step_ns`` makes every ``monotonic_ns`` read advance time by that much, which gives
    recordings deterministic, non-zero latencies in tests.
    """

    def __init__(self, start_ms: int = 1_767_225_600_000, *, step_ns: int = 0) -> None:
        self._lock = _thread.allocate_lock()
        self._epoch_ms = start_ms
        self._ns = 0
        self._step_ns = step_ns

    def monotonic_ns(self) -> int:
        with self._lock:
            now = self._ns
            self._ns += self._step_ns
            return now

    def wall_ms(self) -> int:
        with self._lock:
            return self._epoch_ms + self._ns // 1_000_000

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go back")
        with self._lock:
            self._ns += int(seconds * 1_000_000_000)


SYSTEM_CLOCK: Clock = SystemClock()
