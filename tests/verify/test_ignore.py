"""Ignore files for verify: both formats, how entries match, and the errors for bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harn_mcp_mock.verify.ignore as ignore
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.verify.ignore import IgnoreRule, apply_ignores, load_ignore_file
from harn_mcp_mock.verify.report import VerifyResult, render
from tests.verify.test_report import doc_block

DOC_RULES = [
    IgnoreRule(
        "B7", "get_current_time", "/structuredContent/datetime", "wall-clock value, differs on every call"
    ),
    IgnoreRule("I19", None, None, "description wording is reviewed in the PR, not by CI"),
    IgnoreRule("A*", "legacy_*", "/annotations", "legacy tools are frozen; annotations tracked in #412"),
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def finding(
    rule: str = "B7", tool: str | None = "get_current_time", pointer: str = "/structuredContent/datetime"
) -> Finding:
    return Finding(rule, Severity.WARN, tool, pointer, "changed", kind="tool" if tool else "server")


def matches(rule: IgnoreRule, f: Finding) -> bool:
    return bool(apply_ignores([f], [rule])[1])


def load_error(tmp_path: Path, name: str, text: str) -> str:
    with pytest.raises(UsageError) as caught:
        load_ignore_file(write(tmp_path, name, text))
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert "\n" not in message
    return message.removeprefix(str(tmp_path) + "/")


# --- the public surface ----------------------------------------------------------------------


def test_the_module_exports_exactly_its_public_names_sorted() -> None:
    assert ignore.__all__ == ["IgnoreRule", "apply_ignores", "load_ignore_file"]


# --- both formats ----------------------------------------------------------------------------


def test_the_documented_line_and_json_files_load_to_the_same_rules(tmp_path: Path) -> None:
    lines = load_ignore_file(write(tmp_path, "verify-ignore.txt", doc_block("text verify-ignore.txt")))
    as_json = load_ignore_file(write(tmp_path, "verify-ignore.json", doc_block("json verify-ignore.json")))
    assert lines == as_json == DOC_RULES


def test_the_line_format_skips_blank_and_comment_lines_and_reads_tabs(tmp_path: Path) -> None:
    text = (
        "\n# a comment\n   # an indented comment\n\nB7\tget_current_time\t/structuredContent  #  volatile  \n"
    )
    assert load_ignore_file(write(tmp_path, "ignore", text)) == [
        IgnoreRule("B7", "get_current_time", "/structuredContent", "volatile")
    ]


def test_a_hash_inside_a_field_is_not_the_start_of_the_reason(tmp_path: Path) -> None:
    text = "I1 tool#2 /inputSchema/properties/a#b # why # with hashes\n"
    assert load_ignore_file(write(tmp_path, "ignore.txt", text)) == [
        IgnoreRule("I1", "tool#2", "/inputSchema/properties/a#b", "why # with hashes")
    ]


def test_rule_ids_are_read_case_insensitively_and_stars_mean_any(tmp_path: Path) -> None:
    assert load_ignore_file(write(tmp_path, "ignore.txt", "b7 * *  # any tool\n* * /_meta # any rule\n")) == [
        IgnoreRule("B7", None, None, "any tool"),
        IgnoreRule(None, None, "/_meta", "any rule"),
    ]


def test_json_entries_may_leave_out_or_null_or_star_their_matchers(tmp_path: Path) -> None:
    doc = {
        "version": 1,
        "ignore": [
            {"reason": "everything"},
            {"rule": None, "tool": "*", "pointer": "*", "reason": "also everything"},
            {"rule": "i*", "pointer": "", "reason": "root pointer is any"},
        ],
    }
    assert load_ignore_file(write(tmp_path, "ignore.JSON", json.dumps(doc))) == [
        IgnoreRule(None, None, None, "everything"),
        IgnoreRule(None, None, None, "also everything"),
        IgnoreRule("I*", None, None, "root pointer is any"),
    ]


def test_an_empty_line_format_file_ignores_nothing(tmp_path: Path) -> None:
    assert load_ignore_file(write(tmp_path, ".harn-verify-ignore", "")) == []


# --- matching --------------------------------------------------------------------------------


def test_tool_globs_match_whole_names_case_sensitively() -> None:
    rule = IgnoreRule(None, "legacy_*", None, "r")
    assert matches(rule, finding(tool="legacy_search"))
    assert not matches(rule, finding(tool="search_legacy"))
    assert not matches(rule, finding(tool="Legacy_search"))
    assert matches(IgnoreRule(None, "get_?ime", None, "r"), finding(tool="get_time"))


def test_only_an_any_tool_entry_matches_server_level_findings() -> None:
    server = finding(rule="C1", tool=None, pointer="/capabilities/tools")
    assert matches(IgnoreRule("C1", None, None, "r"), server)
    assert not matches(IgnoreRule("C1", "*x*", None, "r"), server)


def test_pointers_match_as_prefixes_on_whole_segments() -> None:
    rule = IgnoreRule(None, None, "/structuredContent", "r")
    assert matches(rule, finding(pointer="/structuredContent"))
    assert matches(rule, finding(pointer="/structuredContent/datetime/0"))
    assert not matches(rule, finding(pointer="/structuredContentV2/datetime"))
    assert not matches(rule, finding(pointer="/content/structuredContent"))
    assert not matches(rule, finding(pointer=""))


def test_pointer_globs_match_the_pointer_or_any_of_its_prefixes() -> None:
    anywhere = IgnoreRule(None, None, "*/datetime", "r")
    assert matches(anywhere, finding(pointer="/structuredContent/datetime"))
    assert matches(anywhere, finding(pointer="/structuredContent/items/3/datetime/iso"))
    assert not matches(anywhere, finding(pointer="/structuredContent/datetimes"))
    element = IgnoreRule(None, None, "/content/*/text", "r")
    assert matches(element, finding(pointer="/content/0/text"))
    assert not matches(element, finding(pointer="/content/0/type"))


def test_rule_families_match_every_rule_of_the_family_and_no_other() -> None:
    inputs = IgnoreRule("I*", None, None, "r")
    assert matches(inputs, finding(rule="I1")) and matches(inputs, finding(rule="I19"))
    assert not matches(inputs, finding(rule="O1"))
    assert not matches(IgnoreRule("I1", None, None, "r"), finding(rule="I10"))


def test_the_first_matching_entry_gives_the_reason_and_order_is_kept() -> None:
    rules = [
        IgnoreRule("B7", "get_current_time", None, "first"),
        IgnoreRule("B*", None, None, "second"),
    ]
    a, b, c = finding(), finding(rule="B8", tool="x"), finding(rule="I1", tool="x")
    kept, ignored = apply_ignores([a, b, c], rules)
    assert kept == [c]
    assert ignored == [(a, "first"), (b, "second")]


def test_no_rules_keep_every_finding() -> None:
    assert apply_ignores([finding()], []) == ([finding()], [])


def test_ignored_findings_are_reported_with_their_reasons_and_do_not_fail_the_run(tmp_path: Path) -> None:
    rules = load_ignore_file(
        write(tmp_path, "ignore.txt", "T1 old_tool * # retired on purpose, see CHANGELOG\n")
    )
    removed = Finding("T1", Severity.ERR, "old_tool", "", "tool removed")
    kept, ignored = apply_ignores([removed], rules)
    result = VerifyResult("a.json", "b.json", kept, ignored, {"tools": 1})
    assert result.exit_code(Severity.INFO) == 0
    assert "  ERR  T1   old_tool  retired on purpose, see CHANGELOG" in render(result, "text").splitlines()
    assert json.loads(render(result, "json"))["ignored"][0]["reason"] == "retired on purpose, see CHANGELOG"
    assert "retired on purpose" in render(result, "junit")
    assert "retired on purpose" in render(result, "markdown")


# --- errors ----------------------------------------------------------------------------------


def test_a_line_without_a_reason_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    assert load_error(tmp_path, "ignore.txt", "# header\nB7 * *  # ok\nI1 tool /a\n") == (
        "ignore.txt:3: every ignore entry needs a reason: end the line with '# why'"
    )
    assert (
        load_error(tmp_path, "ignore.txt", "I1 tool /a   #   \n")
        == "ignore.txt:1: every ignore entry needs a reason"
    )


def test_a_json_entry_without_a_reason_is_an_error_naming_the_field(tmp_path: Path) -> None:
    doc = {"version": 1, "ignore": [{"rule": "B7", "reason": "ok"}, {"rule": "I1"}]}
    assert load_error(tmp_path, "ignore.json", json.dumps(doc)) == (
        "ignore.json:ignore[1].reason: every ignore entry needs a reason (a non-empty string)"
    )
    doc = {"version": 1, "ignore": [{"rule": "B7", "reason": " "}]}
    assert load_error(tmp_path, "ignore.json", json.dumps(doc)) == (
        "ignore.json:ignore[0].reason: every ignore entry needs a reason"
    )


@pytest.mark.parametrize("rule", ["Z1", "I99", "I1*", "B7x", "**"])
def test_an_unknown_rule_id_is_an_error_naming_the_line(tmp_path: Path, rule: str) -> None:
    assert load_error(tmp_path, "ignore.txt", f"\n{rule} * *  # why\n") == (
        f"ignore.txt:2: unknown rule id {rule!r}: use a rule id such as I1, a family such as I*, or *"
    )


def test_an_unknown_rule_id_in_json_names_the_field(tmp_path: Path) -> None:
    doc = {"version": 1, "ignore": [{"rule": "X1", "reason": "why"}]}
    assert load_error(tmp_path, "ignore.json", json.dumps(doc)).startswith(
        "ignore.json:ignore[0].rule: unknown rule id 'X1'"
    )


def test_bad_json_is_one_line_naming_the_file_line_and_column(tmp_path: Path) -> None:
    text = '{\n  "version": 1,\n  "ignore": [\n    {"rule": "B7" "reason": "x"}\n  ]\n}\n'
    assert (
        load_error(tmp_path, "ignore.json", text)
        == "ignore.json:4:19: not valid JSON: Expecting ',' delimiter"
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], 'ignore.json: must be a JSON object like {"version": 1, "ignore": [...]}'),
        ({"ignore": []}, "ignore.json:version: must be 1, got null"),
        ({"version": 2, "ignore": []}, "ignore.json:version: must be 1, got 2"),
        ({"version": True, "ignore": []}, "ignore.json:version: must be 1, got true"),
        ({"version": 1}, "ignore.json:ignore: must be a list of entries"),
        (
            {"version": 1, "ignore": [], "extra": 1},
            "ignore.json:extra: unknown field; known fields: version, ignore",
        ),
        (
            {"version": 1, "ignore": ["B7"]},
            'ignore.json:ignore[0]: must be an object like {"rule": "B7", "tool": "...", "pointer": "/...", "reason": "..."}',
        ),
        (
            {"version": 1, "ignore": [{"rule": "B7", "reason": "r", "tools": "x"}]},
            "ignore.json:ignore[0].tools: unknown field; known fields: rule, tool, pointer, reason",
        ),
        (
            {"version": 1, "ignore": [{"tool": 3, "reason": "r"}]},
            "ignore.json:ignore[0].tool: must be a string or null",
        ),
        (
            {"version": 1, "ignore": [{"tool": "", "reason": "r"}]},
            "ignore.json:ignore[0].tool: must not be empty (use * for any tool)",
        ),
        (
            {"version": 1, "ignore": [{"pointer": "structuredContent", "reason": "r"}]},
            "ignore.json:ignore[0].pointer: pointer 'structuredContent' must start with '/' (a JSON pointer) or be a glob starting with '*'",
        ),
    ],
)
def test_json_files_of_the_wrong_shape_are_errors_naming_the_field(
    tmp_path: Path, doc: object, message: str
) -> None:
    assert load_error(tmp_path, "ignore.json", json.dumps(doc)) == message


def test_a_line_with_the_wrong_number_of_fields_is_an_error_naming_the_line(tmp_path: Path) -> None:
    assert load_error(tmp_path, "ignore.txt", "B7 get_current_time  # no pointer\n") == (
        "ignore.txt:1: expected 'RULE TOOL POINTER  # reason', got 2 field(s) before the '#'"
    )


def test_a_pointer_that_is_not_a_json_pointer_is_an_error(tmp_path: Path) -> None:
    assert load_error(tmp_path, "ignore.txt", "B7 * structuredContent/x  # why\n").startswith(
        "ignore.txt:1: pointer 'structuredContent/x' must start with '/'"
    )


def test_a_missing_file_and_a_non_utf8_file_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_ignore_file(tmp_path / "absent.txt")
    assert str(caught.value) == f"{tmp_path / 'absent.txt'}: no such ignore file"
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"B7 * *  # ok\nI1 * *  # caf\xe9\n")
    with pytest.raises(UsageError) as caught:
        load_ignore_file(path)
    assert str(caught.value) == f"{path}:2: not UTF-8 text"
