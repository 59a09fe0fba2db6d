"""The compiled :class:`Schedule` a replay's overlay asks decides exactly as :func:`decide` does."""

from __future__ import annotations

import itertools
from typing import Any

from harn_mcp_mock.faults.rules import FaultRule, parse_rules
from harn_mcp_mock.faults.schedule import Schedule, decide, keyed_unit

RULES: list[dict[str, Any]] = [
    {"id": "odd", "tool": "echo", "kind": "rate_limit", "every": 4, "length": 2},
    {"id": "p", "tool": "echo", "kind": "tool_error", "probability": 0.3},
    {"id": "listed", "tool": "*", "kind": "timeout", "on_calls": [2, 7, 8]},
    {"id": "both", "tool": "add", "kind": "unavailable", "on_calls": [3, 4, 5], "probability": 0.5},
    {"id": "read", "method": "resources/read", "kind": "hang", "probability": 0.4},
    {"id": "every-list", "method": "tools/list", "kind": "latency", "every": 3},
    {"id": "any", "tool": "*", "kind": "unavailable", "probability": 0.05},
]
CALLS: list[tuple[str, str | None, Any]] = [
    ("echo", None, {"message": "hi"}),
    ("echo", None, {}),
    ("add", None, {"a": 1, "b": [2, {"z": 1, "a": 0}]}),
    ("other", None, {"x": "é"}),
    ("", "resources/read", {"uri": "file:///a"}),
    ("", "tools/list", {}),
    ("", "prompts/get", {"name": "p"}),
]


def rules() -> list[FaultRule]:
    return parse_rules(RULES)


def test_the_compiled_schedule_fires_the_rule_decide_fires_on_every_call() -> None:
    compiled, fired = 0, 0
    for seed, run_id in itertools.product((0, 7, 2**40), ("run", "trial-3/ü")):
        schedule = Schedule(rules(), seed=seed, run_id=run_id)
        for (tool, method, args), ordinal in itertools.product(CALLS, range(1, 41)):
            expected = decide(
                schedule.rules, tool=tool, method=method, ordinal=ordinal, args=args, seed=seed, run_id=run_id
            )
            target = schedule.target(tool, method)
            got = schedule.decide(target, ordinal, args if target.keyed else None)
            assert got is expected, (seed, run_id, tool, method, ordinal)
            compiled += 1
            fired += got is not None
    assert 0 < fired < compiled  # the grid has calls that fire and calls that do not


def test_a_target_holds_only_the_rules_that_can_fire_on_it_and_its_label() -> None:
    schedule = Schedule(rules(), seed=0, run_id="run")
    echo = schedule.target("echo", None)
    assert echo.label == "tool echo"
    assert [check[0].id for check in echo.checks] == ["odd", "p", "listed", "any"]
    assert echo.keyed
    listing = schedule.target("", "tools/list")
    assert listing.label == "method tools/list"
    assert [check[0].id for check in listing.checks] == ["every-list"]
    assert not listing.keyed
    assert schedule.target("", "ping").checks == []
    assert schedule.target("echo", None) is echo  # compiled once


def test_the_keyed_hash_is_the_one_of_keyed_unit() -> None:
    # A rule whose probability sits just above the call's keyed unit fires, just below does not.
    unit = keyed_unit(3, "r", "echo", 5, {"message": "hi"})
    for probability, fires in ((min(1.0, unit + 1e-9), True), (unit, False)):
        (rule,) = parse_rules([{"id": "p", "tool": "echo", "kind": "tool_error", "probability": probability}])
        schedule = Schedule([rule], seed=3, run_id="r")
        assert (schedule.decide(schedule.target("echo", None), 5, {"message": "hi"}) is rule) is fires


def test_a_rule_with_a_state_predicate_never_fires_without_a_state() -> None:
    rule = FaultRule("w", "timeout", when={"path": "/x", "exists": True})
    schedule = Schedule([rule], seed=0, run_id="run")
    assert schedule.target("echo", None).checks == []
    assert decide([rule], tool="echo", ordinal=1, args={}, seed=0, run_id="run") is None
