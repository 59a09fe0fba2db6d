"""Classify drift between a baseline cassette and a candidate (``docs/drift-rules.md``, generated from ``verify/rules.py``).

Surface rules compare what each session listed (tools T*, schemas I*/O* via
:mod:`~harn_mcp_mock.verify.schema_diff`, annotations A* on their effective values after MCP's
defaults, resources and templates R*, prompts P*; server metadata S* and capabilities C*/T6 and
the fields around the schemas via :mod:`~harn_mcp_mock.verify.contract`). Behaviour rules B* pair
the baseline's client requests with the candidate's answers to the same requests (matched like
replay does: method + canonical params, ``params._meta`` ignored) and compare outcomes.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher, Pointer, drop_path, parse_pointer
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.errors import check_number
from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.verify.contract import (
    capability_rules,
    prompt_field_rules,
    resource_field_rules,
    server_rules,
    tool_field_rules,
)
from harn_mcp_mock.verify.schema_diff import diff_input_schema, diff_output_schema
from harn_mcp_mock.verify.surface import Exchange, Surface, surface_of

ERR, WARN, INFO = Severity.ERR, Severity.WARN, Severity.INFO

HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
NOT_BEHAVIOUR = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "logging/setLevel",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    }
)
READ_ONLY_METHODS = frozenset({"resources/read", "prompts/get"})
SUBJECT_KINDS = {"resources/read": "resource", "prompts/get": "prompt"}
"""What a behaviour finding is about, by the request's method (a ``tools/call`` is a tool)."""


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """How ``verify`` compares (``--ignore-path``, ``--latency-ratio``, ``--latency-floor-ms``),
    built once where input arrives and checked then: a bad number is one error naming its flag."""

    ignore_paths: tuple[str, ...] = ()
    """JSON pointers into results (``/structuredContent/datetime``) left out of B7/B9 comparisons."""
    latency_ratio: float = 2.0
    latency_floor_ms: float = 100.0

    def __post_init__(self) -> None:
        check_number("--latency-ratio", self.latency_ratio, "a ratio above 0")
        check_number(
            "--latency-floor-ms", self.latency_floor_ms, "a number of milliseconds, 0 or more", zero=True
        )
        object.__setattr__(self, "ignore_paths", tuple(self.ignore_paths))


def effective_hints(tool: dict[str, Any]) -> dict[str, bool]:
    annotations = tool.get("annotations")
    annotations = annotations if isinstance(annotations, dict) else {}
    return {
        k: bool(annotations[k]) if isinstance(annotations.get(k), bool) else v
        for k, v in HINT_DEFAULTS.items()
    }


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode() if value is not None else "none"
    return clip(text, 60)


def compare(
    base: Cassette, candidate: Cassette, options: VerifyOptions | None = None
) -> tuple[list[Finding], dict[str, int]]:
    """All findings (unfiltered) and what was compared."""
    options = options or VerifyOptions()
    old, new = surface_of(base), surface_of(candidate)
    findings: list[Finding] = []
    findings += server_rules(old, new)
    findings += capability_rules(old, new)
    findings += tool_rules(old, new)
    findings += resource_rules(old, new)
    findings += prompt_rules(old, new)
    behaviour, replayed = behaviour_rules(old, new, options)
    findings += behaviour
    compared = {
        "tools": len(old.tools()),
        "resources": len(old.items.get("resources", {})) + len(old.items.get("resourceTemplates", {})),
        "prompts": len(old.items.get("prompts", {})),
        "calls_replayed": replayed,
    }
    return findings, compared


# --- tools -------------------------------------------------------------------------------


def _semantic_hash(tool: dict[str, Any]) -> bytes:
    """The input contract without prose: what a rename keeps."""
    schema = tool.get("inputSchema")
    return canonical_bytes(_strip_prose(schema))


def _strip_prose(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_prose(v)
            for k, v in value.items()
            if k not in ("description", "title", "$comment", "examples")
        }
    if isinstance(value, list):
        return [_strip_prose(v) for v in value]
    return value


