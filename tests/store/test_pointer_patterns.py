"""The one pointer-pattern dialect (store/pointer.py), and that every reader of patterns uses it:
a redaction policy's pointers, a world task's ``may_change`` and a ``verify`` ignore file's
``pointer`` (docs/cli.md, "JSON pointer patterns")."""

from __future__ import annotations

import pytest

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.redact.pointers import DEAD, REDACT, PointerAutomaton, parse_pointer
from harn_mcp_mock.scoring.diff import glob_match
from harn_mcp_mock.store import pointer as jsonptr

TABLE = [
    ("/tickets/T-1/updated_at", "/tickets/T-1/updated_at", True),
    ("/tickets/T-1/updated_at", "/tickets/*/updated_at", True),
    ("/tickets/T-1/meta/updated_at", "/tickets/*/updated_at", False),
    ("/items/3", "/items/*", True),
    ("/items", "/items/*", False),
    ("/audit", "/audit/**", True),
    ("/audit/log/3/at", "/audit/**", True),
    ("/auditor/x", "/audit/**", False),
    ("/a/d", "/a/**/d", True),
    ("/a/b/c/d", "/a/**/**/d", True),
    ("/a/b/c", "/a/**/d", False),
    ("/x/y/z", "/**", True),
    ("", "/**", True),
    ("/audit/log-7", "/audit/log-*", True),
    ("/audit/catalog-7", "/audit/log-*", False),
    ("/audit/log-7/x", "/audit/log-*", False),
    ("/k/api_key", "/k/api_*", True),
    ("/k/a.b", "/k/a.b", True),
    ("/k/axb", "/k/a.b", False),
    ("/files/a~1b", "/files/a~1b", True),
    ("/files/a~1b", "/files/*", True),
    ("/files/a/b", "/files/*", False),
    ("/c~0d", "/c~0d", True),
    ("/", "/", True),
    ("/", "/*", True),
]


@pytest.mark.parametrize(("pointer", "pattern", "expected"), TABLE)
def test_the_dialect_matches_whole_segments_with_star_double_star_and_in_segment_star(
    pointer: str, pattern: str, expected: bool
) -> None:
    assert jsonptr.matches(pattern, pointer) is expected


@pytest.mark.parametrize("bad", ["/a/~2", "/a~", "params/x"])
def test_a_malformed_pattern_is_a_value_error(bad: str) -> None:
    with pytest.raises(ValueError):
        jsonptr.compile_pattern(bad)


def test_a_malformed_pointer_matches_nothing() -> None:
    assert not jsonptr.matches("/**", "no-slash")


# --- its three readers ------------------------------------------------------------------------


def _automaton_matches(pattern: str, pointer: str) -> bool:
    state = PointerAutomaton([(parse_pointer(pattern), REDACT)]).root
    for segment in jsonptr.split(pointer):
        state = state.step(segment)
        if state is DEAD:
            return False
    return bool(state.flags & REDACT)


@pytest.mark.parametrize(("pointer", "pattern", "expected"), TABLE)
def test_redaction_pointers_and_may_change_read_the_same_dialect(
    pointer: str, pattern: str, expected: bool
) -> None:
    assert _automaton_matches(pattern, pointer) is expected
    assert glob_match(pointer, pattern) is expected


def test_a_redaction_pointer_may_hold_a_star_inside_a_segment() -> None:
    policy = RedactionPolicy.from_dict({"redact": {"pointers": ["/params/arguments/acct_*"]}})
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"acct_no": "12", "acct_pin": "34", "account": "56"}},
    }
    out = policy.redactor().redact_message(message)
    assert out["params"]["arguments"] == {
        "acct_no": "[REDACTED:1]",
        "acct_pin": "[REDACTED:2]",
        "account": "56",
    }


# --- the deprecation line ---------------------------------------------------------------------


def test_an_old_spelling_is_announced_once_per_spelling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonptr, "_WARNED", set())
    jsonptr.warn_old_spelling("f.txt:1", "*/x", "write '/**/x'")
    jsonptr.warn_old_spelling("f.txt:1", "*/x", "write '/**/x'")
    jsonptr.warn_old_spelling("f.txt:2", "*/x", "write '/**/x'")
    jsonptr.warn_old_spelling("f.txt:3", "*/y", "write '/**/y'")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "harn-mcp-mock: deprecated: f.txt:1: pointer pattern '*/x' is an old spelling; write '/**/x' "
        "(docs/cli.md#json-pointer-patterns)",
        "harn-mcp-mock: deprecated: f.txt:3: pointer pattern '*/y' is an old spelling; write '/**/y' "
        "(docs/cli.md#json-pointer-patterns)",
    ]
