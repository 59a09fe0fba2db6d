"""World specs: load, check and compile a ``*.world.json`` (format in docs/worlds.md).

Compiling checks everything the engine relies on and fails with one line naming the file and
the field (``tickets.world.json:tools[2].effects[0].op: unknown op 'upsert'``). ``world check``
also validates against the published JSON Schema (that import is kept off the server's start-up).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.faults.rules import FaultRule, parse_rule
from harn_mcp_mock.world.predicates import PredicateError, validate_predicate

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

FORMAT = "harn-mcp-mock/world"
VERSION = 1
EFFECT_OPS = {
    "set": ("path",),
    "merge": ("path", "value"),
    "insert": ("path",),
    "delete": ("path",),
    "move": ("from", "path"),
    "add": ("path", "by"),
    "remove": ("path", "where"),
    "each": ("items", "effects"),
}
EFFECT_FIELDS = {"op", "path", "value", "key", "from", "by", "where", "items", "as", "effects", "when"}
DEFAULT_START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@dataclass(slots=True)
class ToolSpec:
    name: str
    definition: dict[str, Any]
    """What tools/list shows (name, title, description, inputSchema, outputSchema, annotations)."""
    requires: list[dict[str, Any]] = field(default_factory=list)
    effects: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None
    id_rule: dict[str, Any] | None = None
    python: str | None = None
    text: Any = None
    """A template for the answer's text content (default: the result's JSON)."""
    recorded: list[dict[str, Any]] | None = None
    """Recorded answers (``world init``): a tool with no model answers its n-th call with given
    arguments with the n-th recorded answer for them."""
    todo: str | None = None
    """What is left to model (``world init``); ``world check`` names the tool."""

    @property
    def modelled(self) -> bool:
        return bool(self.effects or self.result is not None or self.text is not None or self.python)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        schema = self.definition.get("outputSchema")
        return schema if isinstance(schema, dict) else None


@dataclass(slots=True)
class TaskSpec:
    id: str
    description: str
    goal: list[dict[str, Any]]
    may_change: list[str]
    forbidden: list[dict[str, Any]]
    reference: list[dict[str, Any]]
    raw: dict[str, Any]
    goal_holds_at_start: bool = False
    """The goal (or an empty goal) already holds in the initial state, on purpose: a task of
    restraint that an agent doing nothing passes. Otherwise ``world check`` and ``run`` refuse
    such a task."""


@dataclass(slots=True)
class ServerSpec:
    """One MCP server of a world of several (``servers``): its ``serverInfo`` and the tools it
    shows, all over the world's one state."""

    name: str
    info: dict[str, Any]
    """``name``, ``version``, ``instructions`` (what ``initialize`` answers)."""
    tools: tuple[str, ...]


@dataclass(slots=True)
class WorldSpec:
    path: Path | None
    name: str
    description: str
    server: dict[str, Any]
    start_ms: int
    call_ms: int
    state: Any
    tools: dict[str, ToolSpec]
    tasks: dict[str, TaskSpec]
    fault_profiles: dict[str, list[FaultRule]]
    raw: dict[str, Any]
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    """A world of several servers: each by name, in the spec's order (empty: one server,
    ``server``, showing every tool)."""
    resources: list[dict[str, Any]] = field(default_factory=list)
    """Resources served beside the tools (``world init``: each with its recorded reads)."""
    prompts: list[dict[str, Any]] = field(default_factory=list)
    """Prompts served beside the tools (``world init``: each with its recorded answers)."""

    def server_spec(self, name: str | None) -> ServerSpec | None:
        """The server ``name`` (None: the whole world as one server)."""
        if name is None:
            return None
        if name not in self.servers:
            known = ", ".join(self.servers) or "none: this world is one server, serve it without --server"
            raise WorldSpecError(f"no server {name!r} (servers: {known})", path=self.path, where="--server")
        return self.servers[name]

    def task(self, task_id: str | None) -> TaskSpec | None:
        if task_id is None:
            return next(iter(self.tasks.values())) if len(self.tasks) == 1 else None
        if task_id not in self.tasks:
            raise WorldSpecError(
                f"no task {task_id!r} (tasks: {', '.join(self.tasks) or 'none'})",
                path=self.path,
                where="--task",
            )
        return self.tasks[task_id]

    def faults(self, profile: str | None) -> list[FaultRule]:
        if profile is None:
            return []
        if profile not in self.fault_profiles:
            known = ", ".join(self.fault_profiles) or "none"
            raise WorldSpecError(
                f"no fault profile {profile!r} (profiles: {known})", path=self.path, where="--faults"
            )
        return self.fault_profiles[profile]


