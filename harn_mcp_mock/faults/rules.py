"""Fault rules: one format for a world's ``fault_profiles`` and a replay's ``--faults`` file.

A rule names what it targets (``tool``: a tool name or ``*``; or, for a replay, ``method``: a
JSON-RPC method such as ``resources/read``), when it fires (``on_calls``, ``every`` +
``length``, ``when`` (worlds only: a predicate on the state), ``probability``), its ``kind``
(:mod:`.kinds`) and the kind's parameters. docs/faults.md is the reference.

:func:`parse_rule` checks one rule; what differs between a world and a replay comes in as
arguments (the known tools, how to check ``when`` and ``replace_with``). :func:`load_rules`
reads a replay's rules file.
"""

from __future__ import annotations

from harn_mcp_mock._record import field, record
from harn_mcp_mock.errors import FaultRulesError, HarnError
from harn_mcp_mock.faults.kinds import KINDS

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from pathlib import Path
    from typing import Any

__all__ = ["PARAMS", "RULE_FIELDS", "FaultRule", "load_rules", "parse_rule", "parse_rules"]

PARAMS = (
    "retry_after_ms",
    "timeout_ms",
    "latency_ms",
    "message",
    "apply",
    "status",
    "headers",
    "malformed",
)
"""The kinds' parameters (docs/faults.md says which kind reads which)."""

RULE_FIELDS = frozenset(
    {
        "id",
        "kind",
        "tool",
        "method",
        "on_calls",
        "every",
        "length",
        "when",
        "probability",
        "replace_with",
        "server",
        *PARAMS,
    }
)

MALFORMED = ("truncated", "not_json", "wrong_id")
HTTP_STATUSES = (400, 401, 403, 404, 408, 429, 500, 502, 503, 504)


@record(frozen=True)
class FaultRule:
    id: str
    kind: str
    tool: str = "*"
    on_calls: tuple[int, ...] | None = None
    every: int | None = None
    length: int = 1
    when: dict[str, Any] | None = None
    probability: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    replace_with: Any = None
    """``tools_changed``: the new definition (a world's compiled tool, a replay's raw one)."""
    method: str | None = None
    """Set instead of ``tool``: the rule counts and answers requests of this method."""
    server: str | None = None
    """A world of several servers: the rule fires only on calls that come through this server
    (None: through any)."""

    @property
    def target(self) -> str:
        """What the ordinals count: ``tool NAME`` or ``method NAME``."""
        return f"method {self.method}" if self.method is not None else f"tool {self.tool}"


