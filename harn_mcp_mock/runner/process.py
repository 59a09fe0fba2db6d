"""An agent command as a process the runner can always end.

- :class:`Control`: the run's stop state, shared by its trials: ``stop()`` (the first Ctrl-C or
  SIGTERM: running agents get SIGTERM, then SIGKILL after the grace) and ``kill_now()`` (a second
  Ctrl-C: SIGKILL at once). Both are pipes that turn readable, so a trial waits on its agent and
  on them at once, with no polling.
- :class:`AgentProcess`: the agent in its own session and process group, started by a per-trial
  supervisor (:mod:`harn_mcp_mock.runner._supervisor`: a child subreaper that kills every
  process of the trial when the runner ends it or dies, even by SIGKILL; forked by a fork server
  this process starts once, so a trial costs a fork, not a Python start-up), its stdout and stderr
  read through pipes keeping the last ``cap`` bytes each (marked when cut), and every process it
  started tagged with a per-trial marker in its environment. :meth:`AgentProcess.end` ends the
  group, then the supervisor's tree, then any process still carrying the marker (on Linux the
  runner is a child subreaper too, :func:`become_subreaper`, so such orphans stay its
  descendants and are found by walking ``/proc``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harn_mcp_mock.runner._supervisor import descendants
from harn_mcp_mock.shutdown import terminate

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "MARKER_ENV",
    "AgentProcess",
    "Control",
    "PythonAgent",
    "Tail",
    "become_subreaper",
    "python_agent",
    "start_preload",
]

DEFAULT_OUTPUT_CAP = 1 << 20
"""Bytes of an agent's stdout and of its stderr kept per trial (the last ones)."""
OUTPUT_DRAIN_WAIT = 10.0
"""Seconds a trial's end waits for the last of its agent's output (the pipes' EOF)."""
MARKER_ENV = "HARN_TRIAL_MARKER"
PR_SET_CHILD_SUBREAPER = 36
PRELOAD_WAIT = 600.0
"""Seconds a preloading fork server may take to import its modules."""
SUPERVISOR = str(Path(__file__).with_name("_supervisor.py"))
"""The fork server of the supervisors between the runner and each agent
(:mod:`harn_mcp_mock.runner._supervisor`)."""


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
        preload: Sequence[str] = (),
    ) -> None:
        self.marker = marker
        server, run = _SERVER, None
        if preload:  # a warm start: forked from a server that imported ``preload`` (docs/runner.md)
            python = python_agent(argv)
            server = _preloaded(python, tuple(preload), cwd)
            run = [python.kind, python.target]
        self.stdout = Tail(cap)
        self.stderr = Tail(cap)
        self.code: int | None = None
        self._gone = False
        """The supervisor's status pipe reached EOF (it ended without telling the agent's code)."""
        self._buffer = b""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        life_r, self._life_w = os.pipe()
        self._status_r, status_w = os.pipe()
        try:
            self._supervisor_pid = server.spawn(
                list(argv), {**env, MARKER_ENV: marker}, cwd, [out_w, err_w, life_r, status_w], run
            )
        except BaseException:
            for fd in (out_r, err_r, self._life_w, self._status_r):
                os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w, life_r, status_w):
                os.close(fd)
        self._reader = threading.Thread(
            target=self._read, args=(out_r, err_r), name="harn-agent-output", daemon=True
        )
        self._reader.start()
        first = self._next_line()
        if first is None or not first.startswith("P"):
            self._finish()
            if first is not None and first.startswith("E"):
                number, _, message = first[1:].partition(" ")
                raise OSError(int(number) if number.isdigit() else 0, message)
            raise OSError(0, "its supervisor ended before starting it")
        self.agent_pid = int(first[1:])

    @property
    def pid(self) -> int:
        """The agent's pid (its process group and session)."""
        return self.agent_pid

    @property
    def supervisor_pid(self) -> int:
        return self._supervisor_pid

    def _next_line(self) -> str | None:
        """The supervisor's next status line (blocking), None at EOF."""
        while b"\n" not in self._buffer:
            data = os.read(self._status_r, 256)
            if not data:
                self._gone = True
                return None
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def _exited(self) -> bool:
        """Whether the agent has exited (reading its code if the supervisor sent it)."""
        if self.code is None and not self._gone:
            if b"\n" in self._buffer or select.select([self._status_r], [], [], 0)[0]:
                self._take_exit()
        return self.code is not None or self._gone

    def _take_exit(self) -> None:
        line = self._next_line()
        if line is not None and line.startswith("X"):
            self.code = int(line[1:])

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

    def wait(self, timeout: float | None, control: Control | None) -> Ended:
        """Until the agent exits, ``timeout`` passes or the run stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        watched = [self._status_r] + ([control.stop_fd] if control is not None else [])
        while True:
            if self._exited():
                return Ended("exited", self.code)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select(watched, [], [], left)
            if self._status_r in readable:
                self._take_exit()
                return Ended("exited", self.code)
            if control is not None and control.stop_fd in readable:
                return Ended("stopped", None)
            if deadline is not None and time.monotonic() >= deadline:
                return Ended("timeout", None)

    def end(self, grace: float, control: Control | None) -> int | None:
        """SIGTERM to the agent's group, SIGKILL after ``grace`` (at once once the run is killing),
        then the supervisor kills every process of the trial left (its descendants), then every
        process left with the trial's marker; the agent's exit code."""
        if not self._exited():
            watched = [self._status_r] + ([control.kill_fd] if control is not None else [])

            def exited(timeout: float) -> bool:  # cut short once the run kills (a second Ctrl-C)
                return self._status_r in select.select(watched, [], [], timeout)[0]

            killing = control is not None and control.killing
            terminate(
                lambda sig: _signal_group(self.agent_pid, sig),
                exited,
                grace=0,
                term_grace=0 if killing else grace,
            )
        _signal_group(self.agent_pid, signal.SIGKILL)  # what else of the group is left
        if not self._exited():
            self._take_exit()
        self._finish()
        kill_marked(self.marker)
        # Every holder of the output pipes has ended by now (the supervisor killed the trial's
        # processes and exited; the fork server closed its copies), so their EOF is near: wait
        # for it whatever the grace (``--grace 0`` kept only what the reader had read so far),
        # bounded against a process that took the pipe outside the trial.
        self._reader.join(max(grace, OUTPUT_DRAIN_WAIT))
        return self.code

    def _finish(self) -> None:
        """Close our end of the supervisor's life pipe (it kills the trial's processes and
        exits), then wait for its status pipe's EOF: it exits then (the fork server reaps it)."""
        with contextlib.suppress(OSError):
            os.close(self._life_w)
        while not self._gone:
            self._next_line()
        with contextlib.suppress(OSError):
            os.close(self._status_r)


