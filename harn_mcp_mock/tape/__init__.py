"""The event tape: every non-deterministic input of a run as typed, content-addressed records.

See ``docs/tape.md``. The format is NDJSON (``run.tape``: a header line, then one record per
line) with a BLAKE3 content-addressed sidecar (``run.tape.cas/``) for payloads over 4 KiB.
"""

from __future__ import annotations

from harn_mcp_mock.errors import TapeError, TapeFormatError, TapeIntegrityError, TapeVersionError
from harn_mcp_mock.tape.model import (
    KNOWN_KINDS,
    PHASES,
    TAPE_FORMAT_VERSION,
    Tape,
    TapeRecord,
    TapeWriter,
    cas_dir,
    load_tape,
    load_tape_pair,
)

__all__ = [
    "KNOWN_KINDS",
    "PHASES",
    "TAPE_FORMAT_VERSION",
    "Tape",
    "TapeError",
    "TapeFormatError",
    "TapeIntegrityError",
    "TapeRecord",
    "TapeVersionError",
    "TapeWriter",
    "cas_dir",
    "load_tape",
    "load_tape_pair",
]
