"""Join-style templates of reads: text listings of a keyed collection's keys (one line each,
in the recorded layout), nested JSON trees of path-like keys, and batch reads of listed keys."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harn_mcp_mock.world.scaffold.collections import (
    DEST_ARGS,
    SOURCE_ARGS,
    Documents,
    input_props,
    is_read,
    is_read_name,
    string_args,
)
from harn_mcp_mock.world.scaffold.recording import (
    Recording,
    Step,
    argument_template,
    is_json,
    text_answer,
    text_of,
)
from harn_mcp_mock.world.templates import json_text


def listing_candidates(
    tool: dict[str, Any], rec: Recording, keys: dict[str, set[str]]
) -> list[dict[str, Any]]:
    """A read whose text answers are lines each naming a key of a keyed collection, relative to
    a path argument (``[FILE] notes.txt`` for ``<path>/notes.txt``) or whole: a ``$join``
    listing of the keys directly under that argument (or all below it, filtered by a glob
    argument), each collection's lines in the recorded layout, a constant text when empty."""
    name = tool["name"]
    shown = [s for s in rec.steps if s.tool == name and s.ok and text_of(s.answer) is not None]
    if not shown or not keys or any(is_json(text_of(s.answer) or "") for s in shown):
        return []
    strings = string_args(tool)
    out: list[dict[str, Any]] = []
    for arg in strings:
        if not all(isinstance(s.arguments.get(arg), str) for s in shown):
            continue
        for deep in (False, True):
            found = _layouts(shown, arg, keys, deep)
            if found is None:
                continue
            layouts, empty = found
            sources = [{"keys": p, "line": v} for p, v in sorted(layouts.items())]
            base: dict[str, Any] = {"$join": sources, "under": f"{{args.{arg}}}"}
            if deep:
                base["depth"] = "all"
            if empty is not None:
                base["empty"] = argument_template(empty, shown[0].arguments)
            variants = [{**base, "sep": "\n", "sort": True}]
            if len(sources) > 1 and not deep:
                variants += [{**base, "$join": order, "sep": "\n"} for order in (sources, sources[::-1])]
            if deep:
                variants += [
                    {**v, "glob": f"{{args.{g}}}"} for v in list(variants) for g in strings if g != arg
                ]
            out += [text_answer(shown[0], join) for join in variants]
    return out


def batch_read_candidates(
    tool: dict[str, Any], rec: Recording, docs: Documents | None
) -> list[dict[str, Any]]:
    """A read given a list of document keys whose text answer is, for each key in order, a block
    naming the key and showing its document (or an error line when there is none), joined by a
    separator (``read_multiple_files(paths)``): a ``$join`` of the listed keys."""
    if docs is None:
        return []
    lists = [a for a, sc in input_props(tool).items() if isinstance(sc, dict) and sc.get("type") == "array"]
    out: list[dict[str, Any]] = []
    for arg in lists:
        segments: list[list[tuple[bool, str]]] = []
        for session in rec.sessions:
            held: dict[str, Any] = {}
            for step in session:
                if step.method != "tools/call":
                    continue
                if step.ok and step.tool == docs.writer:
                    held[str(step.arguments.get(docs.key))] = step.arguments.get(docs.value)
                elif step.ok and not is_read_name(rec, step.tool):
                    src = next((step.arguments[a] for a in SOURCE_ARGS if a in step.arguments), None)
                    dst = next((step.arguments[a] for a in DEST_ARGS if a in step.arguments), None)
                    if isinstance(src, str) and isinstance(dst, str) and src in held:
                        held[dst] = held.pop(src)
                elif step.tool == tool["name"] and step.ok:
                    keys = step.arguments.get(arg)
                    cut = _blocks(text_of(step.answer) or "", keys, held)
                    if cut is None:
                        return out
                    segments.append(cut)
        layouts = _block_layouts(segments)
        if layouts is None:
            continue
        line, missing, sep = layouts
        source: dict[str, Any] = {"items": f"{{args.{arg}}}", "at": f"/{docs.name}/{{key}}", "line": line}
        if missing is not None:
            source["missing"] = missing
        join = {"$join": [source], "sep": sep}
        shown = next(s for s in rec.steps if s.tool == tool["name"] and s.ok)
        out.append(text_answer(shown, join))
    return out


def _blocks(text: str, keys: Any, held: dict[str, Any]) -> list[tuple[bool, str]] | None:
    """The answer cut at each key (in order), each piece with the key and its document put back as
    ``{key}`` and ``{value}``; whether the document was there."""
    if not isinstance(keys, list) or len(keys) < 1 or not all(isinstance(k, str) and k for k in keys):
        return None
    starts = []
    at = 0
    for k in keys:
        at = text.find(k, at)
        if at < 0:
            return None
        starts.append(at)
        at += len(k)
    lead = text[: starts[0]]  # what comes before each key (``== /a``), the first one's at the start
    if "\n" in lead or any(text[s - len(lead) : s] != lead for s in starts):
        return None
    starts = [s - len(lead) for s in starts]
    out = []
    for i, k in enumerate(keys):
        piece = text[starts[i] : starts[i + 1] if i + 1 < len(keys) else len(text)]
        value = held.get(k)
        found = False
        if isinstance(value, str) and value and value in piece:
            found, piece = True, piece.replace(value, "{value}", 1)
        out.append((found, piece.replace(k, "{key}")))
    return out


