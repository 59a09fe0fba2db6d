"""An agent command as a process the runner can always end.

- :class:`Control`: the run's stop state, shared by its trials: ``stop()`` (the first Ctrl-C or
  SIGTERM: running agents get SIGTERM, then SIGKILL after the grace) and ``kill_now()`` (a second
  Ctrl-C: SIGKILL at once). Both are pipes that turn readable, so a trial waits on its agent and
  on them at once, with no polling.
- :class:`AgentProcess`: the agent in its own session and process group, its stdout and stderr
  read through pipes keeping the last ``cap`` bytes each (marked when cut), and every process it
  started tagged with a per-trial marker in its environment. :meth:`AgentProcess.end` ends the
  group, then any process still carrying the marker (a ``setsid`` grandchild included: on Linux
  the runner is a child subreaper, :func:`become_subreaper`, so such orphans stay its
  descendants and are found by walking ``/proc``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_OUTPUT_CAP", "MARKER_ENV", "AgentProcess", "Control", "Tail", "become_subreaper"]

DEFAULT_OUTPUT_CAP = 1 << 20
"""Bytes of an agent's stdout and of its stderr kept per trial (the last ones)."""
MARKER_ENV = "HARN_TRIAL_MARKER"
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux): orphans of its descendants (a daemonised or
    ``setsid`` grandchild) are reparented to it, not to init. True when it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class Control:
    """The run's stop state (see the module docstring). Safe to call from a signal handler."""

    def __init__(self, grace: float = 5.0) -> None:
        self.grace = grace
        self._stop_r, self._stop_w = os.pipe()
        self._kill_r, self._kill_w = os.pipe()
        self.stopping = False
        self.killing = False
        self.running = 0
        """Trials running now (kept by the backend, for the stop message)."""

    def stop(self) -> None:
        self.stopping = True
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"\0")

    def kill_now(self) -> None:
        self.stopping = self.killing = True
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"\0")
            os.write(self._kill_w, b"\0")

    @property
    def stop_fd(self) -> int:
        return self._stop_r

    @property
    def kill_fd(self) -> int:
        return self._kill_r

    def close(self) -> None:
        for fd in (self._stop_r, self._stop_w, self._kill_r, self._kill_w):
            with contextlib.suppress(OSError):
                os.close(fd)


class Tail:
    """The last ``cap`` bytes of a stream, and how many were cut before them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.cut = 0

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > 2 * self.cap + (1 << 16):  # compact now and then, not on every chunk
            self._trim()

    def _trim(self) -> None:
        if self.size > self.cap:
            joined = b"".join(self.chunks)
            self.cut += len(joined) - self.cap
            self.chunks = [joined[-self.cap :]] if self.cap else []
            self.size = min(self.cap, len(joined))

    def value(self) -> bytes:
        """The kept bytes, after a marker line when the start was cut."""
        self._trim()
        body = b"".join(self.chunks)
        if not self.cut:
            return body
        return f"[harn: the first {self.cut} bytes were cut; the last {self.size} are kept]\n".encode() + body


@dataclass(slots=True)
class Ended:
    how: str
    """``exited``, ``timeout`` or ``stopped`` (a stop signal of the run)."""
    code: int | None


class AgentProcess:
    """One agent command (see the module docstring)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        marker: str,
        cap: int = DEFAULT_OUTPUT_CAP,
    ) -> None:
        self.marker = marker
        self.stdout = Tail(cap)
        self.stderr = Tail(cap)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                env={**env, MARKER_ENV: marker},
                cwd=cwd,
                start_new_session=True,
            )
        except BaseException:
            for fd in (out_r, err_r):
                os.close(fd)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        self._reader = threading.Thread(
            target=self._read, args=(out_r, err_r), name="harn-agent-output", daemon=True
        )
        self._reader.start()
        self._done_r, self._done_w = os.pipe()
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):
                self._pidfd = pidfd_open(self.proc.pid)
        if self._pidfd is None:
            threading.Thread(target=self._wait_thread, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_thread(self) -> None:
        self.proc.wait()
        os.write(self._done_w, b"\0")

    def _read(self, out_r: int, err_r: int) -> None:
        tails = {out_r: self.stdout, err_r: self.stderr}
        try:
            while tails:
                readable, _, _ = select.select(list(tails), [], [])
                for fd in readable:
                    data = os.read(fd, 1 << 16)
                    if data:
                        tails[fd].add(data)
                    else:
                        del tails[fd]
        finally:
            for fd in (out_r, err_r):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _exit_fd(self) -> int:
        return self._pidfd if self._pidfd is not None else self._done_r

    def wait(self, timeout: float | None, control: Control | None) -> Ended:
        """Until the agent exits, ``timeout`` passes or the run stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        watched = [self._exit_fd()] + ([control.stop_fd] if control is not None else [])
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select(watched, [], [], left)
            if self._exit_fd() in readable:
                return Ended("exited", self.proc.wait())
            if control is not None and control.stop_fd in readable:
                return Ended("stopped", None)
            if deadline is not None and time.monotonic() >= deadline:
                return Ended("timeout", None)

    def end(self, grace: float, control: Control | None) -> int | None:
        """SIGTERM to the agent's group, SIGKILL after ``grace`` (at once once the run is killing),
        then every process left with the trial's marker; the agent's exit code."""
        if self.proc.poll() is None:
            _signal_group(self.proc.pid, signal.SIGTERM)
            watched = [self._exit_fd()] + ([control.kill_fd] if control is not None else [])
            if not (control is not None and control.killing):
                select.select(watched, [], [], grace)
        _signal_group(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        kill_marked(self.marker)
        self._reader.join(grace)
        for fd in (self._done_r, self._done_w, *([self._pidfd] if self._pidfd is not None else [])):
            with contextlib.suppress(OSError):
                os.close(fd)
        return code


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _children(pid: int) -> list[int] | None:
    """``pid``'s children from ``/proc/PID/task/*/children`` (None where the kernel has none)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.extend(int(p) for p in f.read().split())
        except FileNotFoundError:
            return None if tid == tasks[0] and not found else found
        except OSError:
            continue
    return found


def _descendants(root: int) -> list[int]:
    """Live descendants of ``root``: by each process's children file where the kernel has one
    (cheap), else from the parent of every process in ``/proc``; empty where there is no /proc."""
    if _children(root) is not None:
        result: list[int] = []
        todo = [root]
        while todo:
            for child in _children(todo.pop()) or ():
                result.append(child)
                todo.append(child)
        return result
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every descendant of this process whose environment holds ``marker`` (the trial's
    processes that left its group), and reap those that are our children now; their pids."""
    tag = f"{MARKER_ENV}={marker}".encode()
    killed = []
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if tag in environ.split(b"\0"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    for pid in killed:  # orphans reparented to us (the subreaper): reap them, not leave zombies
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
    return killed
