"""Process-wide originals, the active testbench and a per-thread "inside the testbench
machinery" flag (a leaf module: the axes and the LLM entry point read the active testbench here,
so they need not import ``core``, which imports them).

The originals are captured when this module is first imported, before any patch, so the
testbench's own code (tape writing, real spawns, real reads) can always reach the real thing.
While :func:`quiet` is active on a thread, patched functions do not record tape events, and the
overlay passes paths through to the real filesystem.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harn_mcp_mock.testbench.core import Testbench

REAL_OPEN = builtins.open
REAL_IO_OPEN = io.open
REAL_TIME_NS = time.time_ns
REAL_MONOTONIC_NS = time.monotonic_ns
REAL_SLEEP = time.sleep
REAL_STAT = os.stat

_local = threading.local()

active_lock = threading.Lock()
active: Testbench | None = None
"""The testbench active in this process (set and cleared by ``Testbench`` under ``active_lock``)."""


def is_quiet() -> bool:
    return bool(getattr(_local, "quiet", 0))


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    _local.quiet = getattr(_local, "quiet", 0) + 1
    try:
        yield
    finally:
        _local.quiet -= 1


class Patcher:
    """Set attributes and put every one back, in reverse order, on :meth:`restore`."""

    _MISSING = object()

    def __init__(self) -> None:
        self._saved: list[tuple[object, str, object]] = []

    def set(self, target: object, name: str, value: object) -> None:
        owner_dict = getattr(target, "__dict__", {})
        old = owner_dict.get(name, self._MISSING) if isinstance(target, type) else getattr(target, name)
        self._saved.append((target, name, old))
        setattr(target, name, value)

    def restore(self) -> None:
        while self._saved:
            target, name, old = self._saved.pop()
            if old is self._MISSING:
                delattr(target, name)
            else:
                setattr(target, name, old)
