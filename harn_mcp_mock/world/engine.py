"""The world engine: a stateful MCP server as a pure JSON-RPC engine (no I/O of its own).

``receive(message)`` answers ``initialize``, ``ping``, ``tools/list`` and ``tools/call`` (and
``server/discover`` with -32601, as a classic server), so ``jsonrpc.server.serve_stdio`` serves it
over stdio and tests drive it in memory. A call: validate the arguments against ``inputSchema``,
decide faults, check ``requires``, apply ``effects`` all or nothing, shape the result; advance
the virtual clock; log it; check forbidden states.

A world of several servers (a spec's ``servers``) is one engine, one state: each server is a
:class:`ServerView` of it (its serverInfo, the tools it shows, the fault rules aimed at it), and
each call's log entry and fired fault name the server it came through.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field

from harn_mcp_mock import deepjson
from harn_mcp_mock.faults.kinds import KINDS, Answer, tool_error
from harn_mcp_mock.faults.rules import FaultRule
from harn_mcp_mock.faults.schedule import decide
from harn_mcp_mock.jsonrpc.codes import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
)
from harn_mcp_mock.jsonrpc.server import Out, receive_batch
from harn_mcp_mock.world.predicates import PredicateError, get_path, holds
from harn_mcp_mock.world.spec import TaskSpec, ToolSpec, WorldSpec
from harn_mcp_mock.world.state import EffectError, apply_effects, changed_paths, copy_state
from harn_mcp_mock.world.templates import Context, bound, concrete, holds_in, render

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TASK_PROMPT = "task"
TASK_URI = "harn://task"
_TASK_METHODS = frozenset(
    {"prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list"}
)


@dataclass(slots=True)
class CallOutcome:
    response: dict[str, Any]
    """``{"result": ...}`` or ``{"error": ...}`` (no jsonrpc/id)."""
    notifications: list[dict[str, Any]] = field(default_factory=list)


class WorldEngine:
    def __init__(
        self,
        spec: WorldSpec,
        *,
        task: str | None = None,
        seed: int = 0,
        run_id: str = "run",
        faults: str | None = None,
    ) -> None:
        self.spec = spec
        self.task: TaskSpec | None = spec.task(task)
        self.seed = seed
        self.run_id = run_id
        self.profile = faults
        self.rules: list[FaultRule] = spec.faults(faults)
        self.initial = copy_state(spec.state)
        self.state = copy_state(spec.state)
        self.tools: dict[str, ToolSpec] = dict(spec.tools)
        self.now_ms = spec.start_ms
        self.ordinals: dict[str, int] = {}
        self.calls: list[dict[str, Any]] = []
        self.faults_fired: list[dict[str, Any]] = []
        self.forbidden_hits: list[dict[str, Any]] = []
        self._validators: dict[str, Any] = {}
        self._recorded_seen: dict[tuple[str, bytes], int] = {}

    # -- JSON-RPC ----------------------------------------------------------------------------

    def receive(self, message: Any, server: str | None = None) -> list[Out]:
        """Answer one message (or a batch). ``server``: the server of a world of several that
        it came through (its serverInfo, its tools); None: the whole world as one server."""
        if isinstance(message, list):
            return receive_batch(lambda one: self.receive(one, server), message)
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and ("result" in message or "error" in message):
                return []  # an answer to a request we never send
            return [
                Out(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": INVALID_REQUEST, "message": "Invalid Request"},
                    }
                )
            ]
        if "id" not in message:
            return []  # notifications (initialized, cancelled, ...) need no answer
        msg_id = message["id"]
        method = message["method"]
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if method == "initialize":
            return [_ok(msg_id, self._initialize(params, server))]
        if method == "ping":
            return [_ok(msg_id, {})]
        if method == "tools/list":
            shown = self._shown(server)
            listed = [t.definition for name, t in self.tools.items() if shown is None or name in shown]
            return [_ok(msg_id, {"tools": listed})]
        if method in _TASK_METHODS and (self.spec.resources or self.spec.prompts):
            served = self._served_answer(msg_id, method, params)
            if served is not None:
                return [served]
        if method in _TASK_METHODS and self.task is not None:
            return [self._task_answer(msg_id, method, params)]
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments")
            outcome = self.call(str(name), args if isinstance(args, dict) else {}, server=server)
            return [Out(n) for n in outcome.notifications] + [
                Out({"jsonrpc": "2.0", "id": msg_id, **outcome.response})
            ]
        return [
            Out(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": METHOD_NOT_FOUND, "message": "Method not found"},
                }
            )
        ]

    def _shown(self, server: str | None) -> tuple[str, ...] | None:
        """The tools ``server`` shows (None: every tool)."""
        return None if server is None else self.spec.servers[server].tools

    def _initialize(self, params: dict[str, Any], via: str | None = None) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        server = self.spec.server if via is None else self.spec.servers[via].info
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {
                "name": server.get("name", f"{self.spec.name}-world"),
                "version": server.get("version", "1.0.0"),
            },
        }
        if server.get("instructions"):
            result["instructions"] = server["instructions"]
        if self.task is not None:  # the task is served too: a prompt `task`, a resource harn://task
            result["capabilities"].update(
                {"prompts": {"listChanged": False}, "resources": {"listChanged": False}}
            )
        if self.spec.prompts:
            result["capabilities"]["prompts"] = {"listChanged": False}
        if self.spec.resources:
            result["capabilities"]["resources"] = {"listChanged": False}
        return result

    def _served_answer(self, msg_id: Any, method: str, params: dict[str, Any]) -> Out | None:
        """The spec's own resources and prompts (listed after the task's), each read or got
        answering its recorded answers; None for what the task answers (or nothing does)."""
        if method in ("resources/list", "prompts/list"):
            kind = "resources" if method == "resources/list" else "prompts"
            mine = [
                {k: v for k, v in d.items() if k not in ("recorded", "todo", "result", "contents")}
                for d in (self.spec.resources if kind == "resources" else self.spec.prompts)
            ]
            first: list[Any] = []
            if self.task is not None:
                task = self._task_answer(msg_id, method, params).message.get("result", {})
                first = task.get(kind, [])
            return _ok(msg_id, {kind: [*first, *mine]})
        if method == "resources/templates/list":
            return None if self.task is not None else _ok(msg_id, {"resourceTemplates": []})
        key, wanted, served = (
            ("uri", params.get("uri"), self.spec.resources)
            if method == "resources/read"
            else ("name", params.get("name"), self.spec.prompts)
        )
        found = next((d for d in served if d.get(key) == wanted), None)
        if found is None:
            if self.task is not None:
                return None
            what = "resource" if key == "uri" else "prompt"
            error = {"code": INVALID_PARAMS, "message": f"Unknown {what}: {wanted}"}
            return Out({"jsonrpc": "2.0", "id": msg_id, "error": error})
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        if method == "resources/read" and "contents" in found:  # a resource modelled on the state
            ctx = Context(args={}, state=self.state, now_ms=self.now_ms, extra={"seed": self.seed})
            if "result" in found:
                ctx.extra["result"] = concrete(render(found["result"], ctx))
            contents = concrete(render(found["contents"], ctx))
            return _ok(msg_id, {"contents": contents})
        answer = self._recorded_answer(f"{method} {wanted}", found.get("recorded") or [], args or {})
        if answer is None:
            error = {"code": INVALID_PARAMS, "message": f"{wanted}: not modelled, and never recorded so"}
            return Out({"jsonrpc": "2.0", "id": msg_id, "error": error})
        return Out({"jsonrpc": "2.0", "id": msg_id, **answer})

    def _task_answer(self, msg_id: Any, method: str, params: dict[str, Any]) -> Out:
        """The selected task over MCP, so an agent can read its instructions with MCP alone."""
        task = self.task
        assert task is not None
        text = task.description or task.id
        title = f"{self.spec.name}: {task.id}"
        result: dict[str, Any]
        if method == "prompts/list":
            result = {
                "prompts": [{"name": TASK_PROMPT, "title": title, "description": "The task to carry out."}]
            }
        elif method == "resources/list":
            resource = {"uri": TASK_URI, "name": "task", "title": title, "mimeType": "text/plain"}
            result = {"resources": [resource]}
        elif method == "resources/templates/list":
            result = {"resourceTemplates": []}
        elif method == "prompts/get":
            if params.get("name") != TASK_PROMPT:
                error = {
                    "code": INVALID_PARAMS,
                    "message": f"Unknown prompt: {params.get('name')} (this world has: task)",
                }
                return Out({"jsonrpc": "2.0", "id": msg_id, "error": error})
            message = {"role": "user", "content": {"type": "text", "text": text}}
            result = {"description": title, "messages": [message]}
        else:  # resources/read
            if params.get("uri") != TASK_URI:
                error = {
                    "code": INVALID_PARAMS,
                    "message": f"Unknown resource: {params.get('uri')} (this world has: {TASK_URI})",
                }
                return Out({"jsonrpc": "2.0", "id": msg_id, "error": error})
            result = {"contents": [{"uri": TASK_URI, "mimeType": "text/plain", "text": text}]}
        return _ok(msg_id, result)

    # -- calls -------------------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any], *, server: str | None = None) -> CallOutcome:
        """Run one tool call (in-process entry point too: world check and tests use it);
        ``server``: the server of a world of several it came through (None: the whole world)."""
        tool = self.tools.get(name)
        shown = self._shown(server)
        if tool is None or (shown is not None and name not in shown):
            return CallOutcome({"error": {"code": INVALID_PARAMS, "message": f"Unknown tool: {name}"}})
        ordinal = self.ordinals.get(name, 0) + 1
        self.ordinals[name] = ordinal
        self.now_ms += self.spec.call_ms
        before = self.state
        entry: dict[str, Any] = {
            "seq": len(self.calls),
            "t_ms": self.now_ms - self.spec.start_ms,
            "tool": name,
            "arguments": args,
            "ordinal": ordinal,
            "outcome": "ok",
            "fault": None,
        }
        if server is not None:
            entry["server"] = server
        outcome = self._run(tool, args, ordinal, entry, server)
        entry["t_ms"] = self.now_ms - self.spec.start_ms
        entry["changed"] = changed_paths(before, self.state) if self.state is not before else []
        self.calls.append(entry)
        if self.task is not None:
            for index, predicate in enumerate(self.task.forbidden):
                if holds(predicate, self.state):
                    self.forbidden_hits.append(
                        {"call": entry["seq"], "forbidden": index, "predicate": predicate}
                    )
        return outcome

    def _rules(self, tool: str, server: str | None) -> list[FaultRule]:
        """The fault rules that may fire on a call of ``tool`` through ``server``: a rule with a
        ``server`` fires only through it (through the whole world, on a tool that server shows)."""
        if not self.spec.servers:
            return self.rules
        servers = self.spec.servers
        return [
            rule
            for rule in self.rules
            if rule.server is None
            or rule.server == server
            or (server is None and tool in servers[rule.server].tools)
        ]

    def _run(
        self,
        tool: ToolSpec,
        args: dict[str, Any],
        ordinal: int,
        entry: dict[str, Any],
        server: str | None = None,
    ) -> CallOutcome:
        problem = self._invalid(tool, args)
        if problem is not None:
            entry["outcome"] = "invalid_arguments"
            return _tool_error(f"invalid arguments: {problem}")
        rule = decide(
            self._rules(tool.name, server),
            tool=tool.name,
            ordinal=ordinal,
            args=args,
            seed=self.seed,
            run_id=self.run_id,
            holds=lambda predicate: holds(predicate, self.state),
        )
        notes: list[dict[str, Any]] = []
        if rule is not None:
            entry["fault"] = rule.id
            fired = {
                "call": entry["seq"],
                "tool": tool.name,
                "ordinal": ordinal,
                "fault": rule.id,
                "kind": rule.kind,
            }
            if server is not None:
                fired["server"] = server
            self.faults_fired.append(fired)
            kind = KINDS[rule.kind]
            if kind.answer is not None:  # answers instead of running the tool
                answer = kind.answer(rule)
                entry["outcome"] = answer.outcome
                self.now_ms += answer.advance_ms
                return CallOutcome(answer.response)
            if rule.kind == "tools_changed" and rule.replace_with is not None:
                # This call still runs the definition it was validated against; from the next
                # call on, tools/list shows the replacement and calls run it.
                replacement = rule.replace_with
                self.tools[replacement.name] = replacement
                self._validators.pop(replacement.name, None)
                notes.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            if kind.delay_ms is not None:
                self.now_ms += kind.delay_ms(rule)
        if not tool.modelled and tool.recorded is not None:
            entry["outcome"] = "recorded"
            return CallOutcome(self._recorded(tool, args), notes)
        ctx = Context(
            args=args,
            state=self.state,
            now_ms=self.now_ms,
            call=ordinal,
            extra={"seed": self.seed, "run_id": self.run_id, "before": self.state},
        )
        if tool.id_rule is not None:
            ctx.id = self._new_id(tool.id_rule)
        for predicate in tool.requires:
            failed = _failing(predicate, self.state, ctx)
            if failed is not None:
                entry["outcome"] = "requires_failed"
                return CallOutcome(_tool_error(failed).response, notes)
        hooks = KINDS[rule.kind] if rule is not None else None
        limit = hooks.limit(rule) if hooks is not None and hooks.limit is not None and rule else None
        try:
            if tool.python is not None:
                new_state, result, error = self._python(tool, args, ctx)
                if error is not None:
                    entry["outcome"] = "tool_error"
                    return CallOutcome(_tool_error(error).response, notes)
            else:
                new_state = (
                    apply_effects(self.state, tool.effects, ctx, limit=limit) if tool.effects else self.state
                )
                ctx.state = new_state
                result = render(tool.result, ctx) if tool.result is not None else None
                if tool.text is not None:
                    ctx.extra["result"] = concrete(result)
                    text = concrete(render(tool.text, ctx))
                    ctx.extra["text"] = text if isinstance(text, str) else deepjson.dumps(text).decode()
        except (EffectError, PredicateError) as exc:  # a bad pointer in a template is a tool error
            entry["outcome"] = "tool_error"
            return CallOutcome(_tool_error(str(exc)).response, notes)
        self.state = new_state
        result = concrete(result)
        if rule is not None and hooks is not None and hooks.after is not None:
            total = len(tool.effects)
            changed = hooks.after(rule, result, tool.output_schema, min(limit or 0, total), total)
            if isinstance(changed, Answer):  # an answer instead of the result
                entry["outcome"] = changed.outcome
                self.now_ms += changed.advance_ms
                return CallOutcome(changed.response, notes)
            result = changed
        return CallOutcome({"result": _shape(result, tool, ctx.extra.get("text"))}, notes)

    def _recorded(self, tool: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
        """The n-th recorded answer for these arguments, for the n-th call with them (the last
        one again after that); a tool error when none was recorded for them."""
        answer = self._recorded_answer(tool.name, tool.recorded or [], args)
        if answer is None:
            return _tool_error(
                f"{tool.name} is not modelled yet and was never recorded with these arguments "
                "(world init: see the tool's todo)"
            ).response
        return answer

    def _recorded_answer(
        self, name: str, recorded: list[dict[str, Any]], args: dict[str, Any]
    ) -> dict[str, Any] | None:
        from harn_mcp_mock.store.canonical import canonical_bytes

        key = canonical_bytes(args)
        same = [e for e in recorded if canonical_bytes(e.get("arguments", {})) == key]
        if not same:
            return None
        seen = self._recorded_seen.get((name, key), 0)
        self._recorded_seen[(name, key)] = seen + 1
        example = same[min(seen, len(same) - 1)]
        if "error" in example:
            return {"error": copy_state(example["error"])}
        return {"result": copy_state(example["result"])}

    def _invalid(self, tool: ToolSpec, args: dict[str, Any]) -> str | None:
        validator = self._validators.get(tool.name)
        if validator is None:
            validator, problem = input_validator(tool.definition.get("inputSchema") or {"type": "object"})
            if problem is not None:
                return problem
            self._validators[tool.name] = validator
        errors = sorted(validator.iter_errors(args), key=lambda e: (list(e.absolute_path), e.message))
        if not errors:
            return None
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path)
        return f"{where}: {first.message}" if where else first.message

    def _new_id(self, rule: dict[str, Any]) -> str:
        collection = get_path(self.state, rule["collection"])
        taken: set[str] = set()
        if isinstance(collection, dict):
            taken = set(collection)
        elif isinstance(collection, list):
            taken = {str(item.get("id")) for item in collection if isinstance(item, dict)}
        n = len(taken) + 1
        while rule["template"].replace("{n}", str(n)) in taken:
            n += 1
        return str(rule["template"].replace("{n}", str(n)))

    def _python(self, tool: ToolSpec, args: dict[str, Any], ctx: Context) -> tuple[Any, Any, str | None]:
        func = effect_function(self.spec, tool.python or "")
        working = copy_state(self.state)
        helpers = {
            "now_ms": self.now_ms,
            "call": ctx.call,
            "seed": self.seed,
            "run_id": self.run_id,
            "new_id": lambda collection, template: self._new_id(
                {"collection": collection, "template": template}
            ),
        }
        answer = func(working, args, helpers)
        error = answer.get("error") if isinstance(answer, dict) else "the python effect returned no dict"
        if error:
            return self.state, None, str(error)
        return working, answer.get("result"), None

    # -- the end -----------------------------------------------------------------------------

    def state_document(self, infra_error: str | None = None) -> dict[str, Any]:
        return {
            "format": "harn-mcp-mock/world-state",
            "version": 1,
            "world": self.spec.name,
            "task": self.task.id if self.task else None,
            "seed": self.seed,
            "run_id": self.run_id,
            "faults": self.profile,
            "infra_error": infra_error,
            "state": self.state,
        }


class ServerView:
    """One server of a world of several (``servers``), as an engine of its own (the ``Engine``
    seam: ``receive``): its serverInfo and tools, over the world engine's one state, clock, log
    and faults. Everything else is the world engine's."""

    __slots__ = ("server", "world")

    def __init__(self, world: WorldEngine, server: str) -> None:
        world.spec.server_spec(server)  # a WorldSpecError naming --server when there is none
        self.world = world
        self.server = server

    def receive(self, message: Any) -> list[Out]:
        return self.world.receive(message, self.server)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.world, name)