def _block_layouts(segments: list[list[tuple[bool, str]]]) -> tuple[str, str | None, str] | None:
    """(layout of a block with its document, of one without, separator) the cut answers agree on."""
    inner = [p for cut in segments for _, p in cut[:-1]]
    if not inner:
        return None
    for n in range(1, min(len(p) for p in inner) + 1):
        sep = inner[0][-n:]
        if not all(p.endswith(sep) for p in inner):
            break
        found: set[str] = set()
        missing: set[str] = set()
        for cut in segments:
            for i, (there, piece) in enumerate(cut):
                layout = piece[: -len(sep)] if i + 1 < len(cut) else piece
                (found if there else missing).add(layout)
        if len(found) == 1 and len(missing) <= 1:
            return next(iter(found)), next(iter(missing), None), sep
    return None


def tree_candidates(tool: dict[str, Any], rec: Recording, keys: dict[str, set[str]]) -> list[dict[str, Any]]:
    """A read whose answer is JSON nodes each naming a key of a keyed collection relative to a
    path argument, nested in a list field (``{"name": "docs", "children": [...]}``): a ``$tree``
    of the keys under that argument, each collection's nodes in the recorded shape."""
    shown = [s for s in rec.steps if s.tool == tool["name"] and s.ok and text_of(s.answer) is not None]
    if not shown or not keys:
        return []
    import orjson

    out: list[dict[str, Any]] = []
    for arg in string_args(tool):
        shapes: dict[str, set[str]] = {}
        indents: set[Any] = set()
        fits = True
        for step in shown:
            text = text_of(step.answer) or ""
            try:
                nodes = orjson.loads(text)
            except orjson.JSONDecodeError:
                nodes = None
            under = step.arguments.get(arg)
            if not isinstance(nodes, list) or not isinstance(under, str):
                fits = False
                break
            fits = _tree_shapes(nodes, under.rstrip("/") + "/", keys, shapes)
            indents.add(next((i for i in (2, None, 4) if json_text(nodes, i) == text), "no"))
            if not fits:
                break
        if not fits or not shapes or len(indents) != 1 or "no" in indents:
            continue
        if any(len(v) != 1 for v in shapes.values()):
            continue
        sources = [{"keys": p, "to": orjson.loads(next(iter(v)))} for p, v in sorted(shapes.items())]
        indent = next(iter(indents))
        tree: dict[str, Any] = {"$tree": sources, "under": f"{{args.{arg}}}", "sort": True}
        text_t: dict[str, Any] = {"$json": tree, **({"indent": indent} if indent else {})}
        out.append(text_answer(shown[0], text_t))
    return out


def _tree_shapes(
    nodes: list[Any], prefix: str, keys: dict[str, set[str]], shapes: dict[str, set[str]]
) -> bool:
    for node in nodes:
        if not isinstance(node, dict):
            return False
        hit = next(
            (
                (pointer, f)
                for f, v in node.items()
                if isinstance(v, str)
                for pointer, ks in keys.items()
                if prefix + v in ks
            ),
            None,
        )
        if hit is None:
            return False
        pointer, name_field = hit
        shape: dict[str, Any] = {}
        for f, v in node.items():
            if f == name_field:
                shape[f] = "{name}"
            elif isinstance(v, list):
                shape[f] = "{children}"
                if not _tree_shapes(v, prefix + node[name_field] + "/", keys, shapes):
                    return False
            else:
                shape[f] = v
        shapes.setdefault(pointer, set()).add(json_text(shape))
    return True


def _layouts(
    shown: list[Step], arg: str, keys: dict[str, set[str]], deep: bool
) -> tuple[dict[str, str], str | None] | None:
    """Each collection's line layout in the recorded listings (``[FILE] {name}``), and the text of
    an empty listing when one was recorded; None when a line names no key."""
    layouts: dict[str, set[str]] = {}
    empties: set[str] = set()
    for step in shown:
        prefix = str(step.arguments[arg]).rstrip("/") + "/"
        text = text_of(step.answer) or ""
        lines = text.split("\n") if text else []
        hits = []
        for line in lines:
            hit = None
            for pointer, ks in keys.items():
                for k in sorted(ks, key=len, reverse=True):
                    tail = k[len(prefix) :] if k.startswith(prefix) else ""
                    if not tail or (not deep and "/" in tail):
                        continue
                    if deep and k in line:
                        hit = (pointer, line.replace(k, "{key}", 1))
                    elif tail in line:
                        hit = (pointer, line.replace(tail, "{name}", 1))
                    if hit:
                        break
                if hit:
                    break
            hits.append(hit)
        if lines and all(h is None for h in hits):
            empties.add(text)
            continue
        if any(h is None for h in hits):
            return None
        for pointer, layout in (h for h in hits if h is not None):
            layouts.setdefault(pointer, set()).add(layout)
    if not layouts or any(len(v) != 1 for v in layouts.values()) or len(empties) > 1:
        return None
    return {p: next(iter(v)) for p, v in layouts.items()}, next(iter(empties), None)