class _Checker:
    def __init__(self, path: Path | None) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> WorldSpecError:
        return WorldSpecError(what, path=self.path, where=where)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "expected an object")
        return value

    def lst(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, "expected a list")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(where, "expected a non-empty string")
        return value

    def name(self, value: Any, where: str) -> str:
        """A world name, task id or fault profile name: any non-empty string, of any length or
        alphabet (a run makes a safe folder name of it: ``harn_mcp_mock.runner.matrix.folder_name``)."""
        return self.text(value, where)

    def known(self, value: dict[str, Any], allowed: set[str], where: str) -> None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(f"{where}.{unknown[0]}" if where else unknown[0], "unknown field")

    def predicate(self, value: Any, where: str) -> dict[str, Any]:
        try:
            validate_predicate(value, where)
        except PredicateError as exc:
            raise self.fail(getattr(exc, "where", where), str(exc)) from None
        return self.obj(value, where)


def read_spec_json(path: Path) -> Any:
    """The JSON of a spec file, or a one-line WorldSpecError naming the file (and line:column)."""
    from harn_mcp_mock.inputs import read_input

    try:
        return orjson.loads(read_input(path))
    except FileNotFoundError:
        from harn_mcp_mock.shipped import world_specs

        shipped = world_specs()
        stem = path.name.removesuffix(".world.json")
        same = f"; the shipped {stem!r} is --spec {stem}" if stem in shipped else ""
        raise WorldSpecError(
            f"no such world spec (shipped worlds: {', '.join(shipped)}{same})", path=path
        ) from None
    except IsADirectoryError:
        raise WorldSpecError("is a folder, not a world spec (NAME.world.json)", path=path) from None
    except OSError as exc:
        raise WorldSpecError(f"cannot read it: {exc.strerror or exc}", path=path) from None
    except orjson.JSONDecodeError as exc:
        raise WorldSpecError(
            f"not valid JSON: {str(exc).split(':')[0]}", path=path, where=f"{exc.lineno}:{exc.colno}"
        ) from None


def load_spec(path: str | Path) -> WorldSpec:
    path = Path(path)
    return compile_spec(read_spec_json(path), path)


TOP = {
    "$schema",
    "format",
    "version",
    "name",
    "description",
    "server",
    "clock",
    "state",
    "tools",
    "tasks",
    "fault_profiles",
    "servers",
    "resources",
    "prompts",
}
SERVER = {"name", "version", "instructions", "tools"}
TOOL = {
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "requires",
    "effects",
    "result",
    "id",
    "python",
    "text",
    "recorded",
    "todo",
}
TASK = {"id", "description", "goal", "may_change", "forbidden", "reference", "goal_holds_at_start"}


