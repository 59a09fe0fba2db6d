"""One run per run folder: the lock on ``--out``.

A run holds an OS file lock (`filelock <https://py-filelock.readthedocs.io>`_, ``flock(2)`` on
Linux and macOS) on ``DIR/.harn-run.lock`` from before it reads or writes ``run.json`` until it
has written ``results.json`` (:func:`hold_run_folder`, around the run in
:func:`~harn_mcp_mock.runner.run.run_episodes` and
:func:`~harn_mcp_mock.runner.run.run_episodes_async`). A second run into the same folder is
refused at once, without waiting, in one line naming the holder's pid
(``runs/bank: another run (pid 4242) is using this folder; wait for it or use another --out``,
exit 2): without the lock it would take the first run's trials for a dead runner's, end its
agents as leftovers and rerun them, and the first run would fail.

- **The kernel drops the lock when its holder dies**, even by SIGKILL or an OOM kill: a killed
  run never leaves a stale lock, and the next run (the resume) takes it at once.
- **No agent holds it**: the lock's descriptor is opened close-on-exec (Python's default), so no
  process the runner starts (the fork server, the supervisors, the agents, Ray's workers)
  inherits it; an agent that outlived its runner does not keep the folder locked.
- **Who holds it** is written beside it, in ``DIR/.harn-run.pid`` (``{"pid": ..., "host": ...}``),
  once the lock is held, and removed when it is released; a refused run reads it to name the
  holder. The lock file itself is never written (it may be a hard link an agent planted: only
  its lock is taken) nor opened through a symlink; a symlink, folder or FIFO in its place is
  removed first. Both files stay out of the way of everything else in the folder (dot-files).
- A file system without file locks is refused in one line (exit 2) rather than run unlocked.
- **A run refused under the lock** (a :class:`UsageError` in the ``with`` block: its
  ``run.json`` holds other settings, a trial file is broken) leaves nothing behind: the lock file
  is removed (while still held) if this run made it, and the folders this run made (``--out`` and
  any missing parent) are removed if still empty.

``run --plan`` writes nothing and takes no lock.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner._files import Folder, open_folder

__all__ = ["HOLDER", "LOCK", "hold_run_folder"]

LOCK = ".harn-run.lock"
HOLDER = ".harn-run.pid"
_NO_LOCKS = {errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK}


def _holder(where: Folder) -> str:
    """`` (pid 4242)`` from the holder's file, `` (pid 4242 on box)`` for another machine's run,
    empty when it cannot be read (the holder has not written it yet)."""
    data = where.read_regular(HOLDER, limit=4096)
    try:
        found = json.loads(data) if data else None
    except ValueError:
        return ""
    if (
        not isinstance(found, dict)
        or isinstance(found.get("pid"), bool)
        or not isinstance(found.get("pid"), int)
    ):
        return ""
    host = found.get("host")
    elsewhere = f" on {host}" if isinstance(host, str) and host and host != socket.gethostname() else ""
    return f" (pid {found['pid']}{elsewhere})"


@contextlib.contextmanager
def hold_run_folder(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the lock on the run folder ``out`` (made if missing) for the ``with`` block; yields
    its resolved path. Raises :class:`UsageError` naming ``out`` as given when another run holds
    it, or when it cannot be locked (see the module docstring)."""
    from filelock import FileLock, Timeout

    shown = Path(out)
    root = shown.resolve()
    made = [part for part in (root, *root.parents) if not os.path.lexists(part)]
    refused = False
    try:
        with open_folder(root, ()) as where:  # made if missing; refused in one line if a file
            had_lock = True
            try:
                if not stat.S_ISREG(os.stat(LOCK, dir_fd=where.fd, follow_symlinks=False).st_mode):
                    where.remove(LOCK)  # never lock (or create) through a symlink an agent left
                    had_lock = False
            except FileNotFoundError:
                had_lock = False
            lock = FileLock(root / LOCK, thread_local=False, fallback_to_soft=False)
            try:
                lock.acquire(blocking=False)
            except Timeout:
                raise UsageError(
                    f"another run{_holder(where)} is using this folder; wait for it or use another --out",
                    path=shown,
                ) from None
            except OSError as exc:  # a read-only folder; a file system without file locks (ENOSYS)
                why = "its file system has no file locks" if exc.errno in _NO_LOCKS else exc.strerror or exc
                raise UsageError(
                    f"cannot take the run's lock on this folder ({LOCK}: {why})", path=shown
                ) from None
            try:
                holder = {"pid": os.getpid(), "host": socket.gethostname()}
                where.write(HOLDER, json.dumps(holder).encode() + b"\n", atomic=True)
                yield root
            except UsageError:
                refused = True
                raise
            finally:
                try:
                    with contextlib.suppress(OSError):
                        where.remove(HOLDER)  # before the lock goes: never a stale holder beside a free lock
                    if refused and not had_lock:
                        with contextlib.suppress(OSError):
                            where.remove(LOCK)  # while held: a run refused leaves nothing behind
                finally:
                    lock.release()
    finally:
        if refused:
            for folder in made:  # the folders this run made, deepest first, if still empty
                try:
                    folder.rmdir()
                except OSError:
                    break
