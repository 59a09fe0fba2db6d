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
from harn_mcp_mock.world.predicates import MISSING, get_path, items_of, split_pointer, subset_match

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