def effect_module(spec: WorldSpec, module_name: str) -> Any:
    """The module of a ``"python": "module:function"`` tool, imported from the spec's folder or
    the Python path (raises what the import raises)."""
    if spec.path is not None and str(spec.path.parent) not in sys.path:
        sys.path.insert(0, str(spec.path.parent))
    return importlib.import_module(module_name)


def effect_function(spec: WorldSpec, python: str) -> Any:
    """The function a ``"python": "module:function"`` tool names (AttributeError if none)."""
    module_name, _, func_name = python.partition(":")
    return getattr(effect_module(spec, module_name), func_name)


_VALIDATORS: dict[bytes, tuple[Any, str | None]] = {}
_VALIDATORS_MAX = 4096


def input_validator(schema: Any) -> tuple[Any, str | None]:
    """A compiled validator for the ``inputSchema`` ``schema`` and None, or None and why the
    schema is not one. Compiled once per process for each distinct schema (checking a schema
    costs about 1 ms; a runner starts a world per trial, and its trials' worlds share their
    specs' schemas). Validators hold no state between validations, so threads share them."""
    from harn_mcp_mock.store.canonical import canonical_bytes

    key = canonical_bytes(schema)
    found = _VALIDATORS.get(key)
    if found is None:
        import jsonschema  # lazily: keeps the server's start-up fast

        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
            found = (cls(schema), None)
        except jsonschema.exceptions.SchemaError as exc:
            found = (None, f"the world spec's inputSchema is not a valid JSON Schema: {exc.message}")
        if len(_VALIDATORS) >= _VALIDATORS_MAX:
            _VALIDATORS.clear()
        _VALIDATORS[key] = found
    return found


