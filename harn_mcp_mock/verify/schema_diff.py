"""Breaking-change rules for a tool's ``inputSchema`` (I1..I19) and ``outputSchema`` (O1..O11).

The rule table is ``docs/drift-rules.md`` (from ``harn_mcp_mock/verify/rules.py``; ``harn mcp mock docs drift-rules``). The direction
principle decides everything: an input schema is a request body, so a change breaks when an
argument object that used to be valid becomes invalid (narrowing breaks); an output schema is a
response, so a change breaks when the new server may emit a value the old schema rejected
(widening breaks).

How schemas are walked
    Both schemas are walked together through ``properties``, ``patternProperties``,
    ``additionalProperties``/``unevaluatedProperties`` when they are schemas, ``items`` (schema
    and list form), ``prefixItems``/``additionalItems``, and ``anyOf``/``oneOf``/``allOf``
    members. Members are paired by structural equality first, then by the same ``$ref``,
    ``title`` or ``type``, then by order; what is left over was added or removed. Local
    ``$ref`` s (``#``, ``#/$defs/..``, ``#/definitions/..``, any local JSON pointer) are resolved
    in the schema they appear in; a pair of references already being compared higher up the
    path is not entered again, which stops recursive definitions (their changes are reported
    where the definition is first entered). Nullability is read from
    ``"null"`` in ``type``, an ``anyOf``/``oneOf`` member ``{"type": "null"}`` (which is then
    taken off; a single remaining member is merged into its parent, as is a single-member
    ``allOf``) and OpenAPI's ``nullable: true``. ``integer`` is a subset of ``number``.

Pointers
    Findings point into the tool definition along the *logical* path: through resolved
    ``$ref`` s and merged single-member wrappers, like ``jsonschema``'s
    ``absolute_schema_path``. So ``/inputSchema/properties/items/items/properties/id`` names
    the ``id`` of the objects in the ``items`` array even when those objects are a ``$ref``.
    Findings about a property itself (I1..I5, O3..O5) point at ``.../properties/<name>``; type
    and nullability findings point at ``.../type``; keyword findings at the keyword.
    Messages name the property path in dotted form, ``[]`` standing for array items, ``*``
    for additional property values and ``<anyOf[1]>`` for a union branch.
    ``old``/``new`` hold the changed keyword's values; a property added or removed holds its
    schema; a required flip holds ``"optional"``/``"required"``; type findings hold the sorted
    list of allowed types, ``"null"`` included when null is allowed (``None`` = any type).

Choices where the table has no row (they follow the direction principle; every reverse
has its own rule id, so one id never means both a narrowing and a widening)
    - Input reverses: additionalProperties opened is I20 INFO, pattern removed I21 INFO,
      format removed I22 INFO, ``default`` added I24 INFO, an ``anyOf``/``oneOf`` member
      added, an ``allOf`` member removed or a union dropped I23 INFO, a bound removed I12 INFO.
    - Input ``anyOf`` turned ``oneOf`` is I17 WARN (the reverse I23 INFO); a union introduced
      as a whole next to other keywords is I17 ERR; ``items: false`` (no more items) is I11 ERR.
    - Output narrowings the table does not list are O7 INFO: property made required, bound
      tightened or newly set, pattern or format added, additionalProperties closed, union
      branch removed, ``allOf`` member added. An output ``const`` added is O9 INFO.
    - Output widenings: additionalProperties opened is O12 ERR (unknown properties may now
      appear); pattern or format removed, format changed, ``allOf`` member removed O10 ERR;
      pattern changed O10 WARN; ``anyOf`` branch added O11 ERR like ``oneOf``; ``enum``
      dropped altogether O8 WARN (the same risk as an added value).
    - Changes of keywords this module does not model (``not``, ``if``/``then``/``else``,
      ``dependentRequired``, ``propertyNames``, ``contains``, an unresolvable ``$ref``, a
      keyword it does not know, MCP's ``x-mcp-header`` ...) are I25 WARN / O13 WARN, "not
      classified, review". Other ``x-`` keywords are vendor notes, not compared.
    - ``$schema`` changed is I27 / O14 INFO.
    - Output ``description``/``title``/``default`` changes produce no finding: no O rule
      exists for them and I19 is an input rule.
    - A recorded call the new input schema rejects where no finding covers the violated
      keyword is I26 ERR at that keyword.

Recorded evidence
    ``recorded_args`` are the ``arguments`` of recorded ``tools/call`` requests. Values are
    looked up at the finding's path (through arrays and additional properties). I2 becomes
    WARN when a recorded call already sent the key; I3, I13 and a changed pattern (I14 WARN)
    become ERR when a recorded call sent the removed key or violates the new constraint. ERR
    findings with a checkable constraint (I1, I4, I6, I8, I9, I11, I14, I16) are annotated
    the same way.

    Then recorded argument objects are validated with ``jsonschema`` against both schemas.
    For a call valid under the old schema and not the new one, each violation that no ERR
    finding covers (an ERR at the violated instance path or above it) promotes the most
    specific finding at that instance path to ERR (the one about the violated keyword, else
    the one with the longest pointer); when there is none, a new **I26** ERR is emitted at
    the violated keyword (``jsonschema``'s ``absolute_schema_path``, which is also logical).
    This costs about 0.1 ms per call, so it runs only when it can find something: when a
    non-ERR finding remains that its own check cannot settle (an I2 that calls sent, whose
    values may break the new property schema; an unclassified keyword, I6 WARN; a union
    change, I17 below ERR) and then only for calls holding a value at such a finding's path;
    or, for all calls, when a recursive definition or a schema deeper than 64 levels was
    cut short. Every other change is either a widening, which cannot invalidate a call, or
    was checked call by call above.

    Evidence lists at most 3 calls (1-based numbers in ``recorded_args``, values cut to 60
    characters); the message gives the count. ``recorded_results`` (recorded
    ``structuredContent``) only annotate O1, O3, O4 and O8 with how many results carry the
    value; they never change a severity.

Findings are sorted by (pointer, rule) and unique per (rule, pointer). Equal schemas (same
canonical JSON) return ``[]`` before anything else is done.
"""

from __future__ import annotations

import importlib
import json
import operator
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

import orjson

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip

__all__ = ["diff_input_schema", "diff_output_schema"]

ERR, WARN, INFO = Severity.ERR, Severity.WARN, Severity.INFO

_ITEM = -1
"""Instance-path segment: any array item."""
_VALUE = -2
"""Instance-path segment: the value of any additional (or pattern) property."""
_IPath = tuple[str | int, ...]
_Check = Callable[[Any], str | None]

_MAX_DEPTH = 64
_MAX_EXPAND = 32
_MAX_EVIDENCE = 3
_EVIDENCE_WIDTH = 60

