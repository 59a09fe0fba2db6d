"""Record a fresh candidate by replaying a cassette's client side against a live server.

The baseline's client messages are sent in recorded order, one request at a time (each waits
for its answer, bounded by ``timeout``), so causality is as it was. Server-to-client requests
(sampling, elicitation, roots) are answered from the baseline's recorded client answers: the
one recorded for the same method and params, else the next one recorded for the same method,
else a -32601 error. Everything is recorded, redacted, through the usual Recorder.

The baseline holds what was recorded, after redaction: an argument that was a secret is sent
as its ``[REDACTED:N]`` placeholder. Verify such calls with a cassette candidate instead, or
accept their behaviour findings with an ignore file.

A 2026-07-28 multi-round-trip retry is sent with the *live* server's state, not the recorded
one (:class:`RoundTrips`): the ``requestState`` the live server gave in its answer to the
first round replaces the recorded one, and the ``inputResponses`` are re-keyed to the live
server's ``inputRequests`` ids; the answers themselves are the baseline's.
"""

from __future__ import annotations

import contextlib
import os
import select
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, batch_items, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter
from harn_mcp_mock.jsonrpc.stdio import exit_status, reap_group, spawn_server, stop_process
from harn_mcp_mock.record.recorder import Recorder
from harn_mcp_mock.redact import RedactionPolicy

CHUNK = 1 << 16


class _Answers:
    """The baseline's client answers to server requests, looked up by key, then by method."""

    def __init__(self, base: Cassette, matcher: Matcher) -> None:
        self.matcher = matcher
        self.by_key: dict[bytes, list[dict[str, Any]]] = defaultdict(list)
        self.by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
        answers = base.responses_by_request()
        for msg in base.messages:
            if msg.direction == "server" and msg.kind == "request" and isinstance(msg.message, dict):
                reply = answers.get(msg.seq)
                if reply is not None and isinstance(reply.message, dict):
                    self.by_key[matcher.key(msg.message)].append(reply.message)
                    self.by_method[str(msg.message.get("method"))].append(reply.message)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        pool = self.by_key.get(self.matcher.key(request)) or self.by_method.get(str(request.get("method")))
        if pool:
            recorded = pool.pop(0) if len(pool) > 1 else pool[0]
            return {k: (request["id"] if k == "id" else v) for k, v in recorded.items()}
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {
                "code": -32601,
                "message": "harn-mcp-mock verify: the baseline holds no answer to this request",
            },
        }


class RoundTrips:
    """Carries 2026-07-28 multi-round-trip state from the live server into the baseline's retries.

    :meth:`outgoing` is given each baseline client message before it is sent: it notes the
    recorded answer to a request and rewrites a retry's ``params.requestState`` and
    ``params.inputResponses`` keys to what the live server issued. :meth:`incoming` is given
    each live response: where the recorded answer and the live one both carry a
    ``requestState`` (or ``inputRequests``), the recorded value is mapped to the live one.
    """

    def __init__(self, base: Cassette) -> None:
        self._recorded = base.responses_by_request()
        self._pending: dict[bytes, dict[str, Any]] = {}
        self.states: dict[str, str] = {}
        self.keys: dict[str, str] = {}

    def outgoing(self, seq: int, message: Any) -> Any:
        if not isinstance(message, dict):
            return message
        reply = self._recorded.get(seq)
        if "id" in message and reply is not None and isinstance(reply.message, dict):
            self._pending[orjson.dumps(message["id"])] = reply.message
        params = message.get("params")
        if not isinstance(params, dict) or not ("requestState" in params or "inputResponses" in params):
            return message
        params = dict(params)
        state = params.get("requestState")
        if isinstance(state, str) and state in self.states:
            params["requestState"] = self.states[state]
        responses = params.get("inputResponses")
        if isinstance(responses, dict) and self.keys:
            params["inputResponses"] = {self.keys.get(k, k): v for k, v in responses.items()}
        return {**message, "params": params}

    def incoming(self, message: Any) -> None:
        if not isinstance(message, dict) or "id" not in message:
            return
        recorded = self._pending.pop(orjson.dumps(message["id"]), None)
        was, now = (recorded or {}).get("result"), message.get("result")
        if not isinstance(was, dict) or not isinstance(now, dict):
            return
        if isinstance(was.get("requestState"), str) and isinstance(now.get("requestState"), str):
            self.states[was["requestState"]] = now["requestState"]
        asked, asks = was.get("inputRequests"), now.get("inputRequests")
        if isinstance(asked, dict) and isinstance(asks, dict) and len(asked) == len(asks):
            self.keys.update(zip(asked, asks, strict=True))


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
    """Drive ``command`` with ``base``'s client side; the recorded candidate cassette."""
    redactor = policy.redactor(argv=list(command), env=dict(os.environ))
    shown = redactor.redact_argv(list(command))
    recorder = Recorder(
        candidate, redactor, command=shown, policy_name=policy.name, policy_digest=policy.digest
    )
    try:
        proc = spawn_server(command, display=" ".join(shown))
    except BaseException:
        recorder.discard()
        raise
    assert proc.stdin is not None and proc.stdout is not None
    server_in, server_out = proc.stdin.fileno(), proc.stdout.fileno()
    answers = _Answers(base, Matcher())
    trips = RoundTrips(base)
    splitter = LineSplitter()
    reason = "client-eof"

    def send(data: bytes) -> None:
        recorder.feed(CLIENT, data)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(server_in, view) :]
        except OSError:
            raise ServerError("the live server stopped reading its stdin") from None

    def pump(waiting: set[bytes]) -> None:
        """Read the server until every id in ``waiting`` is answered (bounded by ``timeout``)."""
        while waiting:
            ready, _, _ = select.select([server_out], [], [], timeout)
            if not ready:
                if on_event is not None:
                    on_event(f"the live server did not answer within {timeout:g}s; moving on")
                return
            chunk = os.read(server_out, CHUNK)
            if not chunk:
                raise ServerError("the live server exited before answering")
            recorder.feed(SERVER, chunk)
            for line in splitter.feed(chunk):
                frame = parse_frame(line, SERVER)
                for item in batch_items(frame):
                    if item.kind in ("response", "error"):
                        waiting.discard(orjson.dumps(item.id))
                        trips.incoming(item.obj)
                    elif item.kind == "request" and isinstance(item.obj, dict):
                        send(orjson.dumps(answers.answer(item.obj)) + b"\n")

    try:
        for msg in base.messages:
            if msg.direction != "client" or msg.invalid is not None:
                continue
            items = list(batch_items(parse_frame(orjson.dumps(msg.message), CLIENT)))
            if all(f.kind in ("response", "error") for f in items):
                continue  # the client's answers to server requests are given live, above
            send(orjson.dumps(trips.outgoing(msg.seq, msg.message)) + b"\n")
            pump({orjson.dumps(f.id) for f in items if f.kind == "request"})
    except BaseException:
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        recorder.abandon()
        raise
    with contextlib.suppress(OSError):
        proc.stdin.close()
    code = stop_process(proc, grace=grace)
    # whatever the server wrote while exiting
    with contextlib.suppress(OSError):
        rest = proc.stdout.read()
        if rest:
            recorder.feed(SERVER, rest)
    proc.stdout.close()
    reap_group(proc)
    _, signame = exit_status(code)
    return recorder.finish({"code": code if code >= 0 else None, "signal": signame, "reason": reason})
