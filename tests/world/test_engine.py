"""The world engine in memory: every effect, template operator, fault kind and schedule."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.faults.schedule import keyed_unit
from harn_mcp_mock.world.engine import WorldEngine
from harn_mcp_mock.world.spec import compile_spec

OBJ = {"type": "object"}


def spec(tools: list[dict[str, Any]], state: Any = None, **extra: Any) -> dict[str, Any]:
    return {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": state if state is not None else {"items": {"a": {"n": 1, "tag": "x"}}, "log": [], "bal": 10},
        "tools": tools,
        **extra,
    }


def tool(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": kw.pop("inputSchema", OBJ), **kw}


def engine(
    tools: list[dict[str, Any]], state: Any = None, faults: str | None = None, **extra: Any
) -> WorldEngine:
    return WorldEngine(compile_spec(spec(tools, state, **extra)), faults=faults, seed=1, run_id="r")


def call(e: WorldEngine, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return e.call(name, args or {}).response


def text(response: dict[str, Any]) -> str:
    return str(response["result"]["content"][0]["text"])


# --- effects ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effect", "expected"),
    [
        (
            {"op": "set", "path": "/items/a/n", "value": "{args.v}"},
            {"items": {"a": {"n": 5, "tag": "x"}}, "log": [], "bal": 10},
        ),
        (
            {"op": "merge", "path": "/items/a", "value": {"n": "{args.v}", "tag": "{args.missing}"}},
            {"items": {"a": {"n": 5, "tag": "x"}}, "log": [], "bal": 10},
        ),
        (
            {"op": "insert", "path": "/items", "key": "b", "value": {"n": "{args.v}"}},
            {"items": {"a": {"n": 1, "tag": "x"}, "b": {"n": 5}}, "log": [], "bal": 10},
        ),
        (
            {"op": "insert", "path": "/log", "value": "v={args.v}"},
            {"items": {"a": {"n": 1, "tag": "x"}}, "log": ["v=5"], "bal": 10},
        ),
        ({"op": "delete", "path": "/items/a"}, {"items": {}, "log": [], "bal": 10}),
        (
            {"op": "move", "from": "/items/a", "path": "/items/z"},
            {"items": {"z": {"n": 1, "tag": "x"}}, "log": [], "bal": 10},
        ),
        (
            {"op": "add", "path": "/bal", "by": "{args.v}"},
            {"items": {"a": {"n": 1, "tag": "x"}}, "log": [], "bal": 15},
        ),
    ],
)
def test_each_effect_changes_the_state_as_documented(effect: dict[str, Any], expected: Any) -> None:
    e = engine([tool("t", effects=[effect], result="ok")])
    assert text(call(e, "t", {"v": 5})) == "ok"
    assert e.state == expected


@pytest.mark.parametrize(
    "effect",
    [
        {"op": "insert", "path": "/items", "key": "a", "value": 1},
        {"op": "delete", "path": "/items/nope"},
        {"op": "set", "path": "/nope/x", "value": 1},
        {"op": "add", "path": "/items/a/tag", "by": 1},
        {"op": "move", "from": "/items/nope", "path": "/items/b"},
    ],
)
def test_an_effect_that_cannot_apply_is_a_tool_error_and_changes_nothing(effect: dict[str, Any]) -> None:
    e = engine([tool("t", effects=[{"op": "set", "path": "/bal", "value": 0}, effect])])
    before = orjson.dumps(e.state)
    response = call(e, "t")
    assert response["result"]["isError"] is True
    assert orjson.dumps(e.state) == before
    assert e.calls[-1]["outcome"] == "tool_error" and e.calls[-1]["changed"] == []


def test_generated_ids_are_deterministic_and_never_collide() -> None:
    state = {"t": {"T-2": {}}}
    e = engine(
        [
            tool(
                "new",
                id={"collection": "/t", "template": "T-{n}"},
                effects=[{"op": "insert", "path": "/t", "key": "{id}", "value": {}}],
                result="{id}",
            )
        ],
        state,
    )
    assert [text(call(e, "new")) for _ in range(3)] == ["T-3", "T-4", "T-5"]


def test_templates_operators_and_absent_arguments() -> None:
    result = {
        "one": {"$get": "/items/a/n"},
        "list": {"$list": "/items", "where": {"tag": "{args.tag}"}, "fields": ["id", "n"]},
        "count": {"$count": "/items"},
        "has": {"$exists": "/items/{args.id}"},
        "dropped": "{args.absent}",
        "s": "n={args.v} at {now}",
    }
    e = engine([tool("t", result=result, outputSchema=OBJ)])
    out = call(e, "t", {"tag": "x", "id": "a", "v": 2})["result"]["structuredContent"]
    assert out == {
        "one": 1,
        "list": [{"id": "a", "n": 1}],
        "count": 1,
        "has": True,
        "s": "n=2 at 2026-01-01T00:00:00.020Z",
    }
    assert call(e, "t", {"tag": "zzz"})["result"]["structuredContent"]["list"] == []


def test_invalid_arguments_are_a_tool_error_naming_the_argument() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 3}},
        "required": ["n"],
        "additionalProperties": False,
    }
    e = engine([tool("t", inputSchema=schema, effects=[{"op": "set", "path": "/bal", "value": 0}])])
    assert text(call(e, "t", {"n": 9})) == "invalid arguments: n: 9 is greater than the maximum of 3"
    assert "'n' is a required property" in text(call(e, "t", {}))
    assert e.state["bal"] == 10


def test_an_input_schema_is_compiled_once_for_every_world_of_the_process() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}
    first, second = (engine([tool("t", inputSchema=dict(schema), result="ok")]) for _ in range(2))
    assert text(call(first, "t", {"n": 1})) == "ok"
    assert text(call(second, "t", {"n": 9})) == "invalid arguments: n: 9 is greater than the maximum of 3"
    assert first._validators["t"] is second._validators["t"]  # equal schemas: one validator
    other = engine([tool("t", inputSchema={**schema, "properties": {"n": {"maximum": 10}}}, result="ok")])
    assert text(call(other, "t", {"n": 9})) == "ok"
    assert other._validators["t"] is not first._validators["t"]


def test_an_input_schema_that_is_no_json_schema_fails_every_call_in_every_world() -> None:
    bad = {"type": "object", "properties": {"n": {"type": 5}}}
    for e in (engine([tool("t", inputSchema=bad, result="ok")]) for _ in range(2)):
        for _ in range(2):
            assert text(call(e, "t", {"n": 1})).startswith(
                "invalid arguments: the world spec's inputSchema is not a valid JSON Schema: "
            )


def test_requires_turn_into_tool_errors_with_templated_messages() -> None:
    e = engine(
        [
            tool(
                "pay",
                requires=[
                    {"path": "/bal", "gte": "{args.amount}", "error": "insufficient funds for {args.amount}"}
                ],
                effects=[{"op": "add", "path": "/bal", "by": -1}],
            )
        ]
    )
    assert text(call(e, "pay", {"amount": 50})) == "insufficient funds for 50"
    assert e.calls[-1]["outcome"] == "requires_failed"


def test_unknown_tools_are_a_protocol_error() -> None:
    assert call(engine([]), "nope")["error"]["code"] == -32602


def test_results_are_structured_with_a_json_text_mirror_when_there_is_an_output_schema() -> None:
    e = engine([tool("t", result={"n": {"$get": "/items/a/n"}}, outputSchema=OBJ)])
    result = call(e, "t")["result"]
    assert result["structuredContent"] == {"n": 1}
    assert orjson.loads(result["content"][0]["text"]) == {"n": 1}


# --- faults ------------------------------------------------------------------------------------

WRITE = tool(
    "w",
    effects=[{"op": "add", "path": "/bal", "by": 1}, {"op": "insert", "path": "/log", "value": "w"}],
    result={"bal": {"$get": "/bal"}},
    outputSchema={"type": "object", "properties": {"bal": {"type": "integer"}}, "required": ["bal"]},
)


def faulted(rule: dict[str, Any]) -> WorldEngine:
    return engine([WRITE], faults="p", fault_profiles={"p": [{"id": "f", "tool": "w", **rule}]})


def test_rate_limit_and_unavailable_are_json_rpc_errors_with_data_and_change_nothing() -> None:
    e = faulted({"kind": "rate_limit", "retry_after_ms": 250})
    assert call(e, "w")["error"] == {
        "code": -32000,
        "message": "rate limited: retry after 250 ms",
        "data": {"kind": "rate_limit", "status": 429, "retry_after_ms": 250},
    }
    assert e.state["bal"] == 10
    assert call(faulted({"kind": "unavailable"}), "w")["error"]["data"]["status"] == 503


def test_a_timeout_advances_the_virtual_clock_without_sleeping() -> None:
    e = faulted({"kind": "timeout", "timeout_ms": 45000})
    assert call(e, "w")["error"]["code"] == -32001
    assert e.now_ms - e.spec.start_ms == 45000 + 20
    assert e.state["bal"] == 10


def test_a_tool_error_fault_is_is_error_and_changes_nothing() -> None:
    e = faulted({"kind": "tool_error", "message": "disk full"})
    assert call(e, "w")["result"] == {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    assert e.state["bal"] == 10


def test_a_partial_write_applies_the_first_m_effects_then_errors() -> None:
    e = faulted({"kind": "partial_write", "apply": 1})
    assert "1 of 2" in text(call(e, "w"))
    assert e.state["bal"] == 11 and e.state["log"] == []


def test_a_ghost_success_applies_everything_then_reports_a_timeout() -> None:
    e = faulted({"kind": "ghost_success"})
    assert call(e, "w")["error"]["code"] == -32001
    assert e.state["bal"] == 11 and e.state["log"] == ["w"]


def test_latency_is_virtual_and_the_answer_is_normal() -> None:
    e = faulted({"kind": "latency", "latency_ms": 700})
    assert call(e, "w")["result"]["structuredContent"] == {"bal": 11}
    assert e.calls[-1]["t_ms"] == 720


def test_a_schema_violation_breaks_the_output_schema() -> None:
    e = faulted({"kind": "schema_violation"})
    assert call(e, "w")["result"]["structuredContent"] == {}


def test_tools_changed_announces_list_changed_and_swaps_the_definition_from_the_next_call() -> None:
    new = {
        "name": "w",
        "description": "now destructive",
        "inputSchema": {
            "type": "object",
            "properties": {"really": {"type": "boolean"}},
            "required": ["really"],
        },
        "effects": [{"op": "set", "path": "/bal", "value": 0}],
        "result": "zeroed",
    }
    e = faulted({"kind": "tools_changed", "on_calls": [2], "replace_with": new})
    call(e, "w")
    outs = e.receive(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "w", "arguments": {}}}
    )
    assert [o.message.get("method", "response") for o in outs] == [
        "notifications/tools/list_changed",
        "response",
    ]
    assert e.state["bal"] == 12  # the triggering call ran the definition it was validated against
    listed = e.receive({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})[0].message["result"]["tools"]
    assert listed[0]["description"] == "now destructive"
    assert "'really' is a required property" in text(call(e, "w"))  # validated against the new schema
    assert text(call(e, "w", {"really": True})) == "zeroed"
    assert e.state["bal"] == 0


def test_a_wildcard_tools_changed_replaces_the_tool_it_names_not_the_one_called() -> None:
    other = {"name": "x", "inputSchema": OBJ, "result": "x v2"}
    e = engine(
        [WRITE, tool("x", result="x v1")],
        faults="p",
        fault_profiles={
            "p": [{"id": "f", "tool": "*", "kind": "tools_changed", "on_calls": [1], "replace_with": other}]
        },
    )
    call(e, "w")
    assert e.state["bal"] == 11  # w ran as w
    assert text(call(e, "x")) == "x v2"


def test_add_reads_a_templated_negative_amount_as_a_number() -> None:
    e = engine([tool("pay", effects=[{"op": "add", "path": "/bal", "by": "-{args.amount}"}])])
    call(e, "pay", {"amount": 4})
    assert e.state["bal"] == 6


@pytest.mark.parametrize(
    ("schedule", "fired_on"),
    [
        ({"on_calls": [2, 4]}, [2, 4]),
        ({"every": 3, "length": 1}, [1, 4]),
        ({"every": 3, "length": 2}, [1, 2, 4, 5]),
        ({"when": {"path": "/bal", "gte": 12}}, [3, 4, 5]),
    ],
)
def test_schedules_fire_on_the_documented_ordinals(schedule: dict[str, Any], fired_on: list[int]) -> None:
    e = engine(
        [tool("w", effects=[{"op": "add", "path": "/bal", "by": 1}])],
        faults="p",
        fault_profiles={"p": [{"id": "f", "tool": "w", "kind": "latency", "latency_ms": 1, **schedule}]},
    )
    for _ in range(5):
        call(e, "w")
    assert [f["ordinal"] for f in e.faults_fired] == fired_on


def test_probability_is_decided_by_a_keyed_hash_not_process_randomness() -> None:
    rules = {"p": [{"id": "f", "tool": "w", "kind": "tool_error", "probability": 0.5}]}
    runs = []
    for _ in range(2):
        e = engine([tool("w")], faults="p", fault_profiles=rules)
        for i in range(40):
            call(e, "w", {"i": i})
        runs.append([f["ordinal"] for f in e.faults_fired])
    assert runs[0] == runs[1] and 8 < len(runs[0]) < 32
    assert (
        keyed_unit(1, "r", "w", 1, {"i": 0})
        == keyed_unit(1, "r", "w", 1, {"i": 0})
        != keyed_unit(2, "r", "w", 1, {"i": 0})
    )


def test_forbidden_states_are_checked_after_every_call() -> None:
    e = engine(
        [
            tool("drain", effects=[{"op": "add", "path": "/bal", "by": -20}]),
            tool("fill", effects=[{"op": "add", "path": "/bal", "by": 20}]),
        ],
        tasks=[
            {"id": "t", "goal": [{"path": "/bal", "equals": 10}], "forbidden": [{"path": "/bal", "lt": 0}]}
        ],
    )
    call(e, "drain")
    call(e, "fill")
    assert e.state["bal"] == 10
    assert [h["call"] for h in e.forbidden_hits] == [0]


# --- the spec --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda s: s["tools"][0]["effects"].append({"op": "upsert", "path": "/x"}), "tools[0].effects[0].op"),
        (lambda s: s["tools"][0].update(colour="red"), "tools[0].colour"),
        (lambda s: s.update(version=2), "version"),
        (lambda s: s.update(fault_profiles={"p": [{"kind": "meteor"}]}), "fault_profiles.p[0].kind"),
        (
            lambda s: s.update(fault_profiles={"p": [{"kind": "timeout", "tool": "ghost"}]}),
            "fault_profiles.p[0].tool",
        ),
        (
            lambda s: s.update(tasks=[{"id": "t", "goal": [{"path": "/x", "gte": 1, "equals": 2}]}]),
            "tasks[0].goal[0]",
        ),
        # names of any length or alphabet are taken (a run makes safe folder names of them), not empty ones
        (lambda s: s.update(name=""), "name"),
        (lambda s: s.update(tasks=[{"id": "", "goal": []}]), "tasks[0].id"),
        (lambda s: s.update(fault_profiles={"": []}), "fault_profiles."),
        (
            lambda s: s.update(tasks=[{"id": "t", "goal": [], "goal_holds_at_start": "yes"}]),
            "tasks[0].goal_holds_at_start",
        ),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_field(mutate: Any, where: str) -> None:
    doc = spec([tool("t", effects=[])])
    mutate(doc)
    with pytest.raises(WorldSpecError) as info:
        compile_spec(doc, Path("w.world.json"))
    assert f"w.world.json:{where}" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "name", ["../../etc", "..", "a/b", "x y", "café ☕", "日本語", "a" * 300, "\x00", "a\nb"]
)
def test_world_names_task_ids_and_profile_names_of_any_length_or_alphabet_compile(name: str) -> None:
    """They were refused at load ("not path-safe"); the runner now makes safe folder names of them."""
    doc = spec([tool("t", effects=[])], name=name, fault_profiles={name: []})
    doc["tasks"] = [{"id": name, "goal": [{"path": "/bal", "equals": 11}]}]
    compiled = compile_spec(doc, Path("w.world.json"))
    assert (
        compiled.name == name and list(compiled.tasks) == [name] and list(compiled.fault_profiles) == [name]
    )


def test_the_same_seed_and_calls_give_byte_identical_files_across_processes(tmp_path: Path) -> None:
    world = tmp_path / "w.world.json"
    world.write_bytes(
        orjson.dumps(
            spec([WRITE], fault_profiles={"p": [{"tool": "w", "kind": "ghost_success", "probability": 0.5}]})
        )
    )
    calls = b"".join(
        orjson.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "w", "arguments": {}}}
        )
        + b"\n"
        for i in range(10)
    )
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": "1" if run == "a" else "2"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "harn_mcp_mock",
                "world",
                "--spec",
                str(world),
                "--seed",
                "7",
                "--run-id",
                "x",
                "--faults",
                "p",
                "--state-out",
                str(out / "s.json"),
                "--report",
                str(out / "r.json"),
            ],
            input=calls,
            capture_output=True,
            timeout=60,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(((out / "s.json").read_bytes(), (out / "r.json").read_bytes(), done.stdout))
    assert outputs[0] == outputs[1]


async def test_a_world_serves_its_task_as_a_prompt_and_a_resource_to_the_sdk_client() -> None:
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from harn_mcp_mock.shipped import resolve_spec

    spec = resolve_spec("bank")
    description = next(
        t["description"] for t in orjson.loads(spec.read_bytes())["tasks"] if t["id"] == "pay-rent"
    )
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harn_mcp_mock", "world", "--spec", str(spec), "--task", "pay-rent"],
    )
    with anyio.fail_after(60):
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.capabilities.prompts is not None and init.capabilities.resources is not None
            assert [p.name for p in (await session.list_prompts()).prompts] == ["task"]
            prompt = await session.get_prompt("task")
            assert prompt.messages[0].content.text == description  # type: ignore[union-attr]
            assert [str(r.uri) for r in (await session.list_resources()).resources] == ["harn://task"]
            contents = (await session.read_resource("harn://task")).contents
            assert contents[0].text == description  # type: ignore[union-attr]
