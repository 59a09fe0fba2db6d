"""Faults on a replayed cassette: :class:`FaultOverlay` wraps any engine (``replay --faults``).

For each client request the overlay counts the calls of its target (a ``tools/call``'s tool, or
the request's method) in this session, 1-based, and asks its :class:`~.schedule.Schedule` (the
rules compiled once: what :func:`~.schedule.decide` answers, without testing every rule on every
call) whether a rule fires, keyed by the seed and run id as worlds are. An answering rule's
answer, readable message included, is made on its first firing and reused. A fired rule, by kind:

* ``rate_limit``, ``unavailable``, ``timeout``, ``tool_error``: answered here with the world's
  error shape; the inner engine never sees the request, so a retry gets the recorded answer;
* ``latency``: the recorded answer, ``latency_ms`` later (a real delay on the server's clock);
* ``schema_violation``: the recorded answer with ``structuredContent`` that breaks the tool's
  ``outputSchema`` (as the cassette's ``tools/list`` gave it);
* ``tools_changed``: the recorded answer, then ``notifications/tools/list_changed``; from then
  on ``tools/list`` answers show ``replace_with`` in place of the tool;
* ``disconnect``: no answer, and the connection closes (stdio: the process exits; HTTP: the
  session ends and the request's response ends empty);
* ``malformed``: the recorded answer broken (``truncated``, ``not_json`` or ``wrong_id``);
* ``hang``: no answer, ever (the client's own timeout decides);
* ``http_status``: HTTP only, the request is answered with ``status`` (and ``headers``, e.g.
  ``Retry-After`` for a 429) and no JSON-RPC body.

Every fired fault is listed in :attr:`FaultOverlay.fired` (the report's ``faults_fired``) and
passed to ``on_fire`` (the event tape marks the exchange).
"""

from __future__ import annotations

from harn_mcp_mock import deepjson
from harn_mcp_mock.faults.kinds import KINDS, TIMEOUT_HINT, duration, violate
from harn_mcp_mock.faults.schedule import Schedule, decide
from harn_mcp_mock.jsonrpc.server import Out, receive_batch

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from harn_mcp_mock.faults.rules import FaultRule
    from harn_mcp_mock.jsonrpc.server import Engine

__all__ = ["HTTP_REASONS", "FaultOverlay", "call_target", "fault_plan", "render_plan"]

HTTP_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_HTTP_HINTS = {
    408: f"timed out: {TIMEOUT_HINT}",
    500: "the server failed: the request may have completed, check before retrying",
    502: "bad gateway: the upstream failed, retry later",
    503: "service unavailable: the service is down for now, retry later",
    504: f"gateway timeout: {TIMEOUT_HINT}",
}


def http_body(rule: FaultRule, status: int) -> str:
    """An ``http_status`` fault's plain-text body: the rule's ``message``, else the reason with
    what a model needs (how long to wait after a 429, that a 504 may have completed)."""
    if "message" in rule.params:
        return str(rule.params["message"])
    if status == 429:
        return f"rate limited: retry after {duration(int(rule.params.get('retry_after_ms', 1000)))}"
    return f"{status} {HTTP_REASONS.get(status, 'error')}" + (
        f": {_HTTP_HINTS[status]}" if status in _HTTP_HINTS else ""
    )


_ANSWERED_LATER = frozenset({"latency", "schema_violation", "malformed"})


def _key(value: Any) -> bytes:
    return deepjson.dumps(value)


