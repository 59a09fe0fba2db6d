"""``--ignore-path`` (``ignore_paths=``) reads the one pointer-pattern dialect: ``*`` as before,
and now ``**`` (any depth) and ``*`` within a segment (docs/cli.md, "JSON pointer patterns")."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.cassette.matching import Matcher, drop_path, parse_pointer
from harn_mcp_mock.errors import UsageError


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": arguments},
    }


def test_double_star_drops_a_key_at_any_depth() -> None:
    matcher = Matcher.with_paths(["/params/arguments/**/ts"])
    a = call({"ts": 1, "page": {"ts": 2, "n": 1}, "rows": [{"ts": 3, "id": "x"}]})
    b = call({"ts": 9, "page": {"ts": 8, "n": 1}, "rows": [{"ts": 7, "id": "x"}]})
    assert matcher.key(a) == matcher.key(b)
    assert matcher.comparable(a)["params"]["arguments"] == {"page": {"n": 1}, "rows": [{"id": "x"}]}
    assert matcher.key(a) != matcher.key(
        call({"ts": 1, "page": {"ts": 2, "n": 2}, "rows": [{"ts": 3, "id": "x"}]})
    )


def test_a_star_inside_a_segment_drops_every_key_it_matches() -> None:
    matcher = Matcher.with_paths(["/params/arguments/req_*"])
    view = matcher.comparable(call({"req_id": "a", "req_at": "b", "request": "c"}))
    assert view["params"]["arguments"] == {"request": "c"}


def test_a_trailing_double_star_drops_the_node_itself() -> None:
    assert parse_pointer("/params/arguments/**") == parse_pointer("/params/arguments")
    value = {"a": {"b": 1}, "c": 2}
    assert drop_path(value, parse_pointer("/a/**")) == {"c": 2}
    assert value == {"a": {"b": 1}, "c": 2}  # the input is untouched


def test_indexes_match_a_star_inside_a_segment_as_strings() -> None:
    assert drop_path(
        {"rows": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]}, parse_pointer("/rows/1*")
    ) == {"rows": ["a", "c", "d", "e", "f", "g", "h", "i", "j"]}


def test_a_malformed_escape_is_a_usage_error_naming_the_flag() -> None:
    with pytest.raises(UsageError, match="must be followed by 0 or 1") as caught:
        parse_pointer("/params/~2")
    assert caught.value.exit_code == 2 and "--ignore-path" in str(caught.value)
