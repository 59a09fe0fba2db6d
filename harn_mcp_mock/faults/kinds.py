"""The fault kinds, registered by name (as the conformance checks register with ``@check``).

One vocabulary for worlds (``fault_profiles``) and cassette replays (``replay --faults``);
docs/faults.md is the reference.

A kind is a :class:`FaultKind` with up to four hooks, each called at its point of a tool call
that a rule of that kind fired on:

- ``answer(rule) -> Answer``: answer instead of running the tool (an error, a tool error), and
  how far the virtual clock moves;
- ``delay_ms(rule)``: run the tool, after moving the virtual clock this far;
- ``limit(rule)``: apply only this many of the tool's effects;
- ``after(rule, result, output_schema, applied, total) -> Answer | Any``: once the tool ran, an
  answer instead of its result (:class:`Answer`), or its result changed.

``tools_changed`` swaps a tool definition: it is registered with no hook and handled by the
world engine and the replay overlay. ``stateless`` marks the kinds that need no world state, so
a replayed cassette can fire them; ``world`` those a world spec may use. The transport kinds
(``disconnect``, ``malformed``, ``hang``, ``http_status``) are replay-only, have no hook and are
carried out by the transport (:mod:`harn_mcp_mock.faults.overlay` says how). Error shapes are
the ones docs/faults.md gives.
"""

from __future__ import annotations

from collections.abc import Callable

from harn_mcp_mock._record import record
from harn_mcp_mock.jsonrpc.codes import RATE_LIMITED, TIMED_OUT

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from harn_mcp_mock.faults.rules import FaultRule

__all__ = [
    "KINDS",
    "TIMEOUT_HINT",
    "TRANSPORT_KINDS",
    "Answer",
    "FaultKind",
    "duration",
    "fault_kind",
    "lead",
    "timeout_error",
    "tool_error",
    "violate",
]


@record(frozen=True)
class Answer:
    """What a faulted call answers: a JSON-RPC ``{"result"|"error": ...}`` body, the outcome the
    call log records, and how far the virtual clock moves."""

    response: dict[str, Any]
    outcome: str
    advance_ms: int = 0


@record(frozen=True)
class FaultKind:
    name: str
    stateless: bool
    world: bool = True
    """A world spec may use it (every kind but the transport ones)."""
    answer: Callable[[FaultRule], Answer] | None = None
    delay_ms: Callable[[FaultRule], int] | None = None
    limit: Callable[[FaultRule], int] | None = None
    after: Callable[..., Any] | None = None


KINDS: dict[str, FaultKind] = {}
"""Every fault kind by name; a spec's ``kind`` must be one of these."""


def fault_kind(name: str, *, stateless: bool, world: bool = True) -> Callable[[type], type]:
    """Register the hooks defined (as static methods) on the decorated class as kind ``name``."""

    def register(cls: type) -> type:
        hooks = {h: getattr(cls, h, None) for h in ("answer", "delay_ms", "limit", "after")}
        KINDS[name] = FaultKind(name, stateless, world, **hooks)
        return cls

    return register


def tool_error(text: str) -> dict[str, Any]:
    """A tool result that reports an error (``isError``), as MCP tools report their failures."""
    return {"result": {"content": [{"type": "text", "text": text}], "isError": True}}


def duration(ms: int) -> str:
    """A duration as a model reads it: ``250 ms``, ``5 s``, ``1.5 s``."""
    if ms < 1000:
        return f"{ms} ms"
    return f"{ms / 1000:g} s"


def lead(rule: FaultRule, default: str) -> str:
    """The rule's own ``message``, else ``default``: the first words of the error's text."""
    return str(rule.params.get("message", default))


TIMEOUT_HINT = "the operation may have completed, check before retrying"


def timeout_error(rule: FaultRule) -> dict[str, Any]:
    """The error of a call that timed out: its message says how long, and that it may have
    completed (a ghost success is told apart by nothing, as with a real server)."""
    ms = int(rule.params.get("timeout_ms", 30_000))
    if "message" in rule.params:
        message = f"{rule.params['message']}: timed out after {duration(ms)}, {TIMEOUT_HINT}"
    else:
        message = f"timed out after {duration(ms)}: {TIMEOUT_HINT}"
    return {"error": {"code": TIMED_OUT, "message": message, "data": {"kind": "timeout", "timeout_ms": ms}}}


