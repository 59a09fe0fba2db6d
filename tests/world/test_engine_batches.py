"""The spec language's batch and rendering parts that ``world init`` writes: ``each``, ``remove``
and ``when`` effects, ``each`` requires, ``$map``, ``$json``, the list filters, a tool's ``text``,
and a tool that answers only its ``recorded`` answers."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.world.engine import WorldEngine
from harn_mcp_mock.world.spec import compile_spec

OBJ = {"type": "object"}
STATE = {"people": {"ada": {"name": "ada", "tags": ["math"]}}, "links": [{"from": "ada", "to": "bob"}]}


def engine(*tools: dict[str, Any], state: Any = None) -> WorldEngine:
    doc = {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": state or STATE,
        "tools": list(tools),
    }
    return WorldEngine(compile_spec(doc))


def text(outcome: Any) -> str:
    return str(outcome.response["result"]["content"][0]["text"])


ADD = {
    "name": "add",
    "inputSchema": OBJ,
    "effects": [
        {
            "op": "each",
            "items": "{args.people}",
            "as": "p",
            "effects": [
                {
                    "op": "insert",
                    "path": "/people",
                    "key": "{p.name}",
                    "value": {"name": "{p.name}", "tags": []},
                    "when": {"missing": "/people/{p.name}"},
                }
            ],
        }
    ],
    "result": {
        "added": {
            "$map": "{args.people}",
            "as": "p",
            "when": {"missing": "/people/{p.name}"},
            "on": "before",
            "to": "{p.name}",
        }
    },
    "text": {"$json": "{result.added}", "indent": 2},
}


def test_each_applies_per_item_and_when_skips_what_is_there() -> None:
    e = engine(ADD)
    out = e.call("add", {"people": [{"name": "ada"}, {"name": "bob"}, {"name": "cy"}]})
    assert list(e.state["people"]) == ["ada", "bob", "cy"]
    assert e.state["people"]["ada"] == {"name": "ada", "tags": ["math"]}  # skipped, untouched
    # the result is judged on the state before the call; the text is its own template
    assert text(out) == '[\n  "bob",\n  "cy"\n]'
    assert "structuredContent" not in out.response["result"]


def test_remove_drops_every_matching_item_and_none_is_fine() -> None:
    drop = {
        "name": "drop",
        "inputSchema": OBJ,
        "effects": [
            {
                "op": "each",
                "items": "{args.names}",
                "as": "n",
                "effects": [
                    {"op": "delete", "path": "/people/{n}", "when": {"exists": "/people/{n}"}},
                    {"op": "remove", "path": "/links", "where": {"from": "{n}"}},
                    {"op": "remove", "path": "/people/ada/tags", "where": "{n}"},
                ],
            }
        ],
        "text": "gone",
    }
    e = engine(drop)
    assert text(e.call("drop", {"names": ["nobody", "math"]})) == "gone"
    assert e.state["people"]["ada"]["tags"] == []
    e.call("drop", {"names": ["ada"]})
    assert e.state == {"people": {}, "links": []}


def test_requires_each_names_the_failing_item() -> None:
    touch = {
        "name": "touch",
        "inputSchema": OBJ,
        "requires": [
            {"each": "{args.names}", "as": "n", "exists": "/people/{n}", "error": "Person {n} not found"}
        ],
        "effects": [
            {
                "op": "each",
                "items": "{args.names}",
                "as": "n",
                "effects": [
                    {
                        "op": "insert",
                        "path": "/people/{n}/tags",
                        "value": "seen",
                        "when": {"not": {"path": "/people/{n}/tags", "any": "seen"}},
                    }
                ],
            }
        ],
        "result": {"ok": True},
    }
    e = engine(touch)
    out = e.call("touch", {"names": ["ada", "zed"]})
    assert out.response["result"] == {
        "content": [{"type": "text", "text": "Person zed not found"}],
        "isError": True,
    }
    assert e.state == STATE
    e.call("touch", {"names": ["ada"]})
    e.call("touch", {"names": ["ada"]})
    assert e.state["people"]["ada"]["tags"] == ["math", "seen"]


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"where_in": {"name": "{args.names}"}}, ["bob"]),
        ({"where_any_in": {"name": "{args.names}", "city": ["Paris"]}}, ["ada", "bob"]),
        ({"match": {"text": "{args.q}", "fields": ["city", "tags"]}}, ["ada", "cy"]),
    ],
)
def test_list_filters(options: dict[str, Any], names: list[str]) -> None:
    people = {
        "ada": {"name": "ada", "city": "Paris", "tags": []},
        "bob": {"name": "bob", "city": "Oslo", "tags": []},
        "cy": {"name": "cy", "city": "Rome", "tags": ["PaRty"]},
    }
    find = {
        "name": "find",
        "inputSchema": OBJ,
        "result": {
            "$map": {"$list": "/people", "fields": ["name", "city", "tags"], **options},
            "to": "{item.name}",
        },
    }
    e = engine(find, state={"people": people})
    assert text(e.call("find", {"names": ["bob"], "q": "PAR"})) == '["' + '","'.join(names) + '"]'


def test_map_not_in_keeps_the_items_not_listed() -> None:
    pick = {"name": "pick", "inputSchema": OBJ, "result": {"$map": "{args.all}", "not_in": "{args.drop}"}}
    assert text(engine(pick).call("pick", {"all": ["a", "b", "c"], "drop": ["b"]})) == '["a","c"]'


def test_recorded_answers_answer_the_nth_call_with_the_same_arguments() -> None:
    def ans(t: str) -> dict[str, Any]:
        return {"result": {"content": [{"type": "text", "text": t}]}}

    status = {
        "name": "status",
        "inputSchema": OBJ,
        "recorded": [
            {"arguments": {}, **ans("clean")},
            {"arguments": {"v": 1}, "error": {"code": -32602, "message": "bad"}},
            {"arguments": {}, **ans("dirty")},
        ],
        "todo": "model the working tree",
    }
    e = engine(status)
    assert [text(e.call("status", {})) for _ in range(3)] == ["clean", "dirty", "dirty"]
    assert e.call("status", {"v": 1}).response == {"error": {"code": -32602, "message": "bad"}}
    unknown = e.call("status", {"v": 2}).response["result"]
    assert unknown["isError"] and "not modelled yet" in unknown["content"][0]["text"]
    assert e.calls[0]["outcome"] == "recorded"


def test_the_new_fields_are_checked() -> None:
    with pytest.raises(WorldSpecError, match=r"tools\[0\]\.effects\[0\]\.effects: required by op 'each'"):
        engine({"name": "t", "effects": [{"op": "each", "items": "{args.x}"}]})
    with pytest.raises(
        WorldSpecError, match=r"tools\[0\]\.effects\[0\]\.effects\[0\]\.where: required by op 'remove'"
    ):
        engine(
            {
                "name": "t",
                "effects": [
                    {"op": "each", "items": "{args.x}", "effects": [{"op": "remove", "path": "/links"}]}
                ],
            }
        )
    with pytest.raises(
        WorldSpecError, match=r"tools\[0\]\.recorded\[0\]: expected one of 'result' or 'error'"
    ):
        engine({"name": "t", "recorded": [{"arguments": {}}]})
    with pytest.raises(WorldSpecError, match=r"tools\[0\]\.effects\[0\]\.when: not a predicate"):
        engine({"name": "t", "effects": [{"op": "set", "path": "/x", "value": 1, "when": {"bogus": 1}}]})


def test_spec_resources_and_prompts_are_served() -> None:
    doc = {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": STATE,
        "tools": [],
        "resources": [
            {
                "uri": "mem://people",
                "name": "people",
                "result": {"$list": "/people", "fields": ["name"]},
                "contents": [{"uri": "mem://people", "text": {"$json": "{result}"}}],
            },
            {"uri": "mem://old", "name": "old", "recorded": [{"arguments": {}, "result": {"contents": []}}]},
        ],
        "prompts": [
            {
                "name": "greet",
                "arguments": [{"name": "who"}],
                "recorded": [{"arguments": {"who": "ada"}, "result": {"messages": ["hi ada"]}}],
                "todo": "model it",
            }
        ],
    }
    e = WorldEngine(compile_spec(doc))

    def ask(method: str, **params: Any) -> dict[str, Any]:
        return e.receive({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})[0].message  # type: ignore[no-any-return]

    caps = ask("initialize", protocolVersion="2025-11-25")["result"]["capabilities"]
    assert caps["resources"] == {"listChanged": False} and caps["prompts"] == {"listChanged": False}
    listed = ask("resources/list")["result"]
    assert listed == {
        "resources": [{"uri": "mem://people", "name": "people"}, {"uri": "mem://old", "name": "old"}]
    }
    assert ask("resources/read", uri="mem://people")["result"] == {
        "contents": [{"uri": "mem://people", "text": '[{"name":"ada"}]'}]
    }
    assert ask("resources/read", uri="mem://old")["result"] == {"contents": []}
    assert ask("resources/read", uri="mem://nope")["error"]["message"] == "Unknown resource: mem://nope"
    assert ask("prompts/list")["result"] == {"prompts": [{"name": "greet", "arguments": [{"name": "who"}]}]}
    assert ask("prompts/get", name="greet", arguments={"who": "ada"})["result"] == {"messages": ["hi ada"]}
    assert "never recorded" in ask("prompts/get", name="greet", arguments={"who": "bob"})["error"]["message"]