def compile_spec(data: Any, path: Path | None = None) -> WorldSpec:
    c = _Checker(path)
    doc = c.obj(data, "$")
    c.known(doc, TOP, "")
    if doc.get("format") != FORMAT:
        raise c.fail("format", f"expected {FORMAT!r}")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise c.fail("version", "expected a positive integer")
    if version > VERSION:
        raise c.fail(
            "version", f"written for world format version {version}; this harn-mcp-mock reads up to {VERSION}"
        )
    name = c.name(doc.get("name"), "name")
    server = c.obj(doc.get("server", {}), "server")
    clock = c.obj(doc.get("clock", {}), "clock")
    c.known(clock, {"start", "call_ms"}, "clock")
    start_ms = _parse_start(clock.get("start"), c)
    call_ms = clock.get("call_ms", 20)
    if not isinstance(call_ms, int) or isinstance(call_ms, bool) or call_ms < 0:
        raise c.fail("clock.call_ms", "expected a non-negative integer")
    if "state" not in doc:
        raise c.fail("state", "missing (the initial state)")
    tools: dict[str, ToolSpec] = {}
    for i, raw in enumerate(c.lst(doc.get("tools"), "tools")):
        tool = _tool(raw, f"tools[{i}]", c)
        if tool.name in tools:
            raise c.fail(f"tools[{i}].name", f"duplicate tool {tool.name!r}")
        tools[tool.name] = tool
    servers = _servers(doc, c, tools)
    tasks: dict[str, TaskSpec] = {}
    for i, raw in enumerate(c.lst(doc.get("tasks", []), "tasks")):
        task = _task(raw, f"tasks[{i}]", c, tools)
        if task.id in tasks:
            raise c.fail(f"tasks[{i}].id", f"duplicate task {task.id!r}")
        tasks[task.id] = task
    profiles: dict[str, list[FaultRule]] = {}
    for pname, rules in c.obj(doc.get("fault_profiles", {}), "fault_profiles").items():
        c.name(pname, f"fault_profiles.{pname}")
        profiles[pname] = [
            _rule(r, f"fault_profiles.{pname}[{j}]", c, tools, servers)
            for j, r in enumerate(c.lst(rules, f"fault_profiles.{pname}"))
        ]
    resources = [
        _served(r, f"resources[{i}]", "uri", c)
        for i, r in enumerate(c.lst(doc.get("resources", []), "resources"))
    ]
    prompts = [
        _served(p, f"prompts[{i}]", "name", c) for i, p in enumerate(c.lst(doc.get("prompts", []), "prompts"))
    ]
    return WorldSpec(
        path,
        name,
        str(doc.get("description", "")),
        server,
        start_ms,
        call_ms,
        doc["state"],
        tools,
        tasks,
        profiles,
        doc,
        servers,
        resources,
        prompts,
    )


def _served(raw: Any, where: str, key: str, c: _Checker) -> dict[str, Any]:
    """A resource (``uri``) or prompt (``name``): its definition, and its ``recorded`` answers."""
    doc = c.obj(raw, where)
    c.text(doc.get(key), f"{where}.{key}")
    for i, example in enumerate(c.lst(doc.get("recorded", []), f"{where}.recorded")):
        e = c.obj(example, f"{where}.recorded[{i}]")
        c.known(e, {"arguments", "result", "error"}, f"{where}.recorded[{i}]")
        if ("result" in e) == ("error" in e):
            raise c.fail(f"{where}.recorded[{i}]", "expected one of 'result' or 'error'")
    if "todo" in doc:
        c.text(doc["todo"], f"{where}.todo")
    return doc


