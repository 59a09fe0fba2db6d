"""Candidate models of each tool: effects, requires and result templates from names,
annotations, argument shapes and the recorded answers."""

from __future__ import annotations

from itertools import islice, product
from typing import Any

from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.world.scaffold.collections import (
    DELETE_VERBS,
    DEST_ARGS,
    SOURCE_ARGS,
    Collection,
    Documents,
    Marks,
    input_props,
    lists_in,
    string_args,
    verb,
)
from harn_mcp_mock.world.scaffold.recording import (
    Recording,
    argument_template,
    structured_value,
    templated,
    text_answer,
    text_of,
    value_of,
)
from harn_mcp_mock.world.templates import json_text

MAX_COMBINATIONS = 64


"""Candidate views of one read tool tried at most (a view per collection its answers show)."""


def mark_candidates(tool: dict[str, Any], marks: list[Marks]) -> list[dict[str, Any]]:
    return [
        {"effects": [{"op": "set", "path": m.at(m.key), "value": True}], "result": None}
        for m in marks
        if m.writer == tool["name"]
    ]


def document_candidates(tool: dict[str, Any], rec: Recording, docs: Documents) -> list[dict[str, Any]]:
    """Candidate models of a tool over the documents: the writer sets, a reader answers the
    document (or the recorded error when there is none), a tool with a source and a destination
    moves one, a delete tool with the key deletes one."""
    name = tool["name"]
    strings = string_args(tool)
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
        get = {"$get": docs.at(docs.key)}
        return [{"requires": [missing], **text_answer(shown[0] if shown else None, get)}]
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
    for arg, schema in input_props(tool).items():
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
    targets = [f for f in coll.fields if f != coll.key and _list_field(coll, f, rec)]
    out = []
    for ref in scalars:
        for lst in lists:
            if len(fields) != 2:
                continue
            for target in targets:
                out.append((ref, lst, target))
    return out


def _list_field(coll: Collection, f: str, rec: Recording) -> bool:
    """Whether the recording shows the field of ``coll``'s items holding a list in every item (a
    batch of values is added to or removed from a list, never a scalar such as ``entityType``)."""
    seen = [
        i[f]
        for step in rec.steps
        if step.ok
        for _, items in lists_in(value_of(step.answer))
        for i in items
        if coll.matches(i)
    ]
    return not seen or all(isinstance(v, list) for v in seen)


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
    props = input_props(tool)
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
        if all(make(structured_value(s)) == t for s, t, _ in pairs):
            if "%s" in str(template["$json"]):
                one = structured_value(pairs[0][0])
                template = {**template, "$json": template["$json"] % next(iter(one))}
            return template
    templated = {argument_template(t or "", s.arguments) for s, t, _ in pairs}
    if len(templated) == 1:  # the same text every time, or the same once arguments are put back
        return next(iter(templated))
    return None


def is_guess(rec: Recording, tool: str) -> bool:
    """Whether a constant answer would be a guess: one recorded answer without an argument in it."""
    ok = [s for s in rec.steps if s.tool == tool and s.ok]
    if len(ok) >= 2:
        return False
    return not any("{args." in argument_template(text_of(s.answer) or "", s.arguments) for s in ok)


def error_template(rec: Recording, tool: str) -> str | None:
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


def constant_value(rec: Recording, tool: str) -> Any:
    """The structured value every successful recorded answer of the tool had, if they all had one."""
    values = [templated(structured_value(s), s.arguments) for s in rec.steps if s.tool == tool and s.ok]
    if values and all(canonical_bytes(v) == canonical_bytes(values[0]) for v in values):
        return values[0]
    return None


def wrap_listing(rec: Recording, tool: str, result: Any) -> Any:
    """A list result inside the one field the recorded structuredContent has (``{"entities": [...]}``)."""
    for step in rec.steps:
        if step.tool == tool and step.ok:
            sc = (step.answer.get("result") or {}).get("structuredContent")
            if isinstance(sc, dict) and len(sc) == 1:
                return {next(iter(sc)): result}
            break
    return result
