"""Breaking-change rules for inputSchema (I1..I19) and outputSchema (O1..O11), both directions."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.verify.schema_diff import diff_input_schema, diff_output_schema

P = "/properties/x"
IN = "/inputSchema"
OUT = "/outputSchema"


def obj(props: dict[str, Any] | None = None, required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props or {}}
    if required:
        schema["required"] = list(required)
    return {**schema, **extra}


def x(schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    """An object schema with one property ``x``."""
    return obj({"x": schema}, ("x",) if required else ())


def summary(findings: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.rule, f.severity.name, f.pointer) for f in findings]


STR = {"type": "string"}
INT = {"type": "integer"}

# (old, new, findings for old -> new, findings for new -> old); pointers relative to the schema root.
INPUT_RULES = {
    "I1 new required property / reverse I3": (
        obj({}),
        x(STR, required=True),
        [("I1", "ERR", P)],
        [("I3", "WARN", P)],
    ),
    "I2 new optional property / reverse I3": (obj({}), x(STR), [("I2", "INFO", P)], [("I3", "WARN", P)]),
    "I3 property removed from a closed object / reverse I2": (
        obj({"x": STR}, additionalProperties=False),
        obj({}, additionalProperties=False),
        [("I3", "ERR", P)],
        [("I2", "INFO", P)],
    ),
    "I3 property removed from an object closed by unevaluatedProperties": (
        obj({"x": STR}, unevaluatedProperties=False),
        obj({}, unevaluatedProperties=False),
        [("I3", "ERR", P)],
        [("I2", "INFO", P)],
    ),
    "I4 optional became required / reverse I5": (
        x(STR),
        x(STR, required=True),
        [("I4", "ERR", P)],
        [("I5", "INFO", P)],
    ),
    "I6 number narrowed to integer / reverse I7": (
        x({"type": "number"}),
        x(INT),
        [("I6", "ERR", P + "/type")],
        [("I7", "INFO", P + "/type")],
    ),
    "I6 type removed from a list / reverse I7": (
        x({"type": ["string", "integer"]}),
        x(STR),
        [("I6", "ERR", P + "/type")],
        [("I7", "INFO", P + "/type")],
    ),
    "I6 type changed, both ways": (
        x(STR),
        x(INT),
        [("I6", "ERR", P + "/type")],
        [("I6", "ERR", P + "/type")],
    ),
    "I6 type set where any was allowed / reverse I7": (
        x({}),
        x(STR),
        [("I6", "ERR", P + "/type")],
        [("I7", "INFO", P + "/type")],
    ),
    "I8 null no longer allowed / reverse I7": (
        x({"type": ["string", "null"]}),
        x(STR),
        [("I8", "ERR", P + "/type")],
        [("I7", "INFO", P + "/type")],
    ),
    "I9 enum value removed / reverse I10": (
        x({"type": "string", "enum": ["a", "b"]}),
        x({"type": "string", "enum": ["a"]}),
        [("I9", "ERR", P + "/enum")],
        [("I10", "INFO", P + "/enum")],
    ),
    "I9 enum introduced / reverse I10": (
        x(STR),
        x({"type": "string", "enum": ["a"]}),
        [("I9", "ERR", P + "/enum")],
        [("I10", "INFO", P + "/enum")],
    ),
    "I9 const added / reverse I10": (
        x(STR),
        x({"type": "string", "const": "a"}),
        [("I9", "ERR", P + "/const")],
        [("I10", "INFO", P + "/const")],
    ),
    "I9 const changed, both ways": (
        x({"const": "a"}),
        x({"const": "b"}),
        [("I9", "ERR", P + "/const")],
        [("I9", "ERR", P + "/const")],
    ),
    "I11 bound tightened / reverse I12": (
        x({"type": "string", "maxLength": 10}),
        x({"type": "string", "maxLength": 5}),
        [("I11", "ERR", P + "/maxLength")],
        [("I12", "INFO", P + "/maxLength")],
    ),
    "I13 bound newly set / reverse I12": (
        x(STR),
        x({"type": "string", "maxLength": 5}),
        [("I13", "WARN", P + "/maxLength")],
        [("I12", "INFO", P + "/maxLength")],
    ),
    "I14 pattern added / reverse I21": (
        x(STR),
        x({"type": "string", "pattern": "^[a-z]+$"}),
        [("I14", "ERR", P + "/pattern")],
        [("I21", "INFO", P + "/pattern")],
    ),
    "I14 pattern changed, both ways": (
        x({"type": "string", "pattern": "^[a-z]+$"}),
        x({"type": "string", "pattern": "^[a-z0-9]+$"}),
        [("I14", "WARN", P + "/pattern")],
        [("I14", "WARN", P + "/pattern")],
    ),
    "I15 format added / reverse I22": (
        x(STR),
        x({"type": "string", "format": "date"}),
        [("I15", "ERR", P + "/format")],
        [("I22", "INFO", P + "/format")],
    ),
    "I15 format changed, both ways": (
        x({"type": "string", "format": "date"}),
        x({"type": "string", "format": "date-time"}),
        [("I15", "ERR", P + "/format")],
        [("I15", "ERR", P + "/format")],
    ),
    "I16 additionalProperties closed / reverse opened I20": (
        obj({"a": STR}),
        obj({"a": STR}, additionalProperties=False),
        [("I16", "ERR", "/additionalProperties")],
        [("I20", "INFO", "/additionalProperties")],
    ),
    "I16 additionalProperties true to false / reverse": (
        obj({"a": STR}, additionalProperties=True),
        obj({"a": STR}, additionalProperties=False),
        [("I16", "ERR", "/additionalProperties")],
        [("I20", "INFO", "/additionalProperties")],
    ),
    "I16 unevaluatedProperties added / reverse": (
        obj({"a": STR}),
        obj({"a": STR}, unevaluatedProperties=False),
        [("I16", "ERR", "/unevaluatedProperties")],
        [("I20", "INFO", "/unevaluatedProperties")],
    ),
    "I17 anyOf branch removed / reverse added": (
        x({"anyOf": [STR, INT, {"type": "boolean"}]}),
        x({"anyOf": [STR, INT]}),
        [("I17", "ERR", P + "/anyOf/2")],
        [("I23", "INFO", P + "/anyOf/2")],
    ),
    "I17 oneOf branch removed / reverse added": (
        x({"oneOf": [STR, INT, {"type": "boolean"}]}),
        x({"oneOf": [STR, INT]}),
        [("I17", "ERR", P + "/oneOf/2")],
        [("I23", "INFO", P + "/oneOf/2")],
    ),
    "I17 allOf member added / reverse removed": (
        x({"allOf": [{"minLength": 1}, {"maxLength": 9}]}),
        x({"allOf": [{"minLength": 1}, {"maxLength": 9}, {"pattern": "a"}]}),
        [("I17", "ERR", P + "/allOf/2")],
        [("I23", "INFO", P + "/allOf/2")],
    ),
    "I18 default changed, both ways": (
        x({"type": "string", "default": "metric"}),
        x({"type": "string", "default": "imperial"}),
        [("I18", "WARN", P + "/default")],
        [("I18", "WARN", P + "/default")],
    ),
    "I18 default removed / reverse added I24": (
        x({"type": "string", "default": "metric"}),
        x(STR),
        [("I18", "WARN", P + "/default")],
        [("I24", "INFO", P + "/default")],
    ),
    "I19 description changed, both ways": (
        x({"type": "string", "description": "the city"}),
        x({"type": "string", "description": "a city name"}),
        [("I19", "INFO", P + "/description")],
        [("I19", "INFO", P + "/description")],
    ),
    "I19 title changed, both ways": (
        x({"type": "string", "title": "City"}),
        x({"type": "string", "title": "Town"}),
        [("I19", "INFO", P + "/title")],
        [("I19", "INFO", P + "/title")],
    ),
}


def _rooted(root: str, expected: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [(rule, sev, root + ptr) for rule, sev, ptr in expected]


@pytest.mark.parametrize(("old", "new", "forward", "reverse"), INPUT_RULES.values(), ids=INPUT_RULES.keys())
def test_each_input_rule_and_its_reverse_give_the_tabled_severity(
    old: dict[str, Any], new: dict[str, Any], forward: list[Any], reverse: list[Any]
) -> None:
    assert summary(diff_input_schema("t", old, new)) == _rooted(IN, forward)
    assert summary(diff_input_schema("t", new, old)) == _rooted(IN, reverse)


BOUNDS = [
    # keyword, looser value, tighter value
    ("maximum", 10, 5),
    ("exclusiveMaximum", 10, 5),
    ("minimum", 1, 5),
    ("exclusiveMinimum", 1, 5),
    ("maxLength", 10, 5),
    ("minLength", 1, 5),
    ("maxItems", 10, 5),
    ("minItems", 1, 5),
    ("maxProperties", 10, 5),
    ("minProperties", 1, 5),
    ("multipleOf", 2, 4),
]


@pytest.mark.parametrize(("keyword", "loose", "tight"), BOUNDS)
def test_every_bound_keyword_is_tightened_loosened_set_and_unset_by_direction(
    keyword: str, loose: int, tight: int
) -> None:
    def one(value: int | None) -> dict[str, Any]:
        return x({} if value is None else {keyword: value})

    ptr = IN + P + "/" + keyword
    assert summary(diff_input_schema("t", one(loose), one(tight))) == [("I11", "ERR", ptr)]
    assert summary(diff_input_schema("t", one(tight), one(loose))) == [("I12", "INFO", ptr)]
    assert summary(diff_input_schema("t", one(None), one(tight))) == [("I13", "WARN", ptr)]
    assert summary(diff_input_schema("t", one(tight), one(None))) == [("I12", "INFO", ptr)]
    optr = OUT + P + "/" + keyword
    assert summary(diff_output_schema("t", one(tight), one(loose))) == [("O10", "ERR", optr)]
    assert summary(diff_output_schema("t", one(tight), one(None))) == [("O10", "ERR", optr)]
    assert summary(diff_output_schema("t", one(loose), one(tight))) == [("O7", "INFO", optr)]


def test_unique_items_newly_required_is_a_new_bound() -> None:
    old, new = x({"type": "array"}), x({"type": "array", "uniqueItems": True})
    assert summary(diff_input_schema("t", old, new)) == [("I13", "WARN", IN + P + "/uniqueItems")]
    assert summary(diff_input_schema("t", new, old)) == [("I12", "INFO", IN + P + "/uniqueItems")]


OUTPUT_RULES = {
    "O3 required property removed / reverse O5": (
        x(STR, required=True),
        obj({}),
        [("O3", "ERR", P)],
        [("O5", "INFO", P)],
    ),
    "O3 required became optional / reverse O7": (
        x(STR, required=True),
        x(STR),
        [("O3", "ERR", P)],
        [("O7", "INFO", P)],
    ),
    "O4 optional property removed / reverse O5": (x(STR), obj({}), [("O4", "WARN", P)], [("O5", "INFO", P)]),
    "O5 property added to a closed output / reverse O4": (
        obj({}, additionalProperties=False),
        obj({"x": STR}, additionalProperties=False),
        [("O5", "ERR", P)],
        [("O4", "WARN", P)],
    ),
    "O12 additionalProperties opened / reverse O7": (
        obj({"a": STR}, additionalProperties=False),
        obj({"a": STR}),
        [("O12", "ERR", "/additionalProperties")],
        [("O7", "INFO", "/additionalProperties")],
    ),
    "O6 integer widened to number / reverse O7": (
        x(INT),
        x({"type": "number"}),
        [("O6", "ERR", P + "/type")],
        [("O7", "INFO", P + "/type")],
    ),
    "O6 type added to a list / reverse O7": (
        x(STR),
        x({"type": ["string", "integer"]}),
        [("O6", "ERR", P + "/type")],
        [("O7", "INFO", P + "/type")],
    ),
    "O6 became nullable / reverse O7": (
        x(STR),
        x({"type": ["string", "null"]}),
        [("O6", "ERR", P + "/type")],
        [("O7", "INFO", P + "/type")],
    ),
    "O6 type changed, both ways": (
        x(STR),
        x(INT),
        [("O6", "ERR", P + "/type")],
        [("O6", "ERR", P + "/type")],
    ),
    "O8 enum value added / reverse O9": (
        x({"type": "string", "enum": ["a"]}),
        x({"type": "string", "enum": ["a", "b"]}),
        [("O8", "WARN", P + "/enum")],
        [("O9", "INFO", P + "/enum")],
    ),
    "O8 enum dropped / reverse O9": (
        x({"type": "string", "enum": ["a"]}),
        x(STR),
        [("O8", "WARN", P + "/enum")],
        [("O9", "INFO", P + "/enum")],
    ),
    "O10 maxLength loosened / reverse O7": (
        x({"type": "string", "maxLength": 5}),
        x({"type": "string", "maxLength": 10}),
        [("O10", "ERR", P + "/maxLength")],
        [("O7", "INFO", P + "/maxLength")],
    ),
    "O10 pattern removed / reverse O7": (
        x({"type": "string", "pattern": "^a"}),
        x(STR),
        [("O10", "ERR", P + "/pattern")],
        [("O7", "INFO", P + "/pattern")],
    ),
    "O11 oneOf branch added / reverse O7": (
        x({"oneOf": [STR, INT]}),
        x({"oneOf": [STR, INT, {"type": "boolean"}]}),
        [("O11", "ERR", P + "/oneOf/2")],
        [("O7", "INFO", P + "/oneOf/2")],
    ),
    "O11 anyOf branch added / reverse O7": (
        x({"anyOf": [STR, INT]}),
        x({"anyOf": [STR, INT, {"type": "boolean"}]}),
        [("O11", "ERR", P + "/anyOf/2")],
        [("O7", "INFO", P + "/anyOf/2")],
    ),
    "O11 const removed / reverse O9": (
        x({"type": "string", "const": "ok"}),
        x(STR),
        [("O11", "ERR", P + "/const")],
        [("O9", "INFO", P + "/const")],
    ),
    "O11 const changed, both ways": (
        x({"const": "ok"}),
        x({"const": "done"}),
        [("O11", "ERR", P + "/const")],
        [("O11", "ERR", P + "/const")],
    ),
}


@pytest.mark.parametrize(("old", "new", "forward", "reverse"), OUTPUT_RULES.values(), ids=OUTPUT_RULES.keys())
def test_each_output_rule_and_its_reverse_give_the_tabled_severity(
    old: dict[str, Any], new: dict[str, Any], forward: list[Any], reverse: list[Any]
) -> None:
    assert summary(diff_output_schema("t", old, new)) == _rooted(OUT, forward)
    assert summary(diff_output_schema("t", new, old)) == _rooted(OUT, reverse)


def test_output_schema_removed_is_o1_and_added_is_o2() -> None:
    schema = x(STR)
    [removed] = diff_output_schema("weather", schema, None)
    assert (removed.rule, removed.severity, removed.pointer, removed.old, removed.new) == (
        "O1",
        Severity.ERR,
        "/outputSchema",
        schema,
        None,
    )
    [added] = diff_output_schema("weather", None, schema)
    assert (added.rule, added.severity, added.pointer, added.old, added.new) == (
        "O2",
        Severity.INFO,
        "/outputSchema",
        None,
        schema,
    )
    assert diff_output_schema("weather", None, None) == []


def test_output_description_changes_are_not_reported() -> None:
    assert diff_output_schema("t", x({"type": "string", "description": "a"}), x({"type": "string"})) == []


def test_a_missing_input_schema_counts_as_an_empty_object_schema() -> None:
    assert diff_input_schema("t", None, {"type": "object"}) == []
    assert diff_input_schema("t", {"type": "object"}, None) == []
    assert summary(diff_input_schema("t", None, x(STR, required=True))) == [("I1", "ERR", IN + P)]
    assert summary(diff_input_schema("t", x(STR, required=True), None)) == [("I3", "WARN", IN + P)]


# --------------------------------------------------------------------------- the walk


def test_equal_schemas_give_nothing_whatever_the_key_order() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}, "required": ["a"]}
    new = {"required": ["a"], "properties": {"a": {"maxLength": 3, "type": "string"}}, "type": "object"}
    assert diff_input_schema("t", old, new, recorded_args=[{"a": "toolong"}]) == []
    assert diff_output_schema("t", old, new, recorded_results=[{"a": 1}]) == []


def test_a_property_nested_in_an_array_of_objects_is_found_with_a_dotted_name() -> None:
    def schema(id_type: str) -> dict[str, Any]:
        return obj({"items": {"type": "array", "items": obj({"id": {"type": id_type}})}})

    [finding] = diff_input_schema("t", schema("integer"), schema("string"))
    assert finding.pointer == "/inputSchema/properties/items/items/properties/id/type"
    assert finding.message == "input property 'items[].id' type changed from integer to string"
    assert (finding.rule, finding.old, finding.new) == ("I6", ["integer"], ["string"])


def test_prefix_items_are_compared_position_by_position() -> None:
    old = x({"type": "array", "prefixItems": [STR, INT]})
    new = x({"type": "array", "prefixItems": [STR, {"type": "integer", "maximum": 3}]})
    assert summary(diff_input_schema("t", old, new)) == [("I13", "WARN", IN + P + "/prefixItems/1/maximum")]
    tuple_old = x({"type": "array", "items": [STR, INT]})
    tuple_new = x({"type": "array", "items": [STR, INT], "additionalItems": False})
    assert summary(diff_input_schema("t", tuple_old, tuple_new)) == [
        ("I11", "ERR", IN + P + "/additionalItems")
    ]


def test_additional_and_pattern_property_schemas_are_walked() -> None:
    old = obj({}, additionalProperties=STR, patternProperties={"^n_": INT})
    new = obj({}, additionalProperties={"type": "string", "maxLength": 4}, patternProperties={"^n_": STR})
    assert summary(diff_input_schema("t", old, new)) == [
        ("I13", "WARN", "/inputSchema/additionalProperties/maxLength"),
        ("I6", "ERR", "/inputSchema/patternProperties/^n_/type"),
    ]


def _tree(zip_schema: dict[str, Any], defs_key: str = "$defs") -> dict[str, Any]:
    node = {
        "type": "object",
        "properties": {
            "zip": zip_schema,
            "children": {"type": "array", "items": {"$ref": f"#/{defs_key}/Node"}},
        },
    }
    return {
        "type": "object",
        "properties": {"root": {"$ref": f"#/{defs_key}/Node"}},
        defs_key: {"Node": node},
    }


@pytest.mark.parametrize("defs_key", ["$defs", "definitions"])
def test_local_refs_are_resolved_and_recursive_definitions_terminate(defs_key: str) -> None:
    old, new = _tree(STR, defs_key), _tree({"type": "string", "maxLength": 5}, defs_key)
    # the definition is diffed where it is first entered; its recursive use is not entered again
    assert summary(diff_input_schema("t", old, new)) == [
        ("I13", "WARN", "/inputSchema/properties/root/properties/zip/maxLength")
    ]


def test_a_renamed_definition_with_the_same_content_is_no_change() -> None:
    old = obj({"a": {"$ref": "#/$defs/A"}}, **{"$defs": {"A": x(INT)}})
    new = obj({"a": {"$ref": "#/$defs/B"}}, **{"$defs": {"B": x(INT)}})
    assert diff_input_schema("t", old, new) == []


def test_a_ref_and_the_inline_schema_it_names_are_the_same() -> None:
    old = obj({"a": {"$ref": "#/$defs/A"}}, **{"$defs": {"A": x(INT)}})
    assert diff_input_schema("t", old, obj({"a": x(INT)})) == []


def test_an_unresolvable_ref_change_is_flagged_for_review() -> None:
    old, new = x({"$ref": "https://example.com/a.json"}), x({"$ref": "https://example.com/b.json"})
    assert summary(diff_input_schema("t", old, new)) == [("I25", "WARN", IN + P + "/$ref")]
    assert summary(diff_output_schema("t", old, new)) == [("O13", "WARN", OUT + P + "/$ref")]


def test_union_members_are_paired_by_equality_not_position() -> None:
    old = x({"anyOf": [STR, INT, {"type": "boolean"}]})
    new = x({"anyOf": [{"type": "boolean"}, STR, INT]})
    assert diff_input_schema("t", old, new) == []


def test_a_changed_union_member_is_diffed_inside_its_branch() -> None:
    old = x({"anyOf": [{"type": "string", "maxLength": 9}, INT]})
    new = x({"anyOf": [INT, {"type": "string", "maxLength": 5}]})
    [finding] = diff_input_schema("t", old, new)
    assert (finding.rule, finding.pointer) == ("I11", IN + P + "/anyOf/1/maxLength")
    assert finding.message == "input property 'x<anyOf[1]>' maxLength tightened from 9 to 5"


def test_a_single_type_turned_into_a_union_is_a_branch_added() -> None:
    old, new = x(STR), x({"anyOf": [STR, INT]})
    assert summary(diff_input_schema("t", old, new)) == [("I23", "INFO", IN + P + "/anyOf/1")]
    assert summary(diff_input_schema("t", new, old)) == [("I17", "ERR", IN + P + "/anyOf/1")]
    assert summary(diff_output_schema("t", old, new)) == [("O11", "ERR", OUT + P + "/anyOf/1")]


def test_anyof_turned_oneof_is_a_warning_for_inputs() -> None:
    old, new = x({"anyOf": [STR, INT]}), x({"oneOf": [STR, INT]})
    assert summary(diff_input_schema("t", old, new)) == [("I17", "WARN", IN + P + "/oneOf")]
    assert summary(diff_input_schema("t", new, old)) == [("I23", "INFO", IN + P + "/anyOf")]


NULLABLE_FORMS = {
    "type list": {"type": ["string", "null"]},
    "anyOf with null": {"anyOf": [STR, {"type": "null"}]},
    "oneOf with null": {"oneOf": [{"type": "null"}, STR]},
    "OpenAPI nullable": {"type": "string", "nullable": True},
}


@pytest.mark.parametrize("nullable", NULLABLE_FORMS.values(), ids=NULLABLE_FORMS.keys())
def test_every_nullable_form_is_understood(nullable: dict[str, Any]) -> None:
    assert summary(diff_input_schema("t", x(nullable), x(STR))) == [("I8", "ERR", IN + P + "/type")]
    assert summary(diff_output_schema("t", x(STR), x(nullable))) == [("O6", "ERR", OUT + P + "/type")]
    for other in NULLABLE_FORMS.values():
        assert diff_input_schema("t", x(nullable), x(other)) == []


def test_a_pydantic_optional_model_keeps_its_nested_properties_comparable() -> None:
    defs = {"$defs": {"Loc": obj({"lat": {"type": "number"}})}}
    old = obj({"loc": {"anyOf": [{"$ref": "#/$defs/Loc"}, {"type": "null"}], "default": None}}, **defs)
    new_defs = {"$defs": {"Loc": obj({"lat": {"type": "number", "maximum": 90}})}}
    new = obj({"loc": {"$ref": "#/$defs/Loc"}}, **new_defs)
    assert summary(diff_input_schema("t", old, new)) == [
        ("I18", "WARN", "/inputSchema/properties/loc/default"),
        ("I13", "WARN", "/inputSchema/properties/loc/properties/lat/maximum"),
        ("I8", "ERR", "/inputSchema/properties/loc/type"),
    ]


@pytest.mark.parametrize(
    ("old_type", "new_type"),
    [(["integer", "number"], "number"), (["number", "integer"], ["number"]), ("integer", ["integer"])],
)
def test_integer_inside_number_and_type_lists_are_the_same_set(old_type: Any, new_type: Any) -> None:
    assert diff_input_schema("t", x({"type": old_type}), x({"type": new_type})) == []


def test_keywords_not_modelled_are_flagged_for_review() -> None:
    old, new = x(STR), x({"type": "string", "not": {"const": ""}})
    assert summary(diff_input_schema("t", old, new)) == [("I25", "WARN", IN + P + "/not")]
    assert summary(diff_output_schema("t", old, new)) == [("O13", "WARN", OUT + P + "/not")]


def test_a_finding_carries_tool_message_and_the_changed_values() -> None:
    [finding] = diff_input_schema("weather", x(STR), x(STR, required=True))
    assert finding.to_dict() == {
        "rule": "I4",
        "severity": "ERR",
        "kind": "tool",
        "tool": "weather",
        "pointer": "/inputSchema/properties/x",
        "message": "input property 'x' became required",
        "old": "optional",
        "new": "required",
        "evidence": [],
    }


def test_findings_are_sorted_by_pointer_then_rule_and_unique() -> None:
    old = obj(
        {"b": {"type": "string", "enum": ["a", "b"]}, "a": {"type": "number", "description": "x"}, "c": INT},
        ("a",),
    )
    new = obj(
        {"b": {"type": "string", "enum": ["a", "c"]}, "a": {"type": "integer"}, "d": STR},
        ("d",),
        additionalProperties=False,
    )
    findings = diff_input_schema("t", old, new)
    keys = [(f.pointer, f.rule) for f in findings]
    assert keys == sorted(keys)
    assert len({(f.rule, f.pointer) for f in findings}) == len(findings)
    assert summary(findings) == [
        ("I16", "ERR", "/inputSchema/additionalProperties"),
        ("I5", "INFO", "/inputSchema/properties/a"),
        ("I19", "INFO", "/inputSchema/properties/a/description"),
        ("I6", "ERR", "/inputSchema/properties/a/type"),
        ("I10", "INFO", "/inputSchema/properties/b/enum"),
        ("I9", "ERR", "/inputSchema/properties/b/enum"),
        ("I3", "ERR", "/inputSchema/properties/c"),
        ("I1", "ERR", "/inputSchema/properties/d"),
    ]
    shuffled = dict(random.Random(7).sample(list(new.items()), len(new)))
    assert [f.to_dict() for f in diff_input_schema("t", old, shuffled)] == [f.to_dict() for f in findings]


# --------------------------------------------------------------------------- recorded evidence


def test_a_new_optional_property_warns_only_when_recorded_calls_already_sent_it() -> None:
    old, new = obj({"a": STR}), obj({"a": STR, "units": STR})
    [quiet] = diff_input_schema("t", old, new, recorded_args=[{"a": "x"}])
    assert (quiet.rule, quiet.severity, quiet.evidence) == ("I2", Severity.INFO, [])
    [loud] = diff_input_schema("t", old, new, recorded_args=[{"a": "x"}, {"a": "y", "units": "metric"}])
    assert (loud.rule, loud.severity) == ("I2", Severity.WARN)
    assert loud.evidence == ['call 2: units="metric" (sent)']
    assert loud.message == "input property 'units' added (optional) (1 recorded call already sends it)"


def test_a_removed_property_is_an_error_when_recorded_calls_used_it() -> None:
    old, new = obj({"a": STR, "legacy": INT}), obj({"a": STR})
    [unused] = diff_input_schema("t", old, new, recorded_args=[{"a": "x"}])
    assert (unused.rule, unused.severity) == ("I3", Severity.WARN)
    [used] = diff_input_schema("t", old, new, recorded_args=[{"a": "x"}, {"legacy": 1}, {"legacy": 1}])
    assert (used.rule, used.severity) == ("I3", Severity.ERR)
    assert used.evidence == ["call 2: legacy=1 (sent)"]
    assert used.message.endswith("(2 recorded calls still send it)")


def test_a_new_bound_is_an_error_when_a_recorded_argument_violates_it() -> None:
    old, new = x(STR), x({"type": "string", "maxLength": 5})
    [fine] = diff_input_schema("t", old, new, recorded_args=[{"x": "Paris"}])
    assert (fine.rule, fine.severity, fine.evidence) == ("I13", Severity.WARN, [])
    [broken] = diff_input_schema("t", old, new, recorded_args=[{"x": "Paris"}, {"x": "Llanfair"}])
    assert (broken.rule, broken.severity) == ("I13", Severity.ERR)
    assert broken.evidence == ['call 2: x="Llanfair" (size 8, maxLength 5)']


def test_evidence_lists_three_calls_with_long_values_cut_only_at_a_boundary() -> None:
    long = "y" * 100
    args = [{"x": long + str(i)} for i in range(5)]
    [finding] = diff_input_schema("t", x(STR), x({"type": "string", "maxLength": 5}), recorded_args=args)
    assert finding.severity == Severity.ERR
    assert finding.message.endswith("(5 recorded calls violate it)")
    assert len(finding.evidence) == 3
    # one word: never cut mid-word (textclip.clip), so it is shown whole
    assert finding.evidence[0] == f'call 1: x="{long}0" (size 101, maxLength 5)'
    words = [{"x": " ".join(["word"] * 30)}]
    [cut] = diff_input_schema("t", x(STR), x({"type": "string", "maxLength": 5}), recorded_args=words)
    assert cut.evidence[0].startswith('call 1: x="word word')
    assert "word … (+" in cut.evidence[0] and " chars) (size 149, maxLength 5)" in cut.evidence[0]


def test_a_changed_pattern_is_an_error_only_on_evidence() -> None:
    old, new = x({"type": "string", "pattern": "^[a-z]+$"}), x({"type": "string", "pattern": "^[a-z]{2,}$"})
    [fine] = diff_input_schema("t", old, new, recorded_args=[{"x": "ab"}])
    assert (fine.rule, fine.severity) == ("I14", Severity.WARN)
    [broken] = diff_input_schema("t", old, new, recorded_args=[{"x": "ab"}, {"x": "a"}])
    assert (broken.rule, broken.severity) == ("I14", Severity.ERR)
    assert broken.evidence == ["call 2: x=\"a\" (does not match '^[a-z]{2,}$')"]


def test_evidence_follows_the_property_path_through_arrays() -> None:
    def schema(extra: dict[str, Any]) -> dict[str, Any]:
        return obj({"items": {"type": "array", "items": obj({"id": {"type": "integer", **extra}})}})

    args = [{"items": [{"id": 1}, {"id": 500}]}]
    [finding] = diff_input_schema("t", schema({}), schema({"maximum": 100}), recorded_args=args)
    assert (finding.severity, finding.pointer) == (
        Severity.ERR,
        IN + "/properties/items/items/properties/id/maximum",
    )
    assert finding.evidence == ["call 1: items[1].id=500 (maximum 100)"]


def test_errors_are_annotated_with_the_recorded_calls_they_break() -> None:
    [finding] = diff_input_schema("t", x(STR), x(STR, required=True), recorded_args=[{"x": "a"}, {}])
    assert (finding.rule, finding.severity) == ("I4", Severity.ERR)
    assert finding.evidence == ["call 2: arguments={} (no 'x')"]


def test_a_recorded_argument_made_invalid_by_a_non_error_change_promotes_that_change() -> None:
    old, new = x(STR), x({"type": "string", "not": {"const": "forbidden"}})
    args = [{"x": "ok"}, {"x": "forbidden"}]
    [finding] = diff_input_schema("t", old, new, recorded_args=args)
    assert (finding.rule, finding.severity, finding.pointer) == ("I25", Severity.ERR, IN + P + "/not")
    assert finding.evidence == ['call 2: x="forbidden" (fails not)']
    assert finding.message.endswith("(1 recorded call no longer validates)")


def test_a_new_optional_property_whose_schema_rejects_recorded_values_is_an_error() -> None:
    old, new = obj({}), obj({"n": INT})
    [finding] = diff_input_schema("t", old, new, recorded_args=[{"n": "seven"}])
    assert (finding.rule, finding.severity) == ("I2", Severity.ERR)
    assert finding.evidence == ['call 1: n="seven" (fails type)']


def test_a_recorded_argument_made_invalid_where_no_finding_points_gets_an_i26_error() -> None:
    old = obj({"mode": STR})
    new = obj(
        {"mode": STR}, **{"if": {"properties": {"mode": {"const": "fast"}}}, "then": {"required": ["limit"]}}
    )
    findings = diff_input_schema("t", old, new, recorded_args=[{"mode": "slow"}, {"mode": "fast"}])
    assert summary(findings) == [
        ("I25", "WARN", "/inputSchema/if"),
        ("I25", "WARN", "/inputSchema/then"),
        ("I26", "ERR", "/inputSchema/then/required"),
    ]
    assert findings[2].evidence == ["call 2: missing limit"]
    assert findings[2].message == (
        "input property 'limit' no longer accepts recorded arguments (required [\"limit\"])"
        " (1 recorded call no longer validates)"
    )


def test_recorded_arguments_already_invalid_under_the_old_schema_are_no_evidence() -> None:
    old, new = (
        x({"type": "string", "maxLength": 3}),
        x({"type": "string", "maxLength": 3, "not": {"const": "abcd"}}),
    )
    [finding] = diff_input_schema("t", old, new, recorded_args=[{"x": "abcd"}])
    assert finding.severity == Severity.WARN


def test_an_error_finding_already_covering_the_path_is_not_duplicated() -> None:
    old, new = x(STR), x(INT)
    findings = diff_input_schema("t", old, new, recorded_args=[{"x": "a"}])
    assert summary(findings) == [("I6", "ERR", IN + P + "/type")]
    assert findings[0].evidence == ['call 1: x="a" (string, not integer)']


def test_output_evidence_counts_recorded_results_without_changing_severity() -> None:
    results = [{"x": "a", "s": "on"}, {"s": "off"}, {"x": "b", "s": "on"}]
    old = obj({"x": STR, "s": {"type": "string", "enum": ["on", "off"]}})
    new = obj({"s": {"type": "string", "enum": ["on", "off", "unknown"]}})
    findings = diff_output_schema("t", old, new, recorded_results=results)
    assert [(f.rule, f.severity.name, f.evidence) for f in findings] == [
        ("O8", "WARN", ["3 of 3 recorded results carry s"]),
        ("O4", "WARN", ["2 of 3 recorded results carry x"]),
    ]


def test_a_oneof_branch_that_makes_recorded_values_ambiguous_is_an_error() -> None:
    old = x({"oneOf": [STR, INT]})
    new = x({"oneOf": [STR, INT, {"type": "string", "maxLength": 3}]})
    [quiet] = diff_input_schema("t", old, new, recorded_args=[{"x": "long text"}])
    assert (quiet.rule, quiet.severity) == ("I23", Severity.INFO)
    [finding] = diff_input_schema("t", old, new, recorded_args=[{"x": "long text"}, {"x": "ab"}])
    assert (finding.rule, finding.severity, finding.pointer) == ("I23", Severity.ERR, IN + P + "/oneOf/2")
    assert finding.evidence == ['call 2: x="ab" (fails oneOf)']


def test_recorded_arguments_deep_inside_a_recursive_definition_are_still_checked() -> None:
    old, new = _tree(STR), _tree({"type": "string", "maxLength": 5})
    args = [{"root": {"zip": "ok", "children": [{"zip": "too long"}]}}]
    findings = diff_input_schema("t", old, new, recorded_args=args)
    assert summary(findings) == [
        ("I26", "ERR", "/inputSchema/properties/root/properties/children/items/properties/zip/maxLength"),
        ("I13", "WARN", "/inputSchema/properties/root/properties/zip/maxLength"),
    ]
    assert findings[0].evidence == ['call 1: root.children[0].zip="too long" (fails maxLength)']


def test_integers_beyond_64_bits_do_not_break_the_comparison() -> None:
    old, new = x({"type": "integer", "maximum": 2**70}), x({"type": "integer", "maximum": 2**65})
    assert summary(diff_input_schema("t", old, new, recorded_args=[{"x": 2**68}])) == [
        ("I11", "ERR", IN + P + "/maximum")
    ]


# --------------------------------------------------------------------------- robustness

_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", "^a", "date"])
_KEYWORDS = [
    "type",
    "enum",
    "const",
    "maximum",
    "minLength",
    "pattern",
    "format",
    "default",
    "description",
    "nullable",
    "required",
    "additionalProperties",
    "uniqueItems",
    "not",
    "$ref",
]


def _schemas() -> st.SearchStrategy[Any]:
    types = st.sampled_from(["string", "integer", "number", "null", "object", "array", "boolean"])
    leaf = st.dictionaries(
        st.sampled_from(_KEYWORDS),
        _SCALARS
        | types
        | st.lists(types | _SCALARS, max_size=3)
        | st.sampled_from(["#", "#/$defs/A", "#/nope"]),
        max_size=4,
    )
    return st.recursive(
        leaf | st.booleans(),
        lambda inner: st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
                "items": inner | st.lists(inner, max_size=2),
                "prefixItems": st.lists(inner, max_size=2),
                "anyOf": st.lists(inner, max_size=3),
                "oneOf": st.lists(inner, max_size=3),
                "allOf": st.lists(inner, max_size=2),
                "additionalProperties": inner,
                "$defs": st.fixed_dictionaries({"A": inner}),
                "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
                "type": types | st.lists(types, max_size=3),
            },
        ),
        max_leaves=12,
    )


_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    old=_schemas(),
    new=_schemas(),
    calls=st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), _VALUES), max_size=3),
)
@pytest.mark.slow
def test_any_pair_of_schemas_gives_sorted_unique_findings_without_crashing(
    old: Any, new: Any, calls: list[dict[str, Any]]
) -> None:
    old_schema = old if isinstance(old, dict) else {"anyOf": [old]}
    new_schema = new if isinstance(new, dict) else {"anyOf": [new]}
    for findings in (
        diff_input_schema("t", old_schema, new_schema, recorded_args=calls),
        diff_output_schema("t", old_schema, new_schema, recorded_results=calls),
    ):
        keys = [(f.pointer, f.rule) for f in findings]
        assert keys == sorted(keys)
        assert len(set(keys)) == len(keys)
        assert all(len(f.evidence) <= 3 for f in findings)
    assert diff_input_schema("t", old_schema, dict(reversed(list(old_schema.items())))) == []


def test_a_changed_dollar_schema_is_info_on_both_sides() -> None:
    """Issue 40: `$schema` was never compared (it was read as an annotation)."""
    old = {"$schema": "http://json-schema.org/draft-07/schema#", **obj({"a": STR})}
    new = {"$schema": "https://json-schema.org/draft/2020-12/schema", **obj({"a": STR})}
    assert summary(diff_input_schema("t", old, new)) == [("I27", "INFO", "/inputSchema/$schema")]
    assert summary(diff_output_schema("t", old, new)) == [("O14", "INFO", "/outputSchema/$schema")]
    assert summary(diff_input_schema("t", obj({"a": STR}), new)) == [("I27", "INFO", "/inputSchema/$schema")]


def test_no_rule_id_is_emitted_for_both_a_change_and_its_reverse() -> None:
    """Issue 40: one id per meaning; opening additionalProperties was I16, the id for closing it."""
    cases = [(case[0], case[1]) for case in INPUT_RULES.values()]
    seen: dict[str, set[str]] = {}
    for old, new in cases:
        for a, b, way in ((old, new, "forward"), (new, old, "reverse")):
            for f in diff_input_schema("t", a, b):
                seen.setdefault(f.rule, set()).add(f"{way}:{f.severity.name}")
    # a rule may be promoted by evidence (not here: no recorded calls), never reused for the opposite change
    for rule in ("I14", "I15", "I16", "I17", "I18"):
        assert "INFO" not in {s.split(":")[1] for s in seen.get(rule, set())}, rule


def test_every_json_schema_keyword_is_modelled_and_an_unknown_one_is_flagged() -> None:
    """Issue 40: a keyword verify did not know (or MCP's x-mcp-header) changed without a finding."""
    import jsonschema

    from harn_mcp_mock.verify import schema_diff

    keywords = set(jsonschema.Draft202012Validator.VALIDATORS) | set(jsonschema.Draft7Validator.VALIDATORS)
    assert sorted(keywords - schema_diff._MODELLED) == []
    header = x({"type": "string", "x-mcp-header": "Region"})
    renamed = x({"type": "string", "x-mcp-header": "Zone"})
    assert summary(diff_input_schema("t", header, renamed)) == [("I25", "WARN", IN + P + "/x-mcp-header")]
    future = x({"type": "string", "maxGraphemes": 3})
    assert summary(diff_input_schema("t", x(STR), future)) == [("I25", "WARN", IN + P + "/maxGraphemes")]
    assert summary(diff_output_schema("t", x(STR), future)) == [("O13", "WARN", OUT + P + "/maxGraphemes")]
    assert diff_input_schema("t", x(STR), x({"type": "string", "x-vendor-note": "n"})) == []
