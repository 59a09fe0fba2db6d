"""Spawn a stdio MCP server process, and stop and reap it without leaving orphans.

The server runs in its own process group (so stopping it stops whatever it spawned, e.g. the
``node`` behind an ``npx`` wrapper). On Linux, when spawned from the main thread, it also gets
``PR_SET_PDEATHSIG`` so that it is told to stop even if our process is killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from harn_mcp_mock.errors import ServerStartError
from harn_mcp_mock.shutdown import terminate


def _pdeathsig() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        # The death signal fires when the spawning *thread* exits: only safe from the main thread.
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None

    def set_death_signal() -> None:
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    return set_death_signal


def spawn_server(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    display: str | None = None,
    stderr: int | IO[Any] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``command`` with piped stdin/stdout and stderr inherited (or sent to ``stderr``).

    ``display`` is the (redacted) command text used in error messages, so a secret in the
    argv never reaches a terminal or a log.
    """
    if not command:
        raise ServerStartError("no server command given (put it after `--`)")
    shown = display or command[0]
    program = command[0]
    if os.sep not in program and shutil.which(program, path=(env or os.environ).get("PATH")) is None:
        raise ServerStartError(f"cannot start server {shown!r}: command not found")
    try:
        return subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            bufsize=0,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_pdeathsig(),  # spawned before any pump thread starts
        )
    except FileNotFoundError:
        raise ServerStartError(f"cannot start server {shown!r}: command not found") from None
    except PermissionError:
        raise ServerStartError(f"cannot start server {shown!r}: permission denied") from None
    except OSError as exc:
        raise ServerStartError(f"cannot start server {shown!r}: {exc.strerror}") from None


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to the server's process group (falling back to the process)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)


def stop_process(proc: subprocess.Popen[bytes], *, grace: float, term_grace: float = 2.0) -> int:
    """Wait up to ``grace`` s for a voluntary exit, then SIGTERM, then SIGKILL (the one stop
    shape, :func:`harn_mcp_mock.shutdown.terminate`, on the process group); return the code."""

    def exited(timeout: float) -> bool:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    terminate(lambda sig: signal_group(proc, sig), exited, grace=grace, term_grace=term_grace)
    return proc.wait()


def reap_group(proc: subprocess.Popen[bytes]) -> None:
    """After the server exited, stop anything it left running in its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def exit_status(returncode: int) -> tuple[int, str | None]:
    """(shell-style exit code, signal name or None) of a Popen return code."""
    if returncode < 0:
        sig = -returncode
        try:
            name: str | None = signal.Signals(sig).name
        except ValueError:
            name = f"SIG{sig}"
        return 128 + sig, name
    return returncode, None
