"""The contract fields around the schemas: server metadata (S*), capabilities (C*, T6), a tool's
fields other than its schemas and hints (T4, T5, T7..T11), resources' and templates' fields (R3,
R4) and prompts' fields (P6, P7).

Each severity answers "whom does this change break" (the Breaks column of
``docs/drift-rules.md``). :data:`COMPARED` and :data:`IGNORED` say, for every field of the MCP
schema's types (the ``mcp_types`` models), which rules compare it or why it is left alone:
``tests/verify/test_contract_schema_walk.py`` walks the installed SDK's models and fails on a
field that is in neither, so a new field of the protocol cannot go uncompared without a decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.verify.surface import Exchange, Surface

__all__ = [
    "COMPARED",
    "IGNORED",
    "capability_rules",
    "prompt_field_rules",
    "resource_field_rules",
    "server_rules",
    "tool_field_rules",
]

ERR, WARN, INFO = Severity.ERR, Severity.WARN, Severity.INFO

_CAPABILITY_RULES = ("C1", "C2", "C3", "C4")
COMPARED: dict[str, dict[str, tuple[str, ...]]] = {
    "InitializeResult": {
        "instructions": ("S1",),
        "protocolVersion": ("S4",),
        "serverInfo": ("S2", "S3"),
        "capabilities": _CAPABILITY_RULES,
    },
    "Implementation": {
        "name": ("S2",),
        "title": ("S3",),
        "version": ("S3",),
        "description": ("S3",),
        "websiteUrl": ("S3",),
        "icons": ("S3",),
    },
    "ServerCapabilities": {
        "experimental": _CAPABILITY_RULES,
        "extensions": _CAPABILITY_RULES,
        "logging": _CAPABILITY_RULES,
        "prompts": _CAPABILITY_RULES,
        "resources": _CAPABILITY_RULES,
        "tools": ("T6", "C2", "C3", "C4"),
        "completions": _CAPABILITY_RULES,
        "tasks": _CAPABILITY_RULES,
    },
    "PromptsCapability": {"listChanged": ("C3", "C4")},
    "ToolsCapability": {"listChanged": ("C3", "C4")},
    "ResourcesCapability": {"subscribe": ("C3", "C4"), "listChanged": ("C3", "C4")},
    "ServerTasksCapability": {"list": ("C3", "C4"), "cancel": ("C3", "C4"), "requests": ("C3", "C4")},
    "ServerTasksRequestsCapability": {"tools": ("C3", "C4")},
    "TasksToolsCapability": {"call": ("C3", "C4")},
    "Tool": {
        "name": ("T1", "T2", "T3"),
        "title": ("T5",),
        "description": ("T4",),
        "inputSchema": ("I1",),
        "outputSchema": ("O1", "O2"),
        "annotations": ("A1", "A2", "A3", "A4", "A5", "T5"),
        "execution": ("T7", "T8"),
        "icons": ("T10",),
        "_meta": ("T9",),
    },
    "ToolAnnotations": {
        "title": ("T5",),
        "readOnlyHint": ("A1", "A5"),
        "destructiveHint": ("A2", "A5"),
        "idempotentHint": ("A3", "A5"),
        "openWorldHint": ("A4", "A5"),
    },
    "ToolExecution": {"taskSupport": ("T7", "T8")},
    "Prompt": {
        "name": ("P1", "P2"),
        "title": ("P6",),
        "description": ("P6",),
        "arguments": ("P3", "P4", "P5"),
        "icons": ("P6",),
        "_meta": ("P6",),
    },
    "PromptArgument": {
        "name": ("P3", "P4", "P5"),
        "title": ("P7",),
        "description": ("P7",),
        "required": ("P3", "P5"),
    },
    "Resource": {
        "uri": ("R1", "R2"),
        "name": ("R4",),
        "title": ("R4",),
        "description": ("R4",),
        "mimeType": ("R3",),
        "size": ("R4",),
        "icons": ("R4",),
        "annotations": ("R4",),
        "_meta": ("R4",),
    },
    "ResourceTemplate": {
        "uriTemplate": ("R1", "R2"),
        "name": ("R4",),
        "title": ("R4",),
        "description": ("R4",),
        "mimeType": ("R3",),
        "icons": ("R4",),
        "annotations": ("R4",),
        "_meta": ("R4",),
    },
    "Annotations": {"audience": ("R4",), "priority": ("R4",), "lastModified": ("R4",)},
    "Icon": {"src": ("S3", "T10", "P6", "R4"), "mimeType": ("S3", "T10", "P6", "R4")},
}
"""Model name -> field (wire name) -> the rules that compare it."""

IGNORED: dict[str, dict[str, str]] = {
    "InitializeResult": {
        "_meta": "protocol bookkeeping of one answer (progress tokens, related tasks), not the contract",
    },
    "Icon": {
        "sizes": "a rendering hint of an icon whose src is compared",
        "theme": "a rendering hint of an icon whose src is compared",
    },
    # empty capability objects: their presence is what is compared (C1/C2)
    "LoggingCapability": {},
    "CompletionsCapability": {},
    "TasksListCapability": {},
    "TasksCancelCapability": {},
    "TasksCallCapability": {},
}
"""Model name -> field (wire name) -> why verify leaves it alone."""

_STANDARD_PREFIXES = (
    "initialize",
    "ping",
    "server/discover",
    "tools/",
    "resources/",
    "prompts/",
    "logging/",
    "completion/",
    "tasks/",
    "notifications/",
    "sampling/",
    "elicitation/",
    "roots/",
)
_CAPABILITY_METHODS = {
    "tools": ("tools/",),
    "resources": ("resources/",),
    "prompts": ("prompts/",),
    "logging": ("logging/",),
    "completions": ("completion/",),
    "tasks": ("tasks/",),
}
_FEATURE_CONTAINERS = frozenset({"experimental", "extensions"})
"""Capabilities whose keys are the features: an empty one declares nothing."""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode() if value is not None else "none"
    return clip(text, 60)


# --- server metadata ---------------------------------------------------------------------


def _initialize_version(exchanges: Iterable[Exchange]) -> Any:
    for ex in exchanges:
        if ex.method == "initialize":
            return ex.params.get("protocolVersion")
    return None


def server_rules(old: Surface, new: Surface) -> list[Finding]:
    """S1..S4: ``instructions``, ``serverInfo`` and the negotiated ``protocolVersion``.

    Compared only when both sessions recorded a handshake (a ``serverInfo`` or capabilities).
    """
    a, b = old.server, new.server
    if not _handshake(a) or not _handshake(b):
        return []
    out: list[Finding] = []
    was, now = a.get("instructions"), b.get("instructions")
    if was != now:
        blank = " ".join(str(was or "").split()) == " ".join(str(now or "").split())
        how = "added" if not was else "removed" if not now else "rewritten"
        if blank:
            how = "changed in whitespace only"
        out.append(
            Finding(
                "S1",
                INFO if blank else WARN,
                None,
                "/instructions",
                f"server instructions {how} (instructions steer agents like tool descriptions do)",
                was,
                now,
                "server",
            )
        )
    info_a, info_b = a.get("serverInfo"), b.get("serverInfo")
    if isinstance(info_a, dict) and isinstance(info_b, dict):
        for key in sorted(set(info_a) | set(info_b)):
            x, y = info_a.get(key), info_b.get(key)
            if x == y:
                continue
            if key == "name":
                text = "server name changed (settings and approvals keyed on it no longer apply)"
                out.append(Finding("S2", WARN, None, "/serverInfo/name", text, x, y, "server"))
            else:
                text = f"serverInfo {key} changed"
                out.append(Finding("S3", INFO, None, f"/serverInfo/{key}", text, x, y, "server"))
    pv_a, pv_b = a.get("protocolVersion"), b.get("protocolVersion")
    asked_a, asked_b = _initialize_version(old.exchanges), _initialize_version(new.exchanges)
    if pv_a and pv_b and pv_a != pv_b and asked_a == asked_b:
        # the server now answers with the version the client asked for: it caught up, which
        # breaks nobody (server-filesystem 2025.3.28 -> 2026.8.31: 2024-11-05 -> 2025-11-25)
        caught_up = asked_b is not None and pv_b == asked_b
        how = " (the version the client asked for)" if caught_up else ""
        out.append(
            Finding(
                "S4",
                INFO if caught_up else WARN,
                None,
                "/protocolVersion",
                f"the same initialize request now gets protocol version {pv_b!r}{how}, not {pv_a!r}",
                pv_a,
                pv_b,
                "server",
            )
        )
    return out


def _handshake(server: dict[str, Any]) -> bool:
    return isinstance(server.get("serverInfo"), dict) or isinstance(server.get("capabilities"), dict)


# --- capabilities ------------------------------------------------------------------------


def _declares(name: str, value: Any) -> bool:
    """Does a capability object declare anything beyond its own presence?

    A feature container (``experimental``, ``extensions``) declares its keys; a standard
    capability declares a flag that is true or a sub-capability object (``tasks.list: {}``).
    """
    if name in _FEATURE_CONTAINERS:
        return isinstance(value, dict) and bool(value)
    if isinstance(value, dict):
        return any(v is True or isinstance(v, dict) for v in value.values())
    return value is True


def _used(path: tuple[str, ...], surface: Surface) -> str | None:
    """The request (or notification) that shows the recording relied on a capability or flag."""
    methods = [ex.method for ex in surface.exchanges]
    head = path[0]

    def first(prefixes: tuple[str, ...]) -> str | None:
        return next((m for m in methods if m.startswith(prefixes)), None)

    if head in _FEATURE_CONTAINERS:
        return next((m for m in methods if not m.startswith(_STANDARD_PREFIXES)), None)
    if len(path) == 1:
        found = first(_CAPABILITY_METHODS.get(head, (head + "/",)))
        if found is None and head == "tasks":
            found = next((ex.method for ex in surface.exchanges if "task" in ex.params), None)
        return found
    flag = path[1]
    if flag == "listChanged":
        note = f"notifications/{head}/list_changed"
        return note if note in surface.notified else None
    if head == "resources" and flag == "subscribe":
        return first(("resources/subscribe", "resources/unsubscribe"))
    if head == "tasks" and flag in ("list", "cancel"):
        return first((f"tasks/{flag}",))
    if head == "tasks" and flag == "requests":
        return next((ex.method for ex in surface.exchanges if "task" in ex.params), None)
    return None


def _on(value: Any) -> bool:
    return value is True or isinstance(value, dict)


def capability_rules(old: Surface, new: Surface) -> list[Finding]:
    """C1..C4 and T6 (the ``tools`` capability removed as a whole).

    A capability removed is an ERR when clients could have used it: it declared something
    (:func:`_declares`) or the recording's client used it (:func:`_used`); otherwise INFO (an
    empty ``experimental: {}`` that older SDKs advertised and mcp 2.x does not). A flag or
    sub-capability removed (C3) is an ERR when the recording relied on it, else INFO.
    """
    a, b = old.capabilities, new.capabilities
    if a is None or b is None:
        return []
    out: list[Finding] = []
    for name in sorted(set(a) | set(b)):
        pointer = f"/capabilities/{name}"
        if name in a and name not in b:
            used = _used((name,), old)
            declared = _declares(name, a[name])
            severity = ERR if used or declared else INFO
            if used:
                why = f"the recording used it ({used})"
            elif declared:
                why = f"it declared {_short(a[name])}"
            else:
                why = "empty and unused by the recording: it enabled nothing clients relied on"
            rule = "T6" if name == "tools" else "C1"
            text = f"server no longer declares the {name!r} capability ({why})"
            out.append(Finding(rule, severity, None, pointer, text, a[name], None, "server"))
        elif name in b and name not in a:
            text = f"server now declares the {name!r} capability"
            out.append(Finding("C2", INFO, None, pointer, text, None, b[name], "server"))
        elif isinstance(a[name], dict) and isinstance(b[name], dict):
            out += _flags((name,), a[name], b[name], old)
    return out


def _flags(path: tuple[str, ...], a: dict[str, Any], b: dict[str, Any], old: Surface) -> list[Finding]:
    out: list[Finding] = []
    for key in sorted(set(a) | set(b)):
        here = (*path, key)
        before, after = a.get(key), b.get(key)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            out += _flags(here, before, after, old)
            continue
        pointer = "/capabilities/" + "/".join(here)
        dotted = ".".join(here)
        change = f"from {_short(before)} to {_short(after)}"
        if _on(before):
            used = _used(here, old)
            why = f"the recording relied on it ({used})" if used else "the recording did not rely on it"
            text = f"capability {dotted} removed or turned off, {change} ({why})"
            out.append(Finding("C3", ERR if used else INFO, None, pointer, text, before, after, "server"))
        elif _on(after):
            text = f"capability {dotted} added or turned on, {change}"
            out.append(Finding("C4", INFO, None, pointer, text, before, after, "server"))
        # false <-> absent: the same (off) on both sides
    return out


# --- tools -------------------------------------------------------------------------------

_TOOL_FIELDS = frozenset(
    {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "execution",
        "icons",
        "_meta",
    }
)
_ANNOTATION_KEYS = frozenset({"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})
_TASK_RANK = {"forbidden": 0, "optional": 1, "required": 2}


def _task_support(tool: dict[str, Any]) -> str:
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) and value in _TASK_RANK else "forbidden"


def tool_field_rules(
    name: str, a: dict[str, Any], b: dict[str, Any], exchanges: Iterable[Exchange]
) -> list[Finding]:
    """T4, T5 and T7..T11: every tool field but the schemas (I*, O*) and the hints (A*)."""
    out: list[Finding] = []
    if a.get("description") != b.get("description"):
        text = f"tool {name!r} description changed (review: descriptions steer agents)"
        out.append(
            Finding("T4", INFO, name, "/description", text, a.get("description"), b.get("description"))
        )
    ann_a = _obj(a.get("annotations"))
    ann_b = _obj(b.get("annotations"))
    for pointer, ta, tb in (
        ("/title", a.get("title"), b.get("title")),
        ("/annotations/title", ann_a.get("title"), ann_b.get("title")),
    ):
        if ta != tb:
            out.append(Finding("T5", INFO, name, pointer, f"tool {name!r} title changed", ta, tb))
    out += _task_rules(name, a, b, exchanges)
    meta_a = _obj(a.get("_meta"))
    meta_b = _obj(b.get("_meta"))
    changed = sorted(k for k in set(meta_a) | set(meta_b) if meta_a.get(k) != meta_b.get(k))
    if changed:
        text = f"tool {name!r} _meta changed at {', '.join(changed)}"
        out.append(
            Finding(
                "T9",
                INFO,
                name,
                "/_meta",
                text,
                {k: meta_a.get(k) for k in changed},
                {k: meta_b.get(k) for k in changed},
            )
        )
    if a.get("icons") != b.get("icons"):
        out.append(
            Finding(
                "T10", INFO, name, "/icons", f"tool {name!r} icons changed", a.get("icons"), b.get("icons")
            )
        )
    for key in sorted((set(a) | set(b)) - _TOOL_FIELDS):
        if a.get(key) != b.get(key):
            text = f"tool {name!r} field {key!r} changed (not classified, review)"
            out.append(Finding("T11", WARN, name, f"/{key}", text, a.get(key), b.get(key)))
    for key in sorted((set(ann_a) | set(ann_b)) - _ANNOTATION_KEYS):
        if ann_a.get(key) != ann_b.get(key):
            text = f"tool {name!r} annotation {key!r} changed (not classified, review)"
            out.append(
                Finding("T11", WARN, name, f"/annotations/{key}", text, ann_a.get(key), ann_b.get(key))
            )
    return out


def _task_rules(
    name: str, a: dict[str, Any], b: dict[str, Any], exchanges: Iterable[Exchange]
) -> list[Finding]:
    out: list[Finding] = []
    was, now = _task_support(a), _task_support(b)
    pointer = "/execution/taskSupport"
    if was != now:
        if now == "required":
            text = f"tool {name!r} now requires running as a task (clients that do not create tasks cannot call it)"
            out.append(Finding("T7", ERR, name, pointer, text, was, now))
        elif now == "forbidden":
            as_task = sum(
                1
                for ex in exchanges
                if ex.method == "tools/call" and ex.params.get("name") == name and "task" in ex.params
            )
            text = f"tool {name!r} can no longer run as a task"
            finding = Finding("T7", ERR if as_task else WARN, name, pointer, text, was, now)
            if as_task:
                finding.evidence.append(
                    f"{as_task} recorded call{'s' if as_task > 1 else ''} ran it as a task"
                )
            out.append(finding)
        else:
            out.append(
                Finding("T8", INFO, name, pointer, f"tool {name!r} task support is now {now}", was, now)
            )
    ex_a = _obj(a.get("execution"))
    ex_b = _obj(b.get("execution"))
    for key in sorted((set(ex_a) | set(ex_b)) - {"taskSupport"}):
        if ex_a.get(key) != ex_b.get(key):
            text = f"tool {name!r} execution.{key} changed (not classified, review)"
            out.append(Finding("T11", WARN, name, f"/execution/{key}", text, ex_a.get(key), ex_b.get(key)))
    return out


# --- resources and prompts ---------------------------------------------------------------

_RESOURCE_KEYS = {"resources": "uri", "resourceTemplates": "uriTemplate"}


def resource_field_rules(kind: str, key: str, a: dict[str, Any], b: dict[str, Any]) -> list[Finding]:
    """R3 (mimeType) and R4 (every other field) of one resource or template."""
    label = "resource" if kind == "resources" else "resource template"
    fkind = "resource" if kind == "resources" else "resource_template"
    out: list[Finding] = []
    for field_name in sorted((set(a) | set(b)) - {_RESOURCE_KEYS[kind]}):
        x, y = a.get(field_name), b.get(field_name)
        if x == y:
            continue
        rule, severity = ("R3", WARN) if field_name == "mimeType" else ("R4", INFO)
        out.append(
            Finding(
                rule, severity, key, f"/{field_name}", f"{label} {key!r} {field_name} changed", x, y, fkind
            )
        )
    return out


def prompt_field_rules(name: str, a: dict[str, Any], b: dict[str, Any]) -> list[Finding]:
    """P6 (the prompt's own fields but its arguments) and P7 (an argument's fields but name and required)."""
    out: list[Finding] = []
    for field_name in sorted((set(a) | set(b)) - {"name", "arguments"}):
        x, y = a.get(field_name), b.get(field_name)
        if x != y:
            text = f"prompt {name!r} {field_name} changed"
            out.append(Finding("P6", INFO, name, f"/{field_name}", text, x, y, "prompt"))
    args_a = {x["name"]: x for x in a.get("arguments") or [] if isinstance(x, dict) and "name" in x}
    args_b = {x["name"]: x for x in b.get("arguments") or [] if isinstance(x, dict) and "name" in x}
    for arg in sorted(set(args_a) & set(args_b)):
        for field_name in sorted((set(args_a[arg]) | set(args_b[arg])) - {"name", "required"}):
            x, y = args_a[arg].get(field_name), args_b[arg].get(field_name)
            if x != y:
                text = f"prompt {name!r} argument {arg!r} {field_name} changed"
                out.append(Finding("P7", INFO, name, f"/arguments/{arg}/{field_name}", text, x, y, "prompt"))
    return out