def parse_rule(
    raw: Any,
    where: str,
    fail: Callable[[str, str], HarnError],
    *,
    world: bool,
    tools: Collection[str] | None = None,
    check_when: Callable[[Any, str], dict[str, Any]] | None = None,
    parse_tool: Callable[[Any, str], Any] | None = None,
    servers: Collection[str] | None = None,
) -> FaultRule:
    """One checked rule. ``fail(where, what)`` makes the error; ``world`` says whether a world
    (state, ``when``, stateful kinds) or a replay (``method``, transport kinds) reads it;
    ``tools``, when given, are the only tool names allowed; ``servers``, a world's servers (a
    rule's ``server`` must name one; a world of one server, or a replay, takes none)."""
    if not isinstance(raw, dict):
        raise fail(where, "expected an object (a fault rule)")
    unknown = sorted(set(raw) - RULE_FIELDS)
    if unknown:
        raise fail(f"{where}.{unknown[0]}", f"unknown field (a rule has: {', '.join(sorted(RULE_FIELDS))})")
    kind_name = raw.get("kind")
    kind = KINDS.get(kind_name) if isinstance(kind_name, str) else None
    usable = sorted(k.name for k in KINDS.values() if (k.world if world else k.stateless))
    if kind is None:
        raise fail(f"{where}.kind", f"unknown fault kind {kind_name!r} (kinds: {', '.join(usable)})")
    if world and not kind.world:
        raise fail(f"{where}.kind", f"kind {kind.name!r} is a transport fault: use it with replay --faults")
    if not world and not kind.stateless:
        raise fail(
            f"{where}.kind", f"kind {kind.name!r} changes world state: a replay can fire {', '.join(usable)}"
        )
    method = raw.get("method")
    if method is not None:
        if world:
            raise fail(f"{where}.method", "a world's rule targets a tool (tool: NAME or '*')")
        if not isinstance(method, str) or not method:
            raise fail(f"{where}.method", "expected a JSON-RPC method name")
        if "tool" in raw:
            raise fail(f"{where}.method", "give tool or method, not both")
    tool = raw.get("tool", "*")
    if not isinstance(tool, str) or not tool:
        raise fail(f"{where}.tool", "expected a tool name or '*'")
    if tools is not None and tool != "*" and tool not in tools:
        raise fail(f"{where}.tool", f"no tool {tool!r}")
    on_calls = raw.get("on_calls")
    if on_calls is not None and (
        not isinstance(on_calls, list)
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in on_calls)
    ):
        raise fail(f"{where}.on_calls", "expected a list of call ordinals (1-based)")
    for key in ("every", "length"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise fail(f"{where}.{key}", "expected a positive integer")
    probability = raw.get("probability")
    if probability is not None and (
        not isinstance(probability, int | float) or isinstance(probability, bool) or not 0 <= probability <= 1
    ):
        raise fail(f"{where}.probability", "expected a number from 0 to 1")
    when = None
    if "when" in raw:
        if check_when is None:
            raise fail(f"{where}.when", "a replay has no world state to test: schedule by call instead")
        when = check_when(raw["when"], f"{where}.when")
    params = {k: raw[k] for k in PARAMS if k in raw}
    _check_params(params, kind.name, where, fail)
    replace = None
    if kind.name == "tools_changed":
        if "replace_with" not in raw:
            raise fail(f"{where}.replace_with", "required by kind 'tools_changed'")
        if parse_tool is not None:
            replace = parse_tool(raw["replace_with"], f"{where}.replace_with")
            name = getattr(replace, "name", None)
        else:
            replace = raw["replace_with"]
            if not isinstance(replace, dict):
                raise fail(f"{where}.replace_with", "expected a tool definition (an object with a name)")
            name = replace.get("name")
        if not isinstance(name, str) or not name:
            raise fail(f"{where}.replace_with.name", "expected the tool's name")
        if method is not None or tool not in ("*", name):
            raise fail(f"{where}.replace_with.name", "must be the name of the tool it replaces")
    elif "replace_with" in raw:
        raise fail(f"{where}.replace_with", "only kind 'tools_changed' takes replace_with")
    server = raw.get("server")
    if server is not None:
        if not world:
            raise fail(f"{where}.server", "a replay is one server: target a tool or a method")
        if not servers:
            raise fail(f"{where}.server", "this world is one server (no servers field): drop server")
        if not isinstance(server, str) or server not in servers:
            raise fail(f"{where}.server", f"no server {server!r} (servers: {', '.join(servers)})")
    rule_id = raw.get("id", f"{kind.name}-{where}")
    if not isinstance(rule_id, str) or not rule_id:
        raise fail(f"{where}.id", "expected a non-empty string")
    return FaultRule(
        rule_id,
        kind.name,
        "*" if method is not None else tool,
        tuple(on_calls) if on_calls is not None else None,
        raw.get("every"),
        raw.get("length", 1),
        when,
        float(probability) if probability is not None else None,
        params,
        replace,
        method,
        server,
    )


def _check_params(
    params: dict[str, Any], kind: str, where: str, fail: Callable[[str, str], HarnError]
) -> None:
    for key in ("retry_after_ms", "timeout_ms", "latency_ms", "apply"):
        value = params.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise fail(f"{where}.{key}", "expected a non-negative integer")
    if "message" in params and not isinstance(params["message"], str):
        raise fail(f"{where}.message", "expected a string")
    if kind == "http_status":
        status = params.get("status")
        if status not in HTTP_STATUSES:
            raise fail(f"{where}.status", f"expected one of {', '.join(map(str, HTTP_STATUSES))}")
    elif "status" in params:
        raise fail(f"{where}.status", "only kind 'http_status' takes a status")
    headers = params.get("headers")
    if headers is not None and (
        not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())
    ):
        raise fail(f"{where}.headers", "expected an object of header names to string values")
    malformed = params.get("malformed")
    if malformed is not None and malformed not in MALFORMED:
        raise fail(f"{where}.malformed", f"expected one of {', '.join(MALFORMED)}")


def parse_rules(doc: Any, path: str | Path | None = None, *, name: str = "") -> list[FaultRule]:
    """A replay's rules: a JSON list of rules (or ``{"rules": [...]}``); ids must be unique.
    Errors name ``path`` (a file), or ``name`` (rules given inline, e.g. ``faults``)."""

    def fail(where: str, what: str) -> HarnError:
        return FaultRulesError(what, path=path, where=f"{name}{where}" or None)

    if isinstance(doc, dict) and set(doc) <= {"$schema", "rules"} and "rules" in doc:
        doc = doc["rules"]
    if not isinstance(doc, list):
        raise fail("", "expected a JSON list of fault rules (docs/faults.md)")
    rules = [parse_rule(raw, f"[{i}]", fail, world=False) for i, raw in enumerate(doc)]
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        if rule.id in seen:
            raise fail(f"[{i}].id", f"duplicate rule id {rule.id!r}")
        seen.add(rule.id)
    return rules


def load_rules(path: str | Path) -> list[FaultRule]:
    """Read and check a rules file; any problem is one :class:`FaultRulesError` naming it."""
    import orjson

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise FaultRulesError(f"cannot read the fault rules: {exc.strerror or exc}", path=path) from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FaultRulesError(
            f"not valid JSON: {str(exc).split(':')[0]}", path=path, where=f"{exc.lineno}:{exc.colno}"
        ) from None
    return parse_rules(doc, path)
