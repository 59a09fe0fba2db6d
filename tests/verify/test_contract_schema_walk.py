"""Every field of the MCP schema's types is compared by verify or left alone with a reason.

Walks the installed SDK's ``mcp_types`` pydantic models from what a server offers (the
``initialize`` result, tools, prompts, resources, resource templates) through every nested model,
so a field the protocol adds fails here until :data:`COMPARED` names its rules or
:data:`IGNORED` says why it is not compared (issue 40: ``instructions``, ``execution.taskSupport``,
a prompt argument's description were never compared).
"""

from __future__ import annotations

import typing
from typing import Any

import mcp_types
import pydantic
import pytest

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.verify.contract import COMPARED, IGNORED
from harn_mcp_mock.verify.drift import compare
from harn_mcp_mock.verify.findings import RULE_TITLES
from tests.verify.test_drift import Session

ROOTS = (
    mcp_types.InitializeResult,
    mcp_types.Tool,
    mcp_types.Prompt,
    mcp_types.Resource,
    mcp_types.ResourceTemplate,
)


def _models(annotation: Any) -> list[type[pydantic.BaseModel]]:
    """The pydantic models inside a field's annotation (through Optional, list, dict, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    found = []
    for arg in typing.get_args(annotation):
        found += _models(arg)
    return found


def walk() -> dict[str, list[str]]:
    """Model name -> its fields' wire names, for every model reachable from :data:`ROOTS`."""
    seen: dict[str, list[str]] = {}
    stack: list[type[pydantic.BaseModel]] = list(ROOTS)
    while stack:
        model = stack.pop()
        if model.__name__ in seen:
            continue
        seen[model.__name__] = [info.alias or name for name, info in model.model_fields.items()]
        for info in model.model_fields.values():
            stack += _models(info.annotation)
    return seen


def test_the_walk_reaches_the_nested_types() -> None:
    reached = walk()
    for name in (
        "Implementation",
        "ServerCapabilities",
        "ToolAnnotations",
        "ToolExecution",
        "PromptArgument",
    ):
        assert name in reached


def test_every_field_of_the_mcp_types_is_compared_or_ignored_with_a_reason() -> None:
    undecided = []
    for model, fields in sorted(walk().items()):
        for field in fields:
            compared = field in COMPARED.get(model, {})
            ignored = field in IGNORED.get(model, {})
            if compared == ignored:
                undecided.append(f"{model}.{field}" + (" (both compared and ignored)" if compared else ""))
    assert undecided == [], (
        "fields of the MCP schema verify neither compares nor ignores with a reason: add each to "
        "COMPARED (with its rules) or IGNORED (with why) in harn_mcp_mock/verify/contract.py: "
        + ", ".join(undecided)
    )


def test_the_tables_name_only_real_fields_real_rules_and_real_reasons() -> None:
    reached = walk()
    stale = [
        f"{model}.{field}"
        for table in (COMPARED, IGNORED)
        for model, fields in table.items()
        for field in fields
        if field not in reached.get(model, [])
    ]
    assert stale == []
    assert [m for m in (*COMPARED, *IGNORED) if m not in reached] == []
    unknown = sorted(
        {r for fields in COMPARED.values() for rules in fields.values() for r in rules} - set(RULE_TITLES)
    )
    assert unknown == []
    assert all(reason.strip() for fields in IGNORED.values() for reason in fields.values())


# --- the table tells the truth: changing each compared field gives one of its rules ---------

IDENTITY = {"Tool": "name", "Prompt": "name", "Resource": "uri", "ResourceTemplate": "uriTemplate"}
LISTS = {
    "Tool": ("tools/list", "tools"),
    "Prompt": ("prompts/list", "prompts"),
    "Resource": ("resources/list", "resources"),
    "ResourceTemplate": ("resources/templates/list", "resourceTemplates"),
}
SAMPLES: dict[str, tuple[Any, Any]] = {
    "title": ("A", "B"),
    "description": ("old text", "new text"),
    "mimeType": ("text/plain", "application/json"),
    "size": (1, 2),
    "icons": ([{"src": "a.png"}], [{"src": "b.png"}]),
    "_meta": ({"k": 1}, {"k": 2}),
    "annotations": ({"priority": 1}, {"priority": 0.5}),
    "inputSchema": ({"type": "object"}, {"type": "object", "required": ["q"], "properties": {"q": {}}}),
    "outputSchema": (None, {"type": "object"}),
    "execution": (None, {"taskSupport": "optional"}),
    "arguments": ([], [{"name": "q", "required": True}]),
    "version": ("1", "2"),
    "websiteUrl": ("https://a", "https://b"),
    "name": ("a", "b"),
    "instructions": ("one", "two"),
    "protocolVersion": ("2025-06-18", "2025-11-25"),
    "required": (False, True),
}
TOOL_ANNOTATIONS = {"annotations": ({"readOnlyHint": True}, {"readOnlyHint": False})}


def _item(model: str, field: str, value: Any) -> dict[str, Any]:
    item: dict[str, Any] = {IDENTITY[model]: "x://a" if model.startswith("Resource") else "a"}
    if model == "Tool":
        item["inputSchema"] = {"type": "object"}
    if value is not None:
        item[field] = value
    return item


def _pair(model: str, field: str) -> tuple[Cassette, Cassette]:
    old_value, new_value = (TOOL_ANNOTATIONS if model == "Tool" else SAMPLES).get(field, SAMPLES.get(field))
    if model in LISTS:
        method, key = LISTS[model]
        return tuple(  # type: ignore[return-value]
            Session().exchange(method, {}, {"result": {key: [_item(model, field, v)]}}).cassette()
            for v in (old_value, new_value)
        )
    if model == "PromptArgument":
        args = [[{"name": "q", field: v}] for v in (old_value, new_value)]
        return tuple(  # type: ignore[return-value]
            Session()
            .exchange("prompts/list", {}, {"result": {"prompts": [{"name": "p", "arguments": a}]}})
            .cassette()
            for a in args
        )
    server = {
        "InitializeResult": lambda v: {field: v},
        "Implementation": lambda v: {"serverInfo": {"name": "s", field: v}},
    }
    pair = []
    for value in (old_value, new_value):
        session = Session()
        session.exchange("initialize", {"protocolVersion": "2025-06-18"}, {"result": {}})
        cassette = session.cassette()
        cassette.meta["server"] = {"serverInfo": {"name": "s"}, "capabilities": {}, **server[model](value)}
        pair.append(cassette)
    return pair[0], pair[1]


CHECKED = (
    "Tool",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "Implementation",
    "InitializeResult",
)
MUTATIONS = sorted(
    (model, field)
    for model in CHECKED
    for field in COMPARED[model]
    if field != IDENTITY.get(model)
    and (model, field) != ("InitializeResult", "capabilities")
    and (model, field) != ("InitializeResult", "serverInfo")
)


@pytest.mark.parametrize(("model", "field"), MUTATIONS, ids=[f"{m}.{f}" for m, f in MUTATIONS])
def test_changing_each_compared_field_gives_one_of_its_tabled_rules(model: str, field: str) -> None:
    old, new = _pair(model, field)
    rules = {f.rule for f in compare(old, new)[0]}
    assert rules & set(COMPARED[model][field]), (model, field, sorted(rules))
