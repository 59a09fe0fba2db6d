"""Repeated findings of one kind are one line in the text report, counted once in its summary line,
while ``--format json`` keeps each (issue 40: 47 "annotation claim strengthened" WARNs on one pair)."""

from __future__ import annotations

import json

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.verify.report import VerifyResult, render


def strengthened(tool: str) -> Finding:
    return Finding(
        "A4",
        Severity.WARN,
        tool,
        "/annotations/openWorldHint",
        f"tool {tool!r}: now open-world (reaches outside systems)",
        False,
        True,
    )


def many() -> VerifyResult:
    tools = [f"tool_{i:02}" for i in range(47)]
    findings = [strengthened(t) for t in tools]
    findings.append(Finding("T1", Severity.ERR, "gone", "", "tool 'gone' removed", "gone", None))
    findings.append(
        Finding(
            "T4", Severity.INFO, "tool_00", "/description", "tool 'tool_00' description changed", "a", "b"
        )
    )
    return VerifyResult("a.json", "b.json", findings, [], {"tools": 48})


def test_47_findings_of_one_kind_are_one_line_listing_the_tools() -> None:
    text = render(many(), "text", fail_on=Severity.WARN)
    lines = text.splitlines()
    heads = [line for line in lines if " A4 " in line]
    assert heads == [
        "  WARN A4   /annotations/openWorldHint  tool: now open-world (reaches outside systems) (false -> true)"
        "  [47 tools]"
    ]
    assert "tool_00, tool_01" in text and "tool_46" in text
    assert "repeated (47 findings of 1 kind; --format json lists each)" in text
    assert "tool gone" in text and "tool tool_00" in text  # the others stay under their subject
    assert (
        lines[-1] == "1 ERR, 1 WARN, 1 INFO (49 findings, a repeated kind counted once) (fail-on WARN: FAIL)"
    )
    # --format json keeps each finding, and the verdict is the same
    doc = json.loads(render(many(), "json", fail_on=Severity.WARN))
    assert doc["counts"] == {"ERR": 1, "WARN": 47, "INFO": 1}
    assert len(doc["findings"]) == 49 and doc["result"] == "fail"
    assert many().exit_code(Severity.WARN) == 1 and many().exit_code(Severity.ERR) == 1
    # a kind seen for one subject only is not grouped
    single = VerifyResult("a.json", "b.json", [strengthened("a"), strengthened("a")], [], {})
    text = render(single, "text")
    assert "repeated" not in text and text.splitlines()[-1] == "0 ERR, 2 WARN, 0 INFO (fail-on ERR: PASS)"


def test_the_markdown_report_groups_a_repeated_kind_into_one_row() -> None:
    text = render(many(), "markdown", fail_on=Severity.WARN)
    rows = [line for line in text.splitlines() if "| A4 |" in line]
    assert len(rows) == 1 and "47: `tool_00`, `tool_01`" in rows[0]
    assert "### repeated (47 findings; `--format json` lists each)" in text
    assert text.splitlines()[-1].startswith(
        "1 ERR, 1 WARN, 1 INFO (49 findings, a repeated kind counted once)"
    )
