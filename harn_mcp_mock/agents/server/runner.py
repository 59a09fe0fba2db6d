"""Background pieces of a served Harness: :class:`EventBus` wakes SSE streams when events are
appended (from any thread); :class:`TaskRunner` runs submitted tasks on a worker thread."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
from collections.abc import Iterator

from harn_mcp_mock.agents.server.harness import Harness

__all__ = ["EventBus", "TaskRunner"]


class EventBus:
    """Wakes SSE streams (on their event loops) when events are appended from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def publish(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: its stream is gone
                loop.call_soon_threadsafe(event.set)

    @contextlib.contextmanager
    def subscribe(self) -> Iterator[asyncio.Event]:
        item = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(item)
        try:
            yield item[1]
        finally:
            with self._lock:
                self._waiters.discard(item)


class TaskRunner:
    """Runs SUBMITTED tasks one at a time, in submission order, on a worker thread."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="harn-protocol-runner", daemon=True)
        self._thread.start()
        for task_id in self.harness.tasks.pending():
            self.enqueue(task_id)

    def enqueue(self, task_id: str) -> None:
        self._queue.put(task_id)

    def stop(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while (task_id := self._queue.get()) is not None:
            try:
                self.harness.run_task(task_id)
            except Exception as exc:  # a bug must not kill the runner; the task stays visible
                sys.stderr.write(f"harn protocol: task {task_id}: {type(exc).__name__}: {exc}\n")