_ANNOTATIONS = frozenset(
    "title description default examples $comment deprecated readOnly writeOnly"
    " $schema $id $anchor $dynamicAnchor $vocabulary $defs definitions nullable".split()
)
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_OPAQUE = tuple(
    "$ref $dynamicRef $recursiveRef not if then else dependentRequired dependentSchemas dependencies"
    " propertyNames contains unevaluatedItems contentEncoding contentMediaType contentSchema".split()
)
_BOUNDS = (*_UPPER, *_LOWER, "multipleOf", "uniqueItems")
_UNIONS = ("anyOf", "oneOf")
_MODELLED = frozenset(
    (
        *_ANNOTATIONS,
        *_BOUNDS,
        *_OPAQUE,
        *"type enum const properties required additionalProperties unevaluatedProperties".split(),
        *"patternProperties items prefixItems additionalItems pattern format allOf anyOf oneOf".split(),
    )
)
"""Every keyword this module reads (classified, annotation, or opaque: I25/O13 on change)."""
_EXTENSIONS_COMPARED = frozenset({"x-mcp-header"})
"""``x-`` keywords that change what a client sends (MCP's 2026-07-28 ``Mcp-Param-*`` headers);
other ``x-`` keywords are vendor notes and are not compared."""
_REFS = re.compile(rb'"\$ref":"((?:[^"\\]|\\.)*)"')
_MISSING: Any = object()


# --------------------------------------------------------------------------- public API


def diff_input_schema(
    tool: str,
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    *,
    recorded_args: Sequence[dict[str, Any]] = (),
) -> list[Finding]:
    """Findings I1..I19 for ``tool``'s inputSchema; a missing schema counts as ``{"type": "object"}``."""
    old_schema: Any = {"type": "object"} if old is None else old
    new_schema: Any = {"type": "object"} if new is None else new
    if _canon(old_schema) == _canon(new_schema):
        return []
    differ = _Differ(tool, "input", old_schema, new_schema)
    differ.compare(old_schema, new_schema, _At("/inputSchema"), 0)
    if recorded_args:
        calls = _Distinct(recorded_args)
        _input_evidence(differ, calls)
        risky = [hit.ipath for hit in differ.hits.values() if _may_invalidate(hit)]
        if differ.cut or risky:
            _promote_invalid(differ, old_schema, new_schema, calls, None if differ.cut else risky)
    return differ.findings()


def diff_output_schema(
    tool: str,
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    *,
    recorded_results: Sequence[Any] = (),
) -> list[Finding]:
    """Findings O1..O11 for ``tool``'s outputSchema (``None`` = no outputSchema declared)."""
    if old is None and new is None:
        return []
    if new is None:
        finding = Finding("O1", ERR, tool, "/outputSchema", "outputSchema removed", old=old)
        if recorded_results:
            n = len(recorded_results)
            finding.evidence.append(f"{n} recorded result{'' if n == 1 else 's'} carried structuredContent")
        return [finding]
    if old is None:
        return [Finding("O2", INFO, tool, "/outputSchema", "outputSchema added", new=new)]
    if _canon(old) == _canon(new):
        return []
    differ = _Differ(tool, "output", old, new)
    differ.compare(old, new, _At("/outputSchema"), 0)
    if recorded_results:
        _output_evidence(differ, recorded_results)
    return differ.findings()


# --------------------------------------------------------------------------- walking


def _canon(value: Any) -> bytes:
    """Canonical JSON, falling back to the slower stdlib for what orjson refuses (integers over 64 bits)."""
    try:
        return canonical_bytes(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()


_esc = jsonptr.escape


@dataclass(frozen=True, slots=True)
class _At:
    """Where the walk is: logical pointer, instance path and the dotted label for messages."""

    pointer: str
    ipath: _IPath = ()
    label: str = ""

    def key(self, *parts: str | int) -> str:
        return self.pointer + "".join("/" + _esc(p) for p in parts)

    def prop(self, name: str) -> _At:
        return _At(
            self.key("properties", name), (*self.ipath, name), f"{self.label}.{name}" if self.label else name
        )

    def down(self, pointer: str, segment: str | int | None, label: str) -> _At:
        ipath = self.ipath if segment is None else (*self.ipath, segment)
        return _At(pointer, ipath, self.label + label if self.label else label.removeprefix("."))


@dataclass(slots=True)
class _Hit:
    finding: Finding
    ipath: _IPath
    check: _Check | None = None
    on_parent: bool = False
    """Run ``check`` on the object holding the property (for "required" checks)."""
    keyword: str = ""


@dataclass(slots=True)
class _Node:
    raw: dict[str, Any]
    refs: tuple[str, ...] = ()
    null_branch: bool = False


def _as_schema(value: Any) -> dict[str, Any]:
    if value is False:
        return {"type": []}
    if isinstance(value, dict):
        return value
    return {}


def _lookup(root: Any, ref: str) -> Any:
    if not ref.startswith("#"):
        return _MISSING
    pointer = unquote(ref[1:])
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return _MISSING  # plain-name anchors are not resolved
    cur = root
    for raw_seg in pointer[1:].split("/"):
        seg = jsonptr.unescape(raw_seg)
        if isinstance(cur, dict) and seg in cur:
            cur = cur[seg]
        elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur):
            cur = cur[int(seg)]
        else:
            return _MISSING
    return cur


def _is_null_schema(member: Any) -> bool:
    if not isinstance(member, dict) or member.get("type") not in ("null", ["null"]):
        return False
    return all(k == "type" or k in _ANNOTATIONS for k in member)


def _expand(value: Any, root: Any) -> _Node:
    """Resolve local ``$ref`` s, take null members off unions and merge single-member wrappers."""
    raw = _as_schema(value)
    refs: list[str] = []
    null_branch = False
    for _ in range(_MAX_EXPAND):
        changed = False
        ref = raw.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            target = _lookup(root, ref)
            if target is not _MISSING:
                refs.append(ref)
                raw = {**_as_schema(target), **{k: v for k, v in raw.items() if k != "$ref"}}
                changed = True
        present = [kw for kw in ("anyOf", "oneOf", "allOf") if isinstance(raw.get(kw), list)]
        for kw in present:
            members = raw[kw]
            kept = members if kw == "allOf" else [m for m in members if not _is_null_schema(m)]
            if len(kept) != len(members):
                null_branch = True
            siblings = {k: v for k, v in raw.items() if k != kw}
            if len(present) == 1 and len(kept) == 1:
                raw = {**_as_schema(kept[0]), **siblings}
                changed = True
            elif not kept and members:
                raw = {**siblings, "type": "null"}
            elif len(kept) != len(members):
                raw = {**siblings, kw: kept}
        if not changed:
            break
    return _Node(raw, tuple(refs), null_branch)


def _types(raw: dict[str, Any]) -> frozenset[str] | None:
    """The non-null types a schema allows; ``None`` when ``type`` is not constrained."""
    t = raw.get("type")
    if isinstance(t, str):
        return frozenset({t} - {"null"})
    if isinstance(t, list):
        return frozenset(x for x in t if isinstance(x, str) and x != "null")
    return None