@dataclass(slots=True)
class FlatListing:
    """A read whose text answer is a line per key of one collection, the keys whole (``  feature``,
    ``* main``), one of them marked (the current one: ``* {name}``) when two layouts take turns."""

    tool: str
    pointer: str
    line: str
    marked: str | None = None
    initial: list[str] = field(default_factory=list)
    """Keys the listings show that no recorded write made (there from the start)."""
    current: str | None = None
    """The marked key of the first listing (the current one at the start; the state keeps the
    history of current keys, ``[current]`` at the start)."""

    @property
    def at(self) -> str:
        return "/current" + self.pointer.replace("/", "_")


def flat_listings(
    rec: Recording, tools: dict[str, dict[str, Any]], keys: dict[str, set[str]]
) -> list[FlatListing]:
    out = []
    for name, tool in tools.items():
        shown = [s for s in rec.steps if s.tool == name and s.ok and text_of(s.answer) is not None]
        if not shown or not is_read(tool) or any(is_json(text_of(s.answer) or "") for s in shown):
            continue
        found = _flat(name, [(text_of(s.answer) or "").split("\n") for s in shown], keys)
        if found is not None:
            out.append(found)
    return out


def _flat(tool: str, answers: list[list[str]], keys: dict[str, set[str]]) -> FlatListing | None:
    layouts: dict[str, set[str]] = {}
    for lines in answers:
        for line in lines:
            for pointer, ks in keys.items():
                k = next((k for k in sorted(ks, key=len, reverse=True) if k and k in line), None)
                if k is not None:
                    layouts.setdefault(pointer, set()).add(line.replace(k, "{name}", 1))
                    break
    if len(layouts) != 1:
        return None
    [(pointer, forms)] = layouts.items()
    if len(forms) > 2 or (len(forms) > 1 and "{name}" in forms):
        return None
    patterns = {f: re.compile(re.escape(f).replace(re.escape("{name}"), "(.+)")) for f in forms}
    initial: list[str] = []
    per_answer: list[list[tuple[str, str]]] = []
    for lines in answers:
        seen = []
        for line in lines:
            hit = next(((f, m.group(1)) for f, p in patterns.items() if (m := p.fullmatch(line))), None)
            if hit is None or (hit[0] == "{name}" and hit[1] not in keys[pointer]):
                return None  # a bare name layout cannot tell an unknown key from other text
            seen.append(hit)
            if hit[1] not in keys[pointer] and hit[1] not in initial:
                initial.append(hit[1])
        per_answer.append(seen)
    if len(forms) == 1:
        return FlatListing(tool, pointer, next(iter(forms)), initial=initial)
    marked = [f for f in forms if all(sum(h[0] == f for h in seen) == 1 for seen in per_answer if seen)]
    if len(marked) != 1:
        return None
    [plain] = forms - set(marked)
    first = next((n for f, n in per_answer[0] if f == marked[0]), None)
    return FlatListing(tool, pointer, plain, marked[0], initial, first)


def flat_candidates(listing: FlatListing) -> list[dict[str, Any]]:
    source: dict[str, Any] = {"keys": listing.pointer, "line": listing.line}
    if listing.marked is not None:
        source["mark"] = {"at": listing.at, "line": listing.marked}
    return [
        {"result": None, "text": {"$join": [source], "sep": "\n", "sort": sort}} for sort in (True, False)
    ]


def select_candidates(
    tool: dict[str, Any],
    rec: Recording,
    listings: list[FlatListing],
    keys: dict[str, set[str]],
    context: set[str],
) -> list[dict[str, Any]]:
    """A write given a key of a listed collection with a marked (current) key, that makes it the
    current one (``git_checkout(branch_name)``): it must exist, and becomes the marked key."""
    out = []
    for listing in listings:
        if listing.marked is None:
            continue
        known = keys.get(listing.pointer, set()) | set(listing.initial)
        for arg in string_args(tool):
            values = [s.arguments.get(arg) for s in rec.steps if s.tool == tool["name"] and s.ok]
            if arg in context or not values or not all(v in known for v in values):
                continue
            item = f"{listing.pointer}/{{args.{arg}}}"
            out.append(
                {
                    "requires": [{"exists": item, "error": "TODO: the error when there is no such key"}],
                    # appended to a history whose last item is the current key: a selection
                    # overwrites nothing (a tool that says it is not destructive stays so)
                    "effects": [{"op": "insert", "path": listing.at, "value": f"{{args.{arg}}}"}],
                    "result": None,
                }
            )
    return out
