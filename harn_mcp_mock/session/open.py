"""Building a recording session: the one place a recording engine is put together.

:func:`open_record` makes the recorder (:func:`~harn_mcp_mock.session.recorders.new_recorder`),
wires a tape to it when one is written, reaches the live server through
:func:`~harn_mcp_mock.upstream.open_upstream` (a command: a stdio child; a URL: Streamable
HTTP) and returns the :class:`~harn_mcp_mock.session.record.RecordEngine` a transport serves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.session.record import RecordCore, RecordEngine
from harn_mcp_mock.session.recorders import new_recorder

if TYPE_CHECKING:
    from harn_mcp_mock.session.recorder import MessageRedactor


def open_record(
    live: Sequence[str] | str,
    cassette: str | Path,
    *,
    policy_path: str | Path | None = None,
    headers: Sequence[str] = (),
    timeout: float = 30.0,
    observe: Callable[[list[str], MessageRedactor], Any] | None = None,
) -> RecordEngine:
    """A :class:`RecordEngine` recording the live server ``live`` (a command, or a Streamable
    HTTP URL, with ``headers``, ``NAME:VALUE``) into ``cassette`` under the redaction policy at ``policy_path`` (the default
    one when None). ``observe(command, redactor)``, given the recorded (redacted) command and
    the recording's redactor, returns the tape observer to wire (or None)."""
    from harn_mcp_mock.redact import RedactionPolicy
    from harn_mcp_mock.upstream import open_upstream

    policy = RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()
    url = live if isinstance(live, str) else None
    parsed: dict[str, str] = {}
    if url is not None:  # the `--header` values are secrets to the redactor, as `record --url` has them
        from harn_mcp_mock.upstream.http import parse_header_option

        parsed = dict(parse_header_option(h) for h in headers)
    argv = ["--url", url, *(x for h in headers for x in ("--header", h))] if url is not None else list(live)
    recorder = new_recorder(cassette, policy, argv, transport="http" if url is not None else "stdio")
    try:
        if observe is not None:
            recorder.observer = observe(recorder.command, recorder.redactor)
        upstream = open_upstream(
            url if url is not None else list(live),
            headers=parsed,
            timeout=timeout,
            display=" ".join(recorder.command),
        )
    except BaseException:
        recorder.discard()  # nothing recorded: no journal left in the way
        raise
    return RecordEngine(RecordCore(recorder), upstream, timeout=timeout)
