"""Writing under ``--out`` without following a symlink: folders are opened one component at a
time with ``O_NOFOLLOW`` relative to their parent's descriptor, and files are written to a temp
name and renamed into place (a rename replaces a symlink, it never writes through it).

A trial's folder is opened before its agent starts (for the agent's own files) and opened again
from the run's root when the agent has ended, for the runner's files: an agent that renamed its
folder away, or put a symlink in its place, gets nothing of the runner's written after it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path

from harn_mcp_mock.errors import PathEscapeError

__all__ = ["Folder", "open_folder"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Folder:
    """An open folder under ``--out`` (see the module docstring); close it, or use ``with``."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def write(self, name: str, data: bytes, *, atomic: bool = False, sync: bool = False) -> None:
        """Write ``name`` (never through a symlink); ``atomic``: to a temp name renamed into place,
        so a reader sees the whole file or none (``trial.json``, ``run.json``)."""
        self.remove(name)  # whatever an agent left there: a folder, a FIFO, a symlink
        if not atomic:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=self.fd)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                if sync:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def unlink(self, name: str) -> None:
        self.remove(name)

    def remove(self, name: str) -> None:
        """Remove ``name`` if it exists, a folder (and what it holds) included, never following
        a symlink."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return
        except (IsADirectoryError, PermissionError):
            import shutil
            import stat

            if stat.S_ISDIR(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode):
                shutil.rmtree(name, dir_fd=self.fd)
            else:
                raise

    def clear(self, names: Sequence[str]) -> None:
        """Remove those of ``names`` that exist (one listing, no unlink for the missing ones)."""
        present = set(os.listdir(self.fd))
        for name in names:
            if name in present:
                self.unlink(name)

    def read_regular(self, name: str, limit: int = 1 << 26) -> bytes | None:
        """The bytes of ``name`` if it is a regular file (not a symlink, folder, FIFO...), else None."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self.fd)
        except OSError:
            return None
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as fh:
            return fh.read(limit)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_folder(root: Path, parts: Sequence[str], *, create: bool = True, replace: bool = False) -> Folder:
    """``root/parts...`` opened without following a symlink below ``root`` (made when ``create``).
    Raises :class:`PathEscapeError` naming the component that is a symlink or not a folder, and
    FileNotFoundError when it is missing and not ``create``. ``replace``: such a component is
    removed instead (the link itself, never what it points to) and made again as a folder: how
    the runner writes a trial's files after its agent ended, whatever the agent did to the names."""
    if create:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # --out names a file, or a path under one
            from harn_mcp_mock.store.cas import cannot_write

            raise cannot_write(root, exc, folder=True) from None
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    path = root
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part or "\0" in part:
                raise PathEscapeError(f"{part!r} is not a plain folder name", path=path)
            path = path / part
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile by another thread
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if not replace:
                    raise PathEscapeError(
                        "is a symlink or not a folder: refusing to write through it", path=path
                    ) from None
                os.unlink(part, dir_fd=fd)  # a symlink or a file: removed, never followed
                os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return Folder(fd, path)


@contextlib.contextmanager
def folder(root: Path, parts: Sequence[str], *, create: bool = True) -> Iterator[Folder]:
    opened = open_folder(root, parts, create=create)
    try:
        yield opened
    finally:
        opened.close()
