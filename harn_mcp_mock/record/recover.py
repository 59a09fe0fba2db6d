"""Recover a killed recording: its journal into the cassette, and the tape it wrote redacted again.

A recorder killed by SIGKILL ran nothing at its end, so what it wrote before it identified a
value as a secret holds that value in clear: in the journal (and its blobs), and in the
``--emit-tape`` tape (and its sidecar). The journal carries the keyed fingerprints of every
value learned (``learned`` lines) and says where the tape is (``tape``, relative to the
cassette's folder). :func:`recover_recording` rebuilds the memory from the fingerprints, redacts
the journal's messages and the tape with it (passes over both while they learn something),
then writes the cassette and removes the journal: killed again halfway, it can simply be run
again. See docs/redaction.md ("After a crash").
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.cassette.recovery import (
    finish_recovery,
    open_recovery,
    recovery_claim,
    redact_remembered,
    remembered_redactor,
)
from harn_mcp_mock.errors import HarnError


@dataclass(frozen=True)
class Recovered:
    """What :func:`recover_recording` did: the cassette it wrote, and one line saying what it
    did with the session's tape (None when the recording wrote no tape)."""

    cassette: Cassette
    tape: str | None


def recover_recording(path: str | Path) -> Recovered:
    """Turn the journal of the killed recording of ``path`` into the cassette ``path``, and
    redact the session's tape (when the journal names one) again with what the journal
    remembers. A tape that is gone, or that is not a tape, is left as it is and said so: the
    cassette is recovered anyway."""
    path = Path(path)
    with recovery_claim(path):
        cassette = open_recovery(path)
        tape, problem, torn = _find_tape(cassette, path)
        taken = _highest_placeholder(tape) if tape is not None else 0
        memory = remembered_redactor(cassette, taken=taken)
        changed: list[bool] = []  # whether each pass changed the tape
        stale = redact_remembered(
            cassette, memory, None if tape is None else lambda red: changed.append(_redact_tape(tape, red))
        )
        finish_recovery(cassette, path, stale)
    if tape is None:
        return Recovered(cassette, problem)
    return Recovered(cassette, _said(tape, memory, any(changed), torn))


def _find_tape(cassette: Cassette, path: Path) -> tuple[Path | None, str | None, bool]:
    """(the tape to redact, None, whether its last line is torn) or (None, the line saying why
    there is none: None when the recording wrote no tape, False)."""
    field = cassette.meta.get("tape")
    if field is None:
        return None, None, False
    if not isinstance(field, str) or not field or "\0" in field:
        return None, f"the journal's `tape` is not a path ({field!r}): no tape was redacted", False
    tape = path.parent / field
    if not os.path.lexists(tape):
        return None, f"tape {tape}, named in the journal, is gone: nothing to redact there", False
    if tape.is_symlink() or not tape.is_file():
        return (
            None,
            (
                f"tape {tape}, named in the journal, is not a regular file (a link or a folder, not the "
                "tape the recording wrote): left as it is"
            ),
            False,
        )
    from harn_mcp_mock.tape import load_tape

    try:
        loaded = load_tape(tape)
    except HarnError as exc:
        return None, f"{tape}, named in the journal as its tape, is not a tape ({exc}): left as it is", False
    return tape, None, any("torn" in note for note in loaded.notes)


def _highest_placeholder(tape: Path) -> int:
    """The highest ``[REDACTED:N]`` the tape uses (a tape of replayed and live traffic may
    number further than the journal): the memory's new placeholders come after it."""
    try:
        data = tape.read_bytes()
    except OSError:
        return 0
    return max(map(int, re.findall(rb"\[REDACTED:([0-9]+)\]", data)), default=0)


def _redact_tape(tape: Path, memory: Any) -> bool:
    """Redact ``tape`` again with ``memory``; a tape that cannot be rewritten stops the recovery
    before the cassette is written, so that the journal (which names the tape) stays to retry."""
    from harn_mcp_mock.errors import TapeError
    from harn_mcp_mock.tape.mcp import redact_tape

    try:
        return redact_tape(tape, memory.redact_message)
    except OSError as exc:
        raise TapeError(
            f"cannot rewrite the tape of the killed recording ({exc.strerror}): the journal is kept; "
            "make the tape writable and run recover again, or delete the tape",
            path=tape,
        ) from None


def _said(tape: Path, memory: Any, changed: bool, torn: bool) -> str:
    if memory is None:
        return f"tape {tape}: left as written (the journal remembers no secret to redact)"
    if not changed:
        return f"tape {tape}: holds no value the journal remembers: unchanged"
    torn_note = "; its torn last line dropped" if torn else ""
    return f"tape {tape}: redacted again with what the journal remembers{torn_note}"
