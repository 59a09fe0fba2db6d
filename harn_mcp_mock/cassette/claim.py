"""One recorder per cassette at a time, across processes: the recording claim.

Every recorder (``record``, ``replay --mode once/all/new_episodes``, the Python API's
transports, the pytest plugin) first takes the claim of the cassette it writes: an OS file lock
(`filelock <https://py-filelock.readthedocs.io>`_) on ``NAME.cassette.json.claim``, a file that
also says who holds it (pid, host, pytest-xdist worker id, start time) so a refusal can name the
holder. The claim is dropped, and its file removed, when the recording has been written.

* ``once`` (:func:`claim_once`): a cassette that exists is replayed; one that another process is
  recording is waited for (bounded), then replayed; otherwise this process records it.
* ``all`` / ``new_episodes`` (:func:`recording_claim`): a held claim fails at once, naming the
  holder.
* The operating system drops the lock when its process dies, so the claim of a dead recorder is
  taken over at once (:attr:`CassetteClaim.reclaimed` names it). Only then does a journal left
  next to the cassette belong to a dead recorder, and only then is ``recover`` suggested.

``filelock`` is imported when a claim is taken, never by a plain replay.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

import orjson

from harn_mcp_mock.cassette.model import journal_path
from harn_mcp_mock.clock import SYSTEM_CLOCK
from harn_mcp_mock.errors import CassetteBusyError, CassetteError

if TYPE_CHECKING:
    from filelock import BaseFileLock

CLAIM_SUFFIX = ".claim"
DEFAULT_WAIT = 300.0
"""How long ``once`` waits for another process's recording of the same cassette (seconds)."""
WORKER_ENV = "PYTEST_XDIST_WORKER"
_POLL = 0.05


def claim_path(cassette: Path) -> Path:
    return cassette.with_name(cassette.name + CLAIM_SUFFIX)


def _pid_alive(pid: int) -> bool | None:
    if os.name == "nt":  # os.kill would end the process there; the lock says enough
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by another user
    return True


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds (or held) a cassette's claim, as its claim file says."""

    pid: int | None = None
    host: str | None = None
    worker: str | None = None
    """The pytest-xdist worker id (``gw0``...), when the holder ran under pytest-xdist."""
    started: str | None = None

    @classmethod
    def current(cls) -> Holder:
        now = dt.datetime.fromtimestamp(SYSTEM_CLOCK.wall_ms() / 1000, tz=dt.UTC)
        started = now.isoformat(timespec="seconds").replace("+00:00", "Z")
        return cls(os.getpid(), socket.gethostname(), os.environ.get(WORKER_ENV) or None, started)

    @classmethod
    def parse(cls, data: bytes) -> Holder | None:
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(obj, dict):
            return None
        pid = obj.get("pid")
        fields = {
            k: obj.get(k) if isinstance(obj.get(k), str) else None for k in ("host", "worker", "started")
        }
        return cls(pid if isinstance(pid, int) else None, **fields)

    @classmethod
    def read(cls, path: Path) -> Holder | None:
        try:
            return cls.parse(path.read_bytes())
        except OSError:
            return None

    def describe(self) -> str:
        """``pytest-xdist worker gw1 (pid 4242 on box, since 2026-11-23T21:04:22Z)``."""
        where = f"pid {self.pid}" if self.pid is not None else "unknown pid"
        if self.host:
            where += f" on {self.host}"
        if self.started:
            where += f", since {self.started}"
        who = f"pytest-xdist worker {self.worker}" if self.worker else "process"
        return f"{who} ({where})"

    def alive(self) -> bool | None:
        """Whether the holder's process runs (None when it ran on another host or is unknown)."""
        if self.pid is None or self.host != socket.gethostname():
            return None
        return _pid_alive(self.pid)


