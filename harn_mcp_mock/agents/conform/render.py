"""Render a conformance :class:`~.run.Report` as a plain-text table or as JSON."""

from __future__ import annotations

import orjson

from harn_mcp_mock.agents.conform.registry import CHECKS
from harn_mcp_mock.agents.conform.run import Report

__all__ = ["render_json", "render_list", "render_table", "summary_line"]

SPEC_WIDTH = 52


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def summary_line(report: Report) -> str:
    c = report.counts
    verdict = "CONFORMS" if report.ok else "DOES NOT CONFORM"
    return (
        f"{verdict} at level {report.level}: {len(report.results)} checks, {c['pass']} passed, "
        f"{c['fail']} failed, {c['error']} errors, {c['skip']} skipped, {c['warn']} warnings "
        f"({report.duration_ms} ms, {report.url})"
    )


def render_table(report: Report) -> str:
    """``id  level  result  spec (shortened)  reason`` rows and the summary line."""
    rows = [("CHECK", "LEVEL", "RESULT", "SPEC", "REASON")]
    for r in report.results:
        result = r.outcome.value.upper() + ("" if r.requirement == "MUST" else " (SHOULD)")
        rows.append((r.id, r.level, result, _short(r.spec, SPEC_WIDTH), r.reason))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n\n" + summary_line(report) + "\n"


def render_json(report: Report) -> str:
    return orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"


def render_list() -> str:
    """Every registered check: id, level, requirement and the spec sentence."""
    width = max(len(c.id) for c in CHECKS)
    return "".join(f"{c.id.ljust(width)}  {c.level.value:<8}  {c.requirement:<6}  {c.spec}\n" for c in CHECKS)
