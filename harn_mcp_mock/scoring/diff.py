"""Path-level diffs of JSON states, and the ``may_change`` glob language.

A diff lists every changed *leaf* as ``(JSON pointer, kind)``:

- objects are compared key by key; a key present on one side only contributes every leaf under
  it (an empty object or array is itself a leaf) as ``added`` or ``removed``;
- arrays are compared item by item **by index**: removing the first of three items reports the
  first two as ``changed`` and the last as ``removed`` (arrays are sequences, not sets);
- anything else that differs is ``changed`` at its own path, including a value that changed type
  (``null`` becoming an object is one ``changed`` entry at the value's path);
- numbers compare by value (``25`` to ``25.0`` is no change), a boolean is not a number.

Entries are sorted by path (array indexes numerically), then kind.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import compress
from operator import ne
from typing import Any, Final

import orjson

from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.store.canonical import sorted_json
from harn_mcp_mock.world.predicates import json_equal

__all__ = ["Differ", "diff_paths", "escape_segment", "glob_match", "path_key"]


escape_segment = jsonptr.escape
"""One JSON pointer segment, escaped (the one definition is :mod:`harn_mcp_mock.store.pointer`)."""


@lru_cache(maxsize=65536)
def path_key(pointer: str) -> tuple[str, ...]:
    """A sort key for pointers that orders array indexes numerically (``/l/2`` before ``/l/10``)."""
    return tuple(s.zfill(20) if s.isdecimal() else s for s in pointer.split("/"))


def diff_paths(before: Any, after: Any) -> list[tuple[str, str]]:
    """Every changed leaf between two JSON values, as sorted ``(pointer, kind)`` pairs with kind
    ``"added"``, ``"removed"`` or ``"changed"`` (see the module docstring for the rules)."""
    return Differ(before).diff(after)


_SMALL: Final = 2048
"""A ``before`` subtree whose JSON is at most this many bytes is compared in one go; a bigger
one (a collection) is always walked into."""

_canonical = sorted_json
_Encoded = tuple[bytes, bytes]
"""A small subtree's JSON as is (key order kept) and canonical (keys sorted)."""


class _Plan:
    """What a ``before`` container needs at diff time (computed once per Differ)."""

    __slots__ = ("big", "by_key", "canonical", "key_list", "keys", "raw", "small", "values")

    def __init__(
        self, keys: tuple[Any, ...], values: tuple[Any, ...], encoded: list[_Encoded | None]
    ) -> None:
        self.keys = keys
        self.key_list = list(keys)
        self.values = values
        self.small = tuple(i for i, e in enumerate(encoded) if e is not None)
        self.raw = tuple(e[0] for e in encoded if e is not None)
        self.canonical = [e[1] if e is not None else None for e in encoded]
        self.big = tuple(i for i, e in enumerate(encoded) if e is None)
        self.by_key = dict(zip(keys, encoded, strict=True))


