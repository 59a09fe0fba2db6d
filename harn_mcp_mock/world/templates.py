"""Templates: values computed from a call's arguments, its generated id, the virtual clock and state.

``"{args.title}"`` (the whole string one reference) gives the raw value; inside a longer string
references are interpolated. A reference to an argument the call did not pass is ABSENT: it
makes its object key disappear, and is null elsewhere. Objects with one ``$`` key are operators
(``$get``, ``$list``, ``$count``, ``$exists``). See docs/worlds.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harn_mcp_mock import deepjson
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.world.predicates import MISSING, get_path, holds, items_of, split_pointer, subset_match

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_\-]+)*)\}")


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(slots=True)
class Context:
    args: dict[str, Any]
    state: Any
    id: str | None = None
    now_ms: int = 0
    call: int = 0
    item: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def lookup(self, ref: str) -> Any:
        head, _, rest = ref.partition(".")
        if head == "args":
            value: Any = self.args
        elif head == "item":
            value = self.item
        elif head == "id":
            return self.id if not rest else ABSENT
        elif head == "now":
            return iso(self.now_ms)
        elif head == "now_ms":
            return self.now_ms
        elif head == "call":
            return self.call
        elif head in self.extra:
            value = self.extra[head]
        else:
            return ABSENT
        for part in rest.split(".") if rest else []:
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return ABSENT
        return value


def iso(ms: int) -> str:
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def render(template: Any, ctx: Context) -> Any:
    """The value of ``template`` in ``ctx`` (may be ABSENT)."""
    if isinstance(template, str):
        return _render_string(template, ctx)
    if isinstance(template, dict):
        if len(template) >= 1 and any(k.startswith("$") for k in template):
            return _operator(template, ctx)
        out: dict[str, Any] = {}
        for key, value in template.items():
            rendered = render(value, ctx)
            if rendered is not ABSENT:
                out[key] = rendered
        return out
    if isinstance(template, list):
        return [v if v is not ABSENT else None for v in (render(x, ctx) for x in template)]
    return template


def concrete(value: Any) -> Any:
    """ABSENT as null (for places that need a value)."""
    return None if value is ABSENT else value


def _render_string(text: str, ctx: Context) -> Any:
    if "{" not in text:
        return text
    whole = _REF.fullmatch(text)
    if whole:
        return ctx.lookup(whole.group(1))

    def sub(match: re.Match[str]) -> str:
        value = ctx.lookup(match.group(1))
        if value is ABSENT or value is None:
            return ""
        if isinstance(value, str):
            return value
        return deepjson.dumps(value).decode()

    return _REF.sub(sub, text)


def render_path(path: str, ctx: Context) -> str:
    """A JSON pointer with templated segments (each rendered and escaped)."""
    parts = []
    for seg in split_pointer(path):
        value = _render_string(seg, ctx) if "{" in seg else seg
        text = (
            ""
            if value is ABSENT or value is None
            else (value if isinstance(value, str) else deepjson.dumps(value).decode())
        )
        parts.append(jsonptr.escape(text))
    return "".join("/" + p for p in parts)


def _operator(template: dict[str, Any], ctx: Context) -> Any:
    if "$map" in template:
        return _map(template, ctx)
    if "$join" in template:
        return _join(template, ctx)
    if "$tree" in template:
        return _tree(template, ctx)
    if "$json" in template:
        indent = template.get("indent")
        value = concrete(render(template["$json"], ctx))
        return json_text(value, indent if isinstance(indent, int) and not isinstance(indent, bool) else None)
    if "$get" in template:
        value = get_path(ctx.state, render_path(str(template["$get"]), ctx))
        return None if value is MISSING else value
    if "$exists" in template:
        return get_path(ctx.state, render_path(str(template["$exists"]), ctx)) is not MISSING
    if "$list" in template or "$count" in template:
        path = render_path(str(template.get("$list", template.get("$count"))), ctx)
        items = items_of(get_path(ctx.state, path))
        where = render(template.get("where") or {}, ctx)
        if where:
            items = [item for item in items if subset_match(item, where)]
        items = _filtered(items, template, ctx)
        if "$count" in template:
            return len(items)
        sort = template.get("sort")
        if isinstance(sort, str):
            key = sort.lstrip("-")
            items = sorted(
                items,
                key=lambda i: canonical_bytes(i.get(key) if isinstance(i, dict) else None),
                reverse=sort.startswith("-"),
            )
        fields = template.get("fields")
        if isinstance(fields, list):
            items = [
                {f: item[f] for f in fields if isinstance(f, str) and f in item}
                if isinstance(item, dict)
                else item
                for item in items
            ]
        limit = concrete(render(template.get("limit"), ctx)) if "limit" in template else None
        if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
            items = items[:limit]
        return items
    raise ValueError(f"unknown template operator {sorted(template)[0]!r}")


def _join(template: dict[str, Any], ctx: Context) -> str:
    """``{"$join": [{"keys": "/files", "line": "[FILE] {name}"}, ...], "under": "{args.path}",
    "sep": "\\n", "sort": true}``: a text listing, one line per key of the objects at ``keys``
    (``{key}`` the key, ``{name}`` it relative to ``under``, ``{value}`` its value). With
    ``under``, only the keys directly under that path (``under/name``, ``name`` without ``/``),
    or every key below it with ``"depth": "all"``; ``"glob"`` keeps the names a glob matches
    (``*`` within a segment, ``**/`` any number of directories); lines sorted by name across
    sources with ``sort``, else in source then key order; ``"empty"`` is the text when no line
    is left. A source ``{"items": "{args.paths}", "at": "/files/{key}", "line": ..., "missing":
    ...}`` lists the keys a list names instead, in its order, with ``{value}`` the value at
    ``at`` (the ``missing`` layout when there is none). A source's ``"mark": {"at": "/current",
    "line": "* {name}"}`` gives the key equal to the value at ``at`` (a list: its last item, the
    latest of a history) its own layout."""
    under = concrete(render(template.get("under"), ctx)) if "under" in template else None
    prefix = (under.rstrip("/") + "/") if isinstance(under, str) else None
    deep = template.get("depth") == "all"
    glob = concrete(render(template.get("glob"), ctx)) if "glob" in template else None
    pattern = _glob_regex(glob) if isinstance(glob, str) else None
    entries: list[tuple[str, str]] = []
    sources = template["$join"] if isinstance(template["$join"], list) else []
    for source in sources:
        if not isinstance(source, dict):
            continue
        if "items" in source:  # the keys a list names, each with the value at ``at``, if any
            listed = concrete(render(source["items"], ctx))
            found: Any = {}
            for key in listed if isinstance(listed, list) else []:
                with bound(ctx, "key", key):
                    found[str(key)] = get_path(ctx.state, render_path(str(source.get("at", "")), ctx))
        else:
            found = get_path(ctx.state, render_path(str(source.get("keys", "")), ctx))
        if not isinstance(found, dict):
            continue
        for key, value in found.items():
            name = key
            if value is MISSING and "missing" not in source:
                continue
            if prefix is not None:
                if not key.startswith(prefix) or key == prefix or (not deep and "/" in key[len(prefix) :]):
                    continue
                name = key[len(prefix) :]
            if pattern is not None and not pattern.fullmatch(name):
                continue
            with bound(ctx, "key", key), bound(ctx, "name", name), bound(ctx, "value", value):
                layout = source.get("missing") if value is MISSING else source.get("line", "{name}")
                mark = source.get("mark")
                if isinstance(mark, dict):
                    marked = get_path(ctx.state, render_path(str(mark.get("at")), ctx))
                    if (marked[-1] if isinstance(marked, list) and marked else marked) == key:
                        layout = mark.get("line", layout)
                line = concrete(render(layout, ctx))
            entries.append((name, line if isinstance(line, str) else deepjson.dumps(line).decode()))
    if template.get("sort"):
        entries.sort(key=lambda e: e[0])
    if not entries and isinstance(template.get("empty"), str):
        return str(concrete(render(template["empty"], ctx)))
    sep = template.get("sep", "\n")
    return (sep if isinstance(sep, str) else "\n").join(line for _, line in entries)


def _tree(template: dict[str, Any], ctx: Context, under: Any = None) -> list[Any]:
    """``{"$tree": [{"keys": "/directories", "to": {"name": "{name}", "children": "{children}"}},
    {"keys": "/files", "to": {"name": "{name}"}}], "under": "{args.path}", "sort": true}``: the
    keys directly under ``under`` (path-like keys, ``/`` between levels) as a list of nodes, each
    shaped by its source's ``to`` with ``{key}``, ``{name}``, ``{value}`` and ``{children}`` (the
    same tree under that key) bound; sorted by name across sources with ``sort``."""
    if under is None:
        under = concrete(render(template.get("under"), ctx))
    prefix = str(under).rstrip("/") + "/" if isinstance(under, str) else ""
    nodes: list[tuple[str, Any]] = []
    for source in template["$tree"] if isinstance(template["$tree"], list) else []:
        if not isinstance(source, dict):
            continue
        found = get_path(ctx.state, render_path(str(source.get("keys", "")), ctx))
        if not isinstance(found, dict):
            continue
        for key, value in found.items():
            name = key[len(prefix) :]
            if not key.startswith(prefix) or not name or "/" in name:
                continue
            children = _tree(template, ctx, key) if "{children}" in str(source.get("to")) else []
            with (
                bound(ctx, "key", key),
                bound(ctx, "name", name),
                bound(ctx, "value", value),
                bound(ctx, "children", children),
            ):
                nodes.append((name, concrete(render(source.get("to", "{name}"), ctx))))
    if template.get("sort"):
        nodes.sort(key=lambda n: n[0])
    return [node for _, node in nodes]


def _glob_regex(glob: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON text the way ``JSON.stringify(value, null, indent)`` writes it (no
    escaping of non-ASCII; compact without ``indent``)."""
    import json

    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _in(value: Any, values: Any) -> bool:
    return isinstance(values, list) and any(canonical_bytes(value) == canonical_bytes(v) for v in values)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _filtered(items: list[Any], template: dict[str, Any], ctx: Context) -> list[Any]:
    """The ``where_in``, ``where_any_in``, ``not_in`` and ``match`` filters of ``$list`` and ``$map``.

    - ``"where_in": {"field": [values]}``: every named field's value is one of its values;
    - ``"where_any_in": {"field": [values], ...}``: at least one named field's value is;
    - ``"not_in": [values]``: the item itself is none of the values;
    - ``"match": {"text": t, "fields": [...]}``: ``t`` is a case-insensitive substring of one of
      the fields (a list field: of one of its strings).
    """
    if "where_in" in template:
        spec = render(template["where_in"], ctx)
        if isinstance(spec, dict):
            items = [
                i for i in items if isinstance(i, dict) and all(_in(i.get(f), vs) for f, vs in spec.items())
            ]
    if "where_any_in" in template:
        spec = render(template["where_any_in"], ctx)
        if isinstance(spec, dict):
            items = [
                i for i in items if isinstance(i, dict) and any(_in(i.get(f), vs) for f, vs in spec.items())
            ]
    if "not_in" in template:
        values = concrete(render(template["not_in"], ctx))
        items = [i for i in items if not _in(i, values if isinstance(values, list) else [])]
    if "match" in template:
        spec = render(template["match"], ctx)
        if isinstance(spec, dict):
            text = spec.get("text")
            needle = text.lower() if isinstance(text, str) else ""
            fields: list[Any] = spec["fields"] if isinstance(spec.get("fields"), list) else []
            items = [
                i
                for i in items
                if isinstance(i, dict) and any(needle in t.lower() for f in fields for t in _texts(i.get(f)))
            ]
    return items