def _null_state(node: _Node, root: Any) -> bool | None:
    """True/False when the schema says whether null is allowed; None when it does not say."""
    if node.null_branch:
        return True
    raw = node.raw
    t = raw.get("type")
    if isinstance(t, str | list):
        return "null" in (t if isinstance(t, list) else [t]) or raw.get("nullable") is True
    for kw in _UNIONS:
        members = raw.get(kw)
        if isinstance(members, list) and members:
            states: list[bool | None] = []
            for member in members:
                inner = _expand(member, root)
                mt = inner.raw.get("type")
                if inner.null_branch:
                    states.append(True)
                elif isinstance(mt, str | list):
                    states.append("null" in (mt if isinstance(mt, list) else [mt]))
                else:
                    states.append(None)
            if any(s is True for s in states):
                return True
            if all(s is False for s in states):
                return False
            return None
    return None


def _type_value(raw: dict[str, Any], null: bool | None) -> list[str] | None:
    types = _types(raw)
    if types is None:
        return None
    return sorted(types | ({"null"} if null else set()))


def _accepts(types: frozenset[str], t: str) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _fmt_types(types: frozenset[str] | None) -> str:
    if types is None:
        return "any"
    return "|".join(sorted(types)) if types else "none"


def _short(value: Any, width: int = _EVIDENCE_WIDTH) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return clip(text, width)


def _is_validating(key: str) -> bool:
    return key not in _ANNOTATIONS and not key.startswith("x-")


