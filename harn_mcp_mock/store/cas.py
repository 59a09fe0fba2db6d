"""BLAKE3 content-addressed store: one folder of blobs named by their hash.

Used by cassettes (``name.cassette.json.cas/``), tapes, testbench recordings and protocol
artifacts. Blobs are written atomically and stored once; every read verifies the hash, so an
altered or truncated blob is an error, never silently wrong data.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from harn_mcp_mock.errors import CassetteIntegrityError, OutputError
from harn_mcp_mock.store.canonical import digest

INLINE_THRESHOLD = 4096
"""Payloads larger than this many bytes spill into the store; smaller ones stay inline."""

_HEX = re.compile(r"[0-9a-f]{64}")

_UMASK = os.umask(0)
os.umask(_UMASK)  # read once at import (single-threaded): mkstemp's 0600 is widened to what open() gives


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and a rename (``sync``:
    fsync the file before the rename). A file that cannot be written there (``path`` is a folder,
    its folder is under a file or not writable, the disk is full) is an :class:`OutputError`
    naming it; ``path`` is left as it was."""
    try:
        _atomic_write(path, data, sync=sync)
    except OSError as exc:
        raise cannot_write(path, exc) from exc


def cannot_write(path: Path, exc: OSError, *, folder: bool = False) -> OutputError:
    """The one-line error for a file (or, with ``folder``, a folder) at ``path`` that ``exc``
    kept us from writing (making): what is in the way when something is, else the OS's reason."""
    above = next((p for p in path.parents if p.exists()), None)
    if not folder and path.is_dir():
        why = "it is a folder"
    elif folder and path.exists() and not path.is_dir():
        why = "it is a file, not a folder"
    elif above is not None and not above.is_dir():
        why = f"{above} is a file, not a folder"
    else:
        why = exc.strerror or str(exc)
    return OutputError(f"cannot write it: {why}", path=path, cause=exc)


def check_writable(*paths: Path | None) -> None:
    """Raise now the :class:`OutputError` :func:`atomic_write` would raise at the end for each
    of ``paths`` given (a folder there, a file above it, a folder above it we may not write in),
    so a command refuses its output files before it serves, records or scores anything. Writes
    nothing, creates no folder."""
    for path in paths:
        if path is None:
            continue
        above = next((p for p in path.parents if p.exists()), None)
        if path.is_dir() or (above is not None and not above.is_dir()):
            raise cannot_write(path, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
        if above is not None and not os.access(above, os.W_OK | os.X_OK):
            raise cannot_write(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))


def _atomic_write(path: Path, data: bytes, *, sync: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # not on replay's start-up path: only writers need it

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_regular(path: Path, size: int | None, *, what: str) -> bytes:
    """The bytes of the regular file ``path``, read without trusting it.

    Opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat``: a symlink, FIFO, device,
    socket or folder is a :class:`CassetteIntegrityError` naming the file (a FIFO cannot hang
    us, a link to ``/dev/zero`` cannot fill memory). With ``size`` (what the referring file
    declares) at most ``size + 1`` bytes are read and a longer file is refused. A missing file
    raises ``FileNotFoundError`` (the caller names what is missing).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise  # FileNotFoundError: the caller names what is missing
        if exc.errno == errno.ELOOP:
            raise CassetteIntegrityError(f"{what} is a symlink (refused)", path=path) from None
        raise CassetteIntegrityError(f"cannot read {what}: {exc.strerror}", path=path) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise CassetteIntegrityError(f"{what} is {kind}, not a regular file (refused)", path=path)
        limit = os.fstat(fd).st_size if size is None else size
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if size is not None and len(data) > size:
            raise CassetteIntegrityError(f"{what} is longer than the {size} bytes declared for it", path=path)
        return data
    finally:
        os.close(fd)


class CasStore:
    """A folder of blobs named by the BLAKE3 hex digest of their bytes."""

    def __init__(self, root: str | Path, *, sync: bool = True) -> None:
        self.root = Path(root)
        self.sync = sync
        """fsync each blob before it is renamed into place (False: a store whose files are
        disposable on a crash, such as a runner's trial tape's)."""

    def path_for(self, key: str) -> Path:
        if not _HEX.fullmatch(key):
            # A key is data from a file we load: never let it name a path outside the store.
            raise CassetteIntegrityError(
                f"invalid blob name {key[:80]!r} (want 64 hex digits)", path=self.root
            )
        return self.root / key

    def put(self, data: bytes) -> str:
        key = _hexdigest(data)
        target = self.root / key
        if not target.exists():
            atomic_write(target, data, sync=self.sync)
        return key

    def has(self, key: str) -> bool:
        return self.path_for(key).is_file()

    def get(self, key: str, size: int | None = None) -> bytes:
        """The blob's bytes, hash verified; ``size`` is the length the referring file declares.

        Never follows a symlink, never opens a FIFO, device or folder (:func:`read_regular`),
        and never reads more than ``size`` bytes (+1, to tell a longer blob).
        """
        target = self.path_for(key)
        try:
            data = read_regular(target, size, what=f"CAS blob {target}")
        except FileNotFoundError:
            raise CassetteIntegrityError(f"missing CAS blob {key}", path=self.root) from None
        if _hexdigest(data) != key:
            raise CassetteIntegrityError(
                f"CAS blob {key} is altered (its hash does not match its name)", path=self.root
            )
        return data

    def verify(self) -> list[str]:
        """Keys of every blob whose content no longer matches its name."""
        bad: list[str] = []
        if not self.root.is_dir():
            return bad
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("."):
                continue
            try:
                data = read_regular(entry, None, what=f"CAS blob {entry.name}")
            except (CassetteIntegrityError, FileNotFoundError):
                bad.append(entry.name)
                continue
            if not _HEX.fullmatch(entry.name) or _hexdigest(data) != entry.name:
                bad.append(entry.name)
        return bad


def _hexdigest(data: bytes) -> str:
    """BLAKE3 of ``data`` in hex (the module is imported on first use: a replay of a cassette
    without blobs never needs it)."""
    return digest(data)
