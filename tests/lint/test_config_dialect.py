"""Lint allowlist pointers in the one pointer-pattern dialect; a pattern fnmatch could match more
with (an old spelling) still matches as it did, with one deprecation line naming the config file
and entry (docs/cli.md, "JSON pointer patterns"; docs/lint.md, "Configuration")."""

from __future__ import annotations

import fnmatch
import itertools
import re
from pathlib import Path

import pytest

from harn_mcp_mock.lint.config import Allow, LintConfig, _old_spelling, load_config
from harn_mcp_mock.store import pointer as jsonptr

ALLOW = "tool.harn-mcp-mock.lint.allow"
DOCS = "(docs/cli.md#json-pointer-patterns)"
FILE = "tests/cassettes/p.cassette.json"
POINTERS = [
    "",
    "/messages",
    "/messages/3",
    "/messages/3/message",
    "/messages/3/message/result/tools/0/description",
    "/messages/3/message/result/tools/0/inputSchema/properties/q/description",
    "/messages/3/message/result/tools/0/x-description",
    "/messages/3/message/result/tools/0/descriptions",
    "/messages/4/message/result/tools/1/description",
    "/messages/4/message/result/tools/beta-1",
    "/messages/4/message/result/tools/1-beta",
    "/messages/4/message/result/tools/1/alpha/1-beta",
    "/messages/30/raw",
    "/description",
    "/content/0/text",
    "/content/0/inner/text",
    "/content/text",
]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonptr, "_WARNED", set())


def entry(rule: str, pointer: str, reason: str = "r") -> str:
    return f'[[{ALLOW}]]\nrule = "{rule}"\npointer = "{pointer}"\nreason = "{reason}"\n'


def allowed(config: LintConfig, rule: str) -> list[str]:
    return [p for p in POINTERS if config.allowed(rule, FILE, p) is not None]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("/messages/3/*", "/messages/3/*/**"),  # a segment '*' at the end reaches all below
        ("/content/*/text", "/content/*/**/text"),  # ... and in the middle any depth of segments
        ("/messages/4/message/result/tools/*-beta", "/messages/4/message/result/tools/**/*-beta"),
        ("*/description", "/**/description"),  # not starting with '/'
        ("*description", "/**/*description"),
        ("**", "/**"),
    ],
)
def test_an_old_spelling_matches_as_before_once_announced_and_its_new_spelling_matches_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str
) -> None:
    config_file = tmp_path / "pyproject.toml"
    config_file.write_text(entry("P1", old) + entry("P6", new) + entry("P2", old))
    config = load_config(tmp_path)
    assert capsys.readouterr().err.splitlines() == [  # once per spelling, naming where it was first
        f"harn-mcp-mock: deprecated: {config_file}:{ALLOW}[0].pointer: pointer pattern {old!r} is an old "
        f"spelling; write {new!r} {DOCS}",
    ]
    before = [p for p in POINTERS if fnmatch.fnmatchcase(p, old)]
    assert allowed(config, "P1") == before == allowed(config, "P2")
    assert allowed(config, "P6") == before and before


@pytest.mark.parametrize(
    ("old", "match", "miss"),
    [
        ("/messages/?/raw", "/messages/3/raw", "/messages/30/raw"),
        ("/messages/[34]/message", "/messages/4/message", "/messages/5/message"),
        ("/messages/[!3]", "/messages/4", "/messages/3"),
    ],
)
def test_a_single_character_or_a_class_matches_as_fnmatch_did_and_names_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, match: str, miss: str
) -> None:
    config_file = tmp_path / "lint.toml"  # --config: any file name
    config_file.write_text(entry("*", old))
    config = load_config(tmp_path, config_file)
    load_config(tmp_path, config_file)
    assert capsys.readouterr().err == (
        f"harn-mcp-mock: deprecated: {config_file}:{ALLOW}[0].pointer: pointer pattern {old!r} is an old "
        "spelling; write it with '*' within a segment and '**' for any depth: the dialect has no '?' or "
        f"'[...]' {DOCS}\n"
    )
    assert config.allowed("P1", FILE, match) == "r" and config.allowed("P1", FILE, miss) is None


