"""Applying declarative effects to a JSON state (pure: the caller's state is never touched)."""

from __future__ import annotations

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.world.predicates import MISSING, get_path, split_pointer, subset_match
from harn_mcp_mock.world.templates import Context, bound, concrete, holds_in, render, render_path

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


class EffectError(Exception):
    """An effect that cannot apply (the call becomes a tool error; the state is unchanged)."""


def copy_state(state: Any) -> Any:
    """A deep copy (orjson round trip: much faster than copy.deepcopy for JSON)."""
    return orjson.loads(deepjson.dumps(state))


class _CopyOnWrite:
    """A new root sharing everything with the old state except the containers it changes.

    Containers on a changed path are shallow-copied once per call (``owned``), so a call costs
    O(what it changes), the old state is never touched, and diffing old against new can skip
    every shared subtree by identity.
    """

    def __init__(self, state: Any) -> None:
        self.root = _shallow(state)
        self.owned = {id(self.root)}

    def container(self, parts: list[str], path: str) -> Any:
        node = self.root
        for seg in parts:
            if isinstance(node, dict):
                if seg not in node:
                    raise EffectError(f"{path}: parent does not exist")
                child = node[seg]
            elif isinstance(node, list):
                child = node[_index(node, seg, path)]
            else:
                raise EffectError(f"{path}: parent does not exist")
            if isinstance(child, dict | list) and id(child) not in self.owned:
                child = _shallow(child)
                self.owned.add(id(child))
                if isinstance(node, dict):
                    node[seg] = child
                else:
                    node[int(seg)] = child
            node = child
        return node

    def parent(self, path: str) -> tuple[Any, str]:
        parts = split_pointer(path)
        if not parts:
            raise EffectError("cannot change the whole state")
        parent = self.container(parts[:-1], path)
        if not isinstance(parent, dict | list):
            raise EffectError(f"{path}: parent does not exist")
        return parent, parts[-1]


