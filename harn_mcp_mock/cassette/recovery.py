"""Recovering a killed recording's journal into its cassette.

A recorder killed before it finished (SIGKILL, power loss) leaves ``NAME.cassette.json.journal``
(:mod:`harn_mcp_mock.cassette.model`). Recovery reads it, redacts again what was written before a
value was learned (the journal's ``learned`` fingerprints), makes the ``server`` summary the
trailer would have held, writes the cassette and removes the journal. It holds the cassette's
recording claim (:mod:`harn_mcp_mock.cassette.claim`) all along: a journal whose recorder is
alive is a recording in progress, not something to recover, and is refused; a dead recorder's
claim is taken over and its claim file removed at the end.

:func:`recover_journal` is the cassette alone; ``harn mcp mock recover`` also redacts the
session's tape (:func:`harn_mcp_mock.record.recover.recover_recording`), with the steps here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harn_mcp_mock import deepjson
from harn_mcp_mock.cassette.claim import CassetteClaim, Holder
from harn_mcp_mock.cassette.model import (
    Cassette,
    blob_key,
    cas_dir,
    journal_path,
    load_journal,
    redact_messages_again,
    save_cassette,
)
from harn_mcp_mock.errors import CassetteBusyError, CassetteError, NothingRecordedError
from harn_mcp_mock.store.cas import CasStore


@contextmanager
def recovery_claim(path: Path) -> Iterator[None]:
    """Hold ``path``'s recording claim while recovering it. A live recorder holds it: its
    journal is a recording in progress, so recovery is refused (:class:`CassetteBusyError`,
    naming it). The operating system dropped a dead recorder's lock: its claim is taken over,
    and its claim file removed when the recovery ends."""
    claim = CassetteClaim(path)
    try:
        claim.acquire()
    except CassetteBusyError as busy:
        who = busy.holder.describe() if isinstance(busy.holder, Holder) else "another process"
        raise CassetteBusyError(
            f"{who} is still recording this cassette: its journal is a recording in progress, not one "
            "to recover (let it finish; recover it only if that recorder is killed)",
            path=path,
            holder=busy.holder,
        ) from None
    try:
        yield
    finally:
        claim.release()


def recover_journal(path: str | Path) -> Cassette:
    """Turn the journal of an unfinished recording of ``path`` into the cassette ``path``
    (the session's tape, if it wrote one, is not touched: see
    :func:`harn_mcp_mock.record.recover.recover_recording`)."""
    path = Path(path)
    with recovery_claim(path):
        cassette = open_recovery(path)
        stale = redact_remembered(cassette, remembered_redactor(cassette))
        finish_recovery(cassette, path, stale)
    return cassette


def redact_remembered(
    cassette: Cassette, memory: Any, also: Callable[[Any], object] | None = None
) -> set[str]:
    """Pass ``memory`` (:func:`remembered_redactor`; None: nothing to do) over the messages, and
    ``also(memory)`` over what else the session wrote (its tape), while it learns something, at
    most :data:`RECOVERY_PASSES` times. Returns the blob keys of the messages that changed."""
    stale: set[str] = set()
    for _ in range(RECOVERY_PASSES if memory is not None else 0):
        learned = memory.learned
        stale |= redact_messages_again(cassette, memory)
        if also is not None:
            also(memory)
        if memory.learned == learned:
            break
    return stale


def open_recovery(path: Path) -> Cassette:
    """The unfinished recording of ``path``, read from its journal (``exit`` set to
    ``recorder-died`` when the journal has none); the first step of recovering it, holding
    :func:`recovery_claim`."""
    jpath = journal_path(path)
    if not jpath.exists():
        raise CassetteError("no unfinished recording (journal) to recover", path=jpath)
    cassette = load_journal(jpath, cassette_path=path)
    if path.exists() and not any(m.direction == "client" for m in cassette.messages):
        # A recording killed before its client said anything must not replace a good cassette.
        os.unlink(jpath)
        raise NothingRecordedError(
            "the unfinished recording holds no line from the client: removed its journal and kept the "
            "existing cassette unchanged",
            path=path,
        )
    if "exit" not in cassette.meta:
        cassette.meta["exit"] = {"code": None, "signal": None, "reason": "recorder-died"}
    return cassette


def finish_recovery(cassette: Cassette, path: Path, stale: set[str]) -> None:
    """Write the recovered ``cassette`` to ``path``, remove its journal, delete the blobs in
    ``stale`` that no message uses any more; the last step of recovering it. The trailer the
    recorder never wrote loses its ``server`` summary: it is made again from the messages."""
    if "server" not in cassette.meta:
        from harn_mcp_mock.cassette.handshake import server_from_messages

        server = server_from_messages(cassette.messages)
        if server is not None:
            cassette.meta["server"] = server
    save_cassette(cassette, path)
    os.unlink(journal_path(path))
    if stale:
        cas = CasStore(cas_dir(path))
        for key in stale - {blob_key(m) for m in cassette.messages}:
            cas.path_for(key).unlink(missing_ok=True)


RECOVERY_PASSES = 3
"""Passes of a recovery over all it redacts: they go on while they learn something."""


def remembered_redactor(cassette: Cassette, *, taken: int = 0) -> Any:
    """The memory of a recovered journal: a redactor (a
    :class:`~harn_mcp_mock.redact.MessageRedactor`) knowing the keyed fingerprints of every
    value its recorder had learned (``redaction.fingerprints``, written each time it learned
    one); None when the journal carries none. Passing it over the messages
    (:func:`redact_messages_again`) replaces each value found as a whole string, a word or a
    piece of a word, and remembers it, so that later passes chase it everywhere (glued,
    URL-encoded, JSON-escaped, in base64). New placeholders are numbered after those the
    messages use and after ``taken`` (the highest a tape of the session uses)."""
    fingerprints = (cassette.meta.get("redaction") or {}).get("fingerprints")
    if not fingerprints:
        return None
    import re

    from harn_mcp_mock.redact import RedactionPolicy

    none = RedactionPolicy.from_dict({"version": 1, "extends": "none"}, source="recover")
    red = none.redactor(fingerprints=fingerprints)
    held = [
        cassette.meta.get("command"),
        *(m.message if m.invalid is None else m.raw for m in cassette.messages),
    ]
    numbers = re.findall(rb"\[REDACTED:([0-9]+)\]", deepjson.dumps(held))
    red.number_after(max([taken, *map(int, numbers)]))
    return red