def _servers(doc: dict[str, Any], c: _Checker, tools: dict[str, ToolSpec]) -> dict[str, ServerSpec]:
    """A world of several servers: each a name, its serverInfo and the tools it shows. Every
    tool is shown by some server; a tool may be shown by several (one effect, one state)."""
    if "servers" not in doc:
        return {}
    servers: dict[str, ServerSpec] = {}
    listed = c.lst(doc["servers"], "servers")
    if not listed:
        raise c.fail("servers", "expected at least one server (or no servers field: one server)")
    for i, raw in enumerate(listed):
        where = f"servers[{i}]"
        entry = c.obj(raw, where)
        c.known(entry, SERVER, where)
        name = c.name(entry.get("name"), f"{where}.name")
        if name in servers:
            raise c.fail(f"{where}.name", f"duplicate server {name!r}")
        for key in ("version", "instructions"):
            if key in entry and not isinstance(entry[key], str):
                raise c.fail(f"{where}.{key}", "expected a string")
        shown: list[str] = []
        for j, tool in enumerate(c.lst(entry.get("tools"), f"{where}.tools")):
            if not isinstance(tool, str) or tool not in tools:
                raise c.fail(f"{where}.tools[{j}]", f"no tool {tool!r} (tools: {', '.join(tools)})")
            if tool in shown:
                raise c.fail(f"{where}.tools[{j}]", f"tool {tool!r} listed twice")
            shown.append(tool)
        info: dict[str, Any] = {"name": name}
        info.update((k, entry[k]) for k in ("version", "instructions") if k in entry)
        servers[name] = ServerSpec(name, info, tuple(shown))
    shown_by = {tool for server in servers.values() for tool in server.tools}
    for i, tool in enumerate(tools):
        if tool not in shown_by:
            raise c.fail(f"tools[{i}].name", f"tool {tool!r} is in no server (servers[].tools)")
    return servers


def _parse_start(value: Any, c: _Checker) -> int:
    if value is None:
        return DEFAULT_START_MS
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        import datetime as dt

        try:
            stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=dt.UTC)
            return int(stamp.timestamp() * 1000)
    raise c.fail("clock.start", "expected epoch milliseconds or an ISO 8601 time")


def _tool(raw: Any, where: str, c: _Checker) -> ToolSpec:
    doc = c.obj(raw, where)
    c.known(doc, TOOL, where)
    name = c.text(doc.get("name"), f"{where}.name")
    schema = c.obj(doc.get("inputSchema", {"type": "object"}), f"{where}.inputSchema")
    if schema.get("type") not in (None, "object"):
        raise c.fail(f"{where}.inputSchema.type", "a tool's inputSchema must be an object schema")
    definition: dict[str, Any] = {"name": name}
    for key in ("title", "description"):
        if key in doc:
            definition[key] = c.text(doc[key], f"{where}.{key}")
    definition["inputSchema"] = schema
    if "outputSchema" in doc:
        definition["outputSchema"] = c.obj(doc["outputSchema"], f"{where}.outputSchema")
    if "annotations" in doc:
        definition["annotations"] = c.obj(doc["annotations"], f"{where}.annotations")
    requires = []
    for i, p in enumerate(c.lst(doc.get("requires", []), f"{where}.requires")):
        entry = c.obj(p, f"{where}.requires[{i}]")
        # "each" + "as": the predicate is checked once per item of a list (world init's batches)
        c.predicate({k: v for k, v in entry.items() if k not in ("each", "as")}, f"{where}.requires[{i}]")
        requires.append(entry)
    effects = [
        _effect(effect, f"{where}.effects[{i}]", c)
        for i, effect in enumerate(c.lst(doc.get("effects", []), f"{where}.effects"))
    ]
    id_rule = None
    if "id" in doc:
        id_rule = c.obj(doc["id"], f"{where}.id")
        c.known(id_rule, {"collection", "template"}, f"{where}.id")
        c.text(id_rule.get("collection"), f"{where}.id.collection")
        template = c.text(id_rule.get("template"), f"{where}.id.template")
        if "{n}" not in template:
            raise c.fail(f"{where}.id.template", "must contain {n}")
    python = doc.get("python")
    if python is not None and (not isinstance(python, str) or ":" not in python):
        raise c.fail(f"{where}.python", "expected 'module:function'")
    recorded = None
    if "recorded" in doc:
        recorded = []
        for i, example in enumerate(c.lst(doc["recorded"], f"{where}.recorded")):
            e = c.obj(example, f"{where}.recorded[{i}]")
            c.known(e, {"arguments", "result", "error"}, f"{where}.recorded[{i}]")
            c.obj(e.get("arguments", {}), f"{where}.recorded[{i}].arguments")
            if ("result" in e) == ("error" in e):
                raise c.fail(f"{where}.recorded[{i}]", "expected one of 'result' or 'error'")
            recorded.append(e)
    todo = doc.get("todo")
    if todo is not None:
        todo = c.text(todo, f"{where}.todo")
    return ToolSpec(
        name,
        definition,
        requires,
        effects,
        doc.get("result"),
        id_rule,
        python,
        doc.get("text"),
        recorded,
        todo,
    )


