"""The fault-kind registry: one list of kinds for the spec loader, the schemas and the engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.faults.kinds import KINDS, Answer, fault_kind
from harn_mcp_mock.world.engine import WorldEngine
from harn_mcp_mock.world.spec import compile_spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("schema", ["worlds/world.schema.json", "harn_mcp_mock/world/schema.json"])
def test_the_published_schemas_list_exactly_the_registered_kinds(schema: str) -> None:
    doc = json.loads((ROOT / schema).read_text(encoding="utf-8"))
    assert sorted(doc["$defs"]["fault"]["properties"]["kind"]["enum"]) == sorted(
        name for name, kind in KINDS.items() if kind.world
    )


def test_the_kinds_a_replayed_cassette_can_fire_need_no_world_state() -> None:
    stateless = sorted(name for name, kind in KINDS.items() if kind.stateless)
    assert stateless == [
        "disconnect",
        "hang",
        "http_status",
        "latency",
        "malformed",
        "rate_limit",
        "schema_violation",
        "timeout",
        "tool_error",
        "tools_changed",
        "unavailable",
    ]


def _spec(kind: str) -> dict[str, object]:
    return {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": {"n": 0},
        "tools": [{"name": "t", "inputSchema": {"type": "object"}, "result": "ok"}],
        "fault_profiles": {"p": [{"id": "f", "tool": "t", "kind": kind, "on_calls": [1]}]},
    }


def test_an_unknown_kind_is_one_spec_error_naming_the_field_and_the_known_kinds() -> None:
    with pytest.raises(WorldSpecError) as caught:
        compile_spec(_spec("meteor"), Path("w.world.json"))
    text = str(caught.value)
    assert (
        "w.world.json" in text
        and "fault_profiles.p[0].kind" in text
        and "'meteor'" in text
        and "rate_limit" in text
    )


def test_a_registered_kind_is_known_to_the_spec_loader_and_fired_by_the_engine() -> None:
    @fault_kind("teapot", stateless=True)
    class _Teapot:
        @staticmethod
        def answer(rule: object) -> Answer:
            return Answer({"error": {"code": 418, "message": "I'm a teapot"}}, "teapot", advance_ms=7)

    try:
        world = WorldEngine(compile_spec(_spec("teapot")), faults="p", seed=1, run_id="r")
        plain = WorldEngine(compile_spec(_spec("rate_limit")), faults="p", seed=1, run_id="r")
        assert world.call("t", {}).response == {"error": {"code": 418, "message": "I'm a teapot"}}
        plain.call("t", {})  # answered at once too, without moving the clock
        assert world.now_ms == plain.now_ms + 7
        assert world.call("t", {}).response["result"]["content"][0]["text"] == "ok"
    finally:
        del KINDS["teapot"]
