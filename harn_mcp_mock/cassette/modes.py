"""Record modes, with vcrpy/pytest-recording names and the X07 names as aliases.

The default is ``none``: replay only, never reach a real server, so CI cannot record by accident.
:func:`plan_session` turns a mode and a cassette into what a session is (replay, record or
episodes) and is the one place that decides it, whatever the transport.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

from harn_mcp_mock.errors import UsageError

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from harn_mcp_mock.cassette.claim import CassetteClaim, Holder


class RecordMode(StrEnum):
    NONE = "none"
    """Replay only; a request with no recorded match is an error. Never starts a server."""
    ONCE = "once"
    """Record if the cassette does not exist yet, else replay as ``none``."""
    NEW_EPISODES = "new_episodes"
    """Replay what matches; forward misses to the live server and append them (X07 ``record_missing``)."""
    ALL = "all"
    """Re-record everything through the live server (X07 ``rewrite``)."""


ALIASES = {
    "off": RecordMode.NONE,
    "replay": RecordMode.NONE,
    "record": RecordMode.ONCE,
    "record_missing": RecordMode.NEW_EPISODES,
    "rewrite": RecordMode.ALL,
}


def parse_record_mode(value: str | RecordMode) -> RecordMode:
    """A RecordMode from its name or an X07 alias; anything else lists the valid names."""
    if isinstance(value, RecordMode):
        return value
    text = value.strip().lower().replace("-", "_")
    try:
        return RecordMode(text)
    except ValueError:
        pass
    if text in ALIASES:
        return ALIASES[text]
    valid = ", ".join([m.value for m in RecordMode] + [f"{k} (= {v.value})" for k, v in ALIASES.items()])
    raise UsageError(f"unknown record mode {value!r}; valid modes: {valid}", where="--mode")


class SessionKind(StrEnum):
    """What a session does, as :func:`plan_session` decides it from the mode and the cassette."""

    REPLAY = "replay"
    """Answer from the cassette; never reach a live server."""
    RECORD = "record"
    """Forward everything to the live server and write the cassette (holding its claim)."""
    EPISODES = "episodes"
    """Answer what the cassette holds, forward the rest live and append it (holding the claim)."""


class SessionPlan:
    """What :func:`plan_session` returns: the session's kind and, when it writes the cassette,
    the cassette's recording claim, held (:mod:`harn_mcp_mock.cassette.claim`; not yet, with
    ``claim_now=False``: the recorder takes it when it starts).

    Whoever runs the session hands :attr:`claim` to the recorder (which releases it when the
    cassette is written); :meth:`release` drops it when the session never starts. As a context
    manager it releases on the way out (a no-op once a recorder released it).
    """

    __slots__ = ("cassette", "claim", "kind", "mode")

    def __init__(
        self, mode: RecordMode, kind: SessionKind, cassette: Path, claim: CassetteClaim | None
    ) -> None:
        self.mode = mode
        """The record mode asked for."""
        self.kind = kind
        self.cassette = cassette
        self.claim = claim

    @classmethod
    def of(cls, kind: SessionKind, cassette: Path, claim: CassetteClaim | None = None) -> SessionPlan:
        """A plan of ``kind`` made without :func:`plan_session` (a caller that knows what it
        runs: ``serve_new_episodes``, the Python API's ``EpisodesTransport``), under the mode
        that always plans it."""
        mode = {SessionKind.REPLAY: RecordMode.NONE, SessionKind.RECORD: RecordMode.ALL}
        return cls(mode.get(kind, RecordMode.NEW_EPISODES), kind, cassette, claim)

    @property
    def records(self) -> bool:
        """True when the session writes the cassette (``record`` or ``episodes``)."""
        return self.kind is not SessionKind.REPLAY

    def release(self) -> None:
        if self.claim is not None:
            self.claim.release()

    def __enter__(self) -> SessionPlan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"SessionPlan(mode={self.mode.value}, kind={self.kind.value}, cassette={str(self.cassette)!r})"


def plan_session(
    mode: str | RecordMode,
    cassette: str | os.PathLike[str],
    *,
    live: bool,
    needs_live: str = "the live server",
    claim_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    claim_now: bool = True,
) -> SessionPlan:
    """The one place that decides what a session is (stdio ``replay``, ``replay --http``, the
    Python API and the pytest plugin all ask it).

    * ``none``: replay.
    * ``once``: replay a cassette that exists; while another process records it, wait for it
      (``claim_timeout`` seconds, default 300; ``on_wait`` is told first) and replay what it
      wrote; else record it, holding its claim.
    * ``new_episodes``: episodes when the cassette exists, else record the whole session.
    * ``all``: record.

    A session that records needs a live server (``live``); without one it is a
    :class:`~harn_mcp_mock.errors.UsageError` that says what to give (``needs_live``: "the live
    server command after `--`", "command=[...]"...). ``all`` and ``new_episodes`` take the claim at
    once: another live recorder of the cassette is a
    :class:`~harn_mcp_mock.errors.CassetteBusyError` naming it; a dead recorder's journal in the
    way is a :class:`~harn_mcp_mock.errors.CassetteError` that says how to recover it. With
    ``claim_now=False`` (a transport entered later, or never: the Python API) their claim is
    planned but taken by the recorder when it starts (``recording_claim``), and those errors
    come then; ``once`` always decides holding the claim.
    """
    record_mode = parse_record_mode(mode)
    path = Path(cassette)
    if record_mode is RecordMode.NONE or (record_mode is RecordMode.ONCE and path.exists()):
        return SessionPlan(record_mode, SessionKind.REPLAY, path, None)
    if not live:
        raise UsageError(f"record mode {record_mode.value} records {path}, so it needs {needs_live}")
    from harn_mcp_mock.cassette.claim import DEFAULT_WAIT, CassetteClaim, check_no_journal, claim_once

    if record_mode is RecordMode.ONCE:

        def waiting(holder: Holder | None) -> None:
            if on_wait is not None:
                who = holder.describe() if holder is not None else "another process"
                on_wait(f"waiting for {who} to finish recording {path}, then replaying it")

        timeout = DEFAULT_WAIT if claim_timeout is None else claim_timeout
        claim = claim_once(path, timeout=timeout, on_wait=waiting)
        if claim is None:  # it exists now (another process recorded it): replay that
            return SessionPlan(record_mode, SessionKind.REPLAY, path, None)
    else:
        claim = CassetteClaim(path)
        if not claim_now:
            kind = SessionKind.EPISODES if record_mode is RecordMode.NEW_EPISODES and path.exists() else None
            return SessionPlan(record_mode, kind or SessionKind.RECORD, path, claim)
        claim.acquire()
    try:
        check_no_journal(path, claim.reclaimed)
    except BaseException:
        claim.release()
        raise
    episodes = record_mode is RecordMode.NEW_EPISODES and path.exists()
    return SessionPlan(record_mode, SessionKind.EPISODES if episodes else SessionKind.RECORD, path, claim)
