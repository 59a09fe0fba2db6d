"""SIGINT, SIGTERM and SIGHUP end a serving run the way a client disconnect does.

MCP clients stop a stdio server by closing its stdin and then, after a while, sending SIGTERM;
a person presses Ctrl-C; a closed terminal sends SIGHUP. Each must finish the run in order:
the serving loop stops, the ``--report`` / ``--state-out`` / ``--emit-tape`` files are written,
no traceback is printed, and the process exits ``128 + N`` (130, 143, 129).

:class:`StopSignals` is that one mechanism. While it is active, a stop signal interrupts
nothing: it is noted (:attr:`~StopSignals.signum`, the first one), a byte goes into a pipe whose
read end (:attr:`~StopSignals.fd`) a ``select`` loop watches (``serve_stdio(stop_fd=...)``), and
the callbacks given to :meth:`~StopSignals.on_signal` run (the HTTP server sets its exit flag
there). Handlers are installed only in the main thread; elsewhere the object is inert. Nothing
heavy is imported (not even ``threading``: ``signal.signal`` itself refuses outside the main
thread): ``replay`` and ``world`` install it first thing; ``run``, the HTTP servers and
``record``'s stdio proxy use it too: no other module catches a stop signal (the runner's
supervisor, a process of its own, only sets its dispositions).

:func:`terminate` is the one shape in which we end a process we started: up to a grace for a
voluntary exit, SIGTERM, a bounded wait, SIGKILL. The stdio upstreams (``record``, ``new_episodes``,
``verify``'s live side) and the runner's agents are ended by it; what an error path does at once
(SIGKILL, no grace) is not a stop but an abort.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from types import FrameType, TracebackType

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def terminate(
    send: Callable[[int], None], exited: Callable[[float], bool], *, grace: float, term_grace: float
) -> bool:
    """End a process the one way: wait up to ``grace`` s for it to exit by itself (``0``: only
    look), send SIGTERM, wait up to ``term_grace`` s, send SIGKILL. ``send(sig)`` signals the
    process (or its group); ``exited(timeout)`` waits at most ``timeout`` s and says whether it
    has exited (False also when the wait was cut short, a run told to kill now). True when it
    exited before SIGKILL was needed."""
    if exited(grace):
        return True
    send(signal.SIGTERM)
    if exited(term_grace):
        return True
    send(signal.SIGKILL)
    return False


def exit_code_for(signum: int) -> int:
    """The shell's exit code for a run ended by signal ``signum``: ``128 + N``."""
    return 128 + signum


class StopSignals:
    """Catch the stop signals for the span of a ``with`` block (see the module docstring)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        """The first stop signal received, or None."""
        self.count = 0
        """How many stop signals arrived (a second Ctrl-C may mean "now")."""
        self._callbacks: list[Callable[[int], None]] = []
        self._previous: dict[int, Any] = {}
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        os.set_blocking(self._read, False)

    @property
    def fd(self) -> int:
        """Readable once a stop signal arrived (never drained: it stays readable)."""
        return self._read

    @property
    def exit_code(self) -> int | None:
        return None if self.signum is None else exit_code_for(self.signum)

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    def on_signal(self, callback: Callable[[int], None]) -> None:
        """Call ``callback(signum)`` on every stop signal (in the handler: keep it tiny)."""
        self._callbacks.append(callback)

    def request(self, signum: int) -> None:
        """Act as if ``signum`` arrived (what the handler does)."""
        self.count += 1
        if self.signum is None:
            self.signum = signum
        with contextlib.suppress(OSError):  # full pipe or closed: it is readable already
            os.write(self._write, b"\0")
        for callback in list(self._callbacks):
            callback(signum)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.request(signum)

    def __enter__(self) -> StopSignals:
        for sig in STOP_SIGNALS:
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread (nor interpreter): no handler, inert
                break
        return self

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