def tool_rules(old: Surface, new: Surface) -> list[Finding]:
    if "tools" not in old.listed or "tools" not in new.listed:
        return []
    before, after = old.tools(), new.tools()
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    out: list[Finding] = []
    renamed: dict[str, str] = {}
    by_hash: dict[bytes, list[str]] = defaultdict(list)
    for name in added:
        by_hash[_semantic_hash(after[name])].append(name)
    for name in removed:
        twins = by_hash.get(_semantic_hash(before[name]))
        if twins and len(twins) == 1 and twins[0] not in renamed.values():
            renamed[name] = twins[0]
    for name in removed:
        if name in renamed:
            out.append(
                Finding(
                    "T2",
                    ERR,
                    name,
                    "/name",
                    f"tool {name!r} renamed to {renamed[name]!r} (same input schema)",
                    name,
                    renamed[name],
                )
            )
        else:
            out.append(Finding("T1", ERR, name, "", f"tool {name!r} removed", name, None))
    for name in added:
        if name in renamed.values():
            continue
        hints = effective_hints(after[name])
        risky = (hints["destructiveHint"] and not hints["readOnlyHint"]) or hints["openWorldHint"]
        why = " (effectively destructive or open-world)" if risky else ""
        out.append(Finding("T3", WARN if risky else INFO, name, "", f"tool {name!r} added{why}", None, name))
    args = recorded_arguments(old.exchanges)
    results = recorded_structured(old.exchanges)
    for name in sorted(set(before) & set(after)):
        a, b = before[name], after[name]
        if canonical_bytes(a) == canonical_bytes(b):
            continue
        out += tool_field_rules(name, a, b, old.exchanges)
        out += diff_input_schema(
            name, a.get("inputSchema"), b.get("inputSchema"), recorded_args=args.get(name, [])
        )
        out += diff_output_schema(
            name, a.get("outputSchema"), b.get("outputSchema"), recorded_results=results.get(name, [])
        )
        out += annotation_rules(name, a, b)
    return out


def annotation_rules(name: str, old_tool: dict[str, Any], new_tool: dict[str, Any]) -> list[Finding]:
    a, b = effective_hints(old_tool), effective_hints(new_tool)
    out: list[Finding] = []

    def add(rule: str, severity: Severity, hint: str, text: str) -> None:
        out.append(
            Finding(rule, severity, name, f"/annotations/{hint}", f"tool {name!r}: {text}", a[hint], b[hint])
        )

    if a["readOnlyHint"] and not b["readOnlyHint"]:
        add(
            "A1",
            ERR,
            "readOnlyHint",
            "no longer read-only (clients that auto-approve reads would now run writes)",
        )
    if not a["destructiveHint"] and b["destructiveHint"] and not b["readOnlyHint"]:
        add("A2", ERR, "destructiveHint", "now destructive (confirmation policies change)")
    if a["idempotentHint"] and not b["idempotentHint"]:
        add("A3", ERR, "idempotentHint", "no longer idempotent (retrying after a timeout becomes unsafe)")
    if not a["openWorldHint"] and b["openWorldHint"]:
        add("A4", WARN, "openWorldHint", "now open-world (reaches outside systems)")
    strengthened = [
        h
        for h, (x, y) in {
            "readOnlyHint": (a["readOnlyHint"] is False, b["readOnlyHint"] is True),
            "destructiveHint": (a["destructiveHint"] is True, b["destructiveHint"] is False),
            "idempotentHint": (a["idempotentHint"] is False, b["idempotentHint"] is True),
            "openWorldHint": (a["openWorldHint"] is True, b["openWorldHint"] is False),
        }.items()
        if x and y
    ]
    for hint in strengthened:
        # INFO: a tool claiming to be safer breaks no client; a false claim would make
        # auto-approving clients trust it more, so it is flagged to verify, like T4 to review
        add(
            "A5", INFO, hint, f"{hint} claim strengthened to {b[hint]} (verify it, e.g. in a simulated world)"
        )
    return out


