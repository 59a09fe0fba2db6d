"""Ignore-file pointers in the one pointer-pattern dialect; the old fnmatch globs still match,
each with one deprecation line naming the file and entry (docs/cli.md, "JSON pointer patterns")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.verify.ignore import IgnoreRule, apply_ignores, load_ignore_file


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonptr, "_WARNED", set())


def ignored(rule: IgnoreRule, pointer: str) -> bool:
    finding = Finding("B7", Severity.WARN, "t", pointer, "changed", kind="tool")
    return bool(apply_ignores([finding], [rule])[1])


POINTERS = [
    "/structuredContent/datetime",
    "/structuredContent/items/3/datetime/iso",
    "/datetime",
    "/structuredContent/datetimes",
    "/structuredContent/x",
]


@pytest.mark.parametrize(
    ("old", "new", "advice"),
    [
        ("*/datetime", "/**/datetime", "write '/**/datetime'"),
        ("*datetime", "/**/*datetime", "write '/**/*datetime'"),
        ("**", "/**", "write '/**'"),
    ],
)
def test_an_old_glob_matches_as_before_and_its_new_spelling_matches_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, advice: str
) -> None:
    path = tmp_path / "ignore.txt"
    path.write_text(f"B7 * {old}  # old\nB7 * {new}  # new\nB8 * {old}  # old again\n")
    rules = load_ignore_file(path)
    assert capsys.readouterr().err.splitlines() == [  # once per spelling, naming where it was first
        f"harn-mcp-mock: deprecated: {path}:1: pointer pattern {old!r} is an old spelling; {advice} "
        "(docs/cli.md#json-pointer-patterns)",
    ]
    assert [ignored(rules[0], p) for p in POINTERS] == [ignored(rules[1], p) for p in POINTERS]
    assert any(ignored(rules[1], p) for p in POINTERS)


def test_the_json_format_names_the_entry_and_a_second_load_says_nothing_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ignore.json"
    path.write_text(json.dumps({"version": 1, "ignore": [{"pointer": "/content/?/text", "reason": "r"}]}))
    rules = load_ignore_file(path)
    load_ignore_file(path)
    err = capsys.readouterr().err
    assert err == (
        f"harn-mcp-mock: deprecated: {path}:ignore[0].pointer: pointer pattern '/content/?/text' is an old "
        "spelling; write it with '*' within a segment and '**' for any depth: the dialect has no '?' or "
        "'[...]' (docs/cli.md#json-pointer-patterns)\n"
    )
    assert ignored(rules[0], "/content/0/text/x") and not ignored(rules[0], "/content/10/text")


def test_a_pattern_in_the_dialect_loads_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ignore.txt"
    path.write_text("B7 * /content/*/text  # a\nB7 * /**/datetime  # b\nB7 * /items/log-*  # c\n")
    rules = load_ignore_file(path)
    assert capsys.readouterr().err == ""
    assert ignored(rules[0], "/content/0/text") and not ignored(rules[0], "/content/0/type")
    assert ignored(rules[1], "/a/b/datetime/iso") and not ignored(rules[1], "/a/datetimes")
    assert ignored(rules[2], "/items/log-7/at") and not ignored(rules[2], "/items/catalog-7")


def test_a_star_no_longer_crosses_a_slash_in_a_pattern_that_starts_with_one() -> None:
    rule = IgnoreRule(None, None, "/content/*/text", "r")
    assert not ignored(rule, "/content/0/inner/text")


def test_a_malformed_escape_in_a_dialect_pattern_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ignore.txt"
    path.write_text("B7 * /a/~2  # bad\n")
    with pytest.raises(UsageError, match="must be followed by 0 or 1"):
        load_ignore_file(path)