def _effect(raw: Any, where: str, c: _Checker) -> dict[str, Any]:
    e = c.obj(raw, where)
    op = e.get("op")
    if not isinstance(op, str) or op not in EFFECT_OPS:
        raise c.fail(f"{where}.op", f"unknown op {op!r} (ops: {', '.join(EFFECT_OPS)})")
    c.known(e, EFFECT_FIELDS, where)
    for needed in EFFECT_OPS[op]:
        if needed not in e:
            raise c.fail(f"{where}.{needed}", f"required by op {op!r}")
    for key in ("path", "from"):
        if key in e and (not isinstance(e[key], str) or not e[key].startswith("/")):
            raise c.fail(f"{where}.{key}", "expected a JSON pointer starting with '/'")
    if "when" in e:
        c.predicate(e["when"], f"{where}.when")
    if op == "each":
        if "as" in e and not isinstance(e["as"], str):
            raise c.fail(f"{where}.as", "expected a name")
        for i, sub in enumerate(c.lst(e["effects"], f"{where}.effects")):
            _effect(sub, f"{where}.effects[{i}]", c)
    return e


def _task(raw: Any, where: str, c: _Checker, tools: dict[str, ToolSpec]) -> TaskSpec:
    doc = c.obj(raw, where)
    c.known(doc, TASK, where)
    task_id = c.name(doc.get("id"), f"{where}.id")
    goal = [
        c.predicate(p, f"{where}.goal[{i}]") for i, p in enumerate(c.lst(doc.get("goal"), f"{where}.goal"))
    ]
    may = [
        c.text(g, f"{where}.may_change[{i}]")
        for i, g in enumerate(c.lst(doc.get("may_change", []), f"{where}.may_change"))
    ]
    forbidden = [
        c.predicate(p, f"{where}.forbidden[{i}]")
        for i, p in enumerate(c.lst(doc.get("forbidden", []), f"{where}.forbidden"))
    ]
    reference = []
    for i, step in enumerate(c.lst(doc.get("reference", []), f"{where}.reference")):
        s = c.obj(step, f"{where}.reference[{i}]")
        c.known(s, {"tool", "arguments"}, f"{where}.reference[{i}]")
        if not isinstance(s.get("tool"), str) or s.get("tool") not in tools:
            raise c.fail(f"{where}.reference[{i}].tool", f"no tool {s.get('tool')!r}")
        c.obj(s.get("arguments", {}), f"{where}.reference[{i}].arguments")
        reference.append(s)
    on_purpose = doc.get("goal_holds_at_start", False)
    if not isinstance(on_purpose, bool):
        raise c.fail(f"{where}.goal_holds_at_start", "expected true or false")
    return TaskSpec(
        task_id, str(doc.get("description", "")), goal, may, forbidden, reference, doc, on_purpose
    )


def _rule(
    raw: Any, where: str, c: _Checker, tools: dict[str, ToolSpec], servers: dict[str, ServerSpec]
) -> FaultRule:
    rule = parse_rule(
        raw,
        where,
        c.fail,
        world=True,
        tools=tools,
        servers=servers,
        check_when=c.predicate,
        parse_tool=lambda v, w: _tool(v, w, c),
    )
    if rule.server is not None and rule.tool != "*" and rule.tool not in servers[rule.server].tools:
        raise c.fail(f"{where}.tool", f"server {rule.server!r} does not show tool {rule.tool!r}")
    return rule
