"""Newline-delimited JSON framing (the MCP stdio transport).

:class:`LineSplitter` turns arbitrary byte chunks into complete lines and never fails: a line
that is not JSON is still a line, and becomes an ``invalid`` frame upstream. Lines of any length
are supported (multi-megabyte tool results are ordinary).
"""

from __future__ import annotations

import os

from harn_mcp_mock import deepjson

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


class LineSplitter:
    """Accumulates chunks; :meth:`feed` returns the complete lines (without ``\\n``)."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self._buf += chunk
            return []
        if self._buf:
            self._buf += chunk
            data = bytes(self._buf)
            self._buf.clear()
        else:
            data = chunk
        parts = data.split(b"\n")
        tail = parts.pop()
        if tail:
            self._buf += tail
        return [line.rstrip(b"\r") for line in parts if line.strip()]

    def flush(self) -> bytes | None:
        """The unterminated remainder at end of stream, if any."""
        if not self._buf.strip():
            self._buf.clear()
            return None
        data = bytes(self._buf).rstrip(b"\r")
        self._buf.clear()
        return data

    @property
    def pending(self) -> int:
        return len(self._buf)


def encode_message(message: Any) -> bytes:
    """One JSON-RPC message as a wire line (compact JSON + ``\\n``), key order preserved."""
    return deepjson.dumps(message) + b"\n"


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (a pipe may take fewer at a time)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
