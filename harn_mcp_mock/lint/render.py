"""Lint results in the formats verify has: text, JSON, SARIF 2.1.0 (code scanning), GitHub
annotations, JUnit XML. Pure functions of the result; findings never carry secret values."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

from harn_mcp_mock.formats import Formats
from harn_mcp_mock.lint.rules import RULES
from harn_mcp_mock.lint.scan import LintResult
from harn_mcp_mock.verify.findings import Severity

__all__ = ["LINT_FORMATS", "render_lint"]

LINT_FORMATS: Formats[Callable[[LintResult, Severity], str]] = Formats("lint format")
_INFO_URI = "https://github.com/harn-project/harn-mcp-mock/blob/main/docs/lint.md"


def render_lint(result: LintResult, fmt: str, fail_on: Severity = Severity.ERR) -> str:
    return LINT_FORMATS.get(fmt)(result, fail_on)


@LINT_FORMATS.register("text")
def _text(result: LintResult, fail_on: Severity) -> str:
    lines = []
    for f in result.findings:
        owasp = f" [{f.owasp}]" if f.owasp else ""
        lines.append(f"{f.file}:{f.pointer or '/'}: {f.severity.name} {f.rule} {f.title}{owasp}: {f.message}")
    counts = result.counts()
    verdict = "fail" if result.exit_code(fail_on) else "pass"
    allowed = f", {len(result.allowed)} allowed" if result.allowed else ""
    lines.append(
        f"lint: {len(result.files)} cassette(s), {counts['ERR']} ERR, {counts['WARN']} WARN, "
        f"{counts['INFO']} INFO{allowed}: {verdict} (fails on {fail_on.name})"
    )
    return "\n".join(lines) + "\n"


@LINT_FORMATS.register("json")
def _json(result: LintResult, fail_on: Severity) -> str:
    doc = {
        "format": "harn-mcp-mock/lint",
        "version": 1,
        "fail_on": fail_on.name,
        "result": "fail" if result.exit_code(fail_on) else "pass",
        "files": result.files,
        "counts": result.counts(),
        "findings": [f.to_dict() for f in result.findings],
        "allowed": [{**f.to_dict(), "reason": reason} for f, reason in result.allowed],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


_SARIF_LEVEL = {Severity.ERR: "error", Severity.WARN: "warning", Severity.INFO: "note"}


@LINT_FORMATS.register("sarif")
def _sarif(result: LintResult, fail_on: Severity) -> str:
    rules = [
        {
            "id": rule.id,
            "name": rule.title,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.help},
            "helpUri": f"{_INFO_URI}#{rule.id.lower()}",
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"tags": ["security", rule.owasp] if rule.owasp else ["hygiene"]},
        }
        for rule in RULES.values()
    ]
    order = list(RULES)
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": order.index(f.rule),
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f"{f.message} (at {f.pointer or '/'})"},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": f.file}, "region": {"startLine": 1}},
                    "logicalLocations": [{"fullyQualifiedName": f.pointer or "/", "kind": "member"}],
                }
            ],
            "partialFingerprints": {"harnLint/v1": f"{f.rule}:{f.file}:{f.pointer}"},
        }
        for f in result.findings
    ]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "harn-mcp-mock lint", "informationUri": _INFO_URI, "rules": rules}
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


@LINT_FORMATS.register("github")
def _github(result: LintResult, fail_on: Severity) -> str:
    level = {Severity.ERR: "error", Severity.WARN: "warning", Severity.INFO: "notice"}
    lines = [
        f"::{level[f.severity]} file={_escape_property(f.file)},line=1,title={_escape_property(f.rule + ' ' + f.title)}::"
        f"{_escape_data(f.pointer + ': ' + f.message)}"
        for f in result.findings
    ]
    counts = result.counts()
    lines.append(f"lint: {counts['ERR']} ERR, {counts['WARN']} WARN, {counts['INFO']} INFO")
    return "\n".join(lines) + "\n"


@LINT_FORMATS.register("junit")
def _junit(result: LintResult, fail_on: Severity) -> str:
    suite = ET.Element("testsuite", name="harn-mcp-mock lint", tests=str(len(result.files)))
    failures = 0
    for file in result.files:
        case = ET.SubElement(suite, "testcase", classname="harn-mcp-mock.lint", name=file)
        bad = [f for f in result.findings if f.file == file and f.severity >= fail_on]
        if bad:
            failures += 1
            failure = ET.SubElement(
                case, "failure", message=f"{len(bad)} finding(s) at or above {fail_on.name}"
            )
            failure.text = "\n".join(f"{f.severity.name} {f.rule} {f.pointer}: {f.message}" for f in bad)
    suite.set("failures", str(failures))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
