"""The gates' helpers: expressions compiled on first use (a replay's start-up compiles none)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from harn_mcp_mock.redact.gates import Text, lazy_regex
from harn_mcp_mock.redact.rules import PatternRule


def test_a_lazy_regex_answers_as_the_compiled_pattern() -> None:
    source = r"(?P<name>[a-z]+)=(?P<value>[0-9]+)"
    lazy, real = lazy_regex(source, re.IGNORECASE), re.compile(source, re.IGNORECASE)
    text = "A=1, bb=22; CCC=333"
    assert [m.span("value") for m in lazy.finditer(text)] == [m.span("value") for m in real.finditer(text)]
    assert lazy.sub("#", text) == real.sub("#", text)
    assert lazy.fullmatch("x=9") is not None and lazy.match("=9") is None
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (real.pattern, real.flags, real.groupindex)


def test_a_lazy_regex_is_compiled_at_first_use_not_when_made() -> None:
    broken = lazy_regex("(unclosed")  # no error yet: nothing was compiled
    assert broken.pattern == "(unclosed"  # the source is known without compiling
    with pytest.raises(re.error):
        broken.search("text")


def test_importing_the_redaction_modules_compiles_no_expression() -> None:
    code = (
        "import re, re._compiler as c\n"
        "import harn_mcp_mock, harn_mcp_mock._record, harn_mcp_mock.store.pointer\n"
        "seen = []\n"
        "real = c.compile\n"
        "c.compile = lambda p, flags=0: (seen.append(p), real(p, flags))[1]\n"
        "import harn_mcp_mock.redact\n"
        "print(len(seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


@pytest.mark.parametrize("pattern", ["(?m)^-x", "(?mi)^-x", "(?im)^-x"])
def test_a_multiline_pattern_finds_the_same_in_joined_strings_as_alone(pattern: str) -> None:
    rule = PatternRule("r", pattern)
    assert rule.any(Text("a\n-x")) and rule.any(Text("-X")) is ("i" in pattern)
    assert not rule.any(Text("a -x"))