def test_a_star_no_double_star_can_stand_in_for_keeps_crossing_with_general_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(entry("P1", "/messages/3/message/x*y"))
    config = load_config(tmp_path)
    assert "a '**' segment where a '*' is to reach across '/'" in capsys.readouterr().err
    assert config.allowed("P1", FILE, "/messages/3/message/xa/b/cy") == "r"


def test_a_double_star_pattern_reads_in_the_dialect_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        entry("P1", "/messages/**/description")
        + entry("P6", "/**/*-beta")
        + entry("P2", "/messages/3/**")
        + entry("P3", "/**")
        + entry("P4", "*")
        + f'[[{ALLOW}]]\nrule = "P5"\nreason = "r"\n'
    )
    config = load_config(tmp_path)
    assert capsys.readouterr().err == ""
    assert (
        allowed(config, "P1")
        == [  # any depth, none included; a whole last segment
            "/messages/3/message/result/tools/0/description",
            "/messages/3/message/result/tools/0/inputSchema/properties/q/description",
            "/messages/4/message/result/tools/1/description",
        ]
        and config.allowed("P1", FILE, "/messages/description") == "r"
    )
    assert allowed(config, "P6") == [
        "/messages/4/message/result/tools/1-beta",
        "/messages/4/message/result/tools/1/alpha/1-beta",
    ]
    assert allowed(config, "P2") == [p for p in POINTERS if (p + "/").startswith("/messages/3/")]
    assert allowed(config, "P3") == POINTERS  # the whole cassette, its root ("") included
    assert allowed(config, "P4") == allowed(config, "P5") == POINTERS  # '*' or none: any pointer


# --- what an old spelling is, checked against fnmatch over a small world of pointers ---------

SEGMENTS = ["*", "**", "a", "a*", "*a", "a*a", "*1", "~0*", "*~1", "**a", "b", "***", ""]
WORLD = [""] + [
    "/" + "/".join(jsonptr.escape(s) for s in path)
    for n in range(1, 5)
    for path in itertools.product(["a", "aa", "b", "a/", "~", "1", ""], repeat=n)
]


def test_only_a_pattern_fnmatch_could_match_more_with_is_an_old_spelling() -> None:
    """Read in the dialect, a pattern allows every pointer fnmatch did (and, without a ``**``
    segment, nothing more); called old, some pointer fnmatch matched the dialect would not."""
    wrong = []
    for n in (1, 2):
        for path in itertools.product(SEGMENTS, repeat=n):
            pattern = "/" + "/".join(path)
            old = {p for p in WORLD if re.fullmatch(fnmatch.translate(pattern), p)}
            parts = jsonptr.compile_pattern(pattern)
            new = {p for p in WORLD if jsonptr.pattern_matches(parts, jsonptr.split(p))}
            exact = old == new if "**" not in path else old <= new
            if _old_spelling(pattern) == (old <= new) or (not _old_spelling(pattern) and not exact):
                wrong.append(pattern)
    assert wrong == []
    config = LintConfig(allow=[Allow("*", "*", "/**/a*", "r")])
    assert config.allowed("P1", FILE, "/b/a~1") == "r" and config.allowed("P1", FILE, "/a/b") is None


@pytest.mark.parametrize(
    ("pattern", "advice"),
    [
        ("/messages/3/raw*1", "write a '**' segment where a '*' is to reach across '/'"),  # '*' + '~1'
        ("/messages/~2", "a '~' must be followed by 0 or 1"),
        ("messages/3", "it matches no pointer: a pointer pattern starts with '/'"),
    ],
)
def test_what_the_dialect_cannot_read_is_an_old_spelling_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str, advice: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(entry("P1", pattern))
    config = load_config(tmp_path)
    assert advice in capsys.readouterr().err
    assert allowed(config, "P1") == [p for p in POINTERS if fnmatch.fnmatchcase(p, pattern)]
    assert config.allowed("P1", FILE, "/messages/3/raw~1") == ("r" if pattern.endswith("*1") else None)
