"""A quoted value under a secret's name ends at its own closing quote (issue 37).

The ``secret-assignment`` rule stopped a quoted value at the first quote of either kind, so a
password holding the other kind (``"N{w4'2si(z"``) or its own quote followed by more of the value
(``'aB3>yN'5x[ia'``) lost its head only: the rest was written in clear. Values here are
generated with a fixed seed.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import RedactionPolicy

RNG = random.Random(37_0043)
SYMBOLS = "!#$%&()*+,-./:;<>?@[]^_`{|}~"


def value(n: int, *, inner: str) -> str:
    """``n`` random letters, digits and symbols with ``inner`` (a quote) in the middle."""
    body = [RNG.choice(string.ascii_letters + string.digits + SYMBOLS) for _ in range(n)]
    body[n // 2] = inner
    body[n // 2 + 1] = RNG.choice(string.ascii_letters)  # a letter after the quote: no closing one
    body[0] = RNG.choice(string.ascii_letters)
    return "".join(body)


CASES: list[tuple[str, str, str]] = [
    ("double quotes holding a single one", value(16, inner="'"), 'dotlane_password: "{s}"'),
    ("single quotes holding a double one", value(20, inner='"'), "DB_PASSWORD = '{s}'"),
    ("its own quote followed by a letter", value(60, inner="'"), "acme token = '{s}'"),
    ("json text", value(18, inner="'"), '{{"password": "{s}", "user": "ada"}}'),
    ("two assignments on a line", value(16, inner="'"), "password=\"{s}\" user='ada'"),
]


@pytest.mark.parametrize(("secret", "text"), [(s, t) for _n, s, t in CASES], ids=[n for n, _s, _t in CASES])
def test_a_quoted_value_is_replaced_up_to_its_own_closing_quote(secret: str, text: str) -> None:
    line = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert out == text.replace("{s}", "[REDACTED:1]"), (line, out)


@pytest.mark.parametrize(
    "line",
    [
        "password = 'Xq7!pL2#vR9', user = 'ada'",
        "secret=\"Xq7!pL2#vR9\" mode='fast'",
        '{"password": "Xq7!pL2#vR9", "note": "it\'s fine"}',
        "token: 'Xq7!pL2#vR9'\nname: 'it'",
    ],
)
def test_what_follows_the_closing_quote_is_kept(line: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert "Xq7!pL2#vR9" not in out
    assert out == line.replace("Xq7!pL2#vR9", "[REDACTED:1]"), (line, out)