@fault_kind("rate_limit", stateless=True)
class _RateLimit:
    @staticmethod
    def answer(rule: FaultRule) -> Answer:
        wait_ms = int(rule.params.get("retry_after_ms", 1000))
        data = {"kind": "rate_limit", "status": 429, "retry_after_ms": wait_ms}
        message = f"{lead(rule, 'rate limited')}: retry after {duration(wait_ms)}"
        return Answer({"error": {"code": RATE_LIMITED, "message": message, "data": data}}, "rate_limited")


@fault_kind("unavailable", stateless=True)
class _Unavailable:
    @staticmethod
    def answer(rule: FaultRule) -> Answer:
        data = {"kind": "unavailable", "status": 503}
        message = f"{lead(rule, 'service unavailable')}: the service is down for now, retry later"
        return Answer({"error": {"code": RATE_LIMITED, "message": message, "data": data}}, "unavailable")


@fault_kind("timeout", stateless=True)
class _Timeout:
    @staticmethod
    def answer(rule: FaultRule) -> Answer:
        return Answer(timeout_error(rule), "timeout", int(rule.params.get("timeout_ms", 30_000)))


@fault_kind("tool_error", stateless=True)
class _ToolError:
    @staticmethod
    def answer(rule: FaultRule) -> Answer:
        text = str(rule.params.get("message", "internal error: the call failed and changed nothing"))
        return Answer(tool_error(text), "tool_error")


@fault_kind("latency", stateless=True)
class _Latency:
    @staticmethod
    def delay_ms(rule: FaultRule) -> int:
        return int(rule.params.get("latency_ms", 1000))


@fault_kind("partial_write", stateless=False)
class _PartialWrite:
    @staticmethod
    def limit(rule: FaultRule) -> int:
        return int(rule.params.get("apply", 1))

    @staticmethod
    def after(rule: FaultRule, result: Any, output_schema: Any, applied: int, total: int) -> Answer:
        message = lead(rule, f"partial failure: {applied} of {total} changes applied")
        return Answer(
            tool_error(f"{message} (the call may have partly applied: check before retrying)"), "tool_error"
        )


@fault_kind("ghost_success", stateless=False)
class _GhostSuccess:
    @staticmethod
    def after(rule: FaultRule, result: Any, output_schema: Any, applied: int, total: int) -> Answer:
        return Answer(timeout_error(rule), "timeout", int(rule.params.get("timeout_ms", 30_000)))


@fault_kind("schema_violation", stateless=True)
class _SchemaViolation:
    @staticmethod
    def after(rule: FaultRule, result: Any, output_schema: Any, applied: int, total: int) -> Any:
        return violate(result, output_schema)


@fault_kind("tools_changed", stateless=True)
class _ToolsChanged:
    """Handled by the world engine and the replay overlay (they swap the tool's definition)."""


TRANSPORT_KINDS = ("disconnect", "malformed", "hang", "http_status")
"""Replay-only kinds the transport carries out: close instead of answering, send a broken
answer, never answer, answer with an HTTP status (``--http`` only)."""

for _name in TRANSPORT_KINDS:
    fault_kind(_name, stateless=True, world=False)(type(_name, (), {}))


def violate(result: Any, schema: dict[str, Any] | None) -> Any:
    """A copy of ``result`` that breaks ``schema``: a required field dropped, else a type changed."""
    if not isinstance(result, dict) or schema is None:
        return {"unexpected": result}
    broken = dict(result)
    required = [r for r in schema.get("required") or [] if r in broken]
    if required:
        del broken[required[0]]
        return broken
    for key, prop in (schema.get("properties") or {}).items():
        if key in broken:
            broken[key] = (
                12345
                if (prop or {}).get("type") == "string"
                else "not-a-" + str((prop or {}).get("type", "value"))
            )
            return broken
    return {"unexpected": result}