def _map(template: dict[str, Any], ctx: Context) -> list[Any]:
    """``{"$map": list, "as": "x", "to": template, "when": predicate, "on": "before"}``: each item
    of the list bound to ``{x...}`` (default ``item``), kept when ``when`` holds (against the state
    before the call with ``"on": "before"``), filtered like ``$list``, shaped by ``to``."""
    source = concrete(render(template["$map"], ctx))
    items = list(source) if isinstance(source, list) else []
    items = _filtered(items, template, ctx)
    name = template.get("as", "item")
    name = name if isinstance(name, str) and name else "item"
    when = template.get("when")
    state = ctx.extra.get("before", ctx.state) if template.get("on") == "before" else ctx.state
    out = []
    for item in items:
        with bound(ctx, name, item):
            if isinstance(when, dict) and not holds_in(when, state, ctx):
                continue
            out.append(concrete(render(template["to"], ctx)) if "to" in template else item)
    return out


class bound:
    """``with bound(ctx, name, value):`` binds ``{name...}`` (``item`` or another name) in ``ctx``."""

    def __init__(self, ctx: Context, name: str, value: Any) -> None:
        self.ctx, self.name, self.value = ctx, name, value

    def __enter__(self) -> None:
        if self.name == "item":
            self.saved = self.ctx.item
            self.ctx.item = self.value
        else:
            self.saved = self.ctx.extra.get(self.name, ABSENT)
            self.ctx.extra[self.name] = self.value

    def __exit__(self, *exc: object) -> None:
        if self.name == "item":
            self.ctx.item = self.saved
        elif self.saved is ABSENT:
            self.ctx.extra.pop(self.name, None)
        else:
            self.ctx.extra[self.name] = self.saved


def holds_in(predicate: dict[str, Any], state: Any, ctx: Context) -> bool:
    """``predicate`` on ``state`` with its templates rendered in ``ctx`` (paths segment by segment)."""
    return holds(
        predicate,
        state,
        lambda v: concrete(render(v, ctx)),
        lambda p: render_path(p, ctx) if isinstance(p, str) else p,
    )
