"""Event kinds and error codes are the spec's, read from the spec text itself."""

from __future__ import annotations

import re

import pytest

from harn_mcp_mock.agents.envelopes import (
    DEFAULT_ERROR_TYPE,
    ERROR_CODES,
    ERROR_TYPES,
    ErrorEnvelope,
    ProtocolError,
)
from harn_mcp_mock.agents.events import EVENT_GROUPS, EVENT_KINDS, classify_event
from harn_mcp_mock.agents.lifecycle import TASK_EVENT_STATES
from tests.agents.protocol_data import spec_section

GROUPS = "|".join(EVENT_GROUPS)


def spec_event_kinds() -> list[str]:
    text = spec_section("Event taxonomy", "Error taxonomy")
    # List items were flattened together ("task.submittedtask.started"), so a name ends where the
    # next group prefix starts or at any character that cannot be part of a name; a name has one
    # dot, which skips prose such as "issued by the agent." running into "agent.mcp_tool_use".
    return re.findall(rf"(?:{GROUPS})\.[a-z_]+?(?=(?:{GROUPS})\.|[^a-z_.]|$)", text)


def test_the_event_kinds_are_exactly_those_the_spec_lists() -> None:
    listed = spec_event_kinds()
    assert len(listed) == len(set(listed)) == len(EVENT_KINDS) == 58
    assert set(listed) == EVENT_KINDS
    assert listed == [k for kinds in EVENT_GROUPS.values() for k in kinds]


def test_every_task_lifecycle_event_is_a_spec_event() -> None:
    assert set(TASK_EVENT_STATES) <= EVENT_KINDS


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("task.completed", "core"),
        ("vendor.acme.thing", "vendor"),
        ("com.example.build-finished", "vendor"),
        ("task.paused", "unknown"),
        ("heartbeat", "unknown"),
        ("Task.Completed", "invalid"),
        ("task..x", "invalid"),
    ],
)
def test_event_names_are_classified_core_vendor_unknown_or_invalid(name: str, kind: str) -> None:
    assert classify_event(name) == kind


def spec_error_rows() -> list[tuple[int, str, str]]:
    text = spec_section(
        "Core error codes:",
        "Errors caused by agent work SHOULD also produce Task or Span events so the failure is visible in streams and receipts.",
    )
    return [
        (int(m.group(1)), m.group(2), m.group(3))
        for m in re.finditer(r"^\|\s*(\d{3})\s*\|\s*`?([a-z_]+)`?\s*\|\s*(.+?)\s*\|$", text, flags=re.M)
    ]


def test_the_error_code_table_matches_the_spec_row_by_row() -> None:
    rows = spec_error_rows()
    assert len(rows) == 18
    assert rows == [(info.http_status, code, info.meaning) for code, info in ERROR_CODES.items()]


def test_the_error_types_are_exactly_those_the_spec_lists() -> None:
    text = spec_section("Core error types:", "Core error codes:")
    listed = re.findall(r"([a-z_]+_error): ([^:]+?\.)(?=[a-z_]+_error:|$)", text.replace("\n", ""))
    assert dict(listed) == dict(ERROR_TYPES)


def test_every_code_has_a_default_type_that_is_a_spec_type() -> None:
    assert set(DEFAULT_ERROR_TYPE) == set(ERROR_CODES)
    assert set(DEFAULT_ERROR_TYPE.values()) <= set(ERROR_TYPES)


def test_the_spec_example_error_response_parses_and_writes_back() -> None:
    body = {
        "error": {
            "code": "invalid_request",
            "message": "Missing required field: session_id",
            "type": "request_error",
            "param": "session_id",
            "request_id": "req_01J",
            "details": {},
        }
    }
    envelope = ErrorEnvelope.from_dict(body)
    assert (envelope.http_status, envelope.to_dict()) == (400, body)


def test_an_unknown_error_code_is_kept_raw_and_answers_500() -> None:
    envelope = ErrorEnvelope.from_dict(
        {"error": {"code": "teapot", "message": "m", "type": "odd_error", "extra": 1}}
    )
    assert (envelope.code.known, envelope.type.known, envelope.http_status) == (False, False, 500)
    assert envelope.details == {"extra": 1}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"error": "x"},
        {"error": {"code": "conflict", "message": "m"}},
        {"error": {"code": 1, "message": "m", "type": "t"}},
    ],
)
def test_a_malformed_error_response_is_refused(body: object) -> None:
    with pytest.raises(ProtocolError):
        ErrorEnvelope.from_dict(body)


def test_envelopes_for_the_version_and_idempotency_rules_carry_the_spec_statuses() -> None:
    assert (
        ErrorEnvelope.of("unsupported_protocol_version", "use agents-protocol-2026-04-25").http_status == 426
    )
    assert ErrorEnvelope.of("idempotency_key_reused", "different body").http_status == 409
    with pytest.raises(ValueError, match="unknown core error code"):
        ErrorEnvelope.of("nope", "x")


def test_a_protocol_error_is_a_harn_error_that_renders_one_line() -> None:
    from harn_mcp_mock.errors import HarnError

    err = ProtocolError.invalid("bad\nthing", param="task.id")
    assert isinstance(err, HarnError)
    assert str(err) == "task.id: bad thing"
    assert err.exit_code == 2
