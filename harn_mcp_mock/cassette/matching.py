"""Request keys and matchers; explaining a miss with the nearest recorded candidates.

A request's key is the canonical JSON of its method and params after (1) the same redaction
the cassette was recorded with, (2) dropping volatile paths (everything under ``params._meta``
by default: progressToken, clientInfo, trace context, which the 2026-07-28 protocol stamps on
every request, plus user-given JSON pointers; params left empty then count as absent) and (3) replacing numbered redaction placeholders
with a number-free one. The JSON-RPC ``id`` is never part of the key. Handshake methods match on
the method alone. Lookups are dict lookups: O(1) in the size of the cassette.

What the protocol makes optional matches its absence, for every method (:func:`without_empty_optionals`):
a top-level param that is ``null`` (no MCP request param is nullable: a client that writes an
unset optional field as ``null``, a ``cursor: null``, means it absent), an empty ``arguments``
(``tools/call``, ``prompts/get``), ``_meta`` or ``context`` (``completion/complete``, and its
``context.arguments``), and params left empty by all this. The SDK sends ``prompts/get`` with
``"arguments": {}`` where fastmcp leaves it out; a live server answers both alike. An empty
object elsewhere keeps its meaning (a ``task: {}`` asks for a task; a tool's own arguments are
the tool's).

A 2026-07-28 multi-round-trip retry carries ``params.requestState`` (opaque server state, new on
every run) and ``params.inputResponses`` (the client's answers to the server's ``inputRequests``,
keyed by the server's ids). Neither value is part of the key, like an ``id``: a retry matches
on the presence of the state and on the ids it answers, and an answer that differs from the
recording is the replay engine's to report (``answer_mismatches``), not a miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from harn_mcp_mock._record import record
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.redact import PLACEHOLDER_RE
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip_repr

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

DEFAULT_IGNORE = ("/params/_meta",)
OPAQUE = "[OPAQUE]"
"""What stands for a ``requestState`` value and for each ``inputResponses`` answer in a key."""
METHOD_ONLY = frozenset({"initialize", "server/discover"})

_PLACEHOLDER_BYTES = re.compile(PLACEHOLDER_RE.pattern.encode())

Pointer = jsonptr.Pattern
"""A compiled ``--ignore-path``: a pattern in the one pointer-pattern dialect (``*``, ``**``)."""


def parse_pointer(text: str) -> Pointer:
    """A JSON pointer pattern (RFC 6901 plus the dialect's ``*`` and ``**``, docs/cli.md "JSON
    pointer patterns"), compiled; a trailing ``**`` is dropped (``/a/**`` drops ``/a``)."""
    if text == "":
        return ()
    if not text.startswith("/"):
        raise UsageError(f"JSON pointer {text!r} must start with '/'", where="--ignore-path")
    try:
        parts = jsonptr.compile_pattern(text)
    except ValueError as exc:
        raise UsageError(f"JSON pointer {text!r}: {exc}", where="--ignore-path") from None
    while parts and parts[-1] == jsonptr.ANY_DEPTH:
        parts = parts[:-1]
    return parts


def drop_path(value: Any, path: Pointer) -> Any:
    """``value`` without what ``path`` points at; copies only along the path (input untouched)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if head == jsonptr.ANY_DEPTH:  # here, and at every depth below
        value = drop_path(value, rest)
        if isinstance(value, dict):
            return {k: drop_path(v, path) for k, v in value.items()}
        if isinstance(value, list):
            return [drop_path(v, path) for v in value]
        return value
    literal = isinstance(head, str) and head != jsonptr.ANY
    if isinstance(value, dict):
        if literal:
            keys = [head] if head in value else []
        else:
            keys = [k for k in value if jsonptr.segment_matches(head, k)]
        if not keys:
            return value
        out = dict(value)
        for key in keys:
            if rest:
                out[key] = drop_path(value[key], rest)
            else:
                del out[key]
        return out
    if isinstance(value, list):
        if head == jsonptr.ANY:
            indexes: Iterable[int] = range(len(value))
        elif literal:
            assert isinstance(head, str)
            if not (head.isdigit() and int(head) < len(value)):
                return value
            indexes = range(int(head), int(head) + 1)
        else:
            indexes = [i for i in range(len(value)) if jsonptr.segment_matches(head, str(i))]
        if not rest:
            drop = set(indexes)
            return [v for i, v in enumerate(value) if i not in drop]
        out_list = list(value)
        for i in indexes:
            out_list[i] = drop_path(value[i], rest)
        return out_list
    return value


@record(frozen=True)
class Matcher:
    """Computes request keys. ``ignore`` are JSON pointers into the message envelope."""

    ignore: tuple[Pointer, ...] = tuple(parse_pointer(p) for p in DEFAULT_IGNORE)

    @classmethod
    def with_paths(cls, extra: Iterable[str] = (), *, include_defaults: bool = True) -> Matcher:
        paths = [*(DEFAULT_IGNORE if include_defaults else ()), *extra]
        return cls(tuple(parse_pointer(p) for p in paths))

    def comparable(self, message: dict[str, Any]) -> dict[str, Any]:
        """The part of a (redacted) request that matching compares: method and params."""
        view: Any = {"method": message.get("method"), "params": message.get("params")}
        if view["params"] is None:
            del view["params"]
        elif isinstance(view["params"], dict):
            view["params"] = _without_round_trip_values(view["params"])
        for path in self.ignore:
            view = drop_path(view, path)
        if isinstance(view, dict) and isinstance(view.get("params"), dict):
            view["params"] = without_empty_optionals(view["params"])
            if view["params"] == {}:
                # Empty params are no params: a 2026-07-28 client's ``{"_meta": ...}`` alone (its
                # _meta ignored) and a classic client's request without params ask the same.
                del view["params"]
        return view  # type: ignore[no-any-return]

    def key(self, message: dict[str, Any]) -> bytes:
        method = message.get("method")
        if method in METHOD_ONLY:
            return canonical_bytes({"method": method})
        data = canonical_bytes(self.comparable(message))
        if b"[REDACTED" in data:
            data = _PLACEHOLDER_BYTES.sub(b"[REDACTED]", data)
        return data


EMPTY_IS_ABSENT = frozenset({"arguments", "_meta", "context"})
"""Request params (objects the spec makes optional) whose empty value ``{}`` means absent."""


def without_empty_optionals(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without what the protocol makes optional and was sent empty or ``null`` (see
    the module doc); ``params`` itself when there is none (the common case: no copy)."""
    drop = [k for k, v in params.items() if v is None or (v == {} and k in EMPTY_IS_ABSENT)]
    context = params.get("context")
    nested = isinstance(context, dict) and "arguments" in context and context["arguments"] in ({}, None)
    if not drop and not nested:
        return params
    out = {k: v for k, v in params.items() if k not in drop}
    if nested:
        inner = {k: v for k, v in context.items() if k != "arguments"}  # type: ignore[union-attr]
        if inner:
            out["context"] = inner
        else:
            del out["context"]
    return out


def _without_round_trip_values(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a multi-round-trip retry's state and answers masked (see the module doc)."""
    if "requestState" not in params and "inputResponses" not in params:
        return params
    out = dict(params)
    if "requestState" in out:
        out["requestState"] = OPAQUE
    responses = out.get("inputResponses")
    if isinstance(responses, dict):
        out["inputResponses"] = dict.fromkeys(responses, OPAQUE)
    return out


def explain_miss(
    got: dict[str, Any],
    candidates: Sequence[dict[str, Any]],
    matcher: Matcher,
    *,
    limit: int = 3,
    whole_cassette: Sequence[dict[str, Any]] | None = None,
) -> str:
    """One paragraph: why ``got`` matched nothing, naming the nearest recorded candidates.

    It leads with ``no tool 'x' in this cassette (it has: a, b)`` when no request in
    ``whole_cassette`` (default: ``candidates``) names the tool, prompt or resource ``got`` asks for.
    """
    method = got.get("method")
    lead = unknown_target(got, candidates if whole_cassette is None else whole_cassette)
    if lead is not None:
        return lead
    same_method = [c for c in candidates if c.get("method") == method]
    if not same_method:
        recorded = sorted({str(c.get("method")) for c in candidates})
        shown = ", ".join(recorded[:8]) + (f", +{len(recorded) - 8} more" if len(recorded) > 8 else "")
        return f"no recorded request has method {method!r} (recorded methods: {shown or 'none'})"
    from deepdiff import DeepDiff  # only on a miss: keeps replay start-up fast

    mine = matcher.comparable(got)
    scored: list[tuple[int, int, list[str]]] = []
    for index, cand in enumerate(same_method):
        diff = DeepDiff(matcher.comparable(cand), mine, verbose_level=2)
        lines = _diff_lines(diff)
        scored.append((len(lines), index, lines))
    scored.sort(key=lambda item: (item[0], item[1]))
    parts = [f"no recorded {method!r} request has these params; nearest of {len(same_method)} recorded:"]
    for rank, (_, _, lines) in enumerate(scored[:limit], start=1):
        shown = "; ".join(lines[:4]) + (f"; +{len(lines) - 4} more" if len(lines) > 4 else "")
        parts.append(f"#{rank}: {shown or 'differs only in ignored or redacted fields'}")
    return " ".join(parts)


_TARGETS = {
    "tools/call": ("tool", "name"),
    "prompts/get": ("prompt", "name"),
    "resources/read": ("resource", "uri"),
}


def unknown_target(got: dict[str, Any], recorded: Sequence[dict[str, Any]]) -> str | None:
    """``no tool 'x' in this cassette (it has: a, b)``, or None when a recorded request names it."""
    method = got.get("method")
    kind, key = _TARGETS.get(str(method), (None, ""))
    params = got.get("params")
    wanted = params.get(key) if kind is not None and isinstance(params, dict) else None
    if not isinstance(wanted, str):
        return None
    names = sorted(
        {
            str(r["params"][key])
            for r in recorded
            if r.get("method") == method and isinstance(r.get("params"), dict) and key in r["params"]
        }
    )
    if not names or wanted in names:
        return None  # no such method at all (explain_miss says so), or the params differ
    shown = ", ".join(names[:12]) + (f", +{len(names) - 12} more" if len(names) > 12 else "")
    return f"no {kind} {wanted!r} in this cassette (it has: {shown})"


def _diff_lines(diff: Any) -> list[str]:
    lines: list[str] = []
    for change, entries in diff.items():
        if isinstance(entries, dict):
            items = list(entries.items())
        else:
            items = [(e, None) for e in entries]
        for path, detail in items:
            where = _path(str(path))
            if change in ("values_changed", "type_changes") and isinstance(detail, dict):
                line = _changed(where, detail["old_value"], detail["new_value"])
                if line is not None:
                    lines.append(line)
            elif change.endswith("_added"):
                lines.append(f"{where}: not in the recording")
            elif change.endswith("_removed"):
                lines.append(f"{where}: recorded but missing")
            else:
                lines.append(f"{where}: {change}")
    return sorted(lines)


def _changed(where: str, old: Any, new: Any) -> str | None:
    """One changed value. A recorded value that was redacted is never compared by its text: the
    same placeholder up to its number is no difference (matching ignores the numbers), and a
    request value that replay's policy left unredacted where the recording held a secret is
    named as different without being shown (it may be the secret itself)."""
    if isinstance(old, str) and PLACEHOLDER_RE.search(old):
        if isinstance(new, str) and PLACEHOLDER_RE.sub("#", new) == PLACEHOLDER_RE.sub("#", old):
            return None
        if isinstance(new, str) and PLACEHOLDER_RE.search(new):
            shown = _short(new)
        else:
            size = len(new) if isinstance(new, str) else len(repr(new))
            shown = f"a different value, not redacted by this policy ({size} characters, not shown)"
        return f"{where}: recorded {_short(old)} (redacted when recorded), got {shown}"
    return f"{where}: recorded {_short(old)}, got {_short(new)}"


def _path(deepdiff_path: str) -> str:
    # root['params']['arguments']['city'] -> params.arguments.city
    return ".".join(re.findall(r"\['?([^'\]]+)'?\]", deepdiff_path)) or "(root)"


def _short(value: Any) -> str:
    return clip_repr(value, 40)
