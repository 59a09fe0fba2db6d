"""RFC 8785 canonical JSON, checked against the RFC's own examples."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harn_mcp_mock.agents.jcs import JcsError, jcs_bytes, jcs_number
from harn_mcp_mock.store.canonical import canonical_bytes
from tests.agents.protocol_data import deterministic


def from_ieee(hex_bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_bits))[0])


# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_numbers_serialise_as_rfc_8785_appendix_b_says(bits: str, expected: str) -> None:
    assert jcs_number(from_ieee(bits)) == expected


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_nan_and_the_infinities_are_refused(bits: str) -> None:
    with pytest.raises(JcsError):
        jcs_bytes([from_ieee(bits)])


def test_the_rfc_section_3_2_2_example_canonicalises_to_the_published_bytes() -> None:
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert jcs_bytes(json.loads(source)) == expected.encode("utf-8")


def test_object_keys_sort_by_utf16_code_units_as_in_rfc_section_3_2_3() -> None:
    source = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(jcs_bytes(source)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_control_characters_use_lowercase_unicode_escapes_and_others_stay_literal() -> None:
    assert jcs_bytes("\x1f\x7f\u2028é") == '"\\u001f\x7f\u2028é"'.encode()


@pytest.mark.parametrize(
    ("value", "jcs", "orjson"),
    [
        (-0.0, b"0", b"-0.0"),
        (100.0, b"100", b"100.0"),
        (9007199254740992.0, b"9007199254740992", b"9007199254740992.0"),
        ({"\ufb33": 1, "\U0001f600": 2}, '{"😀":2,"דּ":1}'.encode(), '{"דּ":1,"😀":2}'.encode()),
    ],
)
def test_jcs_differs_from_the_stores_canonical_bytes_where_rfc_8785_says_so(
    value: object, jcs: bytes, orjson: bytes
) -> None:
    assert (jcs_bytes(value), canonical_bytes(value)) == (jcs, orjson)


def test_integers_are_numbers_as_rfc_8785_reads_them_so_big_ones_round_to_the_nearest_double() -> None:
    assert jcs_bytes([2**53, -(2**53), 2**53 + 1, 10**21]) == (
        b"[9007199254740992,-9007199254740992,9007199254740992,1e+21]"
    )
    with pytest.raises(JcsError, match=r"\$/1"):
        jcs_bytes([0, 10**400])


@pytest.mark.parametrize("value", [{1: "x"}, {"a": {1, 2}}, "\ud800"])
def test_values_outside_the_json_data_model_are_refused(value: object) -> None:
    with pytest.raises(JcsError):
        jcs_bytes(value)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@deterministic
@given(json_values)
def test_canonical_bytes_parse_back_to_an_equal_value_and_are_a_fixed_point(value: object) -> None:
    data = jcs_bytes(value)
    parsed = json.loads(data)
    assert jcs_bytes(parsed) == data
    assert _same(parsed, value)


@deterministic
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_round_trips_through_its_canonical_text(value: float) -> None:
    assert float(jcs_number(value)) == value


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(b, bool):
        return float(a) == float(b)  # RFC 8785 numbers are doubles
    return a == b