def recorded_arguments(exchanges: Iterable[Exchange]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for ex in exchanges:
        if ex.method == "tools/call" and isinstance(ex.params.get("arguments"), dict):
            out[str(ex.params.get("name"))].append(ex.params["arguments"])
    return out


def recorded_structured(exchanges: Iterable[Exchange]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list)
    for ex in exchanges:
        result = (ex.response or {}).get("result")
        if ex.method == "tools/call" and isinstance(result, dict) and "structuredContent" in result:
            out[str(ex.params.get("name"))].append(result["structuredContent"])
    return out


# --- resources and prompts ---------------------------------------------------------------


def resource_rules(old: Surface, new: Surface) -> list[Finding]:
    out: list[Finding] = []
    for kind, label in (("resources", "resource"), ("resourceTemplates", "resource template")):
        if kind not in old.listed or kind not in new.listed:
            continue
        before, after = old.items.get(kind, {}), new.items.get(kind, {})
        fkind = "resource" if kind == "resources" else "resource_template"
        for key in sorted(set(before) - set(after)):
            out.append(Finding("R1", ERR, key, "", f"{label} {key!r} removed", key, None, fkind))
        for key in sorted(set(after) - set(before)):
            out.append(Finding("R2", INFO, key, "", f"{label} {key!r} added", None, key, fkind))
        for key in sorted(set(before) & set(after)):
            out += resource_field_rules(kind, key, before[key], after[key])
    return out


def prompt_rules(old: Surface, new: Surface) -> list[Finding]:
    if "prompts" not in old.listed or "prompts" not in new.listed:
        return []
    before, after = old.items.get("prompts", {}), new.items.get("prompts", {})
    out: list[Finding] = []
    for name in sorted(set(before) - set(after)):
        out.append(Finding("P1", ERR, name, "", f"prompt {name!r} removed", name, None, "prompt"))
    for name in sorted(set(after) - set(before)):
        out.append(Finding("P2", INFO, name, "", f"prompt {name!r} added", None, name, "prompt"))
    for name in sorted(set(before) & set(after)):
        out += prompt_field_rules(name, before[name], after[name])
        a = {x["name"]: x for x in before[name].get("arguments") or [] if isinstance(x, dict) and "name" in x}
        b = {x["name"]: x for x in after[name].get("arguments") or [] if isinstance(x, dict) and "name" in x}
        for arg in sorted(set(a) | set(b)):
            pointer = f"/arguments/{arg}"
            was, now = bool(a.get(arg, {}).get("required")), bool(b.get(arg, {}).get("required"))
            if arg not in b:
                out.append(
                    Finding(
                        "P4",
                        WARN,
                        name,
                        pointer,
                        f"prompt {name!r} argument {arg!r} removed",
                        a[arg],
                        None,
                        "prompt",
                    )
                )
            elif arg not in a:
                rule, sev, how = ("P3", ERR, "required") if now else ("P5", INFO, "optional")
                out.append(
                    Finding(
                        rule,
                        sev,
                        name,
                        pointer,
                        f"prompt {name!r} has a new {how} argument {arg!r}",
                        None,
                        b[arg],
                        "prompt",
                    )
                )
            elif now and not was:
                out.append(
                    Finding(
                        "P3",
                        ERR,
                        name,
                        pointer,
                        f"prompt {name!r} argument {arg!r} became required",
                        False,
                        True,
                        "prompt",
                    )
                )
            elif was and not now:
                out.append(
                    Finding(
                        "P5",
                        INFO,
                        name,
                        pointer,
                        f"prompt {name!r} argument {arg!r} became optional",
                        True,
                        False,
                        "prompt",
                    )
                )
    return out


# --- behaviour ---------------------------------------------------------------------------


def _outcome(response: dict[str, Any] | None) -> tuple[str, Any]:
    """("missing" | "protocol-error" | "tool-error" | "input-required" | "success", detail).

    "input-required" is the first round of a 2026-07-28 multi-round-trip request (the server
    asks the client for sampling, elicitation or roots and hands it an opaque ``requestState``):
    not a final result, so neither its missing ``structuredContent`` nor its state is judged.
    """
    if response is None:
        return "missing", None
    if isinstance(response.get("error"), dict):
        return "protocol-error", response["error"]
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "tool-error", result
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        return "input-required", result
    return "success", result


def _error_text(kind: str, detail: Any) -> str | None:
    if kind == "protocol-error":
        return str(detail.get("message"))
    if kind == "tool-error":
        texts = [
            c.get("text")
            for c in detail.get("content") or []
            if isinstance(c, dict) and c.get("type") == "text"
        ]
        return "\n".join(str(t) for t in texts)
    return None


class _Validators:
    """jsonschema validators cached by schema, results cached by (schema, instance)."""

    def __init__(self) -> None:
        self._validators: dict[bytes, Any] = {}
        self._results: dict[tuple[bytes, bytes], str | None] = {}

    def error(self, schema: dict[str, Any], instance: Any) -> str | None:
        skey = canonical_bytes(schema)
        ikey = (skey, canonical_bytes(instance))
        if ikey in self._results:
            return self._results[ikey]
        validator = self._validators.get(skey)
        if validator is None:
            import jsonschema  # lazily: only verify pays for it

            cls = jsonschema.validators.validator_for(schema)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError:
                self._results[ikey] = None
                return None
            validator = self._validators[skey] = cls(schema)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        message = None
        if errors:
            first = errors[0]
            where = "/" + "/".join(str(p) for p in first.absolute_path)
            message = f"{where}: {clip(first.message, 120)}"
        self._results[ikey] = message
        return message


def behaviour_rules(old: Surface, new: Surface, options: VerifyOptions) -> tuple[list[Finding], int]:
    matcher = Matcher()
    candidates: dict[bytes, list[Exchange]] = defaultdict(list)
    for ex in new.exchanges:
        if ex.method not in NOT_BEHAVIOUR:
            candidates[matcher.key(ex.request)].append(ex)
    used: dict[bytes, int] = defaultdict(int)
    ignore = [parse_pointer(p) for p in options.ignore_paths]
    validators = _Validators()
    old_tools, new_tools = old.tools(), new.tools()
    findings: dict[tuple[str, str | None, str], Finding] = {}
    latencies: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    replayed = 0

    subject = ["tool"]  # the kind of what the current request is about

    def add(f: Finding) -> None:
        f.kind = subject[0]
        key = (f.rule, f.tool, f.pointer)  # one finding per rule/tool/pointer: the most severe
        if key not in findings or f.severity > findings[key].severity:
            findings[key] = f

    for ex in old.exchanges:
        if ex.method in NOT_BEHAVIOUR:
            continue
        key = matcher.key(ex.request)
        pool = candidates.get(key)
        if not pool:
            continue  # not replayed against the candidate: surface rules speak for it
        cand = pool[min(used[key], len(pool) - 1)]
        used[key] += 1
        subject[0] = SUBJECT_KINDS.get(ex.method, "tool")
        replayed += 1
        tool = (
            str(ex.params.get("name"))
            if ex.method == "tools/call"
            else ex.params.get("uri") or ex.params.get("name")
        )
        label = str(tool) if tool is not None else None
        was, was_detail = _outcome(ex.response)
        now, now_detail = _outcome(cand.response)
        where = ex.method if ex.method != "tools/call" else "tools/call"
        if was == "success" and now != "success":
            add(
                Finding(
                    "B4",
                    ERR,
                    label,
                    "",
                    f"{where} that succeeded now gives {now.replace('-', ' ')}",
                    was,
                    _error_text(now, now_detail) or now,
                )
            )
        elif was == "tool-error" and now == "protocol-error":
            add(
                Finding(
                    "B4",
                    ERR,
                    label,
                    "",
                    f"{where}: a tool error became a JSON-RPC protocol error",
                    was,
                    now_detail.get("code"),
                )
            )
        elif (
            was == "protocol-error"
            and now == "protocol-error"
            and was_detail.get("code") != now_detail.get("code")
        ):
            add(
                Finding(
                    "B4",
                    ERR,
                    label,
                    "/error/code",
                    f"{where}: JSON-RPC error code changed",
                    was_detail.get("code"),
                    now_detail.get("code"),
                )
            )
        elif was in ("tool-error", "protocol-error") and now == "success":
            add(Finding("B5", INFO, label, "", f"{where} that failed now succeeds", was, now))
        elif was == now and was in ("tool-error", "protocol-error"):
            a, b = _error_text(was, was_detail), _error_text(now, now_detail)
            if a != b:
                add(Finding("B6", INFO, label, "/error/message", f"{where}: error message changed", a, b))
        if ex.method == "tools/call" and now == "success" and isinstance(now_detail, dict):
            check_structured(
                label or "",
                was_detail if was == "success" and isinstance(was_detail, dict) else None,
                now_detail,
                old_tools.get(label or ""),
                new_tools.get(label or ""),
                validators,
                add,
            )
        if was == "success" and now == "success":
            read_only = ex.method in READ_ONLY_METHODS or (
                ex.method == "tools/call" and effective_hints(new_tools.get(label or "", {}))["readOnlyHint"]
            )
            if read_only and _comparable(was_detail, ignore) != _comparable(now_detail, ignore):
                # an open-world tool's text depends on the world (weather, search results): only
                # its structure is held to the recording, not the words of its text
                words = (
                    ex.method != "tools/call"
                    or not effective_hints(new_tools.get(label or "", {}))["openWorldHint"]
                )
                # a resource's or prompt's text is its content (a document edited between
                # releases): only a JSON text's structure is held to the recording
                prose = ex.method != "tools/call"
                add(read_only_change(where, label, was_detail, now_detail, ignore, words=words, prose=prose))
        if ex.latency_ms is not None and cand.latency_ms is not None:
            pair = latencies[(ex.method, label or "")]
            pair[0].append(ex.latency_ms)
            pair[1].append(cand.latency_ms)
    for (method, label), (a_lat, b_lat) in sorted(latencies.items()):
        subject[0] = SUBJECT_KINDS.get(method, "tool")
        f = latency_rule(method, label or None, a_lat, b_lat, options)
        if f is not None:
            add(f)
    return list(findings.values()), replayed


def check_structured(
    tool: str,
    old_result: dict[str, Any] | None,
    result: dict[str, Any],
    old_tool: dict[str, Any] | None,
    new_tool: dict[str, Any] | None,
    validators: _Validators,
    add: Any,
) -> None:
    new_schema = (new_tool or {}).get("outputSchema")
    old_schema = (old_tool or {}).get("outputSchema")
    structured = result.get("structuredContent")
    if isinstance(new_schema, dict) and "structuredContent" not in result:
        add(
            Finding(
                "B1",
                ERR,
                tool,
                "/structuredContent",
                f"tool {tool!r} declares an outputSchema but returned no structuredContent",
            )
        )
        return
    if "structuredContent" not in result:
        return
    for which, schema in (("new", new_schema), ("old", old_schema)):
        if isinstance(schema, dict):
            problem = validators.error(schema, structured)
            if problem is not None:
                add(
                    Finding(
                        "B2",
                        ERR,
                        tool,
                        f"/structuredContent{problem.split(':')[0].rstrip('/')}",
                        f"tool {tool!r} structuredContent violates the {which} outputSchema at {problem}",
                        None,
                        _short(structured),
                    )
                )
                break
    # B3 is drift: the baseline's answer to the same call mirrored its structuredContent as
    # JSON text and the candidate's does not. A server that never mirrored (the SDK's
    # MCPServer wraps a plain return value as {"result": ...} beside its str()) is unchanged.
    if old_result is not None and _mirrored(old_result) and not _mirrored(result):
        add(
            Finding(
                "B3",
                WARN,
                tool,
                "/content",
                f"tool {tool!r} returns structuredContent without the JSON text mirror in content "
                "that the baseline had",
            )
        )


def _mirrored(result: dict[str, Any]) -> bool:
    """Whether ``result`` has structuredContent and a text block holding the same JSON value."""
    if "structuredContent" not in result:
        return False
    structured = result["structuredContent"]
    for block in result.get("content") or []:
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        try:
            if orjson.loads(str(block.get("text") or "null")) == structured:
                return True
        except orjson.JSONDecodeError:
            continue
    return False


def _shape(value: Any) -> Any:
    """A JSON value's shape: its keys, array lengths and leaf types, without the leaf values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def read_only_change(
    where: str,
    label: str | None,
    was: Any,
    now: Any,
    ignore: list[Pointer],
    *,
    words: bool = True,
    prose: bool = False,
) -> Finding:
    """B7, B9 or B10 for a read-only call whose result differs.

    B9 WARN when the result's structure changed in a way a reader can trip on (a key gone, an
    array grown or shrunk, a JSON type changed) or the layout of a ``text`` in it did
    (:func:`text_layout`: its lines with times, dates, ids and numbers masked; a text holding
    JSON by that JSON's structure); the finding carries the diff as evidence. B10 INFO when the
    result only gained keys (``structuredContent`` beside the same text, a new field in a JSON
    text): only readers that reject unknown keys trip on it. B7 INFO when only values changed:
    a read-only call's answer legitimately carries volatile values (clock times, random ids,
    "created at" text) that differ on every call of an unchanged server. ``words=False`` (an
    open-world tool) compares a text's JSON structure and punctuation but not its words;
    ``prose=True`` (``resources/read``, ``prompts/get``: the text is the content) compares only
    a text that holds JSON (or stopped or started holding it).
    ``--ignore-path`` drops a volatile field from the comparison.
    """
    a, b = orjson.loads(_comparable(was, ignore)), orjson.loads(_comparable(now, ignore))
    where_differs = list(_differences(a, b))
    gained = [d for d in where_differs if d[1] and d[2] is _ABSENT]
    reshaped = [d for d in where_differs if d[1] and d[2] is not _ABSENT]
    relaid = []
    for d in where_differs:
        if d[1] or not d[0].endswith("/text") or not isinstance(d[2], str) or not isinstance(d[3], str):
            continue
        old_layout, new_layout = text_layout(d[2], words=words), text_layout(d[3], words=words)
        if old_layout == new_layout or (prose and old_layout[0] == new_layout[0] == "text"):
            continue
        if old_layout[0] == new_layout[0] == "json" and all(
            not x[1] or x[2] is _ABSENT for x in _differences(orjson.loads(d[2]), orjson.loads(d[3]))
        ):
            gained.append(d)  # a JSON text that only gained keys
        else:
            relaid.append(d)
    changed = reshaped or relaid or gained
    shown = [d[0] for d in (changed or where_differs)][:3]
    first = f" (at {', '.join(shown)}; --ignore-path for volatile fields)" if shown else ""
    if not changed:
        return Finding(
            "B7",
            INFO,
            label,
            "/result",
            f"{where} is read-only and only values in its result changed, not its structure or "
            f"layout (volatile values such as times and ids are expected){first}",
            _short(was),
            _short(now),
        )
    pointer, _, before, after = changed[0]
    if reshaped or relaid:
        what = "structure" if reshaped else "text layout"
        rule, severity, text = "B9", WARN, f"{where} is read-only but the {what} of its result changed{first}"
    else:
        rule, severity = "B10", INFO
        text = f"{where} is read-only and its result only gained keys (nothing removed or retyped){first}"
    finding = Finding(
        rule,
        severity,
        label,
        "/result",
        text,
        _short(None if before is _ABSENT else before),
        _short(None if after is _ABSENT else after),
    )
    finding.evidence += _diff_lines(pointer, before, after)
    return finding


_ABSENT: Any = object()
"""The side of a key added or removed (JSON null is a value)."""

_MASKS = (
    (
        re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s*[AaPp][Mm])?"), "<time>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}\b"), "<id>"),
    (re.compile(r"\b(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}\b"), "<id>"),
    (
        re.compile(
            r"\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Mon|Tue|Wed|Thu|Fri|Sat|Sun|January|February"
            r"|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun"
            r"|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
        ),
        "<date>",
    ),
    (re.compile(r"[-+]?\d+(?:[.,]\d+)*"), "<n>"),
)
_WORDS = re.compile(r"[^\W\d_]+(?:[ \t]+[^\W\d_]+)*")
"""A run of words (a phrase): with words masked, "Sunny" and "Partly cloudy" read the same."""


def text_layout(text: str, *, words: bool = True) -> Any:
    """What of a text a format change alters and a volatile value does not.

    A text holding a JSON object or array: the JSON's structure (keys, array lengths, types).
    Any other text: its lines, each with times, dates, day and month names, UUIDs, hex ids
    (git hashes), long random tokens and numbers masked and runs of spaces collapsed; with
    ``words=False`` the words are masked too, so only the punctuation and line layout remain.
    """
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return ("json", _shape(orjson.loads(stripped)))
        except orjson.JSONDecodeError:
            pass
    lines = []
    for line in stripped.splitlines():
        for pattern, mask in _MASKS:
            line = pattern.sub(mask, line)
        if not words:
            line = _WORDS.sub("w", line)
        lines.append(" ".join(line.split()))
    return ("text", tuple(lines))


_DIFF_LINES = 12


def _diff_lines(pointer: str, before: Any, after: Any) -> list[str]:
    """A unified diff of the changed value (a text line by line, JSON pretty-printed), clipped."""

    def lines(value: Any) -> list[str]:
        if isinstance(value, str):
            return value.splitlines()
        if value is _ABSENT:
            return []
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode().splitlines()

    diff = list(
        difflib.unified_diff(
            lines(before), lines(after), f"recorded {pointer}", f"candidate {pointer}", n=1, lineterm=""
        )
    )
    diff = diff[2:]  # the ---/+++ header: the message names the pointer
    out = [clip(line, 120) for line in diff[:_DIFF_LINES]]
    if len(diff) > _DIFF_LINES:
        out.append(f"... {len(diff) - _DIFF_LINES} more diff lines in the results")
    return out


def _comparable(result: Any, ignore: list[Pointer]) -> bytes:
    if isinstance(result, dict):
        result = {k: v for k, v in result.items() if k != "_meta"}
        for path in ignore:
            result = drop_path(result, path)
    return canonical_bytes(result)


def _differences(a: Any, b: Any, pointer: str = "") -> Iterable[tuple[str, bool, Any, Any]]:
    """Where two JSON values differ: (JSON pointer, whether the structure differs there, the two
    values there), in order."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            here = jsonptr.join(pointer, key)
            if key not in a or key not in b:
                yield here, True, a.get(key, _ABSENT), b.get(key, _ABSENT)
            else:
                yield from _differences(a[key], b[key], here)
    elif isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from _differences(x, y, f"{pointer}/{index}")
        if len(a) != len(b):
            i = min(len(a), len(b))
            yield f"{pointer}/{i}", True, a[i:], b[i:]
    elif _shape(a) != _shape(b):
        yield pointer or "/", True, a, b
    elif a != b:
        yield pointer or "/", False, a, b


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def latency_rule(
    method: str, label: str | None, old: list[float], new: list[float], options: VerifyOptions
) -> Finding | None:
    for name, q in (("p50", 0.5), ("p95", 0.95)):
        a, b = _percentile(old, q), _percentile(new, q)
        if b > a * options.latency_ratio and b - a > options.latency_floor_ms:
            return Finding(
                "B8",
                WARN,
                label,
                f"/latency/{name}",
                f"{method} {name} latency {a:.1f} ms -> {b:.1f} ms (over {options.latency_ratio:g}x and +{options.latency_floor_ms:g} ms)",
                round(a, 3),
                round(b, 3),
            )
    return None
