"""The report ``world init`` prints: each step replayed, what to edit for a miss, the figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harn_mcp_mock import deepjson
from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.world.scaffold.build import Outcome, Scaffold
from harn_mcp_mock.world.templates import json_text


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
