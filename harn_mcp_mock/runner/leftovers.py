"""Processes a runner leaves behind, ended by the next runner of the same run folder.

Every trial's supervisor and agent are recorded as they start in ``DIR/processes.ndjson`` (pid,
start time from ``/proc/PID/stat`` field 22, the machine's boot id, and a digest of the trial's
marker). :func:`end_leftovers`, run by a resumed run before any trial (holding the run folder's
lock, :mod:`harn_mcp_mock.runner.lock`, so no other run of the folder is alive), SIGKILLs the
processes of this user it can **prove** are a trial's:

- a process whose environment (``/proc/PID/environ``) holds ``HARN_TRIAL_MARKER=<marker>``
  whose digest is recorded: an agent and everything it started (a ``setsid`` grandchild
  included; under bubblewrap the ``bwrap`` process itself, to which the runner hands the
  trial's environment, and its tree);
- a process whose (pid, start time) is recorded on this boot **and** whose command line is the
  runner's supervisor (``PY [-I -S] .../harn_mcp_mock/runner/_supervisor.py --serve FD ...``):
  a trial's supervisor, forked from the fork server, shows the server's command line; so does a
  warm agent (``--preload``), forked in turn from its supervisor, whose ``/proc/PID/environ`` is
  still the server's, without the marker.

then waits for them to end (through pidfds) and empties the record. A recorded (pid, start
time) whose process shows neither proof is left alone: the record is a file in the run folder,
and whoever can write there (an agent run with ``--sandbox none``, a tool, a careless edit) can
append a line naming any process of the user with its right start time; killing on the record
alone would make the next ``--force`` SIGKILL that process, far outside any run. A reused pid
(another start time) is never killed either.

Normally the supervisor has ended them all already (the runner's death closes its life pipe);
this is the second net, for a supervisor killed together with its runner.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
from pathlib import Path

from harn_mcp_mock.runner.process import MARKER_ENV

__all__ = ["LEDGER", "end_leftovers", "record_processes"]

LEDGER = "processes.ndjson"
_SUPERVISOR = os.sep.join(("", "harn_mcp_mock", "runner", "_supervisor.py")).encode()
"""How the supervisor's script path ends in its command line (any install of harn-mcp-mock)."""
_WAIT_S = 10.0
"""How long to wait for killed processes to end (SIGKILL: at once, unless the kernel is busy)."""


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/PID/stat`` (clock ticks since boot), None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def _digest(marker: str) -> str:
    return hashlib.sha256(marker.encode()).hexdigest()[:32]


def record_processes(out: Path, pids: list[int], marker: str) -> None:
    """Append ``pids`` (those alive) of the trial with ``marker`` to the run folder's record."""
    if not os.path.isdir("/proc"):
        return
    procs = [[pid, st] for pid in pids if (st := start_time(pid)) is not None]
    line = json.dumps({"boot": _boot_id(), "marker": _digest(marker), "procs": procs}) + "\n"
    try:  # best effort: the supervisor is the first net, this the second
        fd = os.open(
            out / LEDGER,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
            0o644,
        )
    except OSError:
        return
    try:
        os.write(fd, line.encode())  # one write per line, O_APPEND: lines of parallel trials never mix
    except OSError:
        pass
    finally:
        os.close(fd)


def _recorded(out: Path) -> tuple[set[tuple[int, int]], set[str]]:
    try:
        fd = os.open(out / LEDGER, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return set(), set()
    with os.fdopen(fd, "rb") as f:
        data = f.read(1 << 26)
    boot = _boot_id()
    procs: set[tuple[int, int]] = set()
    markers: set[str] = set()
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by the SIGKILL
        if not isinstance(entry, dict) or entry.get("boot") != boot:
            continue
        if isinstance(entry.get("marker"), str):
            markers.add(entry["marker"])
        for pair in entry.get("procs") or ():
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) for x in pair):
                procs.add((pair[0], pair[1]))
    return procs, markers


def _marker_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return None
    prefix = f"{MARKER_ENV}=".encode()
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return _digest(item[len(prefix) :].decode(errors="replace"))
    return None


def _is_supervisor(pid: int) -> bool:
    """Whether ``pid``'s command line is the runner's fork server's, so also that of every
    supervisor (and warm agent) it forked: a Python, its options, ``_supervisor.py``, ``--serve``."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read(1 << 16).split(b"\0")
    except OSError:
        return False
    if not os.path.basename(args[0]).startswith((b"python", b"pypy")):
        return False
    rest = args[1:]
    while rest and rest[0].startswith(b"-"):  # the interpreter's options (-I -S)
        rest = rest[1:]
    return len(rest) >= 2 and rest[0].endswith(_SUPERVISOR) and rest[1] == b"--serve"


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def end_leftovers(out: Path) -> int:
    """End the processes a previous runner of ``out`` left that it can prove were a trial's
    (see the module docstring); how many."""
    procs, markers = _recorded(out)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out / LEDGER)  # read: this run records its own
    if not procs and not markers:
        return 0
    me, uid = os.getpid(), os.getuid()
    victims: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        started = start_time(pid)
        if started is None or _owner(pid) != uid:
            continue
        if markers and _marker_of(pid) in markers:
            victims[pid] = started  # an agent, or a process it started
        elif (pid, started) in procs and _is_supervisor(pid):
            victims[pid] = started  # a supervisor (or a warm agent)
    ended = 0
    waits: list[int] = []
    for pid, started in victims.items():
        pidfd = None
        with contextlib.suppress(OSError, AttributeError):
            pidfd = os.pidfd_open(pid)
        if start_time(pid) != started:  # ended (and maybe reused) meanwhile: not ours to kill
            if pidfd is not None:
                os.close(pidfd)
            continue
        try:
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)  # the very process checked above
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            if pidfd is not None:
                os.close(pidfd)
            continue
        ended += 1
        if pidfd is not None:
            waits.append(pidfd)
    for pidfd in waits:  # a pidfd turns readable when its process has ended: no polling
        with contextlib.suppress(OSError):
            select.select([pidfd], [], [], _WAIT_S)
        os.close(pidfd)
    return ended