def _shallow(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _index(parent: list[Any], key: str, path: str, *, allow_end: bool = False) -> int:
    if not key.isdigit() or int(key) > len(parent) or (int(key) == len(parent) and not allow_end):
        raise EffectError(f"{path}: no such array index")
    return int(key)


def apply_effects(
    state: Any, effects: list[dict[str, Any]], ctx: Context, *, limit: int | None = None
) -> Any:
    """A new state with ``effects`` (the first ``limit`` of them) applied; raises EffectError.

    ``state`` itself is never modified (copy-on-write).
    """
    cow = _CopyOnWrite(state)
    ctx.state = cow.root
    for effect in effects[:limit] if limit is not None else effects:
        apply_one(cow, effect, ctx)
    return cow.root


def apply_one(cow: _CopyOnWrite, effect: dict[str, Any], ctx: Context) -> None:
    op = effect["op"]
    when = effect.get("when")
    if isinstance(when, dict):
        if not holds_in(when, cow.root, ctx):
            return  # a guarded effect whose guard does not hold is skipped
    if op == "each":  # the nested effects once per item, with the item bound to {as...}
        items = concrete(render(effect.get("items"), ctx))
        name = str(effect["as"]) if isinstance(effect.get("as"), str) else "item"
        for item in items if isinstance(items, list) else []:
            with bound(ctx, name, item):
                for sub in effect.get("effects") or []:
                    apply_one(cow, sub, ctx)
        return
    path = render_path(effect["path"], ctx)
    if op == "remove":  # every item of a collection that matches `where` (none is fine)
        if get_path(cow.root, path) is MISSING:
            return
        target = cow.container(split_pointer(path), path)
        where = render(effect.get("where") or {}, ctx)
        if isinstance(target, list):
            target[:] = [item for item in target if not subset_match(item, where)]
        elif isinstance(target, dict):
            for key in [k for k, v in target.items() if subset_match(v, where)]:
                del target[key]
        else:
            raise EffectError(f"{path}: not a collection")
        return
    if op == "set":
        parent, key = cow.parent(path)
        value = concrete(render(effect.get("value"), ctx))
        if isinstance(parent, dict):
            parent[key] = value
        else:
            i = _index(parent, key, path, allow_end=True)
            if i == len(parent):
                parent.append(value)
            else:
                parent[i] = value
    elif op == "merge":
        target = cow.container(split_pointer(path), path) if get_path(cow.root, path) is not MISSING else None
        if not isinstance(target, dict):
            raise EffectError(f"{path}: not an object")
        value = render(effect.get("value") or {}, ctx)
        if not isinstance(value, dict):
            raise EffectError(f"{path}: merge value is not an object")
        target.update(value)
    elif op == "insert":
        target = cow.container(split_pointer(path), path) if get_path(cow.root, path) is not MISSING else None
        value = concrete(render(effect.get("value"), ctx))
        if isinstance(target, list):
            target.append(value)
        elif isinstance(target, dict):
            key = concrete(render(effect.get("key", "{id}"), ctx))
            if key is None:
                raise EffectError(f"{path}: insert into an object needs a key")
            key = key if isinstance(key, str) else deepjson.dumps(key).decode()
            if key in target:
                raise EffectError(f"{path}/{key}: already exists")
            target[key] = value
        else:
            raise EffectError(f"{path}: not a collection")
    elif op == "delete":
        parent, key = cow.parent(path)
        if isinstance(parent, dict):
            if key not in parent:
                raise EffectError(f"{path}: does not exist")
            del parent[key]
        else:
            del parent[_index(parent, key, path)]
    elif op == "move":
        source = render_path(effect["from"], ctx)
        value = get_path(cow.root, source)
        if value is MISSING:
            raise EffectError(f"{source}: does not exist")
        if get_path(cow.root, path) is not MISSING:
            raise EffectError(f"{path}: already exists")
        apply_one(cow, {"op": "delete", "path": effect["from"]}, ctx)
        parent, key = cow.parent(path)
        if isinstance(parent, dict):
            parent[key] = value
        else:
            parent.insert(_index(parent, key, path, allow_end=True), value)
    elif op == "add":
        parent, key = cow.parent(path)
        current = parent.get(key) if isinstance(parent, dict) else parent[_index(parent, key, path)]
        by = _number(concrete(render(effect.get("by"), ctx)))
        if not _is_number(current) or not _is_number(by):
            raise EffectError(f"{path}: add needs numbers")
        total = current + by
        if isinstance(parent, dict):
            parent[key] = total
        else:
            parent[int(key)] = total
    else:  # the spec compiler refuses unknown ops; this is a guard
        raise EffectError(f"unknown effect op {op!r}")


def _number(value: Any) -> Any:
    """A templated number: ``"-{args.amount}"`` renders as the string ``"-500"``, read as -500."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return (
            int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
        )
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def changed_paths(before: Any, after: Any, prefix: str = "") -> list[str]:
    """JSON pointers of every leaf that differs (added, removed or changed), sorted.

    Same leaf rules as :func:`harn_mcp_mock.scoring.diff.diff_paths`, but built for the engine's
    per-call log: a copy-on-write state shares every unchanged subtree with its predecessor, so
    this walk skips shared subtrees by identity and costs O(what changed), where the scoring
    Differ pre-encodes one baseline to diff thousands of final states against it.
    """
    out: list[str] = []
    _diff(before, after, prefix, out)
    return sorted(out)


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if a is b:
        return  # a shared subtree (copy-on-write): nothing below changed
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if key in a and key in b:
                if a[key] is not b[key]:
                    _diff(a[key], b[key], jsonptr.join(path, key), out)
            else:
                _leaves(
                    a[key] if key in a else b[key],
                    jsonptr.join(path, key),
                    out,
                )
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i < len(a) and i < len(b):
                if a[i] is not b[i]:
                    _diff(a[i], b[i], f"{path}/{i}", out)
            else:
                _leaves(a[i] if i < len(a) else b[i], f"{path}/{i}", out)
    elif not _same_leaf(a, b):
        out.append(path)


def _same_leaf(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def _leaves(value: Any, path: str, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            _leaves(sub, jsonptr.join(path, key), out)
    elif isinstance(value, list) and value:
        for i, sub in enumerate(value):
            _leaves(sub, f"{path}/{i}", out)
    else:
        out.append(path)
