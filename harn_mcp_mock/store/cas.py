"""BLAKE3 content-addressed store: one folder of blobs named by their hash.

Used by cassettes (``name.cassette.json.cas/``), tapes, testbench recordings and protocol
artifacts. Blobs are written atomically and stored once; every read verifies the hash, so an
altered or truncated blob is an error, never silently wrong data.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from blake3 import blake3

from harn_mcp_mock.errors import CassetteIntegrityError

INLINE_THRESHOLD = 4096
"""Payloads larger than this many bytes spill into the store; smaller ones stay inline."""

_HEX = re.compile(r"[0-9a-f]{64}")

_UMASK = os.umask(0)
os.umask(_UMASK)  # read once at import (single-threaded): mkstemp's 0600 is widened to what open() gives


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class CasStore:
    """A folder of blobs named by the BLAKE3 hex digest of their bytes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        if not _HEX.fullmatch(key):
            # A key is data from a file we load: never let it name a path outside the store.
            raise CassetteIntegrityError(
                f"invalid blob name {key[:80]!r} (want 64 hex digits)", path=self.root
            )
        return self.root / key

    def put(self, data: bytes) -> str:
        key = blake3(data).hexdigest()
        target = self.root / key
        if not target.exists():
            atomic_write(target, data)
        return key

    def has(self, key: str) -> bool:
        return self.path_for(key).is_file()

    def get(self, key: str) -> bytes:
        target = self.path_for(key)
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            raise CassetteIntegrityError(f"missing CAS blob {key}", path=self.root) from None
        if blake3(data).hexdigest() != key:
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
            if not _HEX.fullmatch(entry.name) or blake3(entry.read_bytes()).hexdigest() != entry.name:
                bad.append(entry.name)
        return bad
