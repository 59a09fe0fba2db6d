"""A quoted literal of symbols right after a secret word in free text (issue 37, ``secret-in-prose``).

``acme token - '<letters, digits and symbols>'``: the literal holds ``>``, a backtick or a quote
of the other kind, which the prose rule reads as markup in a word of text. Quoted whole right
after the secret word, it is the value. Values here are generated with a fixed seed.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy

RNG = random.Random(37_0044)


def soup(n: int) -> str:
    """``n`` random letters, digits and symbols (markup characters among them), no quote, no space."""
    alphabet = string.ascii_letters + string.digits + "!#$%&()*+,-./:;<>?@[]^_`{|}~"
    body = [RNG.choice(alphabet) for _ in range(n)]
    body[1], body[2], body[3], body[n // 2] = RNG.choice(string.digits), "`", ">", RNG.choice("ABCXYZ")
    body[0] = RNG.choice(string.ascii_lowercase)
    return "".join(body)


@pytest.mark.parametrize(
    "template",
    [
        "vendo token - '{s}'",
        "the api key is '{s}'",
        "vendo secret '{s}' (rotated)",
        "password - '{s}', then retry",
    ],
)
def test_a_quoted_literal_of_symbols_after_a_secret_word_goes(template: str) -> None:
    secret = soup(48)
    line = template.format(s=secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert out == template.format(s="[REDACTED:1]"), (line, out)


@pytest.mark.parametrize(
    "line",
    [
        "the token - '<b>bold</b>' here",
        "api key: '{{ secret }}'",
        "password - 'a<b'",
        "token - '<your-token-here>'",
        "the key is '`cat key.txt`'",
    ],
)
def test_quoted_markup_after_a_secret_word_is_kept(line: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert not PLACEHOLDER_RE.search(out), (line, out)