@dataclass(frozen=True, slots=True)
class PythonAgent:
    """A Python agent command: ``python`` (its interpreter, a path) runs ``target``, a script
    (``kind`` ``script``, a path from the agent's folder) or a module (``module``: ``-m``)."""

    python: str
    kind: str
    target: str

    def first_path(self, cwd: str | None) -> str:
        """The agent's ``sys.path[0]``: its script's folder (symlinks resolved), or its folder."""
        folder = os.getcwd() if cwd is None else cwd
        if self.kind == "module":
            return os.path.abspath(folder)
        return os.path.dirname(os.path.realpath(os.path.join(folder, self.target)))


_PYTHON_NAME = re.compile(r"(python|pypy)(\d+(\.\d+)?t?)?(\.exe)?")


def python_agent(argv: Sequence[str]) -> PythonAgent:
    """``PY script.py ARGS...`` or ``PY -m module ARGS...`` (PY: a Python interpreter, by name),
    the agent commands ``--preload`` can start warm; a UsageError for any other."""
    from harn_mcp_mock.errors import UsageError

    how = "runs a Python agent only (`PY script.py ARGS...` or `PY -m module ARGS...`)"
    found = shutil.which(argv[0]) if argv else None
    if found is None or not _PYTHON_NAME.fullmatch(os.path.basename(argv[0])):
        raise UsageError(
            f"{how}; {argv[0] if argv else 'no command'!r} is not a Python interpreter", where="--preload"
        )
    if len(argv) < 2 or (argv[1] == "-m" and len(argv) < 3):
        raise UsageError(f"{how}; the command names no script or module", where="--preload")
    if argv[1] == "-m":
        return PythonAgent(os.path.abspath(found), "module", argv[2])
    if argv[1].startswith("-"):
        raise UsageError(f"{how}; the interpreter option {argv[1]!r} is not supported", where="--preload")
    return PythonAgent(os.path.abspath(found), "script", argv[1])


def start_preload(argv: Sequence[str], preload: Sequence[str], cwd: str | None = None) -> None:
    """Before any trial: check the agent command is a Python one (:func:`python_agent`) and start
    its preloading fork server, which imports ``preload``; a UsageError naming ``--preload`` when
    the command is not one, a module does not import, or importing it started a thread."""
    from harn_mcp_mock.errors import UsageError

    python = python_agent(argv)
    try:
        _preloaded(python, tuple(preload), cwd).ready()
    except PreloadError as exc:
        raise UsageError(exc.strerror or str(exc), where="--preload") from None


