"""The output formats' shared parts, for every kind of :class:`~.model.Finding`: SARIF 2.1.0
(rules, results with the file, line and column of each finding, the log), GitHub Actions
annotations (``file=,line=,col=``), JUnit XML, JSON, one-line text, and the escaping each needs.

Verify's report (``verify/report.py``) and lint's (``lint/render.py``) build their formats from
these; nothing here knows a rule catalogue or reads files.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from harn_mcp_mock.findings.model import Finding, Rule, Severity

__all__ = [
    "GITHUB_LEVEL",
    "SARIF_LEVEL",
    "SARIF_SCHEMA",
    "JunitCase",
    "artifact_uri",
    "gh_data",
    "gh_property",
    "github_annotation",
    "json_text",
    "one_line",
    "printable",
    "sarif_log",
    "sarif_result",
    "sarif_rule",
    "text_line",
    "xml_safe",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {Severity.ERR: "error", Severity.WARN: "warning", Severity.INFO: "note"}
GITHUB_LEVEL = {Severity.ERR: "error", Severity.WARN: "warning", Severity.INFO: "notice"}

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NEWLINES = re.compile(r"\r\n|\r|\n")
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def printable(text: str) -> str:
    """Control characters (a server's text could carry terminal escapes) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def one_line(text: str) -> str:
    return _NEWLINES.sub(" ", text)


def xml_safe(text: str) -> str:
    """Characters XML 1.0 cannot carry (controls, lone surrogates) shown as ``\\uXXXX``."""
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def gh_data(text: str) -> str:
    """Escape a workflow command's message (GitHub's ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: str) -> str:
    """Escape a workflow command property value (GitHub's ``escapeProperty``)."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")


def artifact_uri(path: str) -> str:
    """A file path as a URI reference: relative paths stay relative, absolute become file:."""
    if PureWindowsPath(path).drive:
        pure: PurePosixPath | PureWindowsPath = PureWindowsPath(path)
    else:
        pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/")


# --- sarif -----------------------------------------------------------------------------------


def sarif_rule(rule: Rule, *, info_uri: str | None = None) -> dict[str, Any]:
    """A ``reportingDescriptor``; a rule with help text also gets its full description, help
    link, default level and tags (``security`` and its OWASP entry, or ``hygiene``)."""
    doc: dict[str, Any] = {"id": rule.id, "name": rule.title, "shortDescription": {"text": rule.title}}
    if rule.help:
        doc["fullDescription"] = {"text": rule.help}
        if info_uri:
            doc["helpUri"] = f"{info_uri}#{rule.id.lower()}"
        doc["defaultConfiguration"] = {"level": SARIF_LEVEL[rule.severity]}
        doc["properties"] = {"tags": ["security", rule.owasp] if rule.owasp else ["hygiene"]}
    return doc


def sarif_result(
    finding: Finding,
    *,
    rule_index: int,
    message: str,
    default_file: str,
    logical: dict[str, Any],
    fingerprint: tuple[str, str],
    properties: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``result``: the finding's file (or ``default_file``) and, when it was located, the
    region's ``startLine``/``startColumn``."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding.file or default_file)}}
    if finding.line is not None:
        region = {"startLine": finding.line}
        if finding.column is not None:
            region["startColumn"] = finding.column
        physical["region"] = region
    doc: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": physical, "logicalLocations": [logical]}],
        "partialFingerprints": {fingerprint[0]: fingerprint[1]},
    }
    if properties is not None:
        doc["properties"] = properties
    return doc


def sarif_log(
    *,
    tool: str,
    rules: list[dict[str, Any]],
    results: list[dict[str, Any]],
    info_uri: str | None = None,
    properties: dict[str, Any] | None = None,
) -> str:
    """The SARIF 2.1.0 log of one run (columns count Unicode code points)."""
    driver: dict[str, Any] = {"name": tool}
    if info_uri:
        driver["informationUri"] = info_uri
    driver["rules"] = rules
    run: dict[str, Any] = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}
    if properties is not None:
        run["properties"] = properties
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


# --- github ----------------------------------------------------------------------------------


def github_annotation(finding: Finding, *, title: str, message: str, default_file: str | None = None) -> str:
    """``::error file=F,line=L,col=C,title=T::message`` (the parts that are known)."""
    props = []
    file = finding.file or default_file
    if file:
        props.append(f"file={gh_property(file)}")
        if finding.line is not None:
            props.append(f"line={finding.line}")
            if finding.column is not None:
                props.append(f"col={finding.column}")
    props.append(f"title={gh_property(title)}")
    return f"::{GITHUB_LEVEL[finding.severity]} {','.join(props)}::{gh_data(message)}"


# --- junit -----------------------------------------------------------------------------------


@dataclass(slots=True)
class JunitCase:
    classname: str
    name: str
    failure: str | None = None
    """The failure's one-line message (None: the case passes)."""
    details: str = ""
    """The failure's text."""
    out: str = ""
    """``system-out``: findings below the threshold, ignored ones."""
    failure_type: str = "finding"


def junit_xml(suite: str, cases: Iterable[JunitCase], properties: Iterable[tuple[str, str]] = ()) -> str:
    """``<testsuites>`` with one ``<testsuite>`` of ``cases``."""
    element = ET.Element("testsuite", name=suite)
    props = ET.SubElement(element, "properties")
    for key, value in properties:
        ET.SubElement(props, "property", name=key, value=xml_safe(value))
    tests = failures = 0
    for case in cases:
        tests += 1
        node = ET.SubElement(
            element, "testcase", classname=xml_safe(case.classname), name=xml_safe(case.name)
        )
        if case.failure is not None:
            failures += 1
            failure = ET.SubElement(
                node, "failure", type=case.failure_type, message=xml_safe(one_line(case.failure))
            )
            failure.text = xml_safe(case.details)
        if case.out:
            ET.SubElement(node, "system-out").text = xml_safe(case.out)
    totals = {"tests": str(tests), "failures": str(failures), "errors": "0", "skipped": "0"}
    element.attrib.update(totals)
    root = ET.Element("testsuites", {"name": suite, **totals})
    root.append(element)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- json and text ---------------------------------------------------------------------------


def json_text(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def text_line(finding: Finding, title: str, *, default_file: str = "") -> str:
    """``file:line:col: SEV RULE title: message (at /pointer)``, compiler style."""
    where = finding.file or default_file
    if finding.line is not None:
        where += f":{finding.line}" + (f":{finding.column}" if finding.column is not None else "")
    at = f" (at {finding.pointer})" if finding.pointer else ""
    return printable(
        f"{where}: {finding.severity.name} {finding.rule} {title}: {one_line(finding.message)}{at}"
    )
