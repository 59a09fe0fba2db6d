"""JSON of any depth the parser accepts: encode past orjson's writer limit, measure depth.

orjson *parses* values nested up to :data:`MAX_DEPTH` (1,024) levels but *writes* only 254
(``orjson.dumps`` raises ``TypeError: Recursion limit reached``). Every message a peer may
legally send must be forwarded, recorded and replayed, so :func:`dumps` falls back to an
iterative writer (same bytes as orjson: leaves are written by orjson itself) when orjson gives
up on depth. Nothing recursive here: :func:`depth` and the writer use explicit stacks, so they
work in any thread whatever Python's recursion limit.

Walkers elsewhere (the redactor, matching, templates) recurse one Python frame or a few per
level; importing this module makes sure Python's recursion limit leaves them room for
:data:`MAX_DEPTH` levels (:func:`make_room`), so a legal message never raises RecursionError.

Input deeper than :data:`MAX_DEPTH` never gets this far: ``orjson.loads`` refuses it and the
line becomes an ``invalid`` frame (:mod:`harn_mcp_mock.jsonrpc.frames`).
"""

from __future__ import annotations

import sys

import orjson

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 1024
"""Deepest nesting ``orjson.loads`` accepts (1,025 levels raise "depth limit exceeded")."""

RECURSION_ROOM = 6 * MAX_DEPTH + 1000
"""Recursion limit that lets a walker spend several frames per level on a MAX_DEPTH value."""

WRITE_DEPTH = 254
"""Deepest nesting ``orjson.dumps`` writes; deeper values go through the iterative writer."""


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps(value, option=option)``, also for values nested past orjson's writer limit.

    The fallback honours ``OPT_SORT_KEYS`` and ``OPT_NON_STR_KEYS`` (other options apply to
    the leaves only: no indentation past the limit).
    """
    try:
        return orjson.dumps(value, option=option)
    except TypeError as exc:
        if "Recursion limit" not in str(exc):
            raise
    return _dumps_iterative(value, option)


def _dumps_iterative(value: Any, option: int) -> bytes:
    sort = bool(option & orjson.OPT_SORT_KEYS)
    leaf_option = option & ~orjson.OPT_INDENT_2
    out: list[bytes] = []
    stack: list[Any] = [value]
    # ``bytes`` on the stack are literal output: orjson refuses bytes values, so none is data.
    while stack:
        item = stack.pop()
        if isinstance(item, bytes):
            out.append(item)
        elif isinstance(item, dict):
            pairs = [(k if isinstance(k, str) else _key_text(k), v) for k, v in item.items()]
            if sort:
                pairs.sort(key=lambda kv: kv[0])
            pending: list[Any] = [b"}"]
            for index in range(len(pairs) - 1, -1, -1):
                key, child = pairs[index]
                pending.append(child)
                pending.append((b"," if index else b"") + orjson.dumps(key) + b":")
            stack.extend(pending)
            out.append(b"{")
        elif isinstance(item, list | tuple):
            pending = [b"]"]
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(b",")
            stack.extend(pending)
            out.append(b"[")
        else:
            out.append(orjson.dumps(item, option=leaf_option))
    return b"".join(out)


def _key_text(key: Any) -> str:
    text = orjson.dumps(key).decode()
    return text[1:-1] if text.startswith('"') else text


def depth(value: Any) -> int:
    """Nesting depth of a JSON value: 0 for a scalar, 1 for ``[]`` or ``[1]``, and so on."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            level += 1
            stack.extend((child, level) for child in item.values())
        elif isinstance(item, list | tuple):
            level += 1
            stack.extend((child, level) for child in item)
        else:
            continue
        deepest = max(deepest, level)
    return deepest


def make_room() -> None:
    """Raise (never lower) Python's recursion limit to :data:`RECURSION_ROOM`."""
    if sys.getrecursionlimit() < RECURSION_ROOM:
        sys.setrecursionlimit(RECURSION_ROOM)


make_room()
