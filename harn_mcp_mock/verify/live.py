"""Record a fresh candidate by replaying a cassette's client side against a live server.

One driver (:func:`drive`) over the :class:`~harn_mcp_mock.upstream.Upstream` interface, so a
stdio process and a Streamable HTTP endpoint (:func:`rerun_live`, given either as a
:class:`~harn_mcp_mock.options.LiveTarget`) are verified the same way. The baseline's client
messages are sent in recorded order, one request at a time (each waits for its answer, bounded by ``timeout``), so causality is as it
was. Server-to-client requests (sampling, elicitation, roots) are answered from the baseline's
recorded client answers (:class:`~harn_mcp_mock.verify.answers.BaselineAnswers`). Everything
is recorded, redacted, through the usual Recorder (over HTTP with the cassette's ``http`` list).
Once the session is set up (after the first message that follows ``initialize``), the
transport's own channel for unsolicited messages is opened too (HTTP's standalone GET stream).

The baseline holds what was recorded, after redaction: an argument that was a secret is sent
as its ``[REDACTED:N]`` placeholder. Verify such calls with a cassette candidate instead, or
accept their behaviour findings with an ignore file.

A 2026-07-28 multi-round-trip retry is sent with the *live* server's state, not the recorded
one (:class:`~harn_mcp_mock.verify.answers.RoundTrips`).

A paginated list the baseline's session did not read to the end is read to the end live, with
the live server's cursors (:func:`read_rest_of_lists`), so the candidate holds the whole list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import UpstreamTimeout
from harn_mcp_mock.jsonrpc.frames import CLIENT, Frame, batch_items, parse_frame
from harn_mcp_mock.options import LiveTarget
from harn_mcp_mock.session.recorder import Recorder
from harn_mcp_mock.upstream import Reply, Upstream, request_ids
from harn_mcp_mock.verify.answers import BaselineAnswers, RoundTrips
from harn_mcp_mock.verify.surface import LISTS, has_pages, surface_of


class _Run:
    """One rerun: records (thread-safe: the GET stream records too) and answers server requests."""

    def __init__(self, base: Cassette, upstream: Upstream, recorder: Recorder) -> None:
        self.upstream = upstream
        self.recorder = recorder
        self.answers = BaselineAnswers(base, Matcher())
        self.trips = RoundTrips(base)
        self.lock = threading.Lock()
        self.listing: dict[Any, str] = {}
        """Ids of the list requests sent (``tools/list``...) -> their method."""
        self.next_cursor: dict[str, str | None] = {}
        """List method -> the ``nextCursor`` of the live server's last answer to it."""

    def sent(self, frame: Frame) -> None:
        for item in batch_items(frame):
            if item.kind == "request" and item.method in LISTS and isinstance(item.obj, dict):
                self.listing[orjson.dumps(item.obj.get("id"))] = str(item.method)

    def record(self, frame: Frame) -> int | None:
        """Record ``frame``; the seq the recorder gave it (None for a blank SSE event)."""
        if frame.kind == "invalid" and not frame.raw.strip():
            return None
        with self.lock:
            seq = sum(self.recorder.counts.values())
            self.recorder.feed_frame(frame)
        return seq

    def replies(self, frame: Frame) -> list[Reply]:
        """Record a server message; the recorded answers to the requests in it."""
        if self.record(frame) is None:
            return []
        out: list[Reply] = []
        for item in batch_items(frame):
            if item.kind in ("response", "error"):
                self.trips.incoming(item.obj)
                self._page(item.obj)
            elif item.kind == "request" and isinstance(item.obj, dict):
                body = orjson.dumps(self.answers.answer(item.obj))
                out.append((body, self.record(parse_frame(body, CLIENT))))
        return out

    def _page(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method = self.listing.pop(orjson.dumps(message.get("id")), None)
        result = message.get("result")
        if method is not None:
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            self.next_cursor[method] = cursor if isinstance(cursor, str) and cursor else None


PAGE_ID_PREFIX = "harn-verify-page:"
"""The id prefix of the list requests verify sends itself (:func:`pages_read_live` counts them)."""
MAX_PAGES = 1000
"""Pages read live per list beyond the recorded ones (a server whose cursors never end stops here)."""


def read_rest_of_lists(
    base: Cassette,
    run: _Run,
    timeout: float,
    on_event: Callable[[str], None] | None,
) -> int:
    """Read live, to the end, every list the baseline's session left unfinished; the pages read.

    The baseline's last page of such a list had a ``nextCursor``: the session never saw the rest,
    so without it the candidate would hold only the same first pages, and an item the new server
    moved to a later page would read as removed. The live server's own cursors are followed
    (the recorded one belongs to the old server) and every page is recorded into the candidate,
    so the comparison sees the server's whole list."""
    total = 0
    for method in sorted(surface_of(base).cut_short if has_pages(base) else ()):
        cursor = run.next_cursor.get(method)
        seen: set[str] = set()
        pages = 0
        while cursor is not None and cursor not in seen and pages < MAX_PAGES:
            seen.add(cursor)
            pages += 1
            params = {**_recorded_params(base, method), "cursor": cursor}
            page_id = f"{PAGE_ID_PREFIX}{method}-{pages}"
            body = orjson.dumps({"jsonrpc": "2.0", "id": page_id, "method": method, "params": params})
            frame = parse_frame(body, CLIENT)
            run.sent(frame)
            seq = run.record(frame)
            run.next_cursor[method] = None
            try:
                for answer in run.upstream.exchange(body, request_ids(frame), timeout, seq=seq):
                    for reply, reply_seq in run.replies(answer):
                        run.upstream.send(reply, seq=reply_seq)
            except UpstreamTimeout:
                if on_event is not None:
                    on_event(f"the live server did not answer {method} within {timeout:g}s; moving on")
                break
            cursor = run.next_cursor.get(method)
        total += pages
        if on_event is not None:
            read = f"read the live server's remaining {pages} page(s); " if pages else ""
            on_event(
                f"warning: the recording did not read {method} to the end (its last page has a "
                f"nextCursor): {read}items on the pages it never read cannot be compared, so a "
                f"removal there goes unseen; record a session that reads every page"
            )
    return total


def _recorded_params(base: Cassette, method: str) -> dict[str, Any]:
    """The params of the baseline's last ``method`` request (its ``_meta``: a 2026-07-28 request
    names its protocol version there), without the recorded cursor."""
    params: dict[str, Any] = {}
    for msg in base.messages:
        if (
            msg.direction == "client"
            and isinstance(msg.message, dict)
            and msg.message.get("method") == method
        ):
            found = msg.message.get("params")
            params = {k: v for k, v in found.items() if k != "cursor"} if isinstance(found, dict) else {}
    return params


def pages_read_live(candidate: Cassette) -> int:
    """How many list pages verify read itself into ``candidate`` (:func:`read_rest_of_lists`)."""
    return sum(
        1
        for msg in candidate.messages
        if msg.direction == "client"
        and isinstance(msg.message, dict)
        and str(msg.message.get("id", "")).startswith(PAGE_ID_PREFIX)
    )


def drive(
    base: Cassette,
    upstream: Upstream,
    recorder: Recorder,
    *,
    timeout: float = 30.0,
    grace: float = 5.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """Drive ``upstream`` with ``base``'s client side, recording into ``recorder``; the candidate.

    On any error the recorder is abandoned (its journal stays) and the upstream closed."""
    run = _Run(base, upstream, recorder)
    try:
        for msg in base.messages:
            if msg.direction != "client" or msg.invalid is not None:
                continue
            items = list(batch_items(parse_frame(orjson.dumps(msg.message), CLIENT)))
            if all(f.kind in ("response", "error") for f in items):
                continue  # the client's answers to server requests are given live
            body = orjson.dumps(run.trips.outgoing(msg.seq, msg.message))
            frame = parse_frame(body, CLIENT)
            run.sent(frame)
            seq = run.record(frame)
            try:
                for answer in upstream.exchange(body, request_ids(frame), timeout, seq=seq):
                    for reply, reply_seq in run.replies(answer):
                        upstream.send(reply, seq=reply_seq)
            except UpstreamTimeout:
                if on_event is not None:
                    on_event(f"the live server did not answer within {timeout:g}s; moving on")
            if not any(f.method == "initialize" for f in items):
                upstream.listen(run.replies)  # the session is set up (opened once)
        read_rest_of_lists(base, run, timeout, on_event)
        exit_info = upstream.close(grace, on_frame=run.record)
    except BaseException:
        _abort(upstream)
        recorder.abandon()
        raise
    http: list[dict[str, Any]] = getattr(upstream, "http", [])
    return recorder.finish(dict(exit_info), extra={"http": http} if http else None)


def _abort(upstream: Upstream) -> None:
    abort = getattr(upstream, "abort", None) or getattr(upstream, "kill", None)
    if abort is not None:
        abort()


def rerun_live(
    base: Cassette,
    live: LiveTarget,
    candidate: str | Path,
    *,
    policy_path: str | Path | None = None,
    grace: float = 5.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """Drive the live server ``live`` (a stdio command, or a Streamable HTTP URL with its
    headers; each answer awaited up to its ``timeout``) with ``base``'s client side; the
    recorded candidate."""
    from harn_mcp_mock.record.session import command_recorder, http_recorder, load_policy
    from harn_mcp_mock.upstream import open_upstream

    upstream: Upstream
    if live.url is None:
        recorder, shown = command_recorder(live.command, candidate, load_policy(policy_path))
        try:
            upstream = open_upstream(list(live.command), display=" ".join(shown))
        except BaseException:
            recorder.discard()
            raise
        return drive(base, upstream, recorder, timeout=live.timeout, grace=grace, on_event=on_event)
    recorder, redactor, parsed = http_recorder(candidate, live, policy_path=policy_path)
    server = base.server
    version = server.get("protocolVersion") if server.get("handshake") == "server/discover" else None
    try:
        upstream = open_upstream(
            live.url,
            headers=parsed,
            timeout=live.timeout,
            version=version if isinstance(version, str) else None,
            redact_headers=redactor.redact_message,
            on_event=on_event,
        )
    except BaseException:
        recorder.discard()
        raise
    try:
        return drive(base, upstream, recorder, timeout=live.timeout, on_event=on_event)
    except BaseException:
        recorder.discard()
        raise


def rerun_live_http(
    base: Cassette,
    url: str,
    candidate: str | Path,
    *,
    headers: Iterable[str] = (),
    policy_path: str | Path | None = None,
    timeout: float = 30.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """:func:`rerun_live` on the Streamable HTTP server at ``url`` (the keyword form)."""
    live = LiveTarget(url=url, headers=headers, timeout=timeout)
    return rerun_live(base, live, candidate, policy_path=policy_path, on_event=on_event)
