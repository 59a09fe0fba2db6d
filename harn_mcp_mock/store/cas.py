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
from collections.abc import Callable
from pathlib import Path

from harn_mcp_mock.errors import CassetteIntegrityError, OutputError
from harn_mcp_mock.inputs import kind_of
from harn_mcp_mock.store.canonical import digest

INLINE_THRESHOLD = 4096
"""Payloads larger than this many bytes spill into the store; smaller ones stay inline."""

_HEX = re.compile(r"[0-9a-f]{64}")

_UMASK = os.umask(0)
os.umask(_UMASK)  # read once at import (single-threaded): mkstemp's 0600 is widened to what open() gives


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write ``data`` to the output file ``path``: the one writer of every file a command is told
    to write (``--report``, ``--out``, ``--state-out``...).

    A regular file, or a missing one, is replaced atomically: a temp file in the same folder and
    a rename (``sync``: fsync it before the rename). Anything else is written into, never
    replaced: a character or block device, a FIFO, a symlink to one (``/dev/null``, a terminal),
    and ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N`` (written to this
    process's own descriptor N, at its offset, as a shell's ``>&N`` would). A FIFO is opened
    without waiting: one that no process has open for reading is an :class:`OutputError` (start
    the reader first), never a command that hangs. A file that cannot be written (``path`` is a
    folder, its folder is under a file or not writable, the disk is full) is an
    :class:`OutputError` naming it; a replaced ``path`` is left as it was."""
    try:
        fd = _own_descriptor(path)
        if fd is not None:
            _flush_std_streams()
            _write_all(fd, data)
        elif not (_is_special(path) and _write_in_place(path, data)):
            _atomic_write(path, data, sync=sync)
    except OutputError:
        raise
    except OSError as exc:
        raise cannot_write(path, exc) from exc


_OWN_FDS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev|proc/self)/fd/([0-9]+)")


def _own_descriptor(path: Path) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout``: 1, ``/dev/fd/N``
    and ``/proc/self/fd/N``: N), else None. Opening such a path anew would truncate a regular
    file a shell redirected the descriptor to; replacing it would replace the link in /dev."""
    text = os.path.normpath(str(path))
    if text in _OWN_FDS:
        return _OWN_FDS[text]
    found = _FD_PATH.fullmatch(text)
    return int(found.group(1)) if found else None


def _flush_std_streams() -> None:
    """What the command printed through ``sys.stdout``/``sys.stderr`` goes out before the bytes
    written straight to a descriptor, so the two keep their order."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _is_special(path: Path) -> bool:
    """Whether ``path`` (its links followed) exists and is neither a regular file nor a folder:
    a device, a FIFO, a socket. Those are written into, not replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # missing (or a dangling link): replaced, as a new file
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_in_place(path: Path, data: bytes) -> bool:
    """Write ``data`` into the device or FIFO at ``path``; False when what is there now is a
    regular file after all (then it is replaced as one)."""
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads (or a socket): never wait for one
            kind = "a socket" if _mode_is(path, stat.S_ISSOCK) else "a FIFO that no process is reading"
            raise OutputError(
                f"cannot write it: it is {kind} (start its reader first)", path=path, cause=exc
            ) from exc
        raise
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        os.set_blocking(fd, True)  # a reader is there: wait for it as a shell redirect would
        _write_all(fd, data)
        return True
    finally:
        os.close(fd)


def _mode_is(path: Path, test: Callable[[int], bool]) -> bool:
    try:
        return test(os.stat(path).st_mode)
    except OSError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
    of ``paths`` given (a folder there, a file above it, a folder above it we may not write in;
    a device or FIFO we may not open for writing), so a command refuses its output files before
    it serves, records or scores anything. Writes nothing, opens nothing, creates no folder."""
    for path in paths:
        if path is None:
            continue
        fd = _own_descriptor(path)
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError as exc:
                raise cannot_write(path, exc) from None
            continue
        if _is_special(path):  # written into, not replaced: its folder need not be writable
            if not os.access(path, os.W_OK):
                raise cannot_write(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
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
            kind = kind_of(mode)
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
