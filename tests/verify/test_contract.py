"""The contract fields issue 40 found uncompared: server instructions and serverInfo (S*), a tool's
execution/_meta/icons (T7..T11), resource and template fields (R3, R4), prompt and prompt-argument
fields (P6, P7)."""

from __future__ import annotations

from typing import Any

import pytest

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.verify.drift import compare
from tests.verify.test_drift import Session, tool


def with_server(session: Session, **server: Any) -> Cassette:
    cassette = session.cassette()
    cassette.meta["server"] = {**cassette.meta["server"], **server}
    return cassette


def found(old: Cassette, new: Cassette) -> list[tuple[str, str, str]]:
    findings, _ = compare(old, new)
    return sorted((f.rule, f.severity.name, f.pointer) for f in findings)


INFO = {"name": "everything", "version": "1.0.0"}


# --- server metadata -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("Use the echo tool first.", "Everything server: call get-env to start.", "WARN"),
        (None, "Call get-env first.", "WARN"),
        ("Call get-env first.", None, "WARN"),
        ("Call get-env\nfirst.", "Call get-env first. ", "INFO"),
    ],
)
def test_s1_rewritten_added_or_removed_instructions_are_a_warning(
    before: str | None, after: str | None, expected: str
) -> None:
    """server-everything rewrote its instructions between releases: verify said nothing."""
    old = with_server(Session([tool("a")]), serverInfo=INFO, **({"instructions": before} if before else {}))
    new = with_server(Session([tool("a")]), serverInfo=INFO, **({"instructions": after} if after else {}))
    assert found(old, new) == [("S1", expected, "/instructions")]
    assert found(old, old) == []


def test_s2_s3_every_server_info_field_is_compared() -> None:
    old = with_server(
        Session([tool("a")]), serverInfo={**INFO, "title": "Everything", "websiteUrl": "https://a"}
    )
    new = with_server(
        Session([tool("a")]),
        serverInfo={
            "name": "everything-2",
            "version": "2.0.0",
            "title": "All",
            "description": "d",
            "icons": [],
        },
    )
    assert found(old, new) == [
        ("S2", "WARN", "/serverInfo/name"),
        ("S3", "INFO", "/serverInfo/description"),
        ("S3", "INFO", "/serverInfo/icons"),
        ("S3", "INFO", "/serverInfo/title"),
        ("S3", "INFO", "/serverInfo/version"),
        ("S3", "INFO", "/serverInfo/websiteUrl"),
    ]


def test_s4_the_same_initialize_request_answered_with_another_protocol_version() -> None:
    def session(answer: str, asked: str = "2025-06-18") -> Cassette:
        s = Session()
        s.exchange("initialize", {"protocolVersion": asked}, {"result": {"protocolVersion": answer}})
        return with_server(s, serverInfo=INFO, protocolVersion=answer)

    assert found(session("2025-06-18"), session("2025-03-26")) == [("S4", "WARN", "/protocolVersion")]
    # the server caught up with the version the client asked for: nobody breaks
    assert found(session("2024-11-05"), session("2025-06-18")) == [("S4", "INFO", "/protocolVersion")]
    # a client that asked for another version is not the same request
    assert found(session("2025-06-18"), session("2025-03-26", asked="2025-03-26")) == []


# --- tools -----------------------------------------------------------------------------------


def tools_pair(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str]]:
    return found(Session([tool("t", **before)]).cassette(), Session([tool("t", **after)]).cassette())


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ({}, {"execution": {"taskSupport": "optional"}}, [("T8", "INFO", "/execution/taskSupport")]),
        ({"execution": {"taskSupport": "forbidden"}}, {}, []),  # forbidden is the default
        ({}, {"execution": {"taskSupport": "required"}}, [("T7", "ERR", "/execution/taskSupport")]),
        ({"execution": {"taskSupport": "optional"}}, {}, [("T7", "WARN", "/execution/taskSupport")]),
        (
            {"execution": {"taskSupport": "required"}},
            {"execution": {"taskSupport": "optional"}},
            [("T8", "INFO", "/execution/taskSupport")],
        ),
        ({}, {"execution": {"ttl": 5}}, [("T11", "WARN", "/execution/ttl")]),
    ],
)
def test_t7_t8_execution_task_support_by_direction(
    before: dict[str, Any], after: dict[str, Any], expected: list[tuple[str, str, str]]
) -> None:
    assert tools_pair(before, after) == expected


def test_t7_withdrawn_task_support_is_err_when_a_recorded_call_ran_the_tool_as_a_task() -> None:
    task = {"ttl": 60000}
    old = Session([tool("t", execution={"taskSupport": "optional"})])
    old.exchange(
        "tools/call", {"name": "t", "arguments": {}, "task": task}, {"result": {"task": {"taskId": "1"}}}
    )
    new = Session([tool("t")])
    findings, _ = compare(old.cassette(), new.cassette())
    t7 = [f for f in findings if f.rule == "T7"]
    assert [(f.severity.name, f.evidence) for f in t7] == [("ERR", ["1 recorded call ran it as a task"])]


def test_t9_t10_t11_meta_icons_and_unknown_fields() -> None:
    before = {"_meta": {"ui/resourceUri": "ui://a", "x": 1}, "icons": [{"src": "a.png"}], "future": 1}
    after = {"_meta": {"x": 1}, "icons": [{"src": "b.png"}], "future": 2, "annotations": {"color": "red"}}
    assert tools_pair(before, after) == [
        ("T10", "INFO", "/icons"),
        ("T11", "WARN", "/annotations/color"),
        ("T11", "WARN", "/future"),
        ("T9", "INFO", "/_meta"),
    ]


# --- resources and prompts -------------------------------------------------------------------


def listing(method: str, key: str, items: list[dict[str, Any]]) -> Cassette:
    return Session().exchange(method, {}, {"result": {key: items}}).cassette()


@pytest.mark.parametrize(
    ("method", "key", "ident"),
    [
        ("resources/list", "resources", "uri"),
        ("resources/templates/list", "resourceTemplates", "uriTemplate"),
    ],
)
def test_r3_r4_every_resource_and_template_field(method: str, key: str, ident: str) -> None:
    before = {
        ident: "x://a",
        "name": "a",
        "mimeType": "text/plain",
        "size": 3,
        "annotations": {"priority": 1},
    }
    after = {
        ident: "x://a",
        "name": "a",
        "title": "A",
        "description": "the a",
        "mimeType": "application/json",
        "size": 4,
        "annotations": {"priority": 0.5},
        "icons": [{"src": "a.png"}],
        "_meta": {"k": 1},
    }
    got = found(listing(method, key, [before]), listing(method, key, [after]))
    assert got == [
        ("R3", "WARN", "/mimeType"),
        ("R4", "INFO", "/_meta"),
        ("R4", "INFO", "/annotations"),
        ("R4", "INFO", "/description"),
        ("R4", "INFO", "/icons"),
        ("R4", "INFO", "/size"),
        ("R4", "INFO", "/title"),
    ]


def test_p6_p7_prompt_and_prompt_argument_fields() -> None:
    before = {"name": "p", "description": "old", "arguments": [{"name": "q", "description": "the query"}]}
    after = {
        "name": "p",
        "title": "P",
        "description": "new",
        "arguments": [{"name": "q", "description": "what to look up", "title": "Query"}],
    }
    got = found(listing("prompts/list", "prompts", [before]), listing("prompts/list", "prompts", [after]))
    assert got == [
        ("P6", "INFO", "/description"),
        ("P6", "INFO", "/title"),
        ("P7", "INFO", "/arguments/q/description"),
        ("P7", "INFO", "/arguments/q/title"),
    ]