class Differ:
    """Diffs many states against one ``before`` state, fast.

    Each small ``before`` subtree knows its JSON bytes, computed once. A child of the ``after``
    state whose JSON is byte-equal to its counterpart's is unchanged (byte equality is strict:
    ``true`` is not ``1``); the bytes are first compared with key order as is (cheap, and the
    world keeps key order), then canonical (keys sorted). Every other child, and every big one,
    is walked into, where the rules of the module docstring decide (so ``25`` against ``25.0``
    costs a walk but is no change). Children are encoded and compared in C (``map``,
    ``compress``), so an unchanged item costs about one ``orjson.dumps``.
    """

    __slots__ = ("_before", "_plans")

    def __init__(self, before: Any) -> None:
        self._before = before
        self._plans: dict[int, _Plan] = {}
        self._encode(before)

    def _encode(self, node: Any) -> _Encoded | None:
        """Plan every container under ``node``; ``node``'s JSON if small, else None."""
        if isinstance(node, dict):
            keys: tuple[Any, ...] = tuple(node)
            values: tuple[Any, ...] = tuple(node.values())
        elif isinstance(node, list):
            keys, values = tuple(range(len(node))), tuple(node)
        else:
            return _encode(node)
        encoded = [self._encode(value) for value in values]
        self._plans[id(node)] = _Plan(keys, values, encoded)
        if all(e is not None for e in encoded):
            whole = _encode(node)
            if whole is not None and len(whole[0]) <= _SMALL:
                return whole
        return None

    def diff(self, after: Any) -> list[tuple[str, str]]:
        """Sorted ``(pointer, kind)`` for every leaf that differs from ``before`` to ``after``."""
        return [(ptr, kind) for ptr, kind, _value in self.diff_values(after)]

    def diff_values(self, after: Any) -> list[tuple[str, str, Any]]:
        """Like :meth:`diff`, each entry with the leaf's value in ``after`` (None if removed):
        the entries identify ``after`` completely, given ``before``."""
        out: list[tuple[str, str, Any]] = []
        self._walk(self._before, after, "", out)
        if len(out) > 1:
            out.sort(key=_entry_key)
        return out

    def _walk(self, b: Any, a: Any, ptr: str, out: list[tuple[str, str, Any]]) -> None:
        both_dicts = isinstance(b, dict) and isinstance(a, dict)
        if not both_dicts and not (isinstance(b, list) and isinstance(a, list)):
            if not json_equal(b, a):
                out.append((ptr, "changed", a))
            return
        plan = self._plans.get(id(b))
        if plan is None:  # not a node of ``before`` (never happens through diff())
            self._encode(b)
            plan = self._plans[id(b)]
        values = None
        if len(a) == len(plan.keys):
            if not both_dicts:
                values = a
            elif plan.key_list == list(a):  # the usual case: the same keys in the same order
                values = list(a.values())
            else:
                try:  # same size and every key of ``b`` in ``a``: the same keys
                    values = list(map(a.__getitem__, plan.keys))
                except KeyError:
                    pass
        if values is not None:
            try:
                small = values if not plan.big else map(values.__getitem__, plan.small)
                suspects = list(compress(plan.small, map(ne, plan.raw, map(orjson.dumps, small))))
            except TypeError:  # not JSON-encodable (an int beyond 64 bits...): look at each
                suspects = list(plan.small)
            for i in suspects:
                if not _same_bytes(plan.canonical[i], values[i]):
                    key = plan.keys[i]
                    self._walk(
                        plan.values[i], values[i], f"{ptr}/{escape_segment(key) if both_dicts else key}", out
                    )
            for i in plan.big:
                key = plan.keys[i]
                self._walk(
                    plan.values[i], values[i], f"{ptr}/{escape_segment(key) if both_dicts else key}", out
                )
            return
        if both_dicts:
            for key, vb in b.items():
                sub = ptr + "/" + escape_segment(key)
                if key not in a:
                    _leaves(vb, sub, "removed", out)
                elif not _same(plan.by_key[key], a[key]):
                    self._walk(vb, a[key], sub, out)
            for key, va in a.items():
                if key not in b:
                    _leaves(va, ptr + "/" + escape_segment(key), "added", out)
            return
        for i, (vb, va) in enumerate(zip(b, a, strict=False)):
            if not _same(plan.by_key[i], va):
                self._walk(vb, va, f"{ptr}/{i}", out)
        for i in range(len(a), len(b)):
            _leaves(b[i], f"{ptr}/{i}", "removed", out)
        for i in range(len(b), len(a)):
            _leaves(a[i], f"{ptr}/{i}", "added", out)


def _encode(value: Any) -> _Encoded | None:
    try:
        return orjson.dumps(value), _canonical(value)
    except TypeError:
        return None


def _same_bytes(canonical: bytes | None, value: Any) -> bool:
    if canonical is None:
        return False
    try:
        return canonical == _canonical(value)
    except TypeError:
        return False


def _same(encoded: _Encoded | None, value: Any) -> bool:
    if encoded is None:
        return False
    try:
        return encoded[0] == orjson.dumps(value) or encoded[1] == _canonical(value)
    except TypeError:
        return False


def _entry_key(entry: tuple[str, str, Any]) -> tuple[tuple[str, ...], str, str]:
    return path_key(entry[0]), entry[0], entry[1]


def _leaves(value: Any, ptr: str, kind: str, out: list[tuple[str, str, Any]]) -> None:
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            _leaves(sub, ptr + "/" + escape_segment(key), kind, out)
    elif isinstance(value, list) and value:
        for i, sub in enumerate(value):
            _leaves(sub, f"{ptr}/{i}", kind, out)
    else:
        out.append((ptr, kind, None if kind == "removed" else value))


# --- globs -----------------------------------------------------------------------------------


def glob_match(pointer: str, pattern: str) -> bool:
    """Whether a JSON pointer matches a ``may_change`` pattern, in the one pointer-pattern
    dialect (:func:`harn_mcp_mock.store.pointer.compile_pattern`; docs/cli.md "JSON pointer
    patterns"): a segment ``**`` matches any number of segments (zero included: ``/audit/**``
    matches ``/audit`` and everything below it), a ``*`` inside a segment matches any run of
    characters within one segment (``*`` alone is exactly one segment, ``log-*`` matches
    ``log-7``), and every other character is literal.
    """
    return jsonptr.matches(pattern, pointer)
