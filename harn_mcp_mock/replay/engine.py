"""The replay engine: a cassette answering JSON-RPC messages, with no I/O of its own.

``engine.receive(message)`` takes one parsed client message and returns the messages to send
back (each with an optional delay), so the same engine serves stdio, in-memory streams and
HTTP. Everything it sends is a recorded message with only the JSON-RPC ``id`` (and a progress
notification's ``progressToken``) rewritten, so unknown fields, extension methods and the
recorded protocol version survive byte for byte in content.

How a recorded session becomes interactions: each client request owns the server messages
that belong to it: progress notifications carrying its progressToken, and the notifications
and server-to-client requests (sampling, elicitation, roots) sent while it was the request
answered soonest; then its response; then any unsolicited server messages sent after it and
before the next client message (list_changed, logging). A recorded server-to-client request is
re-issued with a fresh id, and the rest of the script waits for the client's answer.

A request the recorded server never answered (it exited first) is answered as that end: a
JSON-RPC error (:data:`RECORDED_UNANSWERED`) whose output is marked ``close``, so the transport
ends the session there, as the server did.

A line the recorded server printed on stdout that was not JSON-RPC (a banner, a debug print) is a
``raw`` step at its recorded place; with ``raw_lines`` (stdio replay) it is re-emitted byte for
byte, elsewhere (HTTP, in-process) it is left out. Server messages recorded before the first
client message (the preamble) are sent before the first answer, where the client saw them.

The two handshakes translate (:mod:`harn_mcp_mock.replay.handshake`): an ``initialize`` against a
cassette that holds only a ``server/discover`` answer is answered from that one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from harn_mcp_mock import deepjson
from harn_mcp_mock._record import field, record
from harn_mcp_mock.cassette.matching import Matcher, explain_miss
from harn_mcp_mock.cassette.model import Cassette, Message
from harn_mcp_mock.cassette.unanswered import (
    describe_unanswered,
    unanswered_error_text,
    unanswered_requests,
)
from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS, INVALID_REQUEST, METHOD_NOT_FOUND, RECORDED_UNANSWERED
from harn_mcp_mock.jsonrpc.server import Out, receive_batch
from harn_mcp_mock.redact.placeholders import normalize_placeholders
from harn_mcp_mock.replay.handshake import (
    BRIDGE_STATE_PREFIX,
    INPUT_REQUIRED_METHODS,
    as_complete,
    as_request,
    initialize_from_discover,
    input_requests,
    input_required,
    is_modern_request,
)
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any, Literal

if TYPE_CHECKING:
    Repeat = Literal["last", "cycle", "error"]
else:
    Repeat = str


@record
class Step:
    kind: Literal["notify", "request", "respond", "raw"]
    message: dict[str, Any]
    """For a ``raw`` step: ``{"raw": text}``, a recorded line that was not JSON-RPC."""
    answer: Any = None
    """For a server-to-client request: the client's recorded answer (compared, never required)."""
    latency_ms: float | None = None


@record
class Interaction:
    seq: int
    request: dict[str, Any]
    key: bytes
    steps: list[Step] = field(default_factory=list)
    uses: int = 0
    unanswered: bool = False
    """The recorded server never answered this request (it exited first)."""

    @property
    def method(self) -> str:
        return str(self.request.get("method"))


# Internal records are plain slotted classes, not dataclasses: each @dataclass costs a few
# hundred microseconds at import, on replay's start-up path.


class _OrderCursor:
    __slots__ = ("next",)

    def __init__(self) -> None:
        self.next = 0
        """Index in the strict order of the next interaction expected."""


class _Call:
    """The client request a script answers: its id and progress token, its message (for a
    bridged retry) and its era (:mod:`.handshake`): ``modern`` (2026-07-28, its ``_meta`` says
    so), ``classic`` (a handshake-era session: ``initialize`` was answered) or neither (a
    session that never said: everything goes out as recorded)."""

    __slots__ = ("classic", "id", "message", "modern", "token")

    def __init__(self, message: dict[str, Any], *, initialized: bool) -> None:
        self.id = message.get("id")
        self.message = message
        self.token = _progress_token(message)
        self.modern = is_modern_request(message)
        self.classic = initialized and not self.modern


