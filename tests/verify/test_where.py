"""Verify's findings name the file, line and column of what they are about: a changed property
in the baseline, an added tool or property in the candidate, the server's capabilities; and
SARIF and GitHub output carry them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harn_mcp_mock.verify import render, verify
from tests.lint.poisoned import tools, write


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


def at(path: Path, line: int, column: int) -> str:
    return path.read_text().splitlines()[line - 1][column - 1 :]


def test_each_finding_points_at_its_value_in_the_baseline_or_the_candidate(tmp_path: Path) -> None:
    base = write(tmp_path / "base.cassette.json", tools(
        {"name": "a", "description": "Adds.", "inputSchema": schema(x={"type": "number"})},
    ))  # fmt: skip
    cand = write(tmp_path / "cand.cassette.json", tools(
        {"name": "a", "description": "Adds two numbers.",
         "inputSchema": schema(x={"type": "number"}, y={"type": "number"})},
        {"name": "b", "description": "Subtracts.", "inputSchema": schema()},
    ))  # fmt: skip
    result = verify(base, candidate=cand)
    found = {f.rule: f for f in result.findings + [f for f, _ in result.ignored]}
    i1, t3, t4 = found["I1"], found["T3"], found["T4"]
    lines = cand.read_text().splitlines()
    # the new property's schema, in the candidate: `"y": {` with the column at the brace
    assert i1.file == str(cand) and i1.line and i1.column
    assert lines[i1.line - 1][: i1.column - 1].strip() == '"y":' and at(cand, i1.line, i1.column) == "{"
    # the added tool's definition, in the candidate
    assert t3.file == str(cand) and t3.line and t3.column
    assert at(cand, t3.line, t3.column) == "{" and lines[t3.line].strip() == '"name": "b",'
    # the changed description, in the baseline
    assert t4.file == str(base) and t4.line and t4.column
    assert at(base, t4.line, t4.column) == '"Adds.",'

    sarif = json.loads(render(result, "sarif"))
    regions = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]}
    assert regions["I1"]["region"] == {"startLine": i1.line, "startColumn": i1.column}
    assert regions["I1"]["artifactLocation"]["uri"] == cand.as_uri()
    github = render(result, "github")
    assert f"file={str(cand).replace(':', '%3A')},line={i1.line},col={i1.column},title=I1" in github