def _ok(msg_id: Any, result: dict[str, Any]) -> Out:
    return Out({"jsonrpc": "2.0", "id": msg_id, "result": result})


def _tool_error(text: str) -> CallOutcome:
    return CallOutcome(tool_error(text))


def _failing(predicate: dict[str, Any], state: Any, ctx: Context) -> str | None:
    """The error text of a ``requires`` entry that does not hold (for every item of its
    ``each`` list, bound to ``{as...}``), or None."""

    if "each" not in predicate:
        if holds_in(predicate, state, ctx):
            return None
        return str(concrete(render(predicate.get("error", "precondition failed"), ctx)))
    items = concrete(render(predicate["each"], ctx))
    name = str(predicate["as"]) if isinstance(predicate.get("as"), str) else "item"
    plain = {k: v for k, v in predicate.items() if k not in ("each", "as")}
    for item in items if isinstance(items, list) else []:
        with bound(ctx, name, item):
            failed = _failing(plain, state, ctx)
        if failed is not None:
            return failed
    return None


def _shape(result: Any, tool: ToolSpec, text: str | None = None) -> dict[str, Any]:
    if text is None:
        text = result if isinstance(result, str) else deepjson.dumps(result).decode()
    shaped: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if tool.output_schema is not None and (tool.text is None or result is not None):
        shaped["structuredContent"] = result
    return shaped
