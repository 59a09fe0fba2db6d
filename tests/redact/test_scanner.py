"""The scanner's gates: each rule group is skipped when its needle is absent, after a one-character
search (a ``memchr``) for a character the needle holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.redact.scanner import _first_char, _groups


@given(st.text(max_size=12), st.sampled_from(["", "-", "_", ".", ":", "A", "k", " "]))
def test_the_character_searched_first_is_one_the_needle_holds(needle: str, skip: str) -> None:
    """Any text that holds the needle holds that character: the search never skips a match."""
    found = _first_char(needle, skip)
    assert found is None or (found in needle and found != skip)
    if found is None:
        assert not needle.replace(skip, "").strip() or not needle.replace(skip, "").isascii()


def test_a_symbol_comes_first_then_the_rarest_letter() -> None:
    assert _first_char("sig=") == "="
    assert _first_char("token") == "k"
    assert _first_char("sqlplus") == "q"
    assert _first_char("PRIVATE KEY") == "K"  # a capital before small letters
    assert _first_char("p8e-", "-") == "8"


def test_every_group_of_the_default_policy_has_its_character_in_its_needle() -> None:
    """A case-folded group's character is looked for in the case-folded text: it is folded too."""
    red = RedactionPolicy.default().redactor()
    scanner = red._scanner
    for groups in (scanner._joined_groups, scanner._text_groups, scanner._run_groups):
        for needle, folded, pre, rules in groups:
            if needle is not None and pre is not None:
                assert pre in needle
                assert not folded or pre == pre.lower()
            for _rule, long, lpre in rules:
                assert lpre is None or (long is not None and lpre in long)
    assert _groups(()) == ()