def call_target(message: dict[str, Any]) -> tuple[str, str | None, Any]:
    """``(tool, method, args)`` as the schedule sees a request: a ``tools/call`` by its tool and
    arguments, anything else by its method and params (``_meta`` left out: clients stamp it)."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if message.get("method") == "tools/call":
        args = params.get("arguments")
        return str(params.get("name")), None, args if isinstance(args, dict) else {}
    return "", str(message.get("method")), {k: v for k, v in params.items() if k != "_meta"}


class FaultOverlay:
    """An :class:`~harn_mcp_mock.jsonrpc.server.Engine` that fires ``rules`` on ``inner``'s
    session. ``http``: served over Streamable HTTP (``http_status`` rules need it)."""

    def __init__(
        self,
        inner: Engine,
        rules: list[FaultRule],
        *,
        seed: int = 0,
        run_id: str = "run",
        on_fire: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.inner = inner
        self.rules = rules
        self.seed = seed
        self.run_id = run_id
        self.on_fire = on_fire
        self.ordinals: dict[str, int] = {}
        self.requests = 0
        self.fired: list[dict[str, Any]] = []
        self._later: dict[bytes, FaultRule] = {}
        """Request ids whose answer a fired rule changes when it comes."""
        self._lists: set[bytes] = set()
        """Ids of ``tools/list`` requests, whose answers are rewritten after ``tools_changed``."""
        self._schemas: dict[str, Any] = {}
        self._replaced: dict[str, dict[str, Any]] = {}
        self._schedule = Schedule(rules, seed=seed, run_id=run_id)
        self._answers: dict[int, dict[str, Any] | None] = {}
        """A rule's answer (by the rule object), made on its first firing: it depends on the rule
        alone (its readable message too), so later firings reuse it under their own request id."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # the inner engine's cassette, matcher, redactor...

    @property
    def raw_lines(self) -> bool:
        return bool(getattr(self.inner, "raw_lines", False))

    @raw_lines.setter
    def raw_lines(self, value: bool) -> None:
        self.inner.raw_lines = value  # type: ignore[attr-defined]

    def continue_from(self, other: Any) -> None:
        """A later HTTP session goes on with the recorded sequence (see the replay engine's);
        its fault ordinals start again, as they count calls in a session."""
        self.inner.continue_from(getattr(other, "inner", other))  # type: ignore[attr-defined]

    def finish(self) -> Any:
        """The inner engine's report, with the faults fired (``faults_fired``)."""
        report = self.inner.finish()  # type: ignore[attr-defined]
        report.faults_fired = list(self.fired)
        return report

    # -- the engine --------------------------------------------------------------------------

    def receive(self, message: Any) -> list[Out]:
        if isinstance(message, list):
            return receive_batch(self.receive, message)
        if not (isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message):
            return self._after(self.inner.receive(message))
        self.requests += 1
        method = message["method"]
        params = message.get("params")
        # call_target's reading of the request, the arguments only when a probability needs them
        params = params if isinstance(params, dict) else {}
        tools_call = method == "tools/call"
        target = (
            self._schedule.target(str(params.get("name")), None)
            if tools_call
            else self._schedule.target("", method)
        )
        if method == "tools/list":
            self._lists.add(_key(message["id"]))
        label = target.label
        ordinal = self.ordinals[label] = self.ordinals.get(label, 0) + 1
        if not target.checks:
            return self._after(self.inner.receive(message))
        args = None
        if target.keyed:
            if tools_call:
                args = params.get("arguments")
                args = args if isinstance(args, dict) else {}
            else:
                args = {k: v for k, v in params.items() if k != "_meta"}
        rule = self._schedule.decide(target, ordinal, args)
        if rule is None:
            return self._after(self.inner.receive(message))
        fired = {
            "request": self.requests,
            "id": message["id"],
            "target": label,
            "ordinal": ordinal,
            "fault": rule.id,
            "kind": rule.kind,
        }
        self.fired.append(fired)
        if self.on_fire is not None:
            self.on_fire(fired)
        return self._fire(rule, message)

    def _fire(self, rule: FaultRule, message: dict[str, Any]) -> list[Out]:
        msg_id = message["id"]
        response = self._answers.get(id(rule))  # the overlay holds its rules: ids stay theirs
        if response is None and id(rule) not in self._answers:
            answer = KINDS[rule.kind].answer
            response = self._answers[id(rule)] = answer(rule).response if answer is not None else None
        if response is not None:
            return [Out({"jsonrpc": "2.0", "id": msg_id, **response})]
        if rule.kind == "hang":
            return []
        if rule.kind == "disconnect":
            return [Out(None, close=True, fault={"kind": "disconnect"})]
        if rule.kind == "http_status":
            status = int(rule.params["status"])
            headers = dict(rule.params.get("headers") or {})
            if status == 429:
                headers.setdefault(
                    "Retry-After", str(max(1, int(rule.params.get("retry_after_ms", 1000)) // 1000))
                )
            body = http_body(rule, status)
            return [
                Out(None, fault={"kind": "http_status", "status": status, "headers": headers, "body": body})
            ]
        if rule.kind in _ANSWERED_LATER:
            self._later[_key(msg_id)] = rule
        outs = self._after(self.inner.receive(message))
        if rule.kind == "tools_changed" and isinstance(rule.replace_with, dict):
            self._replaced[str(rule.replace_with["name"])] = rule.replace_with
            notice = Out({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            replies = [i for i, o in enumerate(outs) if _is_reply(o.message, msg_id)]
            outs.insert(replies[0] if replies else len(outs), notice)  # before the answer, as worlds send it
        return outs

    # -- answers on their way out --------------------------------------------------------------

    def _after(self, outs: list[Out]) -> list[Out]:
        if not (self._later or self._lists):
            return outs
        changed = []
        for out in outs:
            message = out.message
            if isinstance(message, dict) and "method" not in message and "id" in message:
                key = _key(message["id"])
                if key in self._lists:
                    self._lists.discard(key)
                    out = Out(self._tools_list(message), out.delay_ms, out.close, out.raw, out.fault)
                rule = self._later.pop(key, None)
                if rule is not None:
                    out = self._change(rule, out)
            changed.append(out)
        return changed

    def _tools_list(self, message: dict[str, Any]) -> dict[str, Any]:
        result = message.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return message
        tools = result["tools"]
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("outputSchema"), dict):
                self._schemas[str(tool.get("name"))] = tool["outputSchema"]
        if not self._replaced:
            return message
        shown = [self._replaced.get(str(t.get("name")), t) if isinstance(t, dict) else t for t in tools]
        return {**message, "result": {**result, "tools": shown}}

    def _change(self, rule: FaultRule, out: Out) -> Out:
        message = out.message
        if rule.kind == "latency":
            return Out(message, out.delay_ms + int(rule.params.get("latency_ms", 1000)), out.close, out.raw)
        if rule.kind == "schema_violation":
            result = message.get("result")
            if not isinstance(result, dict) or "error" in message:
                return out
            tool = rule.tool if rule.tool != "*" else ""
            structured = result.get("structuredContent")
            broken = violate(structured, self._schemas.get(tool) if tool else _only(self._schemas))
            text = deepjson.dumps(broken).decode()
            content = [{"type": "text", "text": text}]
            return Out(
                {**message, "result": {**result, "structuredContent": broken, "content": content}},
                out.delay_ms,
            )
        # malformed
        how = rule.params.get("malformed", "truncated")
        if how == "wrong_id":
            msg_id = message.get("id")
            other = msg_id + 1_000_000 if isinstance(msg_id, int) else f"{msg_id}-wrong"
            return Out({**message, "id": other}, out.delay_ms)
        if how == "not_json":
            raw = str(
                rule.params.get("message", "<html><body><h1>502 Bad Gateway</h1></body></html>")
            ).encode()
        else:
            whole = deepjson.dumps(message)
            raw = whole[: max(1, len(whole) // 2)]
        return Out(message, out.delay_ms, raw=raw, fault={"kind": "malformed", "raw": raw})


def _is_reply(message: Any, msg_id: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and message.get("id") == msg_id


def _only(schemas: dict[str, Any]) -> Any:
    return next(iter(schemas.values())) if len(schemas) == 1 else None


def fault_plan(
    rules: list[FaultRule], cassette: Any, *, seed: int = 0, run_id: str = "run"
) -> dict[str, Any]:
    """The dry run ``show --faults`` prints: when each rule fires if a client repeats the
    cassette's requests in their recorded order, and which rules can never fire (a tool or
    method the cassette lacks; a probability of 0)."""
    tools: set[str] = set()
    methods: set[str] = set()
    ordinals: dict[str, int] = {}
    fires: dict[str, list[dict[str, Any]]] = {rule.id: [] for rule in rules}
    for msg in cassette.messages:
        message = msg.message
        if not isinstance(message, dict):
            continue
        if msg.direction == "client" and isinstance(message.get("method"), str) and "id" in message:
            tool, method, args = call_target(message)
            target = f"method {method}" if method is not None else f"tool {tool}"
            if method is None:
                tools.add(tool)
            else:
                methods.add(method)
            ordinal = ordinals[target] = ordinals.get(target, 0) + 1
            rule = decide(
                rules, tool=tool, method=method, ordinal=ordinal, args=args, seed=seed, run_id=run_id
            )
            if rule is not None:
                fires[rule.id].append({"seq": msg.seq, "target": target, "ordinal": ordinal})
        elif msg.direction == "server" and isinstance(message.get("result"), dict):
            for tool_def in message["result"].get("tools") or ():
                if isinstance(tool_def, dict) and isinstance(tool_def.get("name"), str):
                    tools.add(tool_def["name"])
    plan = []
    for rule in rules:
        never = None
        if rule.method is not None and rule.method not in methods:
            never = f"the cassette has no {rule.method} request"
        elif rule.method is None and rule.tool != "*" and rule.tool not in tools:
            known = ", ".join(sorted(tools)) or "none"
            never = f"no tool {rule.tool!r} in this cassette (it has: {known})"
        elif rule.probability == 0:
            never = "probability 0"
        plan.append(
            {
                "fault": rule.id,
                "kind": rule.kind,
                "target": rule.target,
                "fires_on": fires[rule.id],
                "never": never,
            }
        )
    return {"seed": seed, "run_id": run_id, "rules": plan, "calls": ordinals}


def render_plan(plan: dict[str, Any]) -> str:
    """:func:`fault_plan` for a terminal."""
    lines = [
        f"\nfaults (dry run, seed {plan['seed']}, run id {plan['run_id']!r}; the recorded calls in order):"
    ]
    for rule in plan["rules"]:
        head = f"  {rule['fault']} ({rule['kind']}, {rule['target']})"
        if rule["never"]:
            lines.append(f"{head}: never fires: {rule['never']}")
        elif rule["fires_on"]:
            calls = ", ".join(f"call {f['ordinal']} (seq {f['seq']})" for f in rule["fires_on"])
            lines.append(f"{head}: fires on {calls}")
        else:
            lines.append(f"{head}: does not fire on the recorded calls (a client that calls more may see it)")
    return "\n".join(lines) + "\n"
