"""Building the spec: every candidate tested on the recording itself, kept when the replayed
session reproduces at least as many answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.world.scaffold.candidates import (
    constant_value,
    document_candidates,
    error_template,
    is_guess,
    mark_candidates,
    read_candidates,
    text_rule,
    wrap_listing,
    write_candidates,
)
from harn_mcp_mock.world.scaffold.collections import (
    Collection,
    context_args,
    find_collections,
    find_documents,
    find_marks,
    initial_state,
    input_props,
    is_read,
    known_keys,
    verb,
)
from harn_mcp_mock.world.scaffold.listings import (
    batch_read_candidates,
    flat_candidates,
    flat_listings,
    listing_candidates,
    select_candidates,
    tree_candidates,
)
from harn_mcp_mock.world.scaffold.recording import (
    Recording,
    Step,
    normal,
    read_recordings,
    structured_of,
    structured_value,
)

RECORDED = "recorded"


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
    flats = flat_listings(rec, tools, keys)
    mark_names = {f"/{m.name}" for m in marks}
    for flat in flats:  # keys a listing showed that no write made: there from the start
        if flat.pointer in mark_names:
            for k in flat.initial:
                state[flat.pointer[1:]][k] = True
            if flat.marked is not None:
                state[flat.at[1:]] = [flat.current]
    context = context_args(rec)
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
        error = error_template(rec, t["name"])
        if error is None and docs is not None and t["name"] in docs.readers:
            # readers of the same documents: one's recorded error for a missing document
            error = next((e for r in docs.readers if (e := error_template(rec, r)) is not None), None)
        extra = document_candidates(t, rec, docs) if docs is not None else []
        extra += mark_candidates(t, marks)
        if t not in writes:
            extra += listing_candidates(t, rec, keys) + tree_candidates(t, rec, keys)
            extra += batch_read_candidates(t, rec, docs)
            extra += [c for f in flats if f.tool == t["name"] for c in flat_candidates(f)]
        else:
            extra += select_candidates(t, rec, [f for f in flats if f.pointer in mark_names], keys, context)
        if t in writes:
            cands = [*extra, *write_candidates(t, rec, colls)]
            if text is not None:
                cands.append({"result": None})
        else:
            cands = [*extra, *({"result": r} for r in read_candidates(t, rec, colls))]
            if not cands and text is not None and (not input_props(t) or not is_guess(rec, t["name"])):
                cands = [{"result": None}]  # a constant or argument-templated answer (a tool
                # without arguments: its one answer, until a write is seen to change it)
        built = []
        for cand in cands:
            if error is not None:
                for req in cand.get("requires", []):
                    req["error"] = error
            entry = _model_entry(base, cand, text, "outputSchema" in t, constant_value(rec, t["name"]))
            listing = isinstance(cand.get("result"), dict) and any(k.startswith("$") for k in cand["result"])
            if listing and "outputSchema" in t:
                entry["result"] = wrap_listing(rec, t["name"], cand["result"])
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
            total += 0.9 * similarity(structured_value(o.step), structured_of(o.got))
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