class CassetteClaim:
    """The recording claim of one cassette (see the module docstring)."""

    def __init__(self, cassette: str | os.PathLike[str]) -> None:
        self.cassette = Path(cassette)
        self.path = claim_path(self.cassette)
        self.reclaimed: Holder | None = None
        """The dead holder whose claim this one took over (its process died while recording)."""
        self._lock: BaseFileLock | None = None

    @property
    def held(self) -> bool:
        return self._lock is not None and self._lock.is_locked

    def holder(self) -> Holder | None:
        """Who holds the claim now, as its file says (None when free or unreadable)."""
        return Holder.read(self.path)

    def acquire(self, *, timeout: float = 0.0) -> Self:
        """Take the claim, waiting up to ``timeout`` seconds for its holder; else :class:`CassetteBusyError`."""
        from filelock import FileLock, Timeout

        if self.held:
            return self
        if self.cassette.is_dir():
            raise CassetteError("is a folder, not a cassette file (NAME.cassette.json)", path=self.cassette)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # under a file, a folder we may not write, a read-only file system
            folder = self.path.parent
            above = next((p for p in (folder, *folder.parents) if p.exists()), None)
            why = f"{above} is a file, not a folder" if above and not above.is_dir() else exc.strerror or exc
            raise CassetteError(f"cannot create its folder {folder}: {why}", path=self.cassette) from None
        lock = FileLock(self.path, thread_local=False, on_acquired=self._on_acquired)
        try:
            lock.acquire(timeout=max(timeout, 0.0), poll_interval=_POLL)
        except Timeout:
            holder = self.holder()
            who = holder.describe() if holder is not None else "another process"
            if timeout > 0:
                raise CassetteBusyError(
                    f"waited {timeout:g} s for {who} to finish recording this cassette; it is still "
                    "recording (a larger claim_timeout / mcp_mock_claim_timeout waits longer)",
                    path=self.cassette,
                    holder=holder,
                ) from None
            raise CassetteBusyError(
                f"{who} is recording this cassette; let it finish (record mode once waits for it and "
                "replays it) or stop it",
                path=self.cassette,
                holder=holder,
            ) from None
        except OSError as exc:
            raise CassetteError(
                f"cannot take the recording claim {self.path.name}: {exc}", path=self.path
            ) from exc
        self._lock = lock
        return self

    def _on_acquired(self, fd: int) -> None:
        """Runs holding the lock: note a dead holder's leftover claim, then write ours."""
        os.lseek(fd, 0, os.SEEK_SET)
        previous = os.read(fd, 4096)
        if previous.strip():
            self.reclaimed = Holder.parse(previous) or Holder()
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, orjson.dumps(asdict(Holder.current())) + b"\n")

    def release(self) -> None:
        """Drop the claim and remove its file (removed first, while still held: waiters retry)."""
        lock, self._lock = self._lock, None
        if lock is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            lock.release(force=True)

    def __enter__(self) -> CassetteClaim:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def check_no_journal(cassette: Path, dead: Holder | None = None) -> None:
    """Refuse to record over a journal; call it holding the claim, so the journal is a dead
    recorder's (``dead``: whose, when its claim was taken over)."""
    journal = journal_path(cassette)
    if journal.exists():
        who = f" ({dead.describe()})" if dead is not None and dead.pid is not None else ""
        raise CassetteError(
            f"an unfinished recording of a process that has died{who} is in the way: run `harn mcp "
            f"mock recover --cassette {cassette}` to keep it, or delete {journal.name}",
            path=journal,
        )


@contextmanager
def recording_claim(
    cassette: str | os.PathLike[str], claim: CassetteClaim | None = None
) -> Iterator[CassetteClaim]:
    """Hold ``cassette``'s claim while recording it: taken at once (or given, already held),
    checked for a dead recorder's journal, released at the end."""
    claim = claim if claim is not None else CassetteClaim(cassette)
    try:
        claim.acquire()
        check_no_journal(claim.cassette, claim.reclaimed)
        yield claim
    finally:
        claim.release()


def claim_once(
    cassette: str | os.PathLike[str],
    *,
    timeout: float = DEFAULT_WAIT,
    on_wait: Callable[[Holder | None], None] | None = None,
) -> CassetteClaim | None:
    """Record mode ``once``: None when the cassette exists (replay it), else its held claim (record it).

    When another process is recording the cassette, wait up to ``timeout`` seconds for it
    (``on_wait`` is told who, first); when its recording is written, replay it (None); when it
    wrote none, this process records.
    """
    path = Path(cassette)
    if path.exists():
        return None
    claim = CassetteClaim(path)
    try:
        claim.acquire()
    except CassetteBusyError as busy:
        holder = busy.holder if isinstance(busy.holder, Holder) else None
        if holder is not None and holder.pid == os.getpid() and holder.host == socket.gethostname():
            # Waiting on ourselves would only time out: the recording cannot finish meanwhile.
            raise CassetteBusyError(
                "this process is recording this cassette already; open the next session after that "
                "one has closed",
                path=path,
                holder=holder,
            ) from None
        if on_wait is not None:
            on_wait(holder)
        claim.acquire(timeout=timeout)
    if path.exists():
        claim.release()
        return None
    return claim