class _Asking:
    """A recorded ``input_required`` round asked of a handshake-era client, one request at a time."""

    __slots__ = ("after", "answers", "pending", "state")

    def __init__(self, pending: list[tuple[str, dict[str, Any]]], state: Any, after: list[Step]) -> None:
        self.pending = pending
        """The input requests not yet asked, as ``(key, request)``."""
        self.answers: dict[str, Any] = {}
        self.state = state
        self.after = after
        """The recorded steps after the ``input_required`` answer, run after the retry's."""


class _Paused:
    __slots__ = ("asking", "call", "expected", "input_key", "interaction", "steps")

    def __init__(
        self,
        steps: list[Step],
        call: _Call,
        interaction: Interaction,
        expected: Any,
        *,
        asking: _Asking | None = None,
        input_key: str | None = None,
    ) -> None:
        self.steps = steps
        self.call = call
        self.interaction = interaction
        self.expected = expected
        self.asking = asking
        """Set when the pause asks a recorded input request of a handshake-era client."""
        self.input_key = input_key
        """The ``inputResponses`` key of the question asked across eras (either way)."""


class RequestRedactor:
    """What the engine needs of a redactor: the cassette's policy applied to incoming requests."""

    def redact_message(self, obj: Any) -> Any:
        return obj


@record
class ReplayReport:
    cassette: str | None
    requests: int = 0
    hits: int = 0
    recorded: int = 0
    """Requests forwarded to a live server and recorded (``new_episodes``)."""
    misses: list[dict[str, Any]] = field(default_factory=list)
    answer_mismatches: list[dict[str, Any]] = field(default_factory=list)
    unused: list[dict[str, Any]] = field(default_factory=list)
    unanswered: list[dict[str, Any]] = field(default_factory=list)
    """Requests that reached a recorded request with no answer (the replay ended there)."""
    faults_fired: list[dict[str, Any]] | None = None
    """Faults ``--faults`` injected, in order (None: the replay had no fault rules)."""

    @property
    def clean(self) -> bool:
        return not (self.misses or self.unused or self.answer_mismatches or self.unanswered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cassette": self.cassette,
            "ok": self.clean,
            "requests": self.requests,
            "hits": self.hits,
            "recorded": self.recorded,
            "misses": self.misses,
            "unused": self.unused,
            "answer_mismatches": self.answer_mismatches,
            "unanswered": self.unanswered,
            **({"faults_fired": self.faults_fired} if self.faults_fired is not None else {}),
        }


def _id_key(value: Any) -> bytes:
    return deepjson.dumps(value)


