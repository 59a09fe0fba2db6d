"""The state's shapes a recording shows: collections of keyed objects, documents written and
read back at a key, and marks (keys a create tool makes)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harn_mcp_mock import deepjson
from harn_mcp_mock.world.scaffold.recording import Recording, text_of, value_of

KEY_FIELDS = ("id", "name", "key", "uuid", "path", "slug")


READ_VERBS = {"read", "get", "list", "open", "search", "find", "query", "show", "fetch", "describe", "view"}


CREATE_VERBS = {"create", "add", "insert", "new", "put", "post", "register", "append", "write"}


DELETE_VERBS = {"delete", "remove", "destroy", "drop", "purge", "unlink"}


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


def string_args(tool: dict[str, Any]) -> list[str]:
    return [a for a, sc in input_props(tool).items() if isinstance(sc, dict) and sc.get("type") == "string"]


def find_documents(rec: Recording, tools: dict[str, dict[str, Any]], taken: set[str]) -> Documents | None:
    for w in tools.values():
        if is_read(w):
            continue
        strings = string_args(w)
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
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def key_arg(strings: list[str]) -> str | None:
    """The argument naming a key: ``path``, ``name``, ... or one ending so (``branch_name``)."""
    exact = next((a for a in KEY_ARGS if a in strings), None)
    if exact is not None:
        return exact
    return next((a for k in KEY_ARGS for a in strings if a.lower().endswith("_" + k)), None)


def context_args(rec: Recording) -> set[str]:
    """Arguments of several tools that always had one value (``repo_path``): a context, not a key."""
    values: dict[str, set[str]] = {}
    tools: dict[str, set[str]] = {}
    for step in rec.steps:
        for a, v in step.arguments.items():
            values.setdefault(a, set()).add(deepjson.dumps(v).decode())
            tools.setdefault(a, set()).add(step.tool)
    return {a for a, vs in values.items() if len(vs) == 1 and len(tools[a]) > 1}


def find_marks(
    rec: Recording, tools: dict[str, dict[str, Any]], docs: Documents | None, taken: set[str]
) -> list[Marks]:
    called = {s.tool for s in rec.steps if s.ok}
    context = context_args(rec)
    out: list[Marks] = []
    for t in tools.values():
        if is_read(t) or t["name"] not in called or verb(t["name"]) not in CREATE_VERBS:
            continue
        if docs is not None and t["name"] == docs.writer:
            continue
        strings = [a for a in string_args(t) if a not in context]
        key = key_arg(strings)
        if key is None or any(a in strings for a in (*VALUE_ARGS, *SOURCE_ARGS, *DEST_ARGS)):
            continue
        name = _plural(t["name"])
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(Marks(name, t["name"], key))
    return out


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


def is_read_name(rec: Recording, name: str) -> bool:
    tool = next((t for t in rec.tools if t["name"] == name), None)
    return tool is not None and is_read(tool)


def input_props(tool: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), dict) else {}
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}
