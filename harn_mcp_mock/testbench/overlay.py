"""The filesystem axis: a copy-on-write overlay in front of one real folder (the root).

While active, paths under the root are read from the real folder until written; writes,
appends, deletes, renames and ``mkdir`` land in memory, never on disk. Paths outside the root fall
through to the real filesystem. A path that starts inside the root but leaves it (``..``, or a
symlink pointing out) is refused with :class:`~harn_mcp_mock.errors.PathEscapeError`.

Patched: ``builtins.open``, ``io.open``, ``os.stat``, ``os.remove``, ``os.unlink``, ``os.rename``,
``os.replace``, ``os.mkdir``, ``os.open`` (write flags refused under the root) and
``pathlib.Path.touch``; ``pathlib.Path`` reads and writes go through these. Not patched:
``os.listdir``/``os.scandir``/``os.walk`` (they list the real folder), ``os.lstat``, ``os.rmdir``,
file descriptors, C extensions. See ``docs/testbench.md``.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import pathlib
import stat as stat_mod
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harn_mcp_mock.errors import PathEscapeError
from harn_mcp_mock.store.canonical import digest
from harn_mcp_mock.testbench import _guard

Emit = Callable[..., None]
ChangeKind = Literal["added", "modified", "deleted"]

_REAL_REMOVE = os.remove
_REAL_UNLINK = os.unlink
_REAL_RENAME = os.rename
_REAL_REPLACE = os.replace
_REAL_MKDIR = os.mkdir
_REAL_OS_OPEN = os.open
_REAL_TOUCH = pathlib.Path.touch
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@dataclass(frozen=True, slots=True)
class FsChange:
    """One overlay change; ``path`` is relative to the root, with ``/`` separators."""

    path: str
    kind: ChangeKind
    before: bytes | None
    after: bytes | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "before": None if self.before is None else self.before.decode("utf-8", "replace"),
            "after": None if self.after is None else self.after.decode("utf-8", "replace"),
        }


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def render_unified_diff(changes: Iterable[FsChange]) -> str:
    """``git apply``-style headers and ``-``/``+`` lines, no hunk headers (informational for binary)."""
    out: list[str] = []
    for change in changes:
        out.append("--- /dev/null" if change.before is None else f"--- a/{change.path}")
        out.append("+++ /dev/null" if change.after is None else f"+++ b/{change.path}")
        if change.before is not None:
            out.extend("-" + line for line in _lines(change.before))
        if change.after is not None:
            out.extend("+" + line for line in _lines(change.after))
    return "".join(line + "\n" for line in out)


def content_hash(data: bytes) -> str:
    return digest(data)


def _enoent(path: object) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path))  # fmt: skip


class _CowFile(io.BytesIO):
    """A writable in-memory file that commits its bytes to the overlay on close."""

    def __init__(self, overlay: OverlayFs, path: str, initial: bytes, name: str) -> None:
        super().__init__(initial)
        self._overlay = overlay
        self._path = path
        self.name = name

    def close(self) -> None:
        if not self.closed:
            self._overlay._commit(self._path, self.getvalue())
        super().close()


class OverlayFs:
    def __init__(self, root: str | os.PathLike[str], emit: Emit | None = None) -> None:
        given = os.path.abspath(os.fspath(root))
        if not os.path.isdir(given):
            raise PathEscapeError("the overlay root is not a folder", path=given)
        self.given_root = given
        self.root = os.path.realpath(given)
        self._emit: Emit = emit or (lambda kind, **fields: None)
        self._layer: dict[str, bytes | None] = {}
        self._dirs: set[str] = set()
        self._lock = threading.RLock()
        self._patcher = _guard.Patcher()

    # -- paths -------------------------------------------------------------------------------
    def _within(self, path: str, root: str) -> bool:
        return path == root or path.startswith(root.rstrip(os.sep) + os.sep)

    def resolve(self, path: object) -> str | None:
        """The real absolute path if ``path`` is under the root, None if outside; refuses escapes."""
        if isinstance(path, int) or not isinstance(path, (str, bytes, os.PathLike)):
            return None
        text = os.fsdecode(os.fspath(path))
        lexical = os.path.join(os.getcwd(), text)
        real = os.path.realpath(os.path.normpath(lexical))
        if self._within(real, self.root):
            return real
        if self._within(lexical, self.given_root) or self._within(lexical, self.root):
            raise PathEscapeError(f"leaves the overlay root {self.root}", path=text)
        return None

    def rel(self, real: str) -> str:
        return os.path.relpath(real, self.root).replace(os.sep, "/")

    # -- the view ----------------------------------------------------------------------------
    def _real_bytes(self, real: str) -> bytes | None:
        try:
            with _guard.REAL_OPEN(real, "rb") as fh:
                return fh.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def _content(self, real: str) -> bytes | None:
        with self._lock:
            if real in self._layer:
                return self._layer[real]
        return self._real_bytes(real)

    def _isdir(self, real: str) -> bool:
        if real in self._dirs:
            return True
        with self._lock:
            if real in self._layer:
                return False
        return os.path.isdir(real)

    def _commit(self, real: str, data: bytes) -> None:
        with self._lock:
            self._layer[real] = data
        self._emit("file_write", path=self.rel(real), content_hash=content_hash(data), len_bytes=len(data))

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes | None:
        """The overlay's current content of ``path`` (None if absent); for tests and tooling."""
        real = self.resolve(path)
        return self._content(real) if real is not None else None

    # -- patched entry points ----------------------------------------------------------------
    def _open(self, file: Any, mode: str = "r", buffering: int = -1, encoding: str | None = None,
              errors: str | None = None, newline: str | None = None, closefd: bool = True,
              opener: Any = None) -> Any:  # fmt: skip
        real = None if _guard.is_quiet() else self.resolve(file)
        if real is None:
            return _guard.REAL_OPEN(file, mode, buffering, encoding, errors, newline, closefd, opener)
        binary = "b" in mode
        if self._isdir(real):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(file))
        current = self._content(real)
        if "r" in mode and "+" not in mode:
            if current is None:
                raise _enoent(file)
            self._emit(
                "file_read", path=self.rel(real), content_hash=content_hash(current), len_bytes=len(current)
            )
            raw: io.BytesIO = io.BytesIO(current)
        else:
            if not self._isdir(os.path.dirname(real)):
                raise _enoent(file)
            if "x" in mode and current is not None:
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(file))
            if "r" in mode and current is None:
                raise _enoent(file)
            initial = b"" if "w" in mode or "x" in mode else (current or b"")
            raw = _CowFile(self, real, initial, os.fsdecode(os.fspath(file)))
            if "a" in mode:
                raw.seek(0, io.SEEK_END)
        if binary:
            return raw
        return io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors=errors, newline=newline)

    def _stat(self, path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> os.stat_result:
        real = None if _guard.is_quiet() else self.resolve(path)
        if real is not None:
            if real in self._dirs:
                return os.stat_result((stat_mod.S_IFDIR | 0o755, 0, 0, 2, 0, 0, 0, 0, 0, 0))
            with self._lock:
                if real in self._layer:
                    data = self._layer[real]
                    if data is None:
                        raise _enoent(path)
                    return os.stat_result((stat_mod.S_IFREG | 0o644, 0, 0, 1, 0, 0, len(data), 0, 0, 0))
        return _guard.REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    def _remove(self, path: Any, *, dir_fd: int | None = None) -> None:
        real = None if _guard.is_quiet() else self.resolve(path)
        if real is None:
            return _REAL_REMOVE(path, dir_fd=dir_fd)
        if self._isdir(real):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if self._content(real) is None:
            raise _enoent(path)
        with self._lock:
            self._layer[real] = None
        self._emit("file_delete", path=self.rel(real))
        return None

    def _move(self, real_fn: Callable[..., None]) -> Callable[..., None]:
        def move(src: Any, dst: Any, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
            if _guard.is_quiet():
                return real_fn(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            rs, rd = self.resolve(src), self.resolve(dst)
            if rs is None and rd is None:
                return real_fn(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            if rs is None or rd is None:
                raise OSError(errno.EXDEV, "cannot move across the testbench overlay root", os.fspath(src))
            data = self._content(rs)
            if data is None:
                raise _enoent(src)
            self._commit(rd, data)
            with self._lock:
                self._layer[rs] = None
            self._emit("file_delete", path=self.rel(rs))
            return None

        return move

    def _mkdir(self, path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real = None if _guard.is_quiet() else self.resolve(path)
        if real is None:
            return _REAL_MKDIR(path, mode, dir_fd=dir_fd)
        if self._isdir(real) or self._content(real) is not None:
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(path))
        if not self._isdir(os.path.dirname(real)):
            raise _enoent(path)
        self._dirs.add(real)
        return None

    def _os_open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if not _guard.is_quiet() and flags & _WRITE_FLAGS and self.resolve(path) is not None:
            raise PermissionError(
                errno.EROFS, "os.open() for writing is not supported under the testbench overlay; use open()",
                os.fspath(path),
            )  # fmt: skip
        return _REAL_OS_OPEN(path, flags, mode, dir_fd=dir_fd)

    def _touch(self, path: pathlib.Path, mode: int = 0o666, exist_ok: bool = True) -> None:
        real = None if _guard.is_quiet() else self.resolve(path)
        if real is None:
            return _REAL_TOUCH(path, mode, exist_ok)
        if self._content(real) is not None:
            if not exist_ok:
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
            return None
        with self._open(path, "wb"):
            pass
        return None

    def install(self) -> None:
        p = self._patcher
        p.set(builtins, "open", self._open)
        p.set(io, "open", self._open)
        p.set(os, "stat", self._stat)
        p.set(os, "remove", self._remove)
        p.set(os, "unlink", self._remove)
        p.set(os, "rename", self._move(_REAL_RENAME))
        p.set(os, "replace", self._move(_REAL_REPLACE))
        p.set(os, "mkdir", self._mkdir)
        p.set(os, "open", self._os_open)
        overlay = self

        def touch(path: pathlib.Path, mode: int = 0o666, exist_ok: bool = True) -> None:
            overlay._touch(path, mode, exist_ok)

        p.set(pathlib.Path, "touch", touch)

    def restore(self) -> None:
        self._patcher.restore()

    # -- the diff ----------------------------------------------------------------------------
    def diff(self) -> list[FsChange]:
        changes: list[FsChange] = []
        with self._lock:
            layer = sorted(self._layer.items(), key=lambda kv: self.rel(kv[0]))
        for real, after in layer:
            before = self._real_bytes(real)
            if before == after:
                continue
            kind: ChangeKind = "added" if before is None else "deleted" if after is None else "modified"
            changes.append(FsChange(self.rel(real), kind, before, after))
        return changes