def _split(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(annotations only, validation core without null) of a schema lifted into a one-member union."""
    notes = {k: v for k, v in raw.items() if not _is_validating(k)}
    core = {k: v for k, v in raw.items() if _is_validating(k)}
    t = core.get("type")
    if isinstance(t, list) and "null" in t:
        rest = [x for x in t if x != "null"]
        core["type"] = rest[0] if len(rest) == 1 else rest
    return notes, core


def _lift(old: dict[str, Any], new: dict[str, Any]) -> tuple[Literal["old", "new"], str] | None:
    """A union on one side only, whose schema is nothing but that union: compare the other side as one member."""
    for kw in ("anyOf", "oneOf", "allOf"):
        o_has, n_has = isinstance(old.get(kw), list), isinstance(new.get(kw), list)
        if o_has == n_has:
            continue
        union = old if o_has else new
        other = new if o_has else old
        if any(isinstance(other.get(k), list) for k in ("anyOf", "oneOf", "allOf")):
            return None
        if all(k == kw or not _is_validating(k) for k in union):
            return ("new" if o_has else "old", kw)
        return None
    return None


def _closed(raw: dict[str, Any], name: str) -> bool:
    """Does this object schema reject ``name`` as an unknown property?"""
    if raw.get("additionalProperties") is not False and raw.get("unevaluatedProperties") is not False:
        return False
    patterns = raw.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern in patterns:
            try:
                if re.search(pattern, name):
                    return False
            except re.error:
                continue
    return True


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_multiple(value: float, of: float) -> bool:
    if of == 0:
        return False
    quotient = value / of
    return abs(quotient - round(quotient)) < 1e-9


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_COMPARED: dict[str, Callable[[Any, Any], bool]] = {
    "maximum": operator.gt,
    "exclusiveMaximum": operator.ge,
    "minimum": operator.lt,
    "exclusiveMinimum": operator.le,
}
_SIZED: dict[str, type] = {
    "maxLength": str,
    "minLength": str,
    "maxItems": list,
    "minItems": list,
    "maxProperties": dict,
    "minProperties": dict,
}


def _bound_check(keyword: str, bound: Any) -> _Check | None:
    """A function telling why a value breaks ``keyword: bound`` (None when it does not), if we can tell."""
    if keyword in _COMPARED and _num(bound):
        broken = _COMPARED[keyword]

        def compared(value: Any) -> str | None:
            return f"{keyword} {bound}" if _num(value) and broken(value, bound) else None

        return compared
    if keyword == "multipleOf" and _num(bound):

        def multiple(value: Any) -> str | None:
            return f"not a multiple of {bound}" if _num(value) and not _is_multiple(value, bound) else None

        return multiple
    if keyword in _SIZED and _num(bound):
        kind, is_max = _SIZED[keyword], keyword.startswith("max")

        def sized(value: Any) -> str | None:
            if not isinstance(value, str | list | dict) or not isinstance(value, kind):
                return None
            size = len(value)
            return f"size {size}, {keyword} {bound}" if (size > bound if is_max else size < bound) else None

        return sized
    if keyword == "uniqueItems":

        def unique(value: Any) -> str | None:
            if isinstance(value, list) and len({_canon(v) for v in value}) < len(value):
                return "duplicate items"
            return None

        return unique
    if keyword == "pattern" and isinstance(bound, str):

        def matches(value: Any) -> str | None:
            if not isinstance(value, str):
                return None
            try:
                return None if re.search(bound, value) else f"does not match {bound!r}"
            except re.error:
                return None

        return matches
    return None


def _type_check(types: frozenset[str]) -> _Check:
    def check(value: Any) -> str | None:
        actual = _json_type(value)
        if actual == "null" or _accepts(types, actual):
            return None
        return f"{actual}, not {_fmt_types(types)}"

    return check


def _null_check(value: Any) -> str | None:
    return "null not allowed" if value is None else None


def _values_check(allowed: list[Any]) -> _Check:
    keys = {_canon(v) for v in allowed}

    def check(value: Any) -> str | None:
        return None if _canon(value) in keys else "not an allowed value"

    return check


def _present_check(value: Any) -> str | None:
    return "sent"


def _required_check(name: str) -> _Check:
    def check(value: Any) -> str | None:
        return f"no {name!r}" if isinstance(value, dict) and name not in value else None

    return check


def _closed_check(raw: dict[str, Any]) -> _Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        declared = _sub(raw, "properties")
        extra = sorted(k for k in value if k not in declared and _closed(raw, k))
        return "unknown " + ", ".join(repr(k) for k in extra) if extra else None

    return check


class _Differ:
    """Walks an old and a new schema together and collects hits, one per (rule, pointer)."""

    def __init__(self, tool: str, side: Literal["input", "output"], old_root: Any, new_root: Any) -> None:
        self.tool = tool
        self.side = side
        self.inp = side == "input"
        self.old_root = old_root
        self.new_root = new_root
        self.hits: dict[tuple[str, str], _Hit] = {}
        self._active: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
        self.cut = False
        """Was a recursive definition or a very deep schema left unwalked somewhere?"""
        self._same: dict[bytes, bool] = {}

    # -- findings

    def emit(
        self,
        which: tuple[str, Severity],
        at: _At,
        keyword: str | tuple[str | int, ...] | None,
        text: str,
        old: Any = None,
        new: Any = None,
        *,
        check: _Check | None = None,
        on_parent: bool = False,
    ) -> None:
        """One finding at ``at`` (or at its ``keyword``); the stronger one wins a (rule, pointer) clash."""
        rule, severity = which
        parts = (keyword,) if isinstance(keyword, str) else keyword or ()
        pointer = at.key(*parts)
        subject = f"{self.side} property '{at.label}'" if at.label else f"{self.side} schema"
        finding = Finding(rule, severity, self.tool, pointer, f"{subject} {text}", old=old, new=new)
        previous = self.hits.get((rule, pointer))
        if previous is None or previous.finding.severity < severity:
            self.hits[(rule, pointer)] = _Hit(
                finding, at.ipath, check, on_parent, keyword if isinstance(keyword, str) else ""
            )

    def by(self, if_input: tuple[str, Severity], if_output: tuple[str, Severity]) -> tuple[str, Severity]:
        return if_input if self.inp else if_output

    def findings(self) -> list[Finding]:
        return sorted((hit.finding for hit in self.hits.values()), key=lambda f: (f.pointer, f.rule))

    def _same_target(self, ref: bytes) -> bool:
        """Does a ``$ref`` lead to the same content in both schemas, and so do all refs reachable from it?"""
        known = self._same.get(ref)
        if known is not None:
            return known
        stack, seen, same = [ref], {ref}, True
        while stack and same:
            text = orjson.loads(b'"' + stack.pop() + b'"')
            old, new = _lookup(self.old_root, text), _lookup(self.new_root, text)
            if old is _MISSING or new is _MISSING:
                same = old is new  # the same unresolvable ref on both sides is the same
                continue
            old_bytes = _canon(old)
            same = old_bytes == _canon(new)
            for nested in _REFS.findall(old_bytes):
                if nested not in seen:
                    seen.add(nested)
                    stack.append(nested)
        self._same[ref] = same
        return same

    # -- the walk

    def compare(self, old: Any, new: Any, at: _At, depth: int, *, annotations: bool = True) -> None:
        if old is new:
            return
        if depth > _MAX_DEPTH:
            self.cut = True
            return
        old_bytes = _canon(old)
        if old_bytes == _canon(new) and all(self._same_target(ref) for ref in _REFS.findall(old_bytes)):
            return
        o, n = _expand(old, self.old_root), _expand(new, self.new_root)
        key = (o.refs, n.refs)
        guarded = bool(o.refs or n.refs)
        if guarded:
            if key in self._active:
                self.cut = True  # this pair of definitions is being compared further up: a recursive schema
                return
            self._active.add(key)
        try:
            self._nodes(o, n, at, depth, annotations)
        finally:
            if guarded:
                self._active.discard(key)

    def _nodes(self, o: _Node, n: _Node, at: _At, depth: int, annotations: bool) -> None:
        o_null, n_null = _null_state(o, self.old_root), _null_state(n, self.new_root)
        oraw, nraw = o.raw, n.raw
        lifted: _Lifted | None = None
        lift = _lift(oraw, nraw)
        if lift is not None:
            side, kw = lift
            if side == "old":
                oraw, core = _split(oraw)
                ref = o.refs[0] if o.refs else None
            else:
                nraw, core = _split(nraw)
                ref = n.refs[0] if n.refs else None
            lifted = _Lifted(side, kw, _Member(core, (), ref, type=core.get("type"), lifted=True))
        if annotations:
            self._annotations(oraw, nraw, at)
        self._type(oraw, nraw, o_null, n_null, at)
        self._values(oraw, nraw, at)
        keys = oraw.keys() | nraw.keys()
        if not keys.isdisjoint(_BOUNDS):
            self._bounds(oraw, nraw, at)
        if "pattern" in keys or "format" in keys:
            self._strings(oraw, nraw, at)
        self._object(oraw, nraw, at, depth)
        self._array(oraw, nraw, at, depth)
        self._unions(oraw, nraw, at, depth, lifted)
        if not keys.isdisjoint(_OPAQUE):
            self._opaque(oraw, nraw, at)
        unknown = [k for k in keys - _MODELLED if not k.startswith("x-") or k in _EXTENSIONS_COMPARED]
        if unknown:
            self._opaque(oraw, nraw, at, tuple(sorted(unknown)))

    def _annotations(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        if old.get("$schema") != new.get("$schema"):
            # the dialect named: validators pick their rules by it, yet MCP clients treat every
            # schema as 2020-12 (or draft-07), so a changed $schema alone breaks no caller
            text = (
                f"$schema changed from {_short(old.get('$schema'), 60)} to {_short(new.get('$schema'), 60)}"
            )
            self.emit(
                self.by(("I27", INFO), ("O14", INFO)),
                at,
                "$schema",
                text,
                old.get("$schema"),
                new.get("$schema"),
            )
        if not self.inp:
            return
        for kw in ("description", "title"):
            if old.get(kw) != new.get(kw):
                self.emit(("I19", INFO), at, kw, f"{kw} changed", old.get(kw), new.get(kw))
        od, nd = old.get("default", _MISSING), new.get("default", _MISSING)
        if od is _MISSING and nd is _MISSING:
            return
        if od is _MISSING:
            self.emit(("I24", INFO), at, "default", f"default added: {_short(nd, 40)}", None, nd)
        elif nd is _MISSING:
            self.emit(("I18", WARN), at, "default", f"default removed (was {_short(od, 40)})", od, None)
        elif _canon(od) != _canon(nd):
            text = f"default changed from {_short(od, 40)} to {_short(nd, 40)}"
            self.emit(("I18", WARN), at, "default", text, od, nd)

    def _type(
        self, old: dict[str, Any], new: dict[str, Any], o_null: bool | None, n_null: bool | None, at: _At
    ) -> None:
        ot, nt = _types(old), _types(new)
        ov, nv = _type_value(old, o_null), _type_value(new, n_null)
        if ot != nt:
            if ot is None or nt is None:
                narrowed, widened = ot is None, nt is None
            else:
                narrowed = any(not _accepts(nt, t) for t in ot)
                widened = any(not _accepts(ot, t) for t in nt)
            check = None if nt is None else _type_check(nt)
            if narrowed and widened:
                which, verb = self.by(("I6", ERR), ("O6", ERR)), "changed"
            elif narrowed:
                which, verb = self.by(("I6", ERR), ("O7", INFO)), "narrowed"
            else:
                which, verb, check = self.by(("I7", INFO), ("O6", ERR)), "widened", None
            if narrowed or widened:
                text = f"type {verb} from {_fmt_types(ot)} to {_fmt_types(nt)}"
                self.emit(which, at, "type", text, ov, nv, check=check)
        if o_null is None or n_null is None or o_null == n_null:
            return
        if o_null:
            which = self.by(("I8", ERR), ("O7", INFO))
            self.emit(which, at, "type", "no longer accepts null", ov, nv, check=_null_check)
        else:
            self.emit(
                self.by(("I7", INFO), ("O6", ERR)), at, "type", "now accepts null (became nullable)", ov, nv
            )

    def _values(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        """``enum`` and ``const`` together: both restrict the allowed values."""
        ov, nv = _allowed(old), _allowed(new)
        if ov is None and nv is None:
            return
        o_kw = "const" if "const" in old else "enum"
        n_kw = "const" if "const" in new else "enum"
        o_shown, n_shown = old.get(o_kw), new.get(n_kw)
        if nv is None:
            text = f"{o_kw} removed"
            if self.inp:
                self.emit(("I10", INFO), at, o_kw, text, o_shown)
            elif o_kw == "const":
                self.emit(("O11", ERR), at, o_kw, text, o_shown)
            else:
                self.emit(("O8", WARN), at, o_kw, text + " (any value may now appear)", o_shown)
            return
        check = _values_check(nv) if self.inp else None
        if ov is None:
            text = (
                f"enum introduced: {_values_text(nv)}"
                if n_kw == "enum"
                else f"const added: {_short(nv[0], 40)}"
            )
            self.emit(self.by(("I9", ERR), ("O9", INFO)), at, n_kw, text, None, n_shown, check=check)
            return
        if o_kw == n_kw == "const":
            text = f"const changed from {_short(ov[0], 40)} to {_short(nv[0], 40)}"
            self.emit(self.by(("I9", ERR), ("O11", ERR)), at, n_kw, text, ov[0], nv[0], check=check)
            return
        o_keys, n_keys = {_canon(v) for v in ov}, {_canon(v) for v in nv}
        removed = [v for v in ov if _canon(v) not in n_keys]
        added = [v for v in nv if _canon(v) not in o_keys]
        what = "enum" if n_kw == "enum" else "allowed"
        if removed:
            text = f"{what} values removed: {_values_text(removed)}"
            self.emit(self.by(("I9", ERR), ("O9", INFO)), at, n_kw, text, o_shown, n_shown, check=check)
        if added:
            text = f"{what} values added: {_values_text(added)}"
            if self.inp:
                self.emit(("I10", INFO), at, n_kw, text, o_shown, n_shown)
            elif o_kw == "const":
                self.emit(("O11", ERR), at, o_kw, f"const removed, {text}", o_shown, n_shown)
            else:
                self.emit(("O8", WARN), at, n_kw, text, o_shown, n_shown)

    def _bounds(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        for kw in _BOUNDS:
            ov, nv = old.get(kw), new.get(kw)
            if kw == "uniqueItems":
                ov, nv = (True if ov is True else None), (True if nv is True else None)
            if ov == nv:
                continue
            change = _bound_change(kw, ov, nv)
            if change is None:
                continue
            check = _bound_check(kw, nv) if self.inp else None
            if change == "set":
                text = f"{kw} newly set to {_short(nv, 40)}"
                self.emit(self.by(("I13", WARN), ("O7", INFO)), at, kw, text, ov, nv, check=check)
            elif change == "tighter":
                text = f"{kw} tightened from {_short(ov, 40)} to {_short(nv, 40)}"
                self.emit(self.by(("I11", ERR), ("O7", INFO)), at, kw, text, ov, nv, check=check)
            elif change == "looser":
                text = f"{kw} loosened from {_short(ov, 40)} to {_short(nv, 40)}"
                self.emit(self.by(("I12", INFO), ("O10", ERR)), at, kw, text, ov, nv)
            else:
                text = f"{kw} removed (was {_short(ov, 40)})"
                self.emit(self.by(("I12", INFO), ("O10", ERR)), at, kw, text, ov, nv)

    def _strings(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        op, np_ = old.get("pattern"), new.get("pattern")
        if op != np_:
            check = _bound_check("pattern", np_) if self.inp else None
            if op is None:
                which, text = self.by(("I14", ERR), ("O7", INFO)), f"pattern added: {np_!r}"
            elif np_ is None:
                which, text = self.by(("I21", INFO), ("O10", ERR)), f"pattern removed (was {op!r})"
            else:
                which, text = self.by(("I14", WARN), ("O10", WARN)), f"pattern changed from {op!r} to {np_!r}"
            self.emit(which, at, "pattern", text, op, np_, check=check)
        of, nf = old.get("format"), new.get("format")
        if of != nf:
            if of is None:
                which, text = self.by(("I15", ERR), ("O7", INFO)), f"format added: {nf!r}"
            elif nf is None:
                which, text = self.by(("I22", INFO), ("O10", ERR)), f"format removed (was {of!r})"
            else:
                which, text = self.by(("I15", ERR), ("O10", ERR)), f"format changed from {of!r} to {nf!r}"
            self.emit(which, at, "format", text, of, nf)

    def _object(self, old: dict[str, Any], new: dict[str, Any], at: _At, depth: int) -> None:
        o_props, n_props = _sub(old, "properties"), _sub(new, "properties")
        o_req, n_req = _required(old), _required(new)
        for name in sorted(set(o_props) | set(n_props) | o_req | n_req):
            child = at.prop(name)
            o_schema, n_schema = o_props.get(name), n_props.get(name)
            if name not in o_props and name not in o_req:
                self._added(old, name, child, n_schema, name in n_req)
                continue
            if name not in n_props and name not in n_req and (name in o_props or _closed(new, name)):
                self._removed(new, name, child, o_schema, name in o_req)
                continue
            if name in o_req and name not in n_req:
                self.emit(
                    self.by(("I5", INFO), ("O3", ERR)), child, None, "became optional", "required", "optional"
                )
            elif name in n_req and name not in o_req:
                which, check = self.by(("I4", ERR), ("O7", INFO)), _required_check(name) if self.inp else None
                self.emit(
                    which, child, None, "became required", "optional", "required", check=check, on_parent=True
                )
            if o_schema is not None or n_schema is not None:
                self.compare(
                    {} if o_schema is None else o_schema,
                    {} if n_schema is None else n_schema,
                    child,
                    depth + 1,
                )
        self._additional(old, new, at, depth)
        o_pat, n_pat = _sub(old, "patternProperties"), _sub(new, "patternProperties")
        for pattern in sorted(set(o_pat) | set(n_pat)):
            child = at.down(at.key("patternProperties", pattern), _VALUE, f".<{pattern}>")
            self.compare(o_pat.get(pattern, {}), n_pat.get(pattern, {}), child, depth + 1)

    def _added(self, old: dict[str, Any], name: str, at: _At, schema: Any, required: bool) -> None:
        if self.inp and required:
            self.emit(
                ("I1", ERR),
                at,
                None,
                "added as required",
                None,
                schema,
                check=_required_check(name),
                on_parent=True,
            )
        elif self.inp:
            self.emit(("I2", INFO), at, None, "added (optional)", None, schema, check=_present_check)
        elif _closed(old, name):
            self.emit(
                ("O5", ERR), at, None, "added where the old schema forbade unknown properties", None, schema
            )
        else:
            self.emit(("O5", INFO), at, None, "added" + (" as required" if required else ""), None, schema)

    def _removed(self, new: dict[str, Any], name: str, at: _At, schema: Any, was_required: bool) -> None:
        if self.inp and _closed(new, name):
            text = "removed, and the schema now rejects it as an unknown property"
            self.emit(("I3", ERR), at, None, text, schema, None, check=_present_check)
        elif self.inp:
            self.emit(("I3", WARN), at, None, "removed", schema, None, check=_present_check)
        elif was_required:
            self.emit(("O3", ERR), at, None, "removed (was required)", schema, None)
        else:
            self.emit(("O4", WARN), at, None, "removed (was optional)", schema, None)

    def _additional(self, old: dict[str, Any], new: dict[str, Any], at: _At, depth: int) -> None:
        for kw in ("additionalProperties", "unevaluatedProperties"):
            ov, nv = old.get(kw, _MISSING), new.get(kw, _MISSING)
            if ov is _MISSING and nv is _MISSING:
                continue
            o_closed, n_closed = ov is False, nv is False
            if kw == "unevaluatedProperties" and (ov is _MISSING) != (nv is _MISSING):
                # unevaluatedProperties added (with any schema but true) closes the object
                o_closed, n_closed = ov not in (_MISSING, True), nv not in (_MISSING, True)
                if o_closed == n_closed:
                    continue
            shown_old, shown_new = (None if ov is _MISSING else ov), (None if nv is _MISSING else nv)
            if n_closed and not o_closed:
                text = (
                    "additionalProperties closed"
                    if kw == "additionalProperties"
                    else "unevaluatedProperties added"
                )
                check = _closed_check(new) if self.inp else None
                self.emit(
                    self.by(("I16", ERR), ("O7", INFO)), at, kw, text, shown_old, shown_new, check=check
                )
            elif o_closed and not n_closed:
                text = (
                    "additionalProperties opened"
                    if kw == "additionalProperties"
                    else "unevaluatedProperties removed"
                )
                text += " (unknown properties now allowed)"
                self.emit(self.by(("I20", INFO), ("O12", ERR)), at, kw, text, shown_old, shown_new)
            elif not o_closed and not n_closed:
                child = at.down(at.key(kw), _VALUE, ".*")
                self.compare({} if ov is _MISSING else ov, {} if nv is _MISSING else nv, child, depth + 1)

    def _array(self, old: dict[str, Any], new: dict[str, Any], at: _At, depth: int) -> None:
        o_pre, o_pre_kw, o_rest, o_rest_kw = _items(old)
        n_pre, n_pre_kw, n_rest, n_rest_kw = _items(new)
        for i in range(max(len(o_pre), len(n_pre))):
            o_item = o_pre[i] if i < len(o_pre) else o_rest
            n_item = n_pre[i] if i < len(n_pre) else n_rest
            if o_item is _MISSING and n_item is _MISSING:
                continue
            child = at.down(at.key(n_pre_kw, i) if i < len(n_pre) else at.key(o_pre_kw, i), _ITEM, f"[{i}]")
            self.compare(
                {} if o_item is _MISSING else o_item, {} if n_item is _MISSING else n_item, child, depth + 1
            )
        if o_rest is _MISSING and n_rest is _MISSING:
            return
        rest_kw = n_rest_kw if n_rest is not _MISSING else o_rest_kw
        if o_rest is False or n_rest is False:
            shown_old, shown_new = (
                (None if o_rest is _MISSING else o_rest),
                (None if n_rest is _MISSING else n_rest),
            )
            if n_rest is False and o_rest is not False:
                text = f"no longer accepts items beyond the first {len(n_pre)}"
                self.emit(self.by(("I11", ERR), ("O7", INFO)), at, rest_kw, text, shown_old, shown_new)
            elif o_rest is False and n_rest is not False:
                text = f"now accepts items beyond the first {len(o_pre)}"
                self.emit(self.by(("I12", INFO), ("O10", ERR)), at, rest_kw, text, shown_old, shown_new)
            return
        child = at.down(at.key(rest_kw), _ITEM, "[]")
        self.compare(
            {} if o_rest is _MISSING else o_rest, {} if n_rest is _MISSING else n_rest, child, depth + 1
        )

    def _unions(
        self, old: dict[str, Any], new: dict[str, Any], at: _At, depth: int, lifted: _Lifted | None
    ) -> None:
        handled: set[str] = set()
        if lifted is not None:
            kw = lifted.keyword
            if lifted.side == "old":
                self._members(kw, kw, [lifted.member], self._listed(new, kw, self.new_root), at, depth)
            else:
                self._members(kw, kw, self._listed(old, kw, self.old_root), [lifted.member], at, depth)
            handled.add(kw)
        o_kind = [kw for kw in _UNIONS if isinstance(old.get(kw), list)]
        n_kind = [kw for kw in _UNIONS if isinstance(new.get(kw), list)]
        if len(o_kind) == len(n_kind) == 1 and o_kind != n_kind and not handled:
            ok, nk = o_kind[0], n_kind[0]
            narrowing = nk == "oneOf"  # oneOf also rejects values that match several branches
            which = self.by(
                ("I17", WARN) if narrowing else ("I23", INFO), ("O7", INFO) if narrowing else ("O11", WARN)
            )
            self.emit(which, at, nk, f"{ok} became {nk}", old[ok], new[nk])
            self._members(
                ok, nk, self._listed(old, ok, self.old_root), self._listed(new, nk, self.new_root), at, depth
            )
            handled.update(_UNIONS)
        for kw in ("anyOf", "oneOf", "allOf"):
            if kw in handled:
                continue
            o_has, n_has = isinstance(old.get(kw), list), isinstance(new.get(kw), list)
            if o_has and n_has:
                self._members(
                    kw,
                    kw,
                    self._listed(old, kw, self.old_root),
                    self._listed(new, kw, self.new_root),
                    at,
                    depth,
                )
            elif o_has or n_has:
                # a union introduced or dropped beside other keywords narrows or widens as a whole
                text = f"{kw} {'introduced' if n_has else 'removed'}"
                if n_has:
                    which = self.by(("I17", ERR), ("O7", INFO))
                else:
                    which = self.by(("I23", INFO), ("O10", ERR) if kw == "allOf" else ("O11", ERR))
                self.emit(which, at, kw, text, old.get(kw), new.get(kw))

    def _listed(self, raw: dict[str, Any], kw: str, root: Any) -> list[_Member]:
        members = []
        for i, member in enumerate(raw[kw]):
            node = _expand(member, root)
            ref = (
                member.get("$ref")
                if isinstance(member, dict) and isinstance(member.get("$ref"), str)
                else None
            )
            members.append(_Member(member, (kw, i), ref, node.raw.get("title"), node.raw.get("type")))
        return members

    def _members(
        self, o_kw: str, n_kw: str, old: list[_Member], new: list[_Member], at: _At, depth: int
    ) -> None:
        pairs, removed, added = _pair(old, new)
        for i, j in pairs:
            o, n = old[i], new[j]
            if n.where:
                child = at.down(at.key(*n.where), None, f"<{n_kw}[{j}]>")
            elif o.where:
                child = at.down(at.key(*o.where), None, f"<{o_kw}[{i}]>")
            else:
                child = at
            self.compare(o.schema, n.schema, child, depth + 1, annotations=not (o.lifted or n.lifted))
        every = n_kw == "allOf"  # allOf narrows with each member; anyOf/oneOf widen with each branch
        noun = "member" if every else "branch"
        for i in removed:
            which = self.by(("I23", INFO), ("O10", ERR)) if every else self.by(("I17", ERR), ("O7", INFO))
            self.emit(which, at, old[i].where, f"{o_kw} {noun} {i} removed", old[i].schema, None)
        for j in added:
            which = self.by(("I17", ERR), ("O7", INFO)) if every else self.by(("I23", INFO), ("O11", ERR))
            self.emit(which, at, new[j].where, f"{n_kw} {noun} {j} added", None, new[j].schema)

    def _opaque(
        self, old: dict[str, Any], new: dict[str, Any], at: _At, keywords: tuple[str, ...] = _OPAQUE
    ) -> None:
        for kw in keywords:
            ov, nv = old.get(kw, _MISSING), new.get(kw, _MISSING)
            if ov is _MISSING and nv is _MISSING:
                continue
            if ov is not _MISSING and nv is not _MISSING and _canon(ov) == _canon(nv):
                continue
            shown_old, shown_new = (None if ov is _MISSING else ov), (None if nv is _MISSING else nv)
            text = f"keyword {kw!r} changed (not classified, review)"
            self.emit(self.by(("I25", WARN), ("O13", WARN)), at, kw, text, shown_old, shown_new)


@dataclass(slots=True)
class _Member:
    """One member of an anyOf/oneOf/allOf, or the whole of a schema lifted into a one-member union."""

    schema: Any
    where: tuple[str | int, ...]
    """``("anyOf", 1)`` under the union's owner, or ``()`` for a lifted schema."""
    ref: str | None = None
    title: Any = None
    type: Any = None
    lifted: bool = False


@dataclass(slots=True)
class _Lifted:
    side: Literal["old", "new"]
    keyword: str
    member: _Member


def _pair(old: list[_Member], new: list[_Member]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair union members: equal schemas, then same $ref, title or type, then by order."""
    o_left, n_left = list(range(len(old))), list(range(len(new)))
    pairs: list[tuple[int, int]] = []
    keys: list[Callable[[_Member], Any]] = [
        lambda m: _canon(m.schema),
        lambda m: m.ref,
        lambda m: None if m.title is None else _canon(m.title),
        lambda m: None if m.type is None else _canon(m.type),
    ]
    for key in keys:
        for i in list(o_left):
            k = key(old[i])
            if k is None:
                continue
            for j in n_left:
                if key(new[j]) == k:
                    pairs.append((i, j))
                    o_left.remove(i)
                    n_left.remove(j)
                    break
    for i, j in zip(list(o_left), list(n_left), strict=False):
        pairs.append((i, j))
        o_left.remove(i)
        n_left.remove(j)
    return sorted(pairs, key=lambda p: p[1]), o_left, n_left


def _sub(raw: dict[str, Any], kw: str) -> dict[str, Any]:
    """``raw[kw]`` when it is an object (``properties``, ``patternProperties``), else ``{}``."""
    value = raw.get(kw)
    return value if isinstance(value, dict) else {}


def _required(raw: dict[str, Any]) -> set[str]:
    value = raw.get("required")
    return {r for r in value if isinstance(r, str)} if isinstance(value, list) else set()


def _allowed(raw: dict[str, Any]) -> list[Any] | None:
    if "const" in raw:
        return [raw["const"]]
    enum = raw.get("enum")
    return list(enum) if isinstance(enum, list) else None


def _values_text(values: list[Any]) -> str:
    shown = ", ".join(_short(v, 30) for v in values[:5])
    return shown + (f" and {len(values) - 5} more" if len(values) > 5 else "")


def _bound_change(kw: str, old: Any, new: Any) -> Literal["set", "unset", "tighter", "looser"] | None:
    if old is None and new is None:
        return None
    if old is None:
        return "set"
    if new is None:
        return "unset"
    if isinstance(old, bool) or isinstance(new, bool):
        if not (isinstance(old, bool) and isinstance(new, bool)):
            return None
        return "tighter" if new and not old else "looser"  # draft-4 exclusiveMaximum/exclusiveMinimum
    if not (_num(old) and _num(new)):
        return None
    if kw == "multipleOf":
        if _is_multiple(new, old):
            return "tighter"
        return "looser" if _is_multiple(old, new) else "tighter"
    if kw in _UPPER:
        return "tighter" if new < old else "looser"
    return "tighter" if new > old else "looser"


def _items(raw: dict[str, Any]) -> tuple[list[Any], str, Any, str]:
    """(positional item schemas, their keyword, schema of the remaining items or _MISSING, its keyword)."""
    items = raw.get("items", _MISSING)
    if isinstance(raw.get("prefixItems"), list):
        return raw["prefixItems"], "prefixItems", items, "items"
    if isinstance(items, list):
        return items, "items", raw.get("additionalItems", _MISSING), "additionalItems"
    return [], "prefixItems", items, "items"


# --------------------------------------------------------------------------- evidence


class _Distinct:
    """Recorded values, deduplicated by canonical JSON, each with the 1-based numbers of its calls."""

    def __init__(self, values: Sequence[Any]) -> None:
        seen: dict[bytes, int] = {}
        self.values: list[Any] = []
        self.calls: list[list[int]] = []
        for number, value in enumerate(values, start=1):
            value = {} if value is None else value
            key = _canon(value)
            slot = seen.get(key)
            if slot is None:
                seen[key] = len(self.values)
                self.values.append(value)
                self.calls.append([number])
            else:
                self.calls[slot].append(number)


def _walk(value: Any, ipath: _IPath, where: str = "") -> Iterator[tuple[str, Any]]:
    if not ipath:
        yield where, value
        return
    seg, rest = ipath[0], ipath[1:]
    if seg == _ITEM:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _walk(item, rest, f"{where}[{i}]")
    elif seg == _VALUE:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from _walk(item, rest, f"{where}.{key}" if where else str(key))
    elif isinstance(value, dict) and seg in value:
        yield from _walk(value[seg], rest, f"{where}.{seg}" if where else str(seg))


def _calls(n: int, one: str, many: str) -> str:
    """``1 recorded call sends it`` / ``3 recorded calls send it``."""
    return f"{n} recorded call {one}" if n == 1 else f"{n} recorded calls {many}"


def _input_evidence(differ: _Differ, calls: _Distinct) -> None:
    for hit in differ.hits.values():
        if hit.check is None:
            continue
        ipath = hit.ipath[:-1] if hit.on_parent else hit.ipath
        lines: list[str] = []
        count = 0
        for value, numbers in zip(calls.values, calls.calls, strict=True):
            for where, found in _walk(value, ipath):
                reason = hit.check(found)
                if reason is not None:
                    count += len(numbers)
                    if len(lines) < _MAX_EVIDENCE:
                        lines.append(f"call {numbers[0]}: {where or 'arguments'}={_short(found)} ({reason})")
                    break
        if not count:
            continue
        f = hit.finding
        f.evidence.extend(lines)
        if f.rule == "I2":
            f.severity = max(f.severity, WARN)
            f.message += f" ({_calls(count, 'already sends it', 'already send it')})"
        elif f.rule == "I3":
            f.severity = ERR
            f.message += f" ({_calls(count, 'still sends it', 'still send it')})"
        elif f.rule in ("I1", "I4"):
            f.message += f" ({_calls(count, 'omits it', 'omit it')})"
        else:
            if f.rule in ("I13", "I14"):
                f.severity = ERR
            f.message += f" ({_calls(count, 'violates it', 'violate it')})"


def _may_invalidate(hit: _Hit) -> bool:
    """Could this non-error finding make a recorded argument invalid without its own check saying so?

    Widening rules cannot; I3, I13 and I14 were already decided call by call; an I2 that no call
    sent cannot. What is left is an I2 some call sent (its values may break the new schema), an
    unclassified keyword (I25) and union changes (I17 below ERR, I23: a oneOf branch added can
    reject a value that now matches two branches).
    """
    if hit.finding.severity == ERR:
        return False
    rule = hit.finding.rule
    return rule in ("I25", "I17", "I23") or (rule == "I2" and hit.finding.severity == WARN)


def _covers(ipath: _IPath, path: Sequence[str | int]) -> bool:
    """Does the instance-path pattern ``ipath`` match ``path`` or a prefix of it?"""
    if len(ipath) > len(path):
        return False
    for seg, actual in zip(ipath, path, strict=False):
        if seg == _ITEM:
            if not isinstance(actual, int):
                return False
        elif seg == _VALUE:
            if not isinstance(actual, str):
                return False
        elif seg != actual:
            return False
    return True


def _promote_invalid(
    differ: _Differ, old_schema: Any, new_schema: Any, calls: _Distinct, only: list[_IPath] | None
) -> None:
    """ERR for recorded arguments valid under the old schema and not the new one, where no ERR says so yet.

    Only calls holding a value at one of the ``only`` paths are validated (all calls when None):
    elsewhere nothing changed that an ERR finding does not already report.
    """
    # jsonschema is imported here, never at module level (start-up speed), and through importlib
    # because it ships without type information.
    validators: Any = importlib.import_module("jsonschema.validators")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old_validator = validators.validator_for(old_schema, default=validators.Draft202012Validator)(
                old_schema
            )
            new_validator = validators.validator_for(new_schema, default=validators.Draft202012Validator)(
                new_schema
            )
    except Exception:  # a schema jsonschema cannot load: the structural findings stand alone
        return
    errs = [h for h in differ.hits.values() if h.finding.severity == ERR]
    original = {id(h) for h in errs}
    touched: dict[int, tuple[_Hit, set[int]]] = {}
    for value, numbers in zip(calls.values, calls.calls, strict=True):
        if only is not None and not any(next(_walk(value, ipath), None) is not None for ipath in only):
            continue
        try:
            errors = list(new_validator.iter_errors(value))
            if not errors or not old_validator.is_valid(value):
                continue
        except Exception:  # bad regex, unresolvable $ref: this call cannot be judged
            continue
        for error in errors:
            for path, missing in _violations(error):
                if any(_covers(h.ipath, path) for h in errs):
                    continue
                hit = _target(differ, error, path, original)
                if id(hit) not in touched:
                    touched[id(hit)] = (hit, set())
                    if hit.finding.severity != ERR:
                        hit.finding.severity = ERR
                        hit.finding.evidence.clear()
                seen = touched[id(hit)][1]
                if set(numbers) <= seen:
                    continue
                seen.update(numbers)
                where = (
                    "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
                    or "arguments"
                )
                if missing:
                    line = f"call {numbers[0]}: missing {where}"
                else:
                    line = f"call {numbers[0]}: {where}={_short(error.instance)} (fails {error.validator})"
                if len(hit.finding.evidence) < _MAX_EVIDENCE:
                    hit.finding.evidence.append(line)
    for hit, seen in touched.values():
        hit.finding.message += f" ({_calls(len(seen), 'no longer validates', 'no longer validate')})"


def _violations(error: Any) -> list[tuple[list[str | int], bool]]:
    """Instance paths a jsonschema error is about; ``required`` and closed-object errors name the key."""
    path: list[str | int] = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if isinstance(k, str) and k not in instance]
        return [([*path, k], True) for k in missing] or [(path, False)]
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        declared = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [k for k in instance if k not in declared]
        return [([*path, k], False) for k in extra] or [(path, False)]
    return [(path, False)]


def _target(differ: _Differ, error: Any, path: list[str | int], original_err: set[int]) -> _Hit:
    """The most specific finding at ``path`` to promote, or a new I26 at the violated keyword."""
    exact = [
        h
        for h in differ.hits.values()
        if id(h) not in original_err and len(h.ipath) == len(path) and _covers(h.ipath, path)
    ]
    if exact:
        return min(
            exact,
            key=lambda h: (
                h.keyword != error.validator and not h.finding.pointer.endswith("/" + str(error.validator)),
                -len(h.finding.pointer),
                h.finding.pointer,
                h.finding.rule,
            ),
        )
    owner: list[Any] = ["inputSchema", *error.absolute_schema_path]
    keyword = owner.pop()
    label = "".join("[]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    at = _At(
        "/" + "/".join(_esc(p) for p in owner), tuple(_ITEM if isinstance(p, int) else p for p in path), label
    )
    hit = differ.hits.get(("I26", at.key(keyword)))
    if hit is None:
        text = f"no longer accepts recorded arguments ({error.validator} {_short(error.validator_value, 40)})"
        differ.emit(("I26", ERR), at, str(keyword), text, None, error.validator_value)
        hit = differ.hits[("I26", at.key(keyword))]
    return hit


def _output_evidence(differ: _Differ, results: Sequence[Any]) -> None:
    total = len(results)
    for hit in differ.hits.values():
        removed = hit.finding.rule in ("O3", "O4") and hit.finding.new is None
        if not removed and hit.finding.rule != "O8":
            continue
        ipath = hit.ipath
        carried = sum(1 for result in results if next(_walk(result, ipath), None) is not None)
        label = (
            ".".join("[]" if s == _ITEM else "*" if s == _VALUE else str(s) for s in ipath) or "the result"
        )
        hit.finding.evidence.append(f"{carried} of {total} recorded results carry {label}")