class PreloadError(OSError):
    """A preloading fork server could not import its modules (the reason: one line)."""


_PRELOADED: dict[tuple[str, tuple[str, ...], str], _ForkServer] = {}
_PRELOADED_LOCK = threading.Lock()


def _preloaded(python: PythonAgent, modules: tuple[str, ...], cwd: str | None) -> _ForkServer:
    """The fork server of this interpreter, these modules and this ``sys.path[0]`` (one each)."""
    key = (python.python, modules, python.first_path(cwd))
    with _PRELOADED_LOCK:
        server = _PRELOADED.get(key)
        if server is None:
            server = _PRELOADED[key] = _ForkServer(key)
        return server


class _ForkServer:
    """This process's fork server (:mod:`harn_mcp_mock.runner._supervisor`), started at the first
    trial and again in a forked child or once it died; requests are serialised by a lock.
    ``preload`` (interpreter, modules, ``sys.path[0]``): a preloading server, run by that
    interpreter, that imports the modules before it answers (its first line: ``ok`` or why not)."""

    def __init__(self, preload: tuple[str, tuple[str, ...], str] | None = None) -> None:
        self._preload = preload
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._owner = 0
        atexit.register(self.close)
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """In a forked child: let go of the parent's server (its socket must reach EOF when the
        parent ends) without waiting on a lock another thread of the parent may have held."""
        self._lock = threading.Lock()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock, self._proc = None, None

    def _start(self) -> socket.socket:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [sys.executable, "-I", "-S", SUPERVISOR, "--serve", str(theirs.fileno())]
        if self._preload is not None:
            python, modules, first = self._preload
            command = [python, SUPERVISOR, "--serve", str(theirs.fileno()), "--path", first]
            for name in modules:
                command += ["--preload", name]
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # holds no pipe of whoever reads the runner's output
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        self._sock, self._owner = mine, os.getpid()
        if self._preload is not None:
            self._await_imports(mine)
        return mine

    def _await_imports(self, sock: socket.socket) -> None:
        """A preloading server's first line: ``ok`` once it imported its modules, else why not."""
        reply = b""
        sock.settimeout(PRELOAD_WAIT)
        try:
            while not reply.endswith(b"\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except TimeoutError:
            if self._proc is not None:
                self._proc.kill()
            reply = f"Eits modules were not imported after {PRELOAD_WAIT:g} s\n".encode()
        finally:
            sock.settimeout(None)
        if reply != b"ok\n":
            self._drop()
            text = reply.decode("utf-8", "replace").strip()
            raise PreloadError(
                0, text[1:] if text.startswith("E") else "the preloading server ended at its start"
            )

    def ready(self) -> None:
        """Start the server now (a preloading one: once its modules are imported)."""
        with self._lock:
            if self._sock is None or self._owner != os.getpid():
                self._start()

    def spawn(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        fds: list[int],
        run: list[str] | None = None,
    ) -> int:
        """A supervisor forked for one trial, given its stdout, stderr, life and status fds; its pid.
        ``run``: the Python agent a preloading server forks (``[kind, target]``)."""
        # the server's own folder is where the runner was when it started it, maybe not now
        request: dict[str, object] = {"argv": argv, "env": env, "cwd": os.getcwd() if cwd is None else cwd}
        if run is not None:
            request["run"] = run
        payload = json.dumps(request).encode()
        with self._lock:
            for attempt in (1, 2):
                sock = self._sock if self._sock is not None and self._owner == os.getpid() else None
                if sock is None:
                    sock = self._start()
                try:
                    socket.send_fds(sock, [len(payload).to_bytes(8, "big")], fds)
                except OSError:  # it was gone before this request: start another
                    self._drop()
                    if attempt == 2:
                        raise
                    continue
                try:
                    sock.sendall(payload)
                    reply = b""
                    while not reply.endswith(b"\n"):
                        chunk = sock.recv(64)
                        if not chunk:
                            raise EOFError
                        reply += chunk
                    return int(reply)
                except (OSError, EOFError, ValueError):
                    self._drop()
                    raise OSError(0, "the runner's fork server ended while starting it") from None
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None and self._owner == os.getpid():
            self._proc.wait()
        self._sock, self._proc = None, None

    def close(self) -> None:
        """End the server (it exits when its socket closes) and reap it."""
        with self._lock:
            if self._sock is not None and self._owner == os.getpid():
                self._drop()


_SERVER = _ForkServer()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every descendant of this process whose environment holds ``marker`` (the trial's
    processes that left its group), and reap those that are our children now; their pids."""
    tag = f"{MARKER_ENV}={marker}".encode()
    killed = []
    for pid in descendants(os.getpid()):
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
