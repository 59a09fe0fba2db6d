"""The shipped JSON Schemas are the ones the models derive, and the samples satisfy them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from harn_mcp_mock.agents import gen_schemas
from harn_mcp_mock.agents.models import RESOURCE_TYPES, Task
from tests.agents.protocol_data import SAMPLES

SCHEMA_DIR = Path(gen_schemas.__file__).with_name("schemas")


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_one_schema_is_shipped_per_resource_and_nothing_else() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(
        f"{n}.schema.json" for n in RESOURCE_TYPES
    )


@pytest.mark.parametrize("name", sorted(RESOURCE_TYPES))
def test_the_shipped_schema_is_the_one_derived_from_the_model(name: str) -> None:
    shipped = (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8")
    assert shipped == gen_schemas.schema_text(name), "run: python -m harn_mcp_mock.agents.gen_schemas"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_and_its_round_trip_validate_against_the_schema(name: str) -> None:
    check = validator(name)
    check.validate(SAMPLES[name])
    check.validate(RESOURCE_TYPES[name].from_dict(SAMPLES[name]).to_dict())


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_schema_rejects_a_sample_missing_a_required_field(name: str) -> None:
    check = validator(name)
    for field in check.schema["required"]:
        broken = {k: v for k, v in SAMPLES[name].items() if k != field}
        assert not check.is_valid(broken), field


def test_the_schema_is_the_producer_contract_so_it_rejects_an_unknown_enum_that_from_dict_keeps() -> None:
    sample = {**SAMPLES["task"], "status": "PAUSED"}
    assert not validator("task").is_valid(sample)
    assert Task.from_dict(sample).status == "PAUSED"


def test_the_message_schema_checks_each_core_part_types_fields() -> None:
    bad = {**SAMPLES["message"], "parts": [{"type": "file_ref", "uri": "x", "visibility": "public"}]}
    assert not validator("message").is_valid(bad)


def test_the_receipt_schema_requires_a_sha256_prefixed_chain_hash() -> None:
    bad = {**SAMPLES["receipt"], "chain": {"receipt_hash": "0" * 64}}
    assert not validator("receipt").is_valid(bad)
