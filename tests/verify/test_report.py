"""What each verify report format prints, that it is well-formed, and that it is deterministic."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import harn_mcp_mock.verify.report as report
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.verify.findings import RULE_TITLES
from harn_mcp_mock.verify.report import FORMATS, VerifyResult, github_step_summary, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "verify-report-formats.md"


def doc_block(info: str) -> str:
    """The fenced block of docs/verify-report-formats.md whose info string is ``info``."""
    blocks = re.findall(r"^```([^\n]+)\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)
    found = [body for tag, body in blocks if tag.strip() == info]
    assert len(found) == 1, f"expected one ```{info} block"
    return str(found[0])


SCHEMA = json.loads(doc_block("json report-schema"))


def findings() -> list[Finding]:
    return [
        Finding(
            "I10",
            Severity.INFO,
            "get_current_time",
            "/inputSchema/properties/fmt/enum",
            "enum value 'iso' added",
            ["a"],
            ["a", "iso"],
        ),
        Finding(
            "I1",
            Severity.ERR,
            "get_current_time",
            "/inputSchema/properties/tz",
            "new required input property 'tz'",
            new={"type": "string"},
        ),
        Finding(
            "I2",
            Severity.INFO,
            "get_current_time",
            "/inputSchema/properties/x",
            "new optional input property 'x'",
        ),
        Finding(
            "I13",
            Severity.ERR,
            "convert_time",
            "/inputSchema/properties/n/maximum",
            "bound newly set",
            None,
            10,
            evidence=["call 3 sent n=12"],
        ),
        Finding("B7", Severity.WARN, "convert_time", "/structuredContent/result", "result changed", "a", "b"),
        Finding(
            "C1",
            Severity.ERR,
            None,
            "/capabilities/prompts",
            "server capability 'prompts' removed",
            kind="server",
        ),
        Finding("R2", Severity.INFO, "file:///notes.txt", "", "resource added", kind="resource"),
    ]


def ignored() -> list[tuple[Finding, str]]:
    return [
        (
            Finding(
                "B7",
                Severity.WARN,
                "get_current_time",
                "/structuredContent/datetime",
                "read-only result's values changed",
            ),
            "wall-clock value",
        ),
        (
            Finding("T4", Severity.INFO, "convert_time", "/description", "tool description changed"),
            "reviewed by hand",
        ),
    ]


def result(**changes: Any) -> VerifyResult:
    fields: dict[str, Any] = {
        "cassette": "fixtures/time.cassette.json",
        "candidate": "uvx mcp-server-time",
        "findings": findings(),
        "ignored": ignored(),
        "compared": {"calls_replayed": 12, "tools": 2, "prompts": 1},
    }
    return VerifyResult(**{**fields, **changes})


def empty() -> VerifyResult:
    return VerifyResult("a.cassette.json", "b.cassette.json", [], [], {})


def one(finding: Finding) -> VerifyResult:
    return result(findings=[finding], ignored=[])


# --- the public surface ----------------------------------------------------------------------


def test_the_module_exports_exactly_its_public_names_sorted() -> None:
    assert report.__all__ == sorted(report.__all__)
    assert report.__all__ == ["FORMATS", "REPORT_VERSION", "VerifyResult", "github_step_summary", "render"]
    assert FORMATS == ("text", "json", "markdown", "junit", "sarif", "github", "html")


@pytest.mark.parametrize(
    ("fail_on", "kept", "code"),
    [
        (Severity.ERR, [Severity.ERR], 1),
        (Severity.ERR, [Severity.WARN, Severity.INFO], 0),
        (Severity.WARN, [Severity.WARN], 1),
        (Severity.WARN, [Severity.INFO], 0),
        (Severity.INFO, [Severity.INFO], 1),
        (Severity.INFO, [], 0),
    ],
)
def test_the_exit_code_is_1_exactly_when_a_kept_finding_is_at_or_above_the_threshold(
    fail_on: Severity, kept: list[Severity], code: int
) -> None:
    kept_findings = [Finding("I1", sev, "t", "", "m") for sev in kept]
    ignored_err = [(Finding("T1", Severity.ERR, "t", "", "tool removed"), "accepted")]
    assert VerifyResult("a", "b", kept_findings, ignored_err, {}).exit_code(fail_on) == code


def test_counts_cover_every_severity_and_leave_out_ignored_findings() -> None:
    assert result().counts() == {"ERR": 3, "WARN": 1, "INFO": 3}
    assert empty().counts() == {"ERR": 0, "WARN": 0, "INFO": 0}


def test_an_unknown_format_is_a_usage_error_naming_the_flag() -> None:
    with pytest.raises(UsageError) as caught:
        render(result(), "yaml")
    assert caught.value.exit_code == 2
    assert (
        str(caught.value)
        == "--format: unknown report format 'yaml': use text, json, markdown, junit, sarif, github, html"
    )


# --- every format ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_the_same_bytes_whatever_order_the_findings_came_in(fmt: str) -> None:
    expected = render(result(), fmt, fail_on=Severity.WARN)
    for seed in range(5):
        shuffled_findings, shuffled_ignored = findings(), ignored()
        random.Random(seed).shuffle(shuffled_findings)
        random.Random(seed).shuffle(shuffled_ignored)
        shuffled = result(
            findings=shuffled_findings,
            ignored=shuffled_ignored,
            compared={"prompts": 1, "tools": 2, "calls_replayed": 12},
        )
        assert render(shuffled, fmt, fail_on=Severity.WARN) == expected


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("subject", [result(), empty()], ids=["findings", "empty"])
def test_every_format_ends_with_one_newline_and_has_no_trailing_whitespace(
    fmt: str, subject: VerifyResult
) -> None:
    text = render(subject, fmt)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert all(line == line.rstrip() for line in text.splitlines())


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_does_not_change_the_result(fmt: str) -> None:
    subject = result()
    before = copy.deepcopy(subject)
    render(subject, fmt)
    assert subject == before


# --- text ------------------------------------------------------------------------------------


def test_the_text_report_groups_by_server_then_tools_then_resources_with_severity_then_rule_order() -> None:
    assert render(result(), "text") == (
        "verify: fixtures/time.cassette.json -> uvx mcp-server-time\n"
        "compared: 2 tools, 1 prompts, 12 calls replayed\n"
        "\n"
        "server\n"
        "  ERR  C1   /capabilities/prompts  server capability 'prompts' removed\n"
        "\n"
        "tool convert_time\n"
        "  ERR  I13  /inputSchema/properties/n/maximum  bound newly set (now 10)\n"
        "             evidence: call 3 sent n=12\n"
        '  WARN B7   /structuredContent/result  result changed ("a" -> "b")\n'
        "\n"
        "tool get_current_time\n"
        '  ERR  I1   /inputSchema/properties/tz  new required input property \'tz\' (now {"type":"string"})\n'
        "  INFO I2   /inputSchema/properties/x  new optional input property 'x'\n"
        '  INFO I10  /inputSchema/properties/fmt/enum  enum value \'iso\' added (["a"] -> ["a","iso"])\n'
        "\n"
        "resource file:///notes.txt\n"
        "  INFO R2   resource added\n"
        "\n"
        "ignored by the ignore file (2)\n"
        "  INFO T4   convert_time /description  reviewed by hand\n"
        "  WARN B7   get_current_time /structuredContent/datetime  wall-clock value\n"
        "\n"
        "3 ERR, 1 WARN, 3 INFO, 2 ignored (fail-on ERR: FAIL)\n"
    )


def test_the_text_summary_line_reports_pass_below_the_threshold() -> None:
    only_info = result(findings=[f for f in findings() if f.severity is Severity.INFO], ignored=[])
    assert render(only_info, "text").splitlines()[-1] == "0 ERR, 0 WARN, 3 INFO (fail-on ERR: PASS)"
    assert (
        render(only_info, "text", fail_on=Severity.INFO).splitlines()[-1]
        == "0 ERR, 0 WARN, 3 INFO (fail-on INFO: FAIL)"
    )


def test_the_text_report_leaves_out_long_values_and_caps_evidence() -> None:
    long = Finding(
        "I9",
        Severity.ERR,
        "t",
        "/p",
        "enum narrowed",
        list(range(30)),
        [1],
        evidence=[f"e{i}" for i in range(5)],
    )
    lines = render(one(long), "text").splitlines()
    assert "  ERR  I9   /p  enum narrowed" in lines
    assert [line.strip() for line in lines if "evidence" in line or "more" in line] == [
        "evidence: e0",
        "evidence: e1",
        "evidence: e2",
        "... and 2 more",
    ]


def test_the_text_report_shows_control_characters_from_a_server_as_escapes() -> None:
    hostile = Finding("B6", Severity.INFO, "t\x1b[2J", "/x", "msg\x1b]0;owned\x07\nnext")
    text = render(one(hostile), "text")
    assert "\x1b" not in text and "\x07" not in text
    assert "tool t\\x1b[2J" in text
    assert "msg\\x1b]0;owned\\x07\\x0anext" in text


def test_the_text_report_is_plain_unless_colour_is_asked_for() -> None:
    assert "\x1b[" not in render(result(), "text")
    coloured = render(result(), "text", color=True)
    assert "\x1b[1;31mERR \x1b[0m C1" in coloured
    assert "\x1b[33mWARN\x1b[0m B7" in coloured
    assert (
        coloured.splitlines()[-1] == "\x1b[1;31m3 ERR, 1 WARN, 3 INFO, 2 ignored (fail-on ERR: FAIL)\x1b[0m"
    )
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == render(result(), "text")


def test_colour_is_ignored_by_the_machine_formats() -> None:
    for fmt in FORMATS[1:]:
        assert render(result(), fmt, color=True) == render(result(), fmt)


def test_the_empty_text_report_says_no_drift_and_passes() -> None:
    assert render(empty(), "text") == (
        "verify: a.cassette.json -> b.cassette.json\n\nno drift found\n\n0 ERR, 0 WARN, 0 INFO (fail-on ERR: PASS)\n"
    )


# --- json ------------------------------------------------------------------------------------


@pytest.mark.parametrize("subject", [result(), empty()], ids=["findings", "empty"])
@pytest.mark.parametrize("fail_on", list(Severity))
def test_the_json_report_validates_against_the_published_schema(
    subject: VerifyResult, fail_on: Severity
) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(render(subject, "json", fail_on=fail_on)))


def test_the_published_schema_rejects_a_report_with_a_missing_reason_or_an_extra_field() -> None:
    doc = json.loads(render(result(), "json"))
    validator = jsonschema.Draft202012Validator(SCHEMA)
    no_reason = copy.deepcopy(doc)
    del no_reason["ignored"][0]["reason"]
    extra = copy.deepcopy(doc)
    extra["findings"][0]["surprise"] = 1
    assert not validator.is_valid(no_reason)
    assert not validator.is_valid(extra)


def test_the_json_report_has_a_fixed_key_order_sorted_findings_and_reasons() -> None:
    doc = json.loads(render(result(), "json", fail_on=Severity.WARN))
    assert list(doc) == [
        "version",
        "cassette",
        "candidate",
        "fail_on",
        "result",
        "counts",
        "compared",
        "findings",
        "ignored",
    ]
    assert (doc["version"], doc["fail_on"], doc["result"]) == (1, "WARN", "fail")
    assert doc["counts"] == {"ERR": 3, "WARN": 1, "INFO": 3}
    assert list(doc["compared"].items()) == [("tools", 2), ("prompts", 1), ("calls_replayed", 12)]
    assert [(f["tool"], f["rule"]) for f in doc["findings"]] == [
        (None, "C1"),
        ("convert_time", "I13"),
        ("convert_time", "B7"),
        ("get_current_time", "I1"),
        ("get_current_time", "I2"),
        ("get_current_time", "I10"),
        ("file:///notes.txt", "R2"),
    ]
    assert doc["findings"][1] == findings()[3].to_dict()
    assert [(f["rule"], f["reason"]) for f in doc["ignored"]] == [
        ("T4", "reviewed by hand"),
        ("B7", "wall-clock value"),
    ]


def test_the_empty_json_report_passes_with_empty_lists() -> None:
    doc = json.loads(render(empty(), "json"))
    assert (doc["result"], doc["findings"], doc["ignored"], doc["compared"]) == ("pass", [], [], {})


# --- markdown --------------------------------------------------------------------------------


def test_the_markdown_report_has_a_count_table_and_one_table_per_group() -> None:
    lines = render(result(), "markdown").splitlines()
    assert lines[0] == "## harn-mcp-mock verify: FAIL"
    assert "| Severity | Count |" in lines and "| ERR | 3 |" in lines and "| ignored | 2 |" in lines
    assert [line for line in lines if line.startswith("### ")] == [
        "### server",
        "### tool `convert_time`",
        "### tool `get_current_time`",
        "### resource `file:///notes.txt`",
    ]
    assert lines.count("| Severity | Rule | Pointer | Change |") == 4
    assert (
        '| ERR | I1 | `/inputSchema/properties/tz` | new required input property \'tz\' (now `{"type":"string"}`) |'
        in lines
    )
    assert "| INFO | R2 |  | resource added |" in lines
    assert "| INFO | T4 | convert\\_time | `/description` | reviewed by hand |" in lines
    assert lines[-1] == "3 ERR, 1 WARN, 3 INFO, 2 ignored (fail-on ERR: FAIL)"


def test_the_markdown_report_escapes_pipes_backticks_and_newlines_inside_table_cells() -> None:
    tricky = Finding("B6", Severity.INFO, "a`b|c", "/p|q/`r`", "said `x | y`\nthen *z* <b>", "1|2", None)
    lines = render(one(tricky), "markdown").splitlines()
    assert "### tool ``a`b|c``" in lines
    row = next(line for line in lines if line.startswith("| INFO | B6 |"))
    assert (
        row == '| INFO | B6 | `` /p\\|q/`r` `` | said \\`x \\| y\\`<br>then \\*z\\* \\<b> (was `"1\\|2"`) |'
    )
    # Every unescaped pipe is a column border: four columns.
    assert len(re.findall(r"(?<!\\)\|", row)) == 5


def test_the_empty_markdown_report_says_no_drift() -> None:
    text = render(empty(), "markdown")
    assert "No drift found." in text and "###" not in text and "<details>" not in text


# --- junit -----------------------------------------------------------------------------------


def junit(subject: VerifyResult, fail_on: Severity = Severity.ERR) -> ET.Element:
    text = render(subject, "junit", fail_on=fail_on)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode())


def test_the_junit_report_has_one_suite_and_one_case_per_group_failing_at_the_threshold() -> None:
    root = junit(result())
    assert root.tag == "testsuites"
    (suite,) = root
    assert suite.tag == "testsuite" and suite.get("name") == "harn-mcp-mock verify"
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "4",
        "failures": "3",
        "errors": "0",
        "skipped": "0",
    }
    assert root.get("tests") == "4" and root.get("failures") == "3"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {
        "cassette": "fixtures/time.cassette.json",
        "candidate": "uvx mcp-server-time",
        "fail_on": "ERR",
    }
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("server", "server"),
        ("tool", "convert_time"),
        ("tool", "get_current_time"),
        ("resource", "file:///notes.txt"),
    ]
    assert [len(c.findall("failure")) for c in cases] == [1, 1, 1, 0]
    failure = cases[1].find("failure")
    assert failure is not None and failure.text is not None
    assert (
        failure.get("message")
        == "ERR I13 (input bound newly set) /inputSchema/properties/n/maximum: bound newly set"
    )
    assert "evidence: call 3 sent n=12" in failure.text
    out = cases[1].findtext("system-out") or ""
    assert "WARN B7 (read-only result's values changed) /structuredContent/result: result changed" in out
    assert "ignored (reviewed by hand): INFO T4" in out


def test_a_junit_case_with_several_failing_findings_has_one_failure_listing_them_all() -> None:
    cases = junit(result(), Severity.INFO).find("testsuite")
    assert cases is not None
    case = cases.findall("testcase")[2]
    (failure,) = case.findall("failure")
    assert failure.get("message", "").endswith("(and 2 more at or above INFO)")
    assert [line.split(" ")[1] for line in (failure.text or "").splitlines() if not line.startswith(" ")] == [
        "I1",
        "I2",
        "I10",
    ]


def test_the_junit_report_escapes_markup_and_drops_characters_xml_cannot_carry() -> None:
    hostile = Finding("B6", Severity.ERR, "<t&>", "/a", 'x "]]> \x00\x1b <y/> &amp;\ud800')
    root = junit(one(hostile))
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "<t&>"
    failure = case.find("failure")
    assert failure is not None
    assert (
        failure.get("message") == 'ERR B6 (error message changed) /a: x "]]> \\u0000\\u001b <y/> &amp;\\ud800'
    )


def test_a_junit_failure_message_is_one_line_even_when_the_finding_message_is_not() -> None:
    root = junit(one(Finding("B4", Severity.ERR, "t", "", "became an error:\nboom\r\nagain")))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert (
        failure.get("message")
        == "ERR B4 (success became an error, or error code changed): became an error: boom again"
    )


def test_the_empty_junit_report_has_one_passing_no_drift_case() -> None:
    root = junit(empty())
    assert [(c.get("classname"), c.get("name"), len(c)) for c in root.iter("testcase")] == [
        ("verify", "no drift", 0)
    ]
    assert (root.get("tests"), root.get("failures")) == ("1", "0")


def test_a_group_with_only_ignored_findings_is_a_passing_junit_case() -> None:
    root = junit(result(findings=[]))
    cases = list(root.iter("testcase"))
    assert [(c.get("name"), c.find("failure")) for c in cases] == [
        ("convert_time", None),
        ("get_current_time", None),
    ]
    assert "ignored (wall-clock value)" in (cases[1].findtext("system-out") or "")


# --- sarif -----------------------------------------------------------------------------------

URI_REFERENCE = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")


def check_sarif(doc: dict[str, Any]) -> None:
    """The required properties of SARIF 2.1.0 (OASIS sarif-v2.1.0, section 3) that we emit."""
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].startswith("https://") and doc["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(doc["runs"], list) and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    for rule in driver["rules"]:
        assert isinstance(rule["shortDescription"]["text"], str)
    for res in run["results"]:
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        assert res["level"] in ("none", "note", "warning", "error")
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        for location in res["locations"]:
            uri = location["physicalLocation"]["artifactLocation"]["uri"]
            assert URI_REFERENCE.match(uri), uri
            for logical in location["logicalLocations"]:
                assert logical["kind"] == "member" and logical["fullyQualifiedName"]
        assert all(isinstance(v, str) for v in res["partialFingerprints"].values())


def sarif(subject: VerifyResult, fail_on: Severity = Severity.ERR) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(render(subject, "sarif", fail_on=fail_on))
    check_sarif(doc)
    return doc


def test_the_sarif_report_has_one_rule_per_rule_id_used_and_a_result_per_finding() -> None:
    run = sarif(result())["runs"][0]
    assert run["tool"]["driver"]["name"] == "harn-mcp-mock verify"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["B7", "C1", "I1", "I2", "I10", "I13", "R2"]
    assert all(r["name"] == r["shortDescription"]["text"] == RULE_TITLES[r["id"]] for r in rules)
    first = run["results"][3]
    assert {k: first[k] for k in ("ruleId", "level", "message")} == {
        "ruleId": "I1",
        "level": "error",
        "message": {
            "text": 'get_current_time /inputSchema/properties/tz: new required input property \'tz\' (now {"type":"string"})'
        },
    }
    assert first["locations"] == [
        {
            "physicalLocation": {"artifactLocation": {"uri": "fixtures/time.cassette.json"}},
            "logicalLocations": [
                {
                    "name": "get_current_time",
                    "fullyQualifiedName": "get_current_time/inputSchema/properties/tz",
                    "kind": "member",
                }
            ],
        }
    ]
    assert [r["level"] for r in run["results"]] == [
        "error",
        "error",
        "warning",
        "error",
        "note",
        "note",
        "note",
    ]
    assert run["properties"]["ignored"] == 2 and run["properties"]["result"] == "fail"


def test_sarif_fingerprints_ignore_the_message_and_values_but_not_the_location() -> None:
    base = Finding("B7", Severity.WARN, "t", "/a", "changed", 1, 2)
    reworded = Finding("B7", Severity.WARN, "t", "/a", "changed again", 3, 4)
    moved = Finding("B7", Severity.WARN, "t", "/b", "changed", 1, 2)

    def fingerprint(f: Finding) -> str:
        return str(sarif(one(f))["runs"][0]["results"][0]["partialFingerprints"])

    assert fingerprint(base) == fingerprint(reworded) != fingerprint(moved)


@pytest.mark.parametrize(
    ("cassette", "uri"),
    [
        ("fixtures/time.cassette.json", "fixtures/time.cassette.json"),
        ("my fixtures/ü.json", "my%20fixtures/%C3%BC.json"),
        ("/srv/ci/a b.json", "file:///srv/ci/a%20b.json"),
        ("fixtures\\win.json", "fixtures/win.json"),
        ("C:\\ci\\x.json", "file:///C:/ci/x.json"),
    ],
)
def test_the_sarif_artifact_uri_is_a_uri_reference_for_any_cassette_path(cassette: str, uri: str) -> None:
    doc = sarif(result(cassette=cassette))
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri


def test_the_empty_sarif_report_has_no_rules_and_no_results() -> None:
    run = sarif(empty())["runs"][0]
    assert (run["tool"]["driver"]["rules"], run["results"], run["properties"]["result"]) == ([], [], "pass")


# --- github ----------------------------------------------------------------------------------


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_the_github_report_is_one_annotation_per_finding_then_the_summary_line() -> None:
    lines = render(result(), "github").splitlines()
    assert (
        lines[0]
        == "::error title=C1 server capability removed::server /capabilities/prompts: server capability 'prompts' removed"
    )
    assert (
        lines[2]
        == '::warning title=B7 read-only result\'s values changed::convert_time /structuredContent/result: result changed ("a" -> "b")'
    )
    assert (
        lines[5]
        == '::notice title=I10 input enum widened or const removed::get_current_time /inputSchema/properties/fmt/enum: enum value \'iso\' added (["a"] -> ["a","iso"])'
    )
    assert (
        lines[6]
        == "::notice title=R2 resource or resource template added::resource file:///notes.txt: resource added"
    )
    assert lines[-1] == "3 ERR, 1 WARN, 3 INFO, 2 ignored (fail-on ERR: FAIL)"
    assert len(lines) == 8


def test_the_github_report_escapes_percent_newlines_and_colons_so_data_cannot_end_a_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(RULE_TITLES, "B6", "title: with, commas % and\nnewline")
    message = "100% off:\r\n::error::injected, see ::stop-commands::x"
    (annotation, summary) = render(
        one(Finding("B6", Severity.WARN, "t:x", "/a", message)), "github"
    ).splitlines()
    assert annotation == (
        "::warning title=B6 title%3A with%2C commas %25 and%0Anewline::"
        "t:x /a: 100%25 off:%0D%0A::error::injected, see ::stop-commands::x"
    )
    command, _, data = annotation.partition("::")[2].partition("::")
    assert command == "warning title=B6 title%3A with%2C commas %25 and%0Anewline"
    assert unescape_data(data) == f"t:x /a: {message}"
    assert summary == "0 ERR, 1 WARN, 0 INFO (fail-on ERR: PASS)"


def test_the_empty_github_report_is_only_the_summary_line() -> None:
    assert render(empty(), "github") == "0 ERR, 0 WARN, 0 INFO (fail-on ERR: PASS)\n"


def test_rendering_github_never_writes_the_step_summary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary_file = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    render(result(), "github")
    assert not summary_file.exists()


def test_the_step_summary_is_the_markdown_report() -> None:
    assert github_step_summary(result(), Severity.WARN) == render(result(), "markdown", fail_on=Severity.WARN)


def test_a_step_summary_over_the_limit_is_cut_at_a_section_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report, "_STEP_SUMMARY_LIMIT", 3000)
    many = [
        Finding(
            "I1",
            Severity.ERR,
            f"tool_{i:02}",
            f"/inputSchema/properties/a{i}",
            f"new required input property 'a{i}'",
        )
        for i in range(40)  # 40 kinds: findings of one kind about many tools are one row
    ]
    text = github_step_summary(result(findings=many), Severity.ERR)
    assert len(text.encode()) <= 3000
    assert text.startswith("## harn-mcp-mock verify: FAIL\n")
    assert text.endswith(
        "_The report was cut to fit GitHub's step summary limit; use `--format json` for all findings._\n"
    )
    assert text.count("### tool") == text.count("| Severity | Rule | Pointer | Change |") >= 1


# --- the documented examples -----------------------------------------------------------------


def test_the_documented_example_script_prints_the_documented_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "verify-ignore.txt").write_text(doc_block("text verify-ignore.txt"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(doc_block("python example"), "example", "exec"), namespace)
    assert stdout.getvalue() == doc_block("text output-text")
    shown = namespace["result"]
    assert render(shown, "github") == doc_block("text output-github")
    assert render(shown, "markdown") == doc_block("markdown output-markdown")
    assert render(shown, "junit") == doc_block("xml output-junit")
