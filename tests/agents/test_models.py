"""Resources parse leniently, keep what they do not know, and write back what they read."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from harn_mcp_mock.agents.enums import TaskStatus
from harn_mcp_mock.agents.envelopes import ProtocolError
from harn_mcp_mock.agents.models import RESOURCE_TYPES, Message, Part, Resource, Task
from tests.agents.protocol_data import SAMPLES, spec_section


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_resource_round_trips_through_from_dict_and_to_dict(name: str) -> None:
    assert RESOURCE_TYPES[name].from_dict(SAMPLES[name]).to_dict() == SAMPLES[name]


def required_fields_in_spec(section: str) -> list[str]:
    """The field names of the first ``Required ... fields:`` list under a spec heading."""
    heading, following = {
        "persona": ("Persona", "Workspace"),
        "workspace": ("Workspace", "Session"),
        "session": ("Session", "Task"),
        "task": ("Task", "Branch"),
        "branch": ("Branch", "Message, part, and artifact"),
        "message": ("Message, part, and artifact", "A Part is one block of message content. Required Part fields:"),
        "artifact": ("An Artifact is durable, non-prompt content referenced by messages, outcomes, or receipts.", "HarnAgentCard"),
        "harn_agent_card": ("HarnAgentCard", "Event"),
        "event": ("Event", "Receipt"),
        "receipt": ("Receipt", "Memory"),
        "memory": ("Memory", "Vault"),
        "vault": ("Vault", "Connector"),
        "connector": ("Connector", "Skill"),
        "skill": ("Skill", "Outcome"),
        "outcome": ("Outcome", "Quota"),
        "quota": ("Quota", "Transports"),
    }[section]  # fmt: skip
    text = spec_section(heading, following)
    block = text.split("ields:", 1)[1].split("\nOptional", 1)[0].split("\nA Part", 1)[0]
    names: list[str] = []
    for line in block.splitlines():
        # The spec's lists were flattened: "id: stable persona id.name: display name." and so on.
        for chunk in line.split(".") if ":" in line else []:
            head = chunk.split(":", 1)[0].strip()
            if ":" in chunk and head.isidentifier() and head.islower():
                names.append(head)
    return names


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_model_requires_exactly_the_fields_the_spec_lists(name: str) -> None:
    cls = RESOURCE_TYPES[name]
    required = {
        f.name for f in dataclasses.fields(cls) if "spec" in f.metadata and f.metadata["spec"].required
    }
    assert set(required_fields_in_spec(name)) == required


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_resource_missing_any_required_field_is_refused_with_an_invalid_request(name: str) -> None:
    cls = RESOURCE_TYPES[name]
    for f in dataclasses.fields(cls):
        if "spec" not in f.metadata or not f.metadata["spec"].required:
            continue
        broken = {k: v for k, v in SAMPLES[name].items() if k != f.name}
        with pytest.raises(ProtocolError) as caught:
            cls.from_dict(broken)
        assert caught.value.envelope.code == "invalid_request"
        assert caught.value.envelope.param == f"{cls.OBJECT or name}.{f.name}"


def test_a_field_of_the_wrong_json_type_is_refused_naming_the_field() -> None:
    bad = {**SAMPLES["task"], "session_id": 7}
    with pytest.raises(ProtocolError, match=r"task\.session_id must be a string"):
        Task.from_dict(bad)


def test_a_nullable_required_field_accepts_null_but_not_absence() -> None:
    workspace = RESOURCE_TYPES["workspace"]
    assert workspace.from_dict(SAMPLES["workspace"]).to_dict()["default_branch_id"] is None
    with pytest.raises(ProtocolError):
        workspace.from_dict({k: v for k, v in SAMPLES["workspace"].items() if k != "default_branch_id"})


def test_an_unknown_enum_value_is_kept_raw_and_marked_unknown() -> None:
    task = Task.from_dict({**SAMPLES["task"], "status": "PAUSED"})
    assert task.status == "PAUSED"
    assert isinstance(task.status, TaskStatus)
    assert not task.status.known
    assert Task.from_dict(SAMPLES["task"]).status.known
    assert task.to_dict()["status"] == "PAUSED"


def test_unknown_fields_are_preserved_under_metadata_and_explicit_metadata_wins() -> None:
    data = {**SAMPLES["task"], "x_vendor": {"a": 1}, "tag": "top", "metadata": {"tag": "meta"}}
    task = Task.from_dict(data)
    assert task.metadata == {"x_vendor": {"a": 1}, "tag": "meta"}
    assert "x_vendor" not in task.to_dict()
    assert task.to_dict()["metadata"]["x_vendor"] == {"a": 1}


def test_optional_fields_the_spec_names_are_kept_beside_the_required_ones() -> None:
    task = Task.from_dict({**SAMPLES["task"], "persona_id": "persona_1", "failure": {"code": "x"}})
    assert task.optional == {
        "started_at": "2026-04-25T19:00:01Z",
        "persona_id": "persona_1",
        "failure": {"code": "x"},
    }
    with pytest.raises(ProtocolError, match=r"task\.persona_id must be a string or null"):
        Task.from_dict({**SAMPLES["task"], "persona_id": 3})


def test_a_resource_with_another_object_discriminator_is_refused() -> None:
    with pytest.raises(ProtocolError, match=r"task\.object must be 'task'"):
        Task.from_dict({**SAMPLES["task"], "object": "session"})


def test_timestamps_must_be_rfc3339() -> None:
    with pytest.raises(ProtocolError, match=r"message\.created_at"):
        Message.from_dict({**SAMPLES["message"], "created_at": "yesterday"})


def test_a_core_part_type_requires_its_own_fields_and_an_unknown_type_keeps_all_of_them() -> None:
    with pytest.raises(ProtocolError, match=r"message\.parts\[0\]\.tool_call_id is required"):
        Message.from_dict(
            {
                **SAMPLES["message"],
                "parts": [{"type": "tool_call", "name": "x", "input": {}, "visibility": "public"}],
            }
        )
    part = Part.from_dict({"type": "audio_ref", "artifact_id": "a", "visibility": "public"})
    assert (part.type.known, part.to_dict()) == (
        False,
        {"type": "audio_ref", "artifact_id": "a", "visibility": "public"},
    )


def test_quota_limits_must_hold_at_least_one_number() -> None:
    quota = RESOURCE_TYPES["quota"]
    with pytest.raises(ProtocolError, match="numeric"):
        quota.from_dict({**SAMPLES["quota"], "limits": {"tokens": "lots"}})


def test_a_receipt_without_a_chain_hash_is_refused() -> None:
    receipt: dict[str, Any] = copy.deepcopy(SAMPLES["receipt"])
    del receipt["chain"]["receipt_hash"]
    with pytest.raises(ProtocolError, match="receipt_hash"):
        RESOURCE_TYPES["receipt"].from_dict(receipt)


def test_resources_are_frozen() -> None:
    task: Resource = Task.from_dict(SAMPLES["task"])
    with pytest.raises(AttributeError):
        task.id = "other"  # type: ignore[attr-defined]
