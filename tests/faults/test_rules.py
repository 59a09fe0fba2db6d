"""Fault rules files (``replay --faults``): one error naming the file and the field for each problem."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.errors import FaultRulesError
from harn_mcp_mock.faults.rules import load_rules, parse_rules


def test_a_rules_file_reads_into_rules_with_their_schedules_and_parameters(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(
        orjson.dumps(
            [
                {
                    "id": "rl",
                    "tool": "get_current_time",
                    "kind": "rate_limit",
                    "on_calls": [2],
                    "retry_after_ms": 50,
                },
                {"id": "res", "method": "resources/read", "kind": "unavailable", "every": 3, "length": 1},
                {"id": "h", "kind": "http_status", "status": 503, "probability": 0.25},
            ]
        )
    )
    rl, res, h = load_rules(path)
    assert (rl.tool, rl.on_calls, rl.params, rl.target) == (
        "get_current_time",
        (2,),
        {"retry_after_ms": 50},
        "tool get_current_time",
    )
    assert (res.method, res.every, res.target) == ("resources/read", 3, "method resources/read")
    assert (h.tool, h.probability, h.params["status"]) == ("*", 0.25, 503)


def test_rules_may_also_come_wrapped_in_an_object() -> None:
    assert [r.id for r in parse_rules({"rules": [{"id": "a", "kind": "hang"}]})] == ["a"]


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"id": "x"}, "", "expected a JSON list of fault rules"),
        ([{"id": "a", "kind": "meteor"}], "[0].kind", "unknown fault kind 'meteor' (kinds: disconnect"),
        ([{"id": "a", "kind": "partial_write"}], "[0].kind", "changes world state"),
        ([{"id": "a", "kind": "hang", "when": {"path": "/x", "exists": True}}], "[0].when", "no world state"),
        ([{"id": "a", "kind": "hang", "tool": "t", "method": "m"}], "[0].method", "not both"),
        ([{"id": "a", "kind": "hang", "on_calls": [0]}], "[0].on_calls", "1-based"),
        ([{"id": "a", "kind": "hang", "probability": 2}], "[0].probability", "from 0 to 1"),
        ([{"id": "a", "kind": "http_status", "status": 418}], "[0].status", "expected one of 400"),
        ([{"id": "a", "kind": "rate_limit", "status": 429}], "[0].status", "only kind 'http_status'"),
        ([{"id": "a", "kind": "malformed", "malformed": "garbled"}], "[0].malformed", "truncated, not_json"),
        ([{"id": "a", "kind": "tools_changed", "tool": "t"}], "[0].replace_with", "required"),
        (
            [{"id": "a", "kind": "tools_changed", "tool": "t", "replace_with": {"name": "u"}}],
            "[0].replace_with.name",
            "the tool it replaces",
        ),
        ([{"id": "a", "kind": "hang", "bogus": 1}], "[0].bogus", "unknown field"),
        ([{"id": "a", "kind": "hang"}, {"id": "a", "kind": "hang"}], "[1].id", "duplicate rule id 'a'"),
    ],
)
def test_a_bad_rule_is_one_error_naming_the_file_and_the_field(
    tmp_path: Path, rules: object, where: str, says: str
) -> None:
    path = tmp_path / "faults.json"
    path.write_bytes(orjson.dumps(rules))
    with pytest.raises(FaultRulesError) as caught:
        load_rules(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{where}: " if where else f"{path}: "), text
    assert says in text and "\n" not in text
    assert caught.value.exit_code == 2


def test_a_file_that_is_not_json_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "faults.json"
    path.write_text('[\n  {"id": "a",\n', encoding="utf-8")
    with pytest.raises(FaultRulesError, match=r"faults\.json:\d+:\d+: not valid JSON"):
        load_rules(path)


def test_a_missing_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(FaultRulesError, match="cannot read the fault rules"):
        load_rules(tmp_path / "nope.json")


def test_worlds_refuse_the_transport_kinds_and_replays_the_stateful_ones() -> None:
    from harn_mcp_mock.errors import WorldSpecError
    from harn_mcp_mock.world.spec import compile_spec

    spec = {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": {},
        "tools": [{"name": "t", "inputSchema": {"type": "object"}, "result": "ok"}],
        "fault_profiles": {"p": [{"id": "f", "tool": "t", "kind": "disconnect"}]},
    }
    with pytest.raises(
        WorldSpecError, match=r"fault_profiles\.p\[0\]\.kind: kind 'disconnect' is a transport fault"
    ):
        compile_spec(spec)