def _with(message: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``message`` with keys replaced in place (key order kept)."""
    out = {k: changes.pop(k) if k in changes else v for k, v in message.items()}
    out.update(changes)
    return out


def _progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            return meta.get("progressToken")
    return None


def build_interactions(cassette: Cassette, matcher: Matcher) -> tuple[list[Interaction], list[Step]]:
    """Split a recorded session into interactions (in recorded order) and a preamble."""
    messages = cassette.messages
    # Pass 1: where each client request is answered, and the client's answers to server requests.
    closes_at: dict[tuple[int, bytes], int] = {}
    client_answers: dict[tuple[int, bytes], Any] = {}
    by_seq = {m.seq: m for m in messages}
    for pos, msg in enumerate(messages):
        for req_seq, item in _replies(msg):
            origin = by_seq.get(req_seq)
            if origin is None:
                continue
            key = (req_seq, _id_key(item.get("id")))
            if msg.direction == "server":
                closes_at[key] = pos
            else:
                client_answers[key] = item
    # Pass 2: build scripts.
    interactions: list[Interaction] = []
    pending: dict[tuple[int, bytes], Interaction] = {}
    preamble: list[Step] = []
    last: Interaction | None = None
    for pos, msg in enumerate(messages):
        if msg.invalid is not None:
            if msg.direction == "server":  # the client saw this line here: keep its place
                raw = Step("raw", {"raw": msg.raw or ""})
                owner = _owner({}, pending, closes_at, pos)
                (owner or last or _Preamble(preamble)).steps.append(raw)
            continue
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        if msg.direction == "client":
            for item in items:
                if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item:
                    inter = Interaction(msg.seq, item, matcher.key(item))
                    interactions.append(inter)
                    pending[(msg.seq, _id_key(item["id"]))] = inter
            continue
        replies = dict(_reply_items(msg))
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if index in replies:
                key = (replies[index], _id_key(item.get("id")))
                if key in pending:
                    inter = pending.pop(key)
                    latency = msg.latency_ms
                    if isinstance(latency, list):
                        latency = latency[index] if index < len(latency) else None
                    inter.steps.append(Step("respond", item, latency_ms=latency))
                    last = inter
                continue
            method = item.get("method")
            if not isinstance(method, str):
                continue
            kind: Literal["notify", "request"] = "request" if "id" in item else "notify"
            answer = client_answers.get((msg.seq, _id_key(item.get("id")))) if kind == "request" else None
            step = Step(kind, item, answer)
            owner = _owner(item, pending, closes_at, pos)
            (owner or last or _Preamble(preamble)).steps.append(step)
    return interactions, preamble


class _Preamble:
    __slots__ = ("steps",)

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps


def _replies(msg: Message) -> Iterable[tuple[int, dict[str, Any]]]:
    items = msg.message if isinstance(msg.message, list) else [msg.message]
    for index, req_seq in _reply_items(msg):
        if index < len(items) and isinstance(items[index], dict):
            yield req_seq, items[index]


def _reply_items(msg: Message) -> Iterable[tuple[int, int]]:
    if isinstance(msg.reply_to, int):
        yield 0, msg.reply_to
    elif isinstance(msg.reply_to, list):
        for index, seq in enumerate(msg.reply_to):
            if seq is not None:
                yield index, seq


def _owner(
    item: dict[str, Any],
    pending: dict[tuple[int, bytes], Interaction],
    closes_at: dict[tuple[int, bytes], int],
    pos: int,
) -> Interaction | None:
    if not pending:
        return None
    if item.get("method") == "notifications/progress":
        token = (item.get("params") or {}).get("progressToken")
        for inter in pending.values():
            if token is not None and _progress_token(inter.request) == token:
                return inter
    # The in-flight request answered soonest is the one this message belongs to.
    best = min(pending.items(), key=lambda kv: closes_at.get(kv[0], 1 << 62))
    return best[1] if closes_at.get(best[0], 1 << 62) > pos else None


class ReplayEngine:
    """Answers client messages from a cassette. Not thread-safe: one transport drives it."""

    def __init__(
        self,
        cassette: Cassette,
        *,
        redactor: Any = None,
        matcher: Matcher | None = None,
        repeat: Repeat = "last",
        strict_order: bool = False,
        latency_scale: float | None = None,
        on_event: Callable[[str], None] | None = None,
        raw_lines: bool = False,
    ) -> None:
        """``raw_lines``: re-emit the non-JSON lines the recorded server printed (``Out.raw``);
        only a line-based transport (stdio) can, so it is off by default."""
        self.cassette = cassette
        self.raw_lines = raw_lines
        self.matcher = matcher or Matcher()
        self.redactor = redactor or RequestRedactor()
        self.repeat = repeat
        self.strict_order = strict_order
        self.latency_scale = latency_scale
        self.on_event = on_event
        self.interactions, self._preamble = build_interactions(cassette, self.matcher)
        unanswered = {(u.seq, _id_key(u.id)) for u in unanswered_requests(cassette)}
        for inter in self.interactions:
            inter.unanswered = (inter.seq, _id_key(inter.request.get("id"))) in unanswered
        self._by_key: dict[bytes, list[Interaction]] = {}
        for inter in self.interactions:
            self._by_key.setdefault(inter.key, []).append(inter)
        self._ordered = [i for i in self.interactions if i.method not in ("server/discover", "ping")]
        self._order = _OrderCursor()
        self._paused: dict[bytes, _Paused] = {}
        self._resumable: dict[str, _Paused] = {}
        self._modern = False
        """Whether a 2026-07-28 request was answered (that era has no ``initialize``)."""
        self._initialized = False
        """Whether an ``initialize`` was answered: the session is of the handshake era."""
        """Recorded requests asked of a 2026-07-28 client, by the ``requestState`` we gave it."""
        self._next_server_id = 0
        self.report = ReplayReport(str(cassette.path) if cassette.path else None)

    # -- public --------------------------------------------------------------------------

    def receive(self, message: Any) -> list[Out]:
        """Outputs for one parsed client message (object or batch)."""
        if isinstance(message, list):
            return receive_batch(self.receive, message)
        if not isinstance(message, dict):
            return [Out(_error(None, INVALID_REQUEST, "Invalid Request"))]
        method = message.get("method")
        if isinstance(method, str):
            if "id" not in message:
                self._notification(message)
                return []
            return self._request(message)
        if "id" in message and ("result" in message or "error" in message):
            return self._answer(message)
        return [Out(_error(message.get("id"), INVALID_REQUEST, "Invalid Request"))]

    def continue_from(self, other: ReplayEngine) -> None:
        """Serve a later session of the same replay: share ``other``'s recorded interactions
        (their uses) and its strict-order cursor, so this session goes on with the recorded
        sequence where the earlier sessions left it instead of starting over (HTTP replay makes
        one engine per session; a reconnecting client's second ``increment`` gets the second
        recorded answer). Both engines' reports then judge the same interactions."""
        self.interactions = other.interactions
        self._by_key = other._by_key
        self._ordered = other._ordered
        self._order = other._order

    def answered_by_status(self, message: Any, status: int, reply: Any) -> None:
        """The HTTP endpoint answered ``message`` with its recorded HTTP ``status`` (a 400, 404,
        429... with ``reply``, the JSON-RPC body that came with it, or None) instead of asking
        this engine: a request is counted as one served from the cassette."""
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            self.report.requests += 1
            self.report.hits += 1

    def has_match(self, message: dict[str, Any]) -> bool:
        """Whether a request would be answered from the cassette (no side effects)."""
        method = message.get("method")
        if method == "server/discover":
            return True  # the replay decides the protocol era; never forwarded
        if self._resuming(message) is not None:
            return True  # the retry of a question the replay asked
        key = self.matcher.key(self.redactor.redact_message(message))
        if self._pick(key, str(method), consume=False) is not None:
            return True
        if method == "initialize":  # answered from a recorded server/discover result, if any
            return self._from_discover(message) is not None
        return method == "ping" and key not in self._by_key  # answered with {} as in _request

    def finish(self) -> ReplayReport:
        """The report, with every recorded interaction that was never used."""
        skip = {"server/discover", "initialize"} if self._modern else {"server/discover"}
        self.report.unused = [
            {"seq": i.seq, "method": i.method, "params": _summary(i.request.get("params"))}
            for i in self.interactions
            if i.uses == 0 and i.method not in skip
        ]
        if getattr(self.redactor, "learned", 0):
            # A secret identified in a later request may stand in a miss noted before it
            # (docs/redaction.md, value memory): the report is redacted again with all it knows.
            r = self.report
            redact = self.redactor.redact_message
            r.misses, r.answer_mismatches, r.unanswered = (
                list(redact(r.misses)),
                list(redact(r.answer_mismatches)),
                list(redact(r.unanswered)),
            )
        return self.report

    # -- requests ------------------------------------------------------------------------

    def _request(self, message: dict[str, Any]) -> list[Out]:
        self.report.requests += 1
        method = message["method"]
        state = self._resuming(message)
        if state is not None:
            return self._resume(message, state)
        redacted = self.redactor.redact_message(message)
        key = self.matcher.key(redacted)
        inter = self._pick(key, method)
        if inter is None and method == "initialize":
            return self._translated_initialize(message)
        if inter is None:
            if method == "server/discover":
                return [Out(_error(message["id"], METHOD_NOT_FOUND, "Method not found"))]
            if method == "ping" and key not in self._by_key:
                self.report.hits += 1
                return [Out({"jsonrpc": "2.0", "id": message["id"], "result": {}})]
            return [Out(self._miss(message, redacted))]
        self.report.hits += 1
        inter.uses += 1
        self._check_input_responses(redacted, inter)
        steps = list(inter.steps)
        if method == "initialize":
            steps = [self._follow_version(step, inter, message) for step in steps]
        if self._preamble:
            steps = [*self._preamble, *steps]
            self._preamble = []
        return self._run(steps, self._call(message), inter)

    def _translated_initialize(self, message: dict[str, Any]) -> list[Out]:
        """An ``initialize`` against a cassette recorded in the ``server/discover`` era: the
        answer is made from the recorded discover result (see :mod:`.handshake`)."""
        found = self._from_discover(message)
        if found is None:
            return [Out(self._miss(message, self.redactor.redact_message(message)))]
        inter, steps = found
        self.report.hits += 1
        inter.uses += 1
        if self._preamble:
            steps = [*self._preamble, *steps]
            self._preamble = []
        return self._run(steps, self._call(message), inter)

    def _from_discover(self, message: dict[str, Any]) -> tuple[Interaction, list[Step]] | None:
        """The recorded discover interaction and its script with the answer turned into an
        ``initialize`` answer for ``message``; None when the cassette has no discover result."""
        for inter in self._by_key.get(self.matcher.key({"method": "server/discover"}), []):
            for index, step in enumerate(inter.steps):
                if step.kind != "respond":
                    continue
                result = initialize_from_discover(step.message, message.get("params"), self.cassette.server)
                if result is None:
                    break
                answer = Step("respond", _with(step.message, result=result), latency_ms=step.latency_ms)
                return inter, [*inter.steps[:index], answer, *inter.steps[index + 1 :]]
        return None

    def _pick(self, key: bytes, method: str, *, consume: bool = True) -> Interaction | None:
        """The interaction that answers ``key`` (the one decision replay and new_episodes share);
        ``consume=False`` only looks (no strict-order step)."""
        if self.strict_order and method not in ("server/discover", "ping"):
            if self._order.next < len(self._ordered) and self._ordered[self._order.next].key == key:
                inter = self._ordered[self._order.next]
                if consume:
                    self._order.next += 1
                return inter
            return None
        candidates = self._by_key.get(key)
        if not candidates:
            return None
        for inter in candidates:
            if inter.uses == 0:
                return inter
        if self.repeat == "last":
            return candidates[-1]
        if self.repeat == "cycle":
            return min(candidates, key=lambda i: (i.uses, i.seq))
        return None

    def _miss(self, message: dict[str, Any], redacted: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        if self.strict_order and self._order.next < len(self._ordered):
            expected = self._ordered[self._order.next]
            why = (
                f"strict order: expected {expected.method!r} (recorded seq {expected.seq}) next; "
                + explain_miss(
                    redacted,
                    [expected.request],
                    self.matcher,
                    whole_cassette=[i.request for i in self.interactions],
                )
            )
        elif self._by_key.get(self.matcher.key(redacted)):
            why = (
                f"every recorded {method!r} request with these params was already used (repeat={self.repeat})"
            )
        else:
            why = explain_miss(redacted, [i.request for i in self.interactions], self.matcher)
        self.report.misses.append({"method": method, "id": message.get("id"), "explanation": why})
        if self.on_event is not None:
            self.on_event(f"miss: {method}: {why}")
        return _error(
            message["id"],
            CASSETTE_MISS,
            f"harn-mcp-mock replay: no recorded interaction matches this {method} request: {why}",
            {"method": method, "cassette": self.report.cassette},
        )

    def _follow_version(self, step: Step, inter: Interaction, message: dict[str, Any]) -> Step:
        """Answer the client's protocol version as the recorded server did (echo or its own)."""
        if step.kind != "respond":
            return step
        result = step.message.get("result")
        recorded_asked = (inter.request.get("params") or {}).get("protocolVersion")
        asked = (message.get("params") or {}).get("protocolVersion")
        if not isinstance(result, dict) or not isinstance(asked, str):
            return step
        if result.get("protocolVersion") == recorded_asked and asked != recorded_asked:
            return Step(
                step.kind,
                _with(step.message, result=_with(result, protocolVersion=asked)),
                latency_ms=step.latency_ms,
            )
        return step

    # -- scripts -------------------------------------------------------------------------

    def _run(self, steps: list[Step], call: _Call, inter: Interaction) -> list[Out]:
        outs: list[Out] = []
        self._modern = self._modern or call.modern
        for index, step in enumerate(steps):
            message = step.message
            if step.kind == "raw":
                if self.raw_lines:
                    outs.append(Out(None, raw=str(message.get("raw", "")).encode()))
                continue
            if step.kind == "respond":
                asked = input_requests(message) if call.classic else None
                if asked is not None:  # a 2026-07-28 question for a handshake-era client
                    asking = _Asking(asked[0], asked[1], steps[index + 1 :])
                    outs.extend(self._ask(asking, call, inter))
                    return outs
                if call.modern and not is_modern_request(inter.request):
                    message = as_complete(message, inter.method)
                delay = (step.latency_ms or 0.0) * self.latency_scale if self.latency_scale else 0.0
                outs.append(Out(_with(message, id=call.id), delay))
            elif step.kind == "notify":
                if message.get("method") == "notifications/progress":
                    if call.token is None:
                        continue  # the client did not ask for progress this time
                    params = _with(message.get("params") or {}, progressToken=call.token)
                    message = _with(message, params=params)
                outs.append(Out(message))
            else:
                server_id = self._next_server_id
                self._next_server_id += 1
                rest = steps[index + 1 :]
                if call.modern and not _can_ask(inter, rest):
                    continue  # no 2026-07-28 form: only an answer to come can carry a question
                if call.modern:  # a handshake-era question for a 2026-07-28 client
                    key, state = f"harn-mcp-mock/{server_id}", f"{BRIDGE_STATE_PREFIX}{server_id}"
                    result = input_required(message, key, state)
                    outs.append(Out({"jsonrpc": "2.0", "id": call.id, "result": result}))
                    self._resumable[state] = _Paused(rest, call, inter, step.answer, input_key=key)
                    return outs
                outs.append(Out(_with(message, id=server_id)))
                self._paused[_id_key(server_id)] = _Paused(rest, call, inter, step.answer)
                return outs
        if inter.unanswered:
            outs.append(self._unanswered(inter, call.id))
        return outs

    def _call(self, message: dict[str, Any]) -> _Call:
        if message.get("method") == "initialize":
            self._initialized = True
        return _Call(message, initialized=self._initialized)

    def _ask(self, asking: _Asking, call: _Call, inter: Interaction) -> list[Out]:
        """Ask the next recorded input request as a server-to-client request, or, every one
        answered, go on with the recorded retry that carried those answers."""
        if asking.pending:
            key, request = asking.pending.pop(0)
            server_id = self._next_server_id
            self._next_server_id += 1
            self._paused[_id_key(server_id)] = _Paused([], call, inter, None, asking=asking, input_key=key)
            return [Out(as_request(request, server_id))]
        params = dict(call.message.get("params") or {})
        if asking.answers:
            params["inputResponses"] = asking.answers
        if asking.state is not None:
            params["requestState"] = asking.state
        retry = _with(call.message, params=params)
        redacted = self.redactor.redact_message(retry)
        found = self._pick(self.matcher.key(redacted), str(retry.get("method")))
        if found is None:
            return [Out(self._miss(retry, redacted))]
        found.uses += 1
        self._check_input_responses(redacted, found)
        return self._run([*found.steps, *asking.after], call, found)

    def _resuming(self, message: dict[str, Any]) -> str | None:
        """The ``requestState`` of a retry that answers a question the replay asked, if it is one."""
        params = message.get("params")
        state = params.get("requestState") if isinstance(params, dict) else None
        return state if isinstance(state, str) and state in self._resumable else None

    def _resume(self, message: dict[str, Any], state: str) -> list[Out]:
        """A 2026-07-28 client's retry: its input response is the client's answer to the
        recorded request (compared with the recorded answer), and the script goes on."""
        paused = self._resumable.pop(state)
        self.report.hits += 1
        got = self.redactor.redact_message(message)
        responses = (got.get("params") or {}).get("inputResponses")
        answer = responses.get(paused.input_key) if isinstance(responses, dict) else None
        expected = paused.expected.get("result") if isinstance(paused.expected, dict) else None
        if paused.expected is not None and _body(answer) != _body(expected):
            self._answer_mismatch(paused.interaction, _body(expected), _body(answer))
        return self._run(paused.steps, self._call(message), paused.interaction)

    def _unanswered(self, inter: Interaction, request_id: Any) -> Out:
        """The recorded server's end: an error for the request it never answered, then close."""
        why = unanswered_error_text(self.cassette.meta.get("exit"))
        params = inter.request.get("params")
        tool = params.get("name") if inter.method == "tools/call" and isinstance(params, dict) else None
        entry: dict[str, Any] = {"method": inter.method, "id": request_id, "seq": inter.seq}
        if tool is not None:
            entry["tool"] = tool
        self.report.unanswered.append({**entry, "explanation": why})
        if self.on_event is not None:
            self.on_event(f"{describe_unanswered(entry)}: {why}")
        text = f"harn-mcp-mock replay: this {inter.method} request was {why}"
        data = {
            "method": inter.method,
            "cassette": self.report.cassette,
            "exit": self.cassette.meta.get("exit"),
        }
        return Out(_error(request_id, RECORDED_UNANSWERED, text, data), close=True)

    def _answer(self, message: dict[str, Any]) -> list[Out]:
        paused = self._paused.pop(_id_key(message.get("id")), None)
        if paused is None:
            return []  # an answer to nothing we asked: ignore, as a server would
        if paused.asking is not None:  # compared with the recording as the retry's inputResponses
            got = message["result"] if "result" in message else {"error": message.get("error")}
            paused.asking.answers[str(paused.input_key)] = got
            return self._ask(paused.asking, paused.call, paused.interaction)
        expected = paused.expected
        if expected is not None:
            got = self.redactor.redact_message(message)
            if _body(got) != _body(expected):
                self._answer_mismatch(paused.interaction, _body(expected), _body(got))
        return self._run(paused.steps, paused.call, paused.interaction)

    def _check_input_responses(self, got: dict[str, Any], inter: Interaction) -> None:
        """A 2026-07-28 retry's ``inputResponses`` (left out of matching) that differ from the
        recording: the client answered the server's ``inputRequests`` differently (another
        sampling model, another user), reported as a differing answer, not a miss."""
        params = got.get("params")
        answers = params.get("inputResponses") if isinstance(params, dict) else None
        if answers is None:
            return
        recorded = (inter.request.get("params") or {}).get("inputResponses")
        if canonical_bytes(normalize_placeholders(answers)) != canonical_bytes(
            normalize_placeholders(recorded)
        ):
            self._answer_mismatch(inter, canonical_bytes(recorded), canonical_bytes(answers))

    def _answer_mismatch(self, inter: Interaction, recorded: bytes, got: bytes) -> None:
        entry = {
            "method": inter.method,
            "seq": inter.seq,
            "recorded": _summary(recorded),
            "got": _summary(got),
        }
        self.report.answer_mismatches.append(entry)
        if self.on_event is not None:
            self.on_event(
                f"client answer differs from the recording for {entry['method']} (seq {entry['seq']})"
            )

    def _notification(self, message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/cancelled":
            params = message.get("params") or {}
            cancelled = params.get("requestId")
            for key, paused in list(self._paused.items()):
                if paused.call.id == cancelled:
                    del self._paused[key]
            for state, paused in list(self._resumable.items()):
                if paused.call.id == cancelled:
                    del self._resumable[state]


def _can_ask(inter: Interaction, rest: list[Step]) -> bool:
    """Whether a recorded server-to-client request can be asked of a 2026-07-28 client: as the
    ``input_required`` answer of a request that may have one, which is still to be answered."""
    return inter.method in INPUT_REQUIRED_METHODS and any(step.kind == "respond" for step in rest)


def _body(message: Any) -> bytes:
    if not isinstance(message, dict):
        return canonical_bytes(message)
    return canonical_bytes({k: v for k, v in message.items() if k not in ("id", "jsonrpc")})


def _summary(value: Any) -> str:
    text = deepjson.dumps(value).decode() if not isinstance(value, bytes) else value.decode()
    return clip(text, 200)


def _error(msg_id: Any, code: int, text: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}
