"""Reading a file a user names (a cassette, its journal, a world spec, a policy, an ignore file, a
tape): a regular file only.

``Path.read_bytes`` on a FIFO blocks until a writer comes, in ``open(2)``, where a signal cannot
stop it (Python retries the call after its handler: PEP 475), and on a character device such as
``/dev/zero`` it reads forever. :func:`read_input` opens with ``O_NONBLOCK`` and checks with
``fstat`` first, so such a path is an ``OSError`` whose ``strerror`` says what it is, which every
caller already turns into its one-line error (``cannot read cassette: it is a FIFO, not a regular
file``). A symlink to a regular file is followed (a user's own link); a missing file is still
``FileNotFoundError``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words, when it is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_input(path: str | Path) -> bytes:
    """The bytes of the regular file ``path``; ``OSError`` naming what else it is."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder, not a regular file", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)
