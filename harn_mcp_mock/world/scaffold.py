"""``world init --from-cassette``: scaffold a world spec from recordings of a real server.

The recording is read as a list of steps (a tool call and the answer it got). From it:

- the tools (name, title, description, schemas, annotations) come from ``tools/list``;
- the state's *collections* are the lists of objects that read tools' results show (a list
  whose objects share a key field such as ``id`` or ``name`` is kept as an object keyed by it;
  one without is kept as a list), and their initial contents are what reads showed before the
  first write;
- each tool gets candidate models, from its name (create, add, delete, read, search, ...), its
  annotations and its arguments' shapes against the collections (a batch of new items, a batch
  of keys, a batch of items referring to an item by key with values to add or remove, a key
  list or a query to filter by) and result and text templates in the recorded shape
  (``$json`` with the recorded indentation, key order from the recorded results, constant or
  argument-templated texts, error texts with the argument values put back as references);
- the candidates are *tested on the recording itself*: starting from a world where every tool
  answers only its recorded answers (``recorded``), each tool's model is kept when the whole
  session, replayed step by step, reproduces at least as many answers with it (writes first,
  then reads: a read model needs the writes' effects). A tool no model reproduces keeps its
  recorded answers and a ``todo`` (``world check`` names it).

:func:`replay` runs a recording against a spec and says, step by step, whether the world's
answer equals the recorded one, with a diff pointing at the part of the spec to edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice, product
from pathlib import Path
from typing import Any

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.world.templates import json_text

KEY_FIELDS = ("id", "name", "key", "uuid", "path", "slug")
READ_VERBS = {"read", "get", "list", "open", "search", "find", "query", "show", "fetch", "describe", "view"}
CREATE_VERBS = {"create", "add", "insert", "new", "put", "post", "register", "append", "write"}
DELETE_VERBS = {"delete", "remove", "destroy", "drop", "purge", "unlink"}
RECORDED = "recorded"
MAX_COMBINATIONS = 64
"""Candidate views of one read tool tried at most (a view per collection its answers show)."""


# --- the recording -------------------------------------------------------------------------------


@dataclass(slots=True)
class Step:
    session: int
    index: int
    tool: str
    arguments: dict[str, Any]
    answer: dict[str, Any]
    """``{"result": ...}`` or ``{"error": ...}``, as recorded (see :func:`normal`)."""
    method: str = "tools/call"
    """``tools/call`` (``tool`` is the tool's name), ``resources/read`` (the URI) or
    ``prompts/get`` (the prompt's name)."""

    @property
    def label(self) -> str:
        return self.tool if self.method == "tools/call" else f"{self.method} {self.tool}"

    @property
    def ok(self) -> bool:
        result = self.answer.get("result")
        return isinstance(result, dict) and not result.get("isError")


@dataclass(slots=True)
class Recording:
    tools: list[dict[str, Any]]
    server: dict[str, Any]
    sessions: list[list[Step]]
    resources: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def steps(self) -> list[Step]:
        """The tool calls of every session."""
        return [s for session in self.sessions for s in session if s.method == "tools/call"]


def read_recordings(paths: Sequence[Path]) -> Recording:
    """The tools and the tool calls (with their answers) of one or more cassettes of one server."""
    from harn_mcp_mock.cassette.model import load_cassette

    tools: list[dict[str, Any]] = []
    server: dict[str, Any] = {}
    sessions: list[list[Step]] = []
    offered: dict[str, list[dict[str, Any]]] = {"resources": [], "prompts": []}
    for n, path in enumerate(paths):
        cassette = load_cassette(path)
        answers = cassette.responses_by_request()
        steps: list[Step] = []
        for msg in cassette.requests("client"):
            answer = answers.get(msg.seq)
            reply = answer.message if answer is not None and isinstance(answer.message, dict) else None
            if reply is None:
                continue
            params: dict[str, Any] = (
                msg.message.get("params") if isinstance(msg.message.get("params"), dict) else {}
            )
            if msg.method == "initialize" and isinstance(reply.get("result"), dict):
                info = reply["result"].get("serverInfo") or {}
                server = {k: v for k, v in info.items() if k in ("name", "version") and isinstance(v, str)}
                if isinstance(reply["result"].get("instructions"), str):
                    server["instructions"] = reply["result"]["instructions"]
            elif msg.method == "tools/list" and isinstance(reply.get("result"), dict):
                listed = reply["result"].get("tools")
                if isinstance(listed, list) and listed:
                    tools = [t for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)]
            elif msg.method in ("resources/list", "prompts/list") and isinstance(reply.get("result"), dict):
                kind = msg.method.split("/")[0]
                found = reply["result"].get(kind)
                if isinstance(found, list) and found:
                    offered[kind] = [d for d in found if isinstance(d, dict)]
            elif msg.method == "tools/call" and isinstance(params.get("name"), str):
                args: dict[str, Any] = (
                    params["arguments"] if isinstance(params.get("arguments"), dict) else {}
                )
                steps.append(Step(n, len(steps), params["name"], args, normal(reply)))
            elif msg.method == "resources/read" and isinstance(params.get("uri"), str):
                steps.append(Step(n, len(steps), params["uri"], {}, normal(reply, tool=False), msg.method))
            elif msg.method == "prompts/get" and isinstance(params.get("name"), str):
                args = params["arguments"] if isinstance(params.get("arguments"), dict) else {}
                steps.append(Step(n, len(steps), params["name"], args, normal(reply, tool=False), msg.method))
        sessions.append(steps)
    if not tools:
        raise UsageError(
            f"{paths[0]}: no tools/list answer recorded: record a session that lists the tools "
            "(every MCP client does on start-up)"
        )
    return Recording(tools, server, sessions, offered["resources"], offered["prompts"])


def normal(reply: dict[str, Any], *, tool: bool = True) -> dict[str, Any]:
    """An answer as compared: a tool result's content, structuredContent and isError (false when
    absent), another result without its ``_meta``; an error's code and message."""
    if isinstance(reply.get("error"), dict):
        error = reply["error"]
        return {"error": {"code": error.get("code"), "message": error.get("message")}}
    result: dict[str, Any] = reply["result"] if isinstance(reply.get("result"), dict) else {}
    if not tool:
        return {"result": {k: v for k, v in result.items() if k != "_meta"}}
    out: dict[str, Any] = {"content": result.get("content", [])}
    if "structuredContent" in result:
        out["structuredContent"] = result["structuredContent"]
    out["isError"] = bool(result.get("isError", False))
    return {"result": out}


def value_of(answer: dict[str, Any]) -> Any:
    """What a successful answer shows: its structuredContent, else its text read as JSON, else
    the text."""
    result = answer.get("result") or {}
    if "structuredContent" in result:
        return result["structuredContent"]
    text = text_of(answer)
    if text is not None:
        import orjson

        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    return None


def text_of(answer: dict[str, Any]) -> str | None:
    content = (answer.get("result") or {}).get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
        if content[0].get("type") == "text" and isinstance(text, str):
            return text
    return None


# --- collections ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Collection:
    name: str
    fields: list[str]
    key: str | None
    """The key field (the state keeps the items in an object keyed by it), or None (a list)."""

    @property
    def pointer(self) -> str:
        return f"/{self.name}"

    def matches(self, item: Any) -> bool:
        return isinstance(item, dict) and set(item) == set(self.fields)


def verb(name: str) -> str:
    """The first word of a tool name that is a known verb (``mcp_delete_file`` -> ``delete``), else
    its first word (``git_status`` -> ``git``)."""
    words = [w.lower() for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", name) if w]
    for w in words:
        if w in READ_VERBS | CREATE_VERBS | DELETE_VERBS:
            return w
    return words[0] if words else name


def is_read(tool: dict[str, Any]) -> bool:
    hints: dict[str, Any] = tool["annotations"] if isinstance(tool.get("annotations"), dict) else {}
    if "readOnlyHint" in hints:
        return bool(hints["readOnlyHint"])
    return verb(tool["name"]) in READ_VERBS


def lists_in(value: Any) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """(key, list) for every non-empty list of objects under an object key in ``value``."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if isinstance(sub, list) and sub and all(isinstance(i, dict) for i in sub):
                yield key, sub
            yield from lists_in(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from lists_in(sub)


def find_collections(rec: Recording, tools: dict[str, dict[str, Any]]) -> list[Collection]:
    found: dict[frozenset[str], Collection] = {}
    keyed: dict[frozenset[str], set[str]] = {}
    for step in rec.steps:
        if not step.ok or step.tool not in tools or not is_read(tools[step.tool]):
            continue
        for key, items in lists_in(value_of(step.answer)):
            sig = frozenset(items[0])
            if any(frozenset(i) != sig for i in items):
                continue
            if sig not in found:
                found[sig] = Collection(key, list(items[0]), None)
                keyed[sig] = {f for f in KEY_FIELDS if f in sig}
            for f in list(keyed[sig]):
                values = [i.get(f) for i in items]
                if not all(isinstance(v, str | int) for v in values) or len(set(values)) != len(values):
                    keyed[sig].discard(f)
    out = []
    for sig, coll in found.items():
        coll.key = next((f for f in KEY_FIELDS if f in keyed[sig]), None)
        out.append(coll)
    return out


def initial_state(
    rec: Recording, tools: dict[str, dict[str, Any]], colls: list[Collection]
) -> dict[str, Any]:
    """Each collection with the items reads showed before the first write of the first session."""
    state: dict[str, Any] = {c.name: ({} if c.key else []) for c in colls}
    for step in rec.sessions[0] if rec.sessions else []:
        if step.method != "tools/call":
            continue
        if step.tool not in tools or not is_read(tools[step.tool]):
            break
        if not step.ok:
            continue
        for _, items in lists_in(value_of(step.answer)):
            for coll in colls:
                if not all(coll.matches(i) for i in items):
                    continue
                for item in items:
                    if coll.key:
                        state[coll.name].setdefault(str(item[coll.key]), item)
                    elif item not in state[coll.name]:
                        state[coll.name].append(item)
    return state


# --- documents: values written and read back at a key ------------------------------------------

KEY_ARGS = ("path", "key", "name", "id", "uri", "file", "filename", "filepath")
VALUE_ARGS = ("content", "contents", "value", "text", "body", "data")
SOURCE_ARGS = ("source", "src", "from", "old_path", "oldPath")
DEST_ARGS = ("destination", "dest", "to", "target", "new_path", "newPath")


@dataclass(slots=True)
class Documents:
    """A write tool stores ``value`` at ``key`` and a read tool given that key answers it back
    (``write_file(path, content)``, ``read_text_file(path)``): the state keeps a collection of
    documents keyed by the key (``/files/<path>``)."""

    name: str
    writer: str
    key: str
    value: str
    readers: list[str]

    def at(self, arg: str) -> str:
        return f"/{self.name}/{{args.{arg}}}"


def _strings(tool: dict[str, Any]) -> list[str]:
    return [a for a, sc in _props(tool).items() if isinstance(sc, dict) and sc.get("type") == "string"]


def find_documents(rec: Recording, tools: dict[str, dict[str, Any]], taken: set[str]) -> Documents | None:
    for w in tools.values():
        if is_read(w):
            continue
        strings = _strings(w)
        key = next((a for a in KEY_ARGS if a in strings), None)
        value = next((a for a in VALUE_ARGS if a in strings), None)
        if key is None or value is None:
            continue
        readers: list[str] = []
        for session in rec.sessions:
            last: dict[Any, Any] = {}
            for step in session:
                if step.method != "tools/call":
                    continue
                if step.tool == w["name"] and step.ok:
                    last[step.arguments.get(key)] = step.arguments.get(value)
                elif step.ok and key in step.arguments and step.arguments[key] in last:
                    if text_of(step.answer) == last[step.arguments[key]] and step.tool not in readers:
                        readers.append(step.tool)
        if readers:
            words = [
                x
                for x in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", w["name"])
                if x and verb(x) != verb(w["name"])
            ]
            name = (words[-1].lower() + "s") if words else "documents"
            while name in taken:
                name += "_"
            return Documents(name, w["name"], key, value, readers)
    return None


@dataclass(slots=True)
class Marks:
    """A create tool given only a key (``create_directory(path)``): the state keeps the keys it
    created (``/directories/<path>``, each ``true``), for listings to show."""

    name: str
    writer: str
    key: str

    def at(self, arg: str) -> str:
        return f"/{self.name}/{{args.{arg}}}"


def _plural(tool_name: str) -> str:
    words = [
        x for x in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", tool_name) if x and verb(x) != verb(tool_name)
    ]
    if not words:
        return "items"
    word = words[-1].lower()
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


def find_marks(
    rec: Recording, tools: dict[str, dict[str, Any]], docs: Documents | None, taken: set[str]
) -> list[Marks]:
    called = {s.tool for s in rec.steps if s.ok}
    out: list[Marks] = []
    for t in tools.values():
        if is_read(t) or t["name"] not in called or verb(t["name"]) not in CREATE_VERBS:
            continue
        if docs is not None and t["name"] == docs.writer:
            continue
        strings = _strings(t)
        key = next((a for a in KEY_ARGS if a in strings), None)
        if key is None or any(a in strings for a in (*VALUE_ARGS, *SOURCE_ARGS, *DEST_ARGS)):
            continue
        name = _plural(t["name"])
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(Marks(name, t["name"], key))
    return out


def mark_candidates(tool: dict[str, Any], marks: list[Marks]) -> list[dict[str, Any]]:
    return [
        {"effects": [{"op": "set", "path": m.at(m.key), "value": True}], "result": None}
        for m in marks
        if m.writer == tool["name"]
    ]


def known_keys(rec: Recording, docs: Documents | None, marks: list[Marks]) -> dict[str, set[str]]:
    """The keys the recording's writes put in each keyed collection of documents or marks."""
    out: dict[str, set[str]] = {}
    for step in rec.steps:
        if not step.ok:
            continue
        if docs is not None and step.tool == docs.writer:
            out.setdefault(f"/{docs.name}", set()).add(str(step.arguments.get(docs.key)))
        elif docs is not None and step.tool != docs.writer:
            for a in DEST_ARGS:
                if isinstance(step.arguments.get(a), str) and any(s in step.arguments for s in SOURCE_ARGS):
                    out.setdefault(f"/{docs.name}", set()).add(step.arguments[a])
        for m in marks:
            if step.tool == m.writer and isinstance(step.arguments.get(m.key), str):
                out.setdefault(f"/{m.name}", set()).add(step.arguments[m.key])
    return out


def _is_json(text: str) -> bool:
    import orjson

    try:
        return isinstance(orjson.loads(text), dict | list)
    except orjson.JSONDecodeError:
        return False


def listing_candidates(tool: dict[str, Any], rec: Recording, keys: dict[str, set[str]]) -> list[dict[str, Any]]:
    """A read whose text answers are lines each naming a key of a keyed collection, relative to
    a path argument (``[FILE] notes.txt`` for ``<path>/notes.txt``) or whole: a ``$join``
    listing of the keys directly under that argument (or all below it, filtered by a glob
    argument), each collection's lines in the recorded layout, a constant text when empty."""
    name = tool["name"]
    shown = [s for s in rec.steps if s.tool == name and s.ok and text_of(s.answer) is not None]
    if not shown or not keys or any(_is_json(text_of(s.answer) or "") for s in shown):
        return []
    strings = _strings(tool)
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
                variants += [{**v, "glob": f"{{args.{g}}}"} for v in list(variants) for g in strings if g != arg]
            sc = (shown[0].answer.get("result") or {}).get("structuredContent")
            for join in variants:
                if isinstance(sc, dict) and len(sc) == 1:
                    field_name = next(iter(sc))
                    out.append({"result": {field_name: join}, "text": f"{{result.{field_name}}}"})
                else:
                    out.append({"result": None, "text": join})
    return out


def batch_read_candidates(tool: dict[str, Any], rec: Recording, docs: Documents | None) -> list[dict[str, Any]]:
    """A read given a list of document keys whose text answer is, for each key in order, a block
    naming the key and showing its document (or an error line when there is none), joined by a
    separator (``read_multiple_files(paths)``): a ``$join`` of the listed keys."""
    if docs is None:
        return []
    lists = [a for a, sc in _props(tool).items() if isinstance(sc, dict) and sc.get("type") == "array"]
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
        sc = (shown.answer.get("result") or {}).get("structuredContent")
        if isinstance(sc, dict) and len(sc) == 1:
            field_name = next(iter(sc))
            out.append({"result": {field_name: join}, "text": f"{{result.{field_name}}}"})
        else:
            out.append({"result": None, "text": join})
    return out


def is_read_name(rec: Recording, name: str) -> bool:
    tool = next((t for t in rec.tools if t["name"] == name), None)
    return tool is not None and is_read(tool)


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
    if starts[0] != 0:
        return None
    out = []
    for i, k in enumerate(keys):
        piece = text[starts[i] : starts[i + 1] if i + 1 < len(keys) else len(text)]
        value = held.get(k)
        found = isinstance(value, str) and bool(value) and value in piece
        if found:
            piece = piece.replace(value, "{value}", 1)
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
    for arg in _strings(tool):
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
        sc = (shown[0].answer.get("result") or {}).get("structuredContent")
        if isinstance(sc, dict) and len(sc) == 1:
            field_name = next(iter(sc))
            out.append({"result": {field_name: text_t}, "text": f"{{result.{field_name}}}"})
        else:
            out.append({"result": None, "text": text_t})
    return out


def _tree_shapes(nodes: list[Any], prefix: str, keys: dict[str, set[str]], shapes: dict[str, set[str]]) -> bool:
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


def document_candidates(tool: dict[str, Any], rec: Recording, docs: Documents) -> list[dict[str, Any]]:
    """Candidate models of a tool over the documents: the writer sets, a reader answers the
    document (or the recorded error when there is none), a tool with a source and a destination
    moves one, a delete tool with the key deletes one."""
    name = tool["name"]
    strings = _strings(tool)
    missing = {"exists": docs.at(docs.key), "error": "TODO: the error when there is no such document"}
    if name == docs.writer:
        return [
            {
                "effects": [{"op": "set", "path": docs.at(docs.key), "value": f"{{args.{docs.value}}}"}],
                "result": None,
            }
        ]
    if name in docs.readers:
        shown = [s for s in rec.steps if s.tool == name and s.ok]
        sc = (shown[0].answer.get("result") or {}).get("structuredContent") if shown else None
        get = {"$get": docs.at(docs.key)}
        if isinstance(sc, dict) and len(sc) == 1:
            field_name = next(iter(sc))
            return [{"requires": [missing], "result": {field_name: get}, "text": f"{{result.{field_name}}}"}]
        return [{"requires": [missing], "result": None, "text": get}]
    source = next((a for a in SOURCE_ARGS if a in strings), None)
    dest = next((a for a in DEST_ARGS if a in strings), None)
    if source and dest:
        src = {"exists": docs.at(source), "error": "TODO: the error when there is no such document"}
        return [
            {
                "requires": [src],
                "effects": [{"op": "move", "from": docs.at(source), "path": docs.at(dest)}],
                "result": None,
            }
        ]
    if verb(name) in DELETE_VERBS and docs.key in strings:
        return [
            {"requires": [missing], "effects": [{"op": "delete", "path": docs.at(docs.key)}], "result": None}
        ]
    return []


# --- candidate models ----------------------------------------------------------------------------


def _props(tool: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), dict) else {}
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _arg_values(rec: Recording, tool: str, arg: str) -> list[Any]:
    return [s.arguments[arg] for s in rec.steps if s.tool == tool and arg in s.arguments]


def _item_shape(values: list[Any]) -> tuple[str, set[str]]:
    """("objects", their fields) / ("strings", {}) / ("other", {}) for a list argument's values."""
    items = [i for v in values if isinstance(v, list) for i in v]
    if items and all(isinstance(i, dict) for i in items):
        return "objects", set().union(*(set(i) for i in items))
    if items and all(isinstance(i, str) for i in items):
        return "strings", set()
    return "other", set()


def _fields(coll: Collection, var: str) -> dict[str, str]:
    return {f: f"{{{var}.{f}}}" for f in coll.fields}


def _key_path(coll: Collection, ref: str) -> str:
    return f"{coll.pointer}/{{{ref}}}"


def write_candidates(tool: dict[str, Any], rec: Recording, colls: list[Collection]) -> list[dict[str, Any]]:
    """Candidate (requires, effects, result) models of a tool that writes."""
    name = tool["name"]
    v = verb(name)
    out: list[dict[str, Any]] = []
    keyed = [c for c in colls if c.key]
    eff: dict[str, Any]
    guard: dict[str, Any]
    inner: dict[str, Any]
    each_v: dict[str, Any]
    found: dict[str, Any]
    there: dict[str, Any]
    for arg, schema in _props(tool).items():
        if not isinstance(schema, dict) or schema.get("type") != "array":
            continue
        shape, fields = _item_shape(_arg_values(rec, name, arg))
        batch = f"{{args.{arg}}}"
        for coll in colls:
            if shape == "objects" and fields == set(coll.fields):
                if v in DELETE_VERBS:
                    if coll.key:
                        eff = {
                            "op": "delete",
                            "path": _key_path(coll, f"x.{coll.key}"),
                            "when": {"exists": _key_path(coll, f"x.{coll.key}")},
                        }
                    else:
                        eff = {"op": "remove", "path": coll.pointer, "where": _fields(coll, "x")}
                    out.append(
                        {
                            "effects": [{"op": "each", "items": batch, "as": "x", "effects": [eff]}],
                            "result": None,
                        }
                    )
                else:  # a batch of new items; those already there are skipped
                    if coll.key:
                        guard = {"missing": _key_path(coll, f"x.{coll.key}")}
                        eff = {
                            "op": "insert",
                            "path": coll.pointer,
                            "key": f"{{x.{coll.key}}}",
                            "value": _fields(coll, "x"),
                            "when": guard,
                        }
                    else:
                        guard = {"path": coll.pointer, "none": _fields(coll, "x")}
                        eff = {
                            "op": "insert",
                            "path": coll.pointer,
                            "value": _fields(coll, "x"),
                            "when": guard,
                        }
                    new = {"$map": batch, "as": "x", "when": guard, "on": "before", "to": _fields(coll, "x")}
                    out.append(
                        {
                            "effects": [{"op": "each", "items": batch, "as": "x", "effects": [eff]}],
                            "result": new,
                        }
                    )
        if shape == "strings":  # a batch of keys
            for coll in keyed:
                base = {
                    "op": "delete",
                    "path": _key_path(coll, "k"),
                    "when": {"exists": _key_path(coll, "k")},
                }
                cascades: list[dict[str, Any]] = []
                for other in colls:
                    if other is coll:
                        continue
                    refs = _ref_fields(other, coll, rec)
                    cascades += [{"op": "remove", "path": other.pointer, "where": {f: "{k}"}} for f in refs]
                for effs in ([base, *cascades], [base]) if cascades else ([base],):
                    if v in DELETE_VERBS:
                        out.append(
                            {
                                "effects": [{"op": "each", "items": batch, "as": "k", "effects": effs}],
                                "result": None,
                            }
                        )
        if shape == "objects":  # a batch of (reference to an item, values for one of its list fields)
            for coll in keyed:
                for ref, lst, target in _ref_list(fields, coll, rec, name, arg):
                    item = _key_path(coll, f"x.{ref}")
                    found = {"exists": item, "error": "TODO: the error when the item does not exist"}
                    there = {"path": f"{item}/{target}", "any": "{v}"}
                    if v in DELETE_VERBS:
                        inner = {"op": "remove", "path": f"{item}/{target}", "where": "{v}"}
                        each_v = {
                            "op": "each",
                            "items": f"{{x.{lst}}}",
                            "as": "v",
                            "when": {"exists": item},
                            "effects": [inner],
                        }
                        eff = {"op": "each", "items": batch, "as": "x", "effects": [each_v]}
                        out.append({"effects": [eff], "result": None})
                        out.append(
                            {
                                "requires": [dict(found, each=batch, **{"as": "x"})],
                                "effects": [eff],
                                "result": None,
                            }
                        )
                    else:
                        inner = {
                            "op": "insert",
                            "path": f"{item}/{target}",
                            "value": "{v}",
                            "when": {"not": there},
                        }
                        eff = {
                            "op": "each",
                            "items": batch,
                            "as": "x",
                            "effects": [
                                {"op": "each", "items": f"{{x.{lst}}}", "as": "v", "effects": [inner]}
                            ],
                        }
                        added = {"$map": f"{{x.{lst}}}", "as": "v", "when": {"not": there}, "on": "before"}
                        for rname, lname in _result_names(rec, name, ref, lst):
                            res = {"$map": batch, "as": "x", "to": {rname: f"{{x.{ref}}}", lname: added}}
                            out.append(
                                {
                                    "requires": [dict(found, each=batch, **{"as": "x"})],
                                    "effects": [eff],
                                    "result": res,
                                }
                            )
    return out


def _ref_fields(other: Collection, coll: Collection, rec: Recording) -> list[str]:
    """Fields of ``other``'s items whose recorded values are all keys of ``coll``'s items."""
    keys: set[Any] = set()
    values: dict[str, list[Any]] = {f: [] for f in other.fields}
    for step in rec.steps:
        for where in (step.arguments, value_of(step.answer) if step.ok else None):
            for _, items in lists_in(where):
                for i in items:
                    if coll.matches(i):
                        keys.add(i[coll.key or ""])
                    elif other.matches(i):
                        for f in other.fields:
                            values[f].append(i[f])
    return [f for f, vs in values.items() if vs and all(isinstance(x, str) and x in keys for x in vs)]


def _ref_list(
    fields: set[str], coll: Collection, rec: Recording, tool: str, arg: str
) -> list[tuple[str, str, str]]:
    """(reference field, list field of the argument, list field of the item) triples."""
    items = [i for v in _arg_values(rec, tool, arg) if isinstance(v, list) for i in v if isinstance(i, dict)]
    if not items:
        return []
    lists = [f for f in fields if all(isinstance(i.get(f), list) for i in items)]
    scalars = [f for f in fields if all(isinstance(i.get(f), str) for i in items)]
    targets = [f for f in coll.fields if f != coll.key]
    out = []
    for ref in scalars:
        for lst in lists:
            if len(fields) != 2:
                continue
            for target in targets:
                out.append((ref, lst, target))
    return out


def _result_names(rec: Recording, tool: str, ref: str, lst: str) -> list[tuple[str, str]]:
    """How the recorded results name the reference and the list (``entityName``, ``addedObservations``)."""
    names: list[tuple[str, str]] = []
    for step in rec.steps:
        if step.tool != tool or not step.ok:
            continue
        for _, items in lists_in(value_of(step.answer)):
            first = items[0]
            refs = [k for k, val in first.items() if isinstance(val, str)]
            lists = [k for k, val in first.items() if isinstance(val, list)]
            if len(first) == 2 and refs and lists and (refs[0], lists[0]) not in names:
                names.append((refs[0], lists[0]))
    return names or [(ref, lst)]


def read_candidates(tool: dict[str, Any], rec: Recording, colls: list[Collection]) -> list[Any]:
    """Candidate result templates of a read: for each collection its recorded results show, the
    whole collection, the items whose key is in a list argument, the items a query argument
    matches; and for a collection referring to a shown one, the items referring to them."""
    name = tool["name"]
    shown = [value_of(s.answer) for s in rec.steps if s.tool == name and s.ok]
    shape = next((v for v in shown if isinstance(v, dict)), None)
    if shape is None:
        return []
    props = _props(tool)
    lists = [a for a, s in props.items() if isinstance(s, dict) and s.get("type") == "array"]
    texts = [a for a, s in props.items() if isinstance(s, dict) and s.get("type") == "string"]
    per_key: list[list[tuple[str, Any]]] = []
    by_key: dict[str, Collection] = {}
    for key in shape:
        coll = next((c for c in colls if c.name == key), None)
        if coll is None:
            return []
        by_key[key] = coll
    for key, coll in by_key.items():
        src: dict[str, Any] = {"$list": coll.pointer, "fields": coll.fields}
        options: list[tuple[str, Any]] = [(key, src)]
        if coll.key:
            options += [(key, {**src, "where_in": {coll.key: f"{{args.{a}}}"}}) for a in lists]
            searchable = list(coll.fields)
            options += [
                (key, {**src, "match": {"text": f"{{args.{a}}}", "fields": searchable}}) for a in texts
            ]
        per_key.append(options)
    combos = [dict(choice) for choice in islice(product(*per_key), MAX_COMBINATIONS)]
    # collections referring to another shown (filtered) collection
    out = []
    for combo in combos:
        out.append(combo)
        for key, coll in by_key.items():
            for okey, other in by_key.items():
                if (
                    other is coll
                    or not other.key
                    or (combo[okey].get("where_in") is None and "match" not in combo[okey])
                ):
                    continue
                refs = _ref_fields(coll, other, rec)
                if not refs:
                    continue
                names = {"$map": combo[okey], "to": f"{{item.{other.key}}}"}
                for mode in ("where_any_in", "where_in"):
                    out.append({**combo, key: {**combo[key], mode: dict.fromkeys(refs, names)}})
    return out


def text_rule(tool: str, rec: Recording) -> Any:
    """How the recorded answers' text is made from their structured value (``$json`` of the
    result, or of its one field, indented as recorded), or a constant or argument template."""
    pairs = [(s, text_of(s.answer), value_of(s.answer)) for s in rec.steps if s.tool == tool and s.ok]
    pairs = [(s, t, v) for s, t, v in pairs if t is not None]
    if not pairs:
        return None
    rules: list[Any] = []
    for indent in (2, None, 4):
        rules.append(
            (
                {"$json": "{result}", "indent": indent} if indent else {"$json": "{result}"},
                lambda v, i=indent: json_text(v, i),
            )
        )
        rules.append(
            (
                {"$json": "{result.%s}", "indent": indent} if indent else {"$json": "{result.%s}"},
                lambda v, i=indent: (
                    json_text(next(iter(v.values())), i) if isinstance(v, dict) and len(v) == 1 else None
                ),
            )
        )
    for template, make in rules:
        if all(make(_structured(s)) == t for s, t, _ in pairs):
            if "%s" in str(template["$json"]):
                one = _structured(pairs[0][0])
                template = {**template, "$json": template["$json"] % next(iter(one))}
            return template
    templated = {argument_template(t or "", s.arguments) for s, t, _ in pairs}
    if len(templated) == 1:  # the same text every time, or the same once arguments are put back
        return next(iter(templated))
    return None


def _templated(value: Any, args: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return argument_template(value, args)
    if isinstance(value, list):
        return [_templated(v, args) for v in value]
    if isinstance(value, dict):
        return {k: _templated(v, args) for k, v in value.items()}
    return value


def _guess(rec: Recording, tool: str) -> bool:
    """Whether a constant answer would be a guess: one recorded answer without an argument in it."""
    ok = [s for s in rec.steps if s.tool == tool and s.ok]
    if len(ok) >= 2:
        return False
    return not any("{args." in argument_template(text_of(s.answer) or "", s.arguments) for s in ok)


def _structured(step: Step) -> Any:
    result = step.answer.get("result") or {}
    return result.get("structuredContent", value_of(step.answer))


def argument_template(text: str, args: dict[str, Any], prefix: str = "args") -> str:
    """``text`` with the (string) argument values in it replaced by ``{args.NAME}``, longest first."""
    pairs = sorted(
        ((k, v) for k, v in args.items() if isinstance(v, str) and len(v) >= 2),
        key=lambda kv: -len(kv[1]),
    )
    for k, v in pairs:
        text = text.replace(v, f"{{{prefix}.{k}}}")
    return text


# --- building and testing a spec -----------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    step: Step
    got: dict[str, Any]
    ok: bool
    source: str
    """``model`` or ``recorded``: what answered."""


def replay(spec_doc: dict[str, Any], rec: Recording, path: Path | None = None) -> list[Outcome]:
    """Each recorded step run against a fresh world per session, with its answer compared."""
    from harn_mcp_mock.world.engine import WorldEngine
    from harn_mcp_mock.world.spec import compile_spec

    spec = compile_spec(spec_doc, path)
    out = []
    for session in rec.sessions:
        engine = WorldEngine(spec)
        for step in session:
            if step.method != "tools/call":
                key = "uri" if step.method == "resources/read" else "name"
                params: dict[str, Any] = {key: step.tool}
                if step.method == "prompts/get" and step.arguments:
                    params["arguments"] = step.arguments
                sent = engine.receive({"jsonrpc": "2.0", "id": 1, "method": step.method, "params": params})
                got = normal(sent[-1].message, tool=False)
                served = spec.resources if step.method == "resources/read" else spec.prompts
                entry = next((d for d in served if d.get(key) == step.tool), {})
                source = "model" if "contents" in entry else RECORDED
                out.append(Outcome(step, got, got == step.answer, source))
                continue
            outcome = engine.call(step.tool, step.arguments)
            got = normal(outcome.response)
            tool = spec.tools.get(step.tool)
            source = "model" if tool is not None and tool.modelled else RECORDED
            out.append(Outcome(step, got, got == step.answer, source))
    return out


def _score(spec_doc: dict[str, Any], rec: Recording) -> int:
    try:
        return sum(o.ok for o in replay(spec_doc, rec))
    except Exception:  # a candidate that does not compile or crashes scores nothing
        return -1


def _examples(rec: Recording, tool: str) -> list[dict[str, Any]]:
    out = []
    for step in rec.steps:
        if step.tool == tool:
            entry: dict[str, Any] = {"arguments": step.arguments}
            entry.update(step.answer)
            out.append(entry)
    return out


def _model_entry(
    base: dict[str, Any], cand: dict[str, Any], text: Any, has_schema: bool, constant: Any = None
) -> dict[str, Any]:
    tool = {k: v for k, v in base.items() if k not in ("recorded", "todo")}
    if cand.get("requires"):
        tool["requires"] = cand["requires"]
    if cand.get("effects"):
        tool["effects"] = cand["effects"]
    result = cand.get("result")
    if result is None and has_schema and constant is not None:
        result = constant
    if result is not None:
        tool["result"] = result
    if "text" in cand:
        tool["text"] = cand["text"]
    elif text is not None:
        tool["text"] = text
    elif result is None:
        tool["text"] = ""
    return tool


def _error_template(rec: Recording, tool: str) -> str | None:
    """The recorded error text of a tool with the failing item's values put back as references."""
    for step in rec.steps:
        if step.tool != tool or step.ok or "result" not in step.answer:
            continue
        text = text_of(step.answer) or ""
        for value in step.arguments.values():
            for item in value if isinstance(value, list) else []:
                if isinstance(item, dict):
                    for k, v in item.items():
                        if isinstance(v, str) and v and v in text:
                            return text.replace(v, f"{{x.{k}}}")
        return argument_template(text, step.arguments)
    return None


@dataclass(slots=True)
class Scaffold:
    spec: dict[str, Any]
    outcomes: list[Outcome]
    collections: list[Collection] = field(default_factory=list)


def scaffold(paths: Sequence[Path], name: str | None = None) -> Scaffold:
    rec = read_recordings(paths)
    tools = {t["name"]: t for t in rec.tools}
    colls = find_collections(rec, tools)
    state = initial_state(rec, tools, colls)
    docs = find_documents(rec, tools, set(state))
    if docs is not None:
        state[docs.name] = {}
    marks = find_marks(rec, tools, docs, set(state))
    for m in marks:
        state[m.name] = {}
    keys = known_keys(rec, docs, marks)
    entries: dict[str, dict[str, Any]] = {}
    for t in rec.tools:
        entry: dict[str, Any] = {
            k: t[k]
            for k in ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
            if k in t
        }
        entry["recorded"] = _examples(rec, t["name"])
        entry["todo"] = "not modelled: never called in the recordings; write its requires, effects and result"
        entries[t["name"]] = entry
    doc: dict[str, Any] = {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": name or rec.server.get("name") or "scaffold",
        "description": f"Scaffolded by `harn mcp mock world init` from {', '.join(p.name for p in paths)}.",
        "server": rec.server,
        "state": state,
        "tools": list(entries.values()),
    }
    for kind, key, method in (("resources", "uri", "resources/read"), ("prompts", "name", "prompts/get")):
        defs = rec.resources if kind == "resources" else rec.prompts
        served = [dict(d) for d in defs]
        for step in (s for session in rec.sessions for s in session if s.method == method):
            one: dict[str, Any] | None = next((d for d in served if d.get(key) == step.tool), None)
            if one is None:
                one = {key: step.tool} if key == "name" else {key: step.tool, "name": step.tool}
                served.append(one)
            one.setdefault("recorded", []).append({"arguments": step.arguments, **step.answer})
        for one in served:
            one["todo"] = (
                f"not modelled: answers only its recorded {'reads' if kind == 'resources' else 'answers'}"
            )
        if served:
            doc[kind] = served

    def with_tool(base_doc: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        return {**base_doc, "tools": [entry if e["name"] == entry["name"] else e for e in base_doc["tools"]]}

    called = {s.tool for s in rec.steps}
    writes = [t for t in rec.tools if t["name"] in called and not is_read(t)]
    reads = [t for t in rec.tools if t["name"] in called and is_read(t)]
    models: dict[str, list[dict[str, Any]]] = {}
    for t in [*writes, *reads]:
        base = entries[t["name"]]
        text = text_rule(t["name"], rec)
        error = _error_template(rec, t["name"])
        if error is None and docs is not None and t["name"] in docs.readers:
            # readers of the same documents: one's recorded error for a missing document
            error = next((e for r in docs.readers if (e := _error_template(rec, r)) is not None), None)
        extra = document_candidates(t, rec, docs) if docs is not None else []
        extra += mark_candidates(t, marks)
        if t not in writes:
            extra += listing_candidates(t, rec, keys) + tree_candidates(t, rec, keys)
            extra += batch_read_candidates(t, rec, docs)
        if t in writes:
            cands = [*extra, *write_candidates(t, rec, colls)]
            if text is not None:
                cands.append({"result": None})
        else:
            cands = [*extra, *({"result": r} for r in read_candidates(t, rec, colls))]
            if not cands and text is not None and (not _props(t) or not _guess(rec, t["name"])):
                cands = [{"result": None}]  # a constant or argument-templated answer (a tool
                # without arguments: its one answer, until a write is seen to change it)
        built = []
        for cand in cands:
            if error is not None:
                for req in cand.get("requires", []):
                    req["error"] = error
            entry = _model_entry(base, cand, text, "outputSchema" in t, _constant(rec, t["name"]))
            listing = isinstance(cand.get("result"), dict) and any(k.startswith("$") for k in cand["result"])
            if listing and "outputSchema" in t:
                entry["result"] = _wrap(rec, t["name"], cand["result"])
            built.append(entry)
        models[t["name"]] = built

    def read_credit(d: dict[str, Any]) -> float:
        """What the reads could reproduce on the state the writes of ``d`` leave: for each read
        tool, its best model's partial credit (how much of each answer it gets right)."""
        total = 0.0
        for t in reads:
            best_t = 0.0
            for entry in models[t["name"]]:
                best_t = max(best_t, _partial(with_tool(d, entry), rec, t["name"]))
            total += best_t
        return total

    def write_credit(d: dict[str, Any]) -> float:
        names = {t["name"] for t in writes}
        try:
            return float(sum(o.ok for o in replay(d, rec) if o.step.tool in names)) + read_credit(d)
        except Exception:
            return -1.0

    for _ in range(2):  # writes: each tool's model, judged by what the reads could then reproduce
        for t in writes:
            current = write_credit(doc)
            for entry in models[t["name"]]:
                trial = with_tool(doc, entry)
                score = write_credit(trial)
                if score > current or (score == current and "recorded" in _tool_entry(doc, t["name"])):
                    doc, current = trial, score
    for t in reads:  # reads: a model only where it reproduces as much as the recorded answers
        current = _score(doc, rec)
        for entry in models[t["name"]]:
            trial = with_tool(doc, entry)
            score = _score(trial, rec)
            if score > current or (score == current and "recorded" in _tool_entry(doc, t["name"])):
                doc, current = trial, score
    for t in writes:  # a write model that loses more answers than it wins goes back to recorded
        if "recorded" in _tool_entry(doc, t["name"]):
            continue
        back = with_tool(doc, entries[t["name"]])
        if _score(back, rec) > _score(doc, rec):
            doc = back
    for t in rec.tools:
        entry = _tool_entry(doc, t["name"])
        if "recorded" in entry and t["name"] in called:
            entry["todo"] = _todo(t, rec)
        elif any(str(r.get("error", "")).startswith("TODO") for r in entry.get("requires", [])):
            entry["todo"] = (
                f"modelled in part: the error '{t['name']}' gives when a requirement fails was never "
                "recorded; write it in its requires (error)"
            )
        elif t in writes and not entry.get("effects"):
            entry["todo"] = (
                f"modelled in part: '{t['name']}' answers as recorded (a constant or argument template) but "
                "no effect on the state was inferred; write its requires and effects"
            )
    for index, resource in enumerate(doc.get("resources", [])):
        for cand in _resource_candidates(resource, doc):
            trial = {**doc, "resources": [cand if i == index else r for i, r in enumerate(doc["resources"])]}
            if _score(trial, rec) >= _score(doc, rec):
                doc = trial
                break
    outcomes = replay(doc, rec)
    doc["tasks"] = [_reference_task(doc, rec)]
    return Scaffold(doc, outcomes, colls)


def _resource_candidates(resource: dict[str, Any], doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A resource whose reads answer what a modelled read tool without arguments answers (the
    same result and text, as the resource's one content)."""
    reads = [r.get("result", {}).get("contents") for r in resource.get("recorded", [])]
    first = reads[0][0] if reads and isinstance(reads[0], list) and reads[0] else None
    if not isinstance(first, dict) or "text" not in first:
        return []
    out = []
    for tool in doc["tools"]:
        required = (tool.get("inputSchema") or {}).get("required") or []
        if "recorded" in tool or "text" not in tool or required or tool.get("effects"):
            continue
        item = {k: (tool["text"] if k == "text" else v) for k, v in first.items()}
        cand = {k: v for k, v in resource.items() if k not in ("recorded", "todo")}
        if "result" in tool:
            cand["result"] = tool["result"]
        cand["contents"] = [item]
        out.append(cand)
    return out


def _tool_entry(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in doc["tools"] if e["name"] == name)


def _partial(doc: dict[str, Any], rec: Recording, tool: str) -> float:
    """Partial credit of one tool's answers: a whole point for an equal answer, else the share of
    the recorded structured value's top-level fields the world's answer got right."""
    try:
        outcomes = replay(doc, rec)
    except Exception:
        return 0.0
    total = 0.0
    for o in outcomes:
        if o.step.tool != tool:
            continue
        if o.ok:
            total += 1.0
            continue
        if "result" in o.step.answer and "result" in o.got:
            total += 0.9 * similarity(_structured(o.step), _structured_of(o.got))
    return total


def similarity(want: Any, got: Any) -> float:
    """1.0 for equal values, else how much of ``want`` ``got`` has (objects field by field,
    lists item by item, each item against its best match), in [0, 1)."""
    if canonical_bytes(want) == canonical_bytes(got):
        return 1.0
    if isinstance(want, dict) and isinstance(got, dict):
        keys = set(want) | set(got)
        return 0.99 * sum(similarity(want.get(k), got.get(k)) for k in keys) / len(keys)
    if isinstance(want, list) and isinstance(got, list):
        if not want or not got:
            return 0.0
        found = sum(max(similarity(w, g) for g in got) for w in want)
        return 0.99 * found / max(len(want), len(got))
    return 0.0


def _structured_of(answer: dict[str, Any]) -> Any:
    result = answer.get("result") or {}
    return result.get("structuredContent", value_of(answer))


def _constant(rec: Recording, tool: str) -> Any:
    """The structured value every successful recorded answer of the tool had, if they all had one."""
    values = [_templated(_structured(s), s.arguments) for s in rec.steps if s.tool == tool and s.ok]
    if values and all(canonical_bytes(v) == canonical_bytes(values[0]) for v in values):
        return values[0]
    return None


def _wrap(rec: Recording, tool: str, result: Any) -> Any:
    """A list result inside the one field the recorded structuredContent has (``{"entities": [...]}``)."""
    for step in rec.steps:
        if step.tool == tool and step.ok:
            sc = (step.answer.get("result") or {}).get("structuredContent")
            if isinstance(sc, dict) and len(sc) == 1:
                return {next(iter(sc)): result}
            break
    return result


def _todo(tool: dict[str, Any], rec: Recording) -> str:
    return (
        f"not modelled: no model of '{tool['name']}' ({verb(tool['name'])}) reproduced its recorded answers; "
        "it answers only those (recorded). Write its requires, effects and result."
    )


def _reference_task(doc: dict[str, Any], rec: Recording) -> dict[str, Any]:
    """The first session's successful calls as a reference solution; its goal, the state they
    leave (a session that changes nothing is a task of restraint)."""
    from harn_mcp_mock.world.engine import WorldEngine
    from harn_mcp_mock.world.spec import compile_spec

    steps = [s for s in (rec.sessions[0] if rec.sessions else []) if s.ok and s.method == "tools/call"]
    engine = WorldEngine(compile_spec({**doc, "tasks": []}))
    kept: list[dict[str, Any]] = []
    for step in steps:
        if normal(engine.call(step.tool, step.arguments).response) == step.answer:
            kept.append({"tool": step.tool, "arguments": step.arguments})
    engine = WorldEngine(compile_spec({**doc, "tasks": []}))
    for call in kept:
        engine.call(call["tool"], call["arguments"])
    goal = [
        {"path": f"/{k}", "equals": v}
        for k, v in (engine.state.items() if isinstance(engine.state, dict) else [])
        if canonical_bytes(v) != canonical_bytes(doc["state"].get(k))
    ]
    task: dict[str, Any] = {
        "id": "recorded-session",
        "description": "Do what the recorded session did (world init made this task from the recording: "
        "TODO describe the goal in words).",
        "goal": goal,
        "reference": kept,
    }
    if not goal:
        task["goal_holds_at_start"] = True
    return task


# --- the report ----------------------------------------------------------------------------------


def report_lines(outcomes: list[Outcome], spec_doc: dict[str, Any]) -> list[str]:
    index = {t["name"]: i for i, t in enumerate(spec_doc.get("tools", []))}
    lines = []
    for o in outcomes:
        s = o.step
        mark = "ok  " if o.ok else "MISS"
        args = clip(deepjson.dumps(s.arguments).decode(), 80)
        lines.append(f"{mark} session {s.session + 1} step {s.index + 1}: {s.label} {args} ({o.source})")
        if not o.ok:
            where = f"tools[{index.get(s.tool, '?')}]" if s.method == "tools/call" else s.method.split("/")[0]
            lines.append(f"     edit {where} ({s.tool}): {part_to_edit(s.answer, o.got, spec_doc, s.tool)}")
            for line in answer_diff(s.answer, o.got):
                lines.append(f"     {line}")
    total = len(outcomes)
    ok = sum(o.ok for o in outcomes)
    modelled = sum(o.source == "model" for o in outcomes)
    share = ok / total if total else 1.0
    tools = spec_doc.get("tools", [])
    unmodelled = [t["name"] for t in tools if "recorded" in t]
    partly = [t["name"] for t in tools if "todo" in t and "recorded" not in t]
    lines.append(
        f"reproduced {ok}/{total} recorded answers ({share:.0%}); {modelled} answered by models, "
        f"{total - modelled} by recorded answers; tools: {len(tools) - len(unmodelled) - len(partly)} modelled"
        + (f", {len(partly)} in part ({', '.join(partly)})" if partly else "")
        + (f", {len(unmodelled)} not ({', '.join(unmodelled)})" if unmodelled else "")
        + "".join(
            f"; {kind}: {sum('todo' not in r for r in spec_doc[kind])} of {len(spec_doc[kind])} modelled"
            for kind in ("resources", "prompts")
            if spec_doc.get(kind)
        )
    )
    return lines


def part_to_edit(want: dict[str, Any], got: dict[str, Any], spec_doc: dict[str, Any], tool: str) -> str:
    """Which part of the tool's spec a miss points at."""
    entry: dict[str, Any] = next((t for t in spec_doc.get("tools", []) if t.get("name") == tool), {})
    if "recorded" in entry:
        return "not modelled (todo): write its requires, effects and result"
    if "error" in want or "error" in got:
        return "its requires (the recorded answer is a JSON-RPC error)"
    w, g = want.get("result") or {}, got.get("result") or {}
    if w.get("isError") != g.get("isError"):
        return (
            "its requires (one answer is an error, the other not) or its effects (the state before the call)"
        )
    if w.get("isError"):
        return "the error text of its requires"
    if canonical_bytes(w.get("structuredContent")) != canonical_bytes(g.get("structuredContent")):
        return "its result, or the effects of the calls before it (the state it reads)"
    return "its text (the layout of the answer)"


def answer_diff(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    import difflib

    a = json_text(want, 2).splitlines()
    b = json_text(got, 2).splitlines()
    diff = list(difflib.unified_diff(a, b, "recorded", "world", n=1, lineterm=""))
    return [clip(d, 160) for d in diff[:24]] + (["..."] if len(diff) > 24 else [])


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    total = len(outcomes)
    ok = sum(o.ok for o in outcomes)
    return {
        "steps": total,
        "reproduced": ok,
        "share": round(ok / total, 4) if total else 1.0,
        "by_model": sum(o.source == "model" for o in outcomes),
        "by_model_reproduced": sum(o.ok and o.source == "model" for o in outcomes),
    }


def write_scaffold(result: Scaffold, out: Path) -> None:
    """The spec as indented JSON, fixed key order (it is meant to be read and edited)."""
    from harn_mcp_mock.store.cas import atomic_write

    doc = result.spec
    atomic_write(out, (json_text(doc, 2) + "\n").encode())
