"""Record a fresh candidate by replaying a cassette's client side against a live server.

One driver (:func:`drive`) over the :class:`~harn_mcp_mock.upstream.Upstream` interface, so a
stdio process (:func:`rerun_live`) and a Streamable HTTP endpoint (:func:`rerun_live_http`)
are verified the same way. The baseline's client messages are sent in recorded order, one
request at a time (each waits for its answer, bounded by ``timeout``), so causality is as it
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
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import UpstreamTimeout
from harn_mcp_mock.jsonrpc.frames import CLIENT, Frame, batch_items, parse_frame
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.session.recorder import Recorder
from harn_mcp_mock.upstream import Reply, Upstream, request_ids
from harn_mcp_mock.verify.answers import BaselineAnswers, RoundTrips


class _Run:
    """One rerun: records (thread-safe: the GET stream records too) and answers server requests."""

    def __init__(self, base: Cassette, upstream: Upstream, recorder: Recorder) -> None:
        self.upstream = upstream
        self.recorder = recorder
        self.answers = BaselineAnswers(base, Matcher())
        self.trips = RoundTrips(base)
        self.lock = threading.Lock()

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
            elif item.kind == "request" and isinstance(item.obj, dict):
                body = orjson.dumps(self.answers.answer(item.obj))
                out.append((body, self.record(parse_frame(body, CLIENT))))
        return out


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
    command: list[str],
    candidate: str | Path,
    *,
    policy: RedactionPolicy,
    timeout: float = 30.0,
    grace: float = 5.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """Drive the stdio server ``command`` with ``base``'s client side; the recorded candidate."""
    from harn_mcp_mock.record.session import command_recorder
    from harn_mcp_mock.upstream import open_upstream

    recorder, shown = command_recorder(command, candidate, policy)
    try:
        upstream = open_upstream(command, display=" ".join(shown))
    except BaseException:
        recorder.discard()
        raise
    return drive(base, upstream, recorder, timeout=timeout, grace=grace, on_event=on_event)


def rerun_live_http(
    base: Cassette,
    url: str,
    candidate: str | Path,
    *,
    headers: Sequence[str] = (),
    policy_path: str | Path | None = None,
    timeout: float = 30.0,
    on_event: Callable[[str], None] | None = None,
) -> Cassette:
    """Drive the Streamable HTTP server at ``url`` with ``base``'s client side; the candidate."""
    from harn_mcp_mock.record.session import http_recorder
    from harn_mcp_mock.upstream import open_upstream

    recorder, redactor, parsed = http_recorder(candidate, url, headers, policy_path=policy_path)
    server = base.server
    version = server.get("protocolVersion") if server.get("handshake") == "server/discover" else None
    try:
        upstream = open_upstream(
            url,
            headers=parsed,
            timeout=timeout,
            version=version if isinstance(version, str) else None,
            redact_headers=redactor.redact_message,
            on_event=on_event,
        )
    except BaseException:
        recorder.discard()
        raise
    try:
        return drive(base, upstream, recorder, timeout=timeout, on_event=on_event)
    except BaseException:
        recorder.discard()
        raise
