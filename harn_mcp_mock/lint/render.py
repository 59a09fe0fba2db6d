"""Lint results in the formats verify has: text, JSON, SARIF 2.1.0 (code scanning), GitHub
annotations, JUnit XML, built from the shared writers of :mod:`harn_mcp_mock.findings.writers`.
Each finding names the file, line and column of the offending value (in the cassette or its
CAS blob). Pure functions of the result; findings never carry secret values."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.findings.writers import (
    JunitCase,
    github_annotation,
    json_text,
    junit_xml,
    sarif_log,
    sarif_result,
    sarif_rule,
    text_line,
)
from harn_mcp_mock.formats import Formats
from harn_mcp_mock.lint.rules import RULES
from harn_mcp_mock.lint.scan import LintResult

__all__ = ["LINT_FORMATS", "finding_dict", "render_lint"]

LINT_FORMATS: Formats[Callable[[LintResult, Severity], str]] = Formats("lint format")
_TOOL = "harn-mcp-mock lint"
_INFO_URI = "https://github.com/harn-project/harn-mcp-mock/blob/main/docs/lint.md"


def render_lint(result: LintResult, fmt: str, fail_on: Severity = Severity.ERR) -> str:
    return LINT_FORMATS.get(fmt)(result, fail_on)


def _title(f: Finding) -> str:
    rule = RULES[f.rule]
    return rule.title + (f" [{rule.owasp}]" if rule.owasp else "")


def finding_dict(f: Finding) -> dict[str, Any]:
    """A lint finding in the JSON report."""
    rule = RULES[f.rule]
    return {
        "rule": f.rule,
        "title": rule.title,
        "severity": f.severity.name,
        "owasp": rule.owasp or None,
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "pointer": f.pointer,
        "message": f.message,
    }


@LINT_FORMATS.register("text")
def _text(result: LintResult, fail_on: Severity) -> str:
    lines = [text_line(f, _title(f)) for f in result.findings]
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
    return json_text(
        {
            "format": "harn-mcp-mock/lint",
            "version": 2,
            "fail_on": fail_on.name,
            "result": "fail" if result.exit_code(fail_on) else "pass",
            "files": result.files,
            "counts": result.counts(),
            "findings": [finding_dict(f) for f in result.findings],
            "allowed": [{**finding_dict(f), "reason": reason} for f, reason in result.allowed],
        }
    )


def _fingerprint(f: Finding) -> str:
    # the rule, the cassette and the pointer: stable across re-recordings that move lines
    key = "\x00".join((f.rule, (f.file or "").split(".cas/")[0], f.pointer))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@LINT_FORMATS.register("sarif")
def _sarif(result: LintResult, fail_on: Severity) -> str:
    order = list(RULES)
    results = [
        sarif_result(
            f,
            rule_index=order.index(f.rule),
            message=f"{f.message} (at {f.pointer or '/'})",
            default_file=f.file or "",
            logical={"fullyQualifiedName": f.pointer or "/", "kind": "member"},
            fingerprint=("harnLint/v2", _fingerprint(f)),
        )
        for f in result.findings
    ]
    rules = [sarif_rule(rule, info_uri=_INFO_URI) for rule in RULES.values()]
    counts = result.counts()
    return sarif_log(
        tool=_TOOL,
        info_uri=_INFO_URI,
        rules=rules,
        results=results,
        properties={
            "fail_on": fail_on.name,
            "result": "fail" if result.exit_code(fail_on) else "pass",
            "counts": counts,
        },
    )


@LINT_FORMATS.register("github")
def _github(result: LintResult, fail_on: Severity) -> str:
    lines = [
        github_annotation(f, title=f"{f.rule} {_title(f)}", message=f"{f.pointer or '/'}: {f.message}")
        for f in result.findings
    ]
    counts = result.counts()
    lines.append(f"lint: {counts['ERR']} ERR, {counts['WARN']} WARN, {counts['INFO']} INFO")
    return "\n".join(lines) + "\n"


@LINT_FORMATS.register("junit")
def _junit(result: LintResult, fail_on: Severity) -> str:
    cases = []
    for file in result.files:
        case = JunitCase("harn-mcp-mock.lint", file)
        mine = [f for f in result.findings if (f.file or "").split(".cas/")[0] == file]
        bad = [f for f in mine if f.severity >= fail_on]
        if bad:
            case.failure = f"{len(bad)} finding(s) at or above {fail_on.name}"
            case.details = "\n".join(text_line(f, _title(f)) for f in bad)
        case.out = "\n".join(text_line(f, _title(f)) for f in mine if f.severity < fail_on)
        cases.append(case)
    return junit_xml(_TOOL, cases, (("fail_on", fail_on.name),))
