"""A secret written beside the account it opens (``login-pair``, issue 37): ``<secret> /
<e-mail>`` and ``<e-mail> / <secret>``, no name saying the value is a secret.

Values are generated with a fixed seed at import. The secret must go and the address stay;
words, names, ids, numbers, paths and URLs beside an address must come back unchanged.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy

RNG = random.Random(37_0039)
ALNUM = string.ascii_letters + string.digits


def pick(alphabet: str, n: int) -> str:
    out = [RNG.choice(alphabet) for _ in range(n)]
    out[1], out[n // 2], out[-2] = RNG.choice(string.digits), RNG.choice(string.ascii_uppercase), "q"
    return "".join(out)


PAIRS: list[tuple[str, str, str]] = [
    ("key / address", pick(ALNUM, 14), "checkvist: {s} / ops.team@example.com"),
    (
        "base64 key / named address",
        pick(ALNUM + "+/", 43) + "=",
        "vendor: {s} / vendor_email = ops@example.com",
    ),
    (
        "key glued to the slash",
        pick(ALNUM, 20) + "-" + pick(ALNUM, 18),
        "acme: {s}/ acme_email = ops@example.com",
    ),
    ("address / password, end of a sentence", pick(ALNUM + "#!%", 12), "Demo login: demo@example.com / {s}."),
    ("hex key / address", pick("0123456789abcdef", 40), "{s} / billing@example.co.uk"),
]

KEPT = [
    "Assignee: John Smith / john.smith@example.com",
    "ORD-2024-0001 / orders@example.com",
    "1234567890 / 555@example.com",
    "see https://gitlab.com/Abc123XyZ987/user@example.com",
    "mail demo@example.com / Welcome",
    "git@github.com:Org123Name/repo.git",
    "scp build.tar.gz deploy@example.com:/srv/releases/Build2024x",
    "/home/users/Ab12Cd34Ef56/ann@example.com",
    "contact: support@example.com / sales@example.com",
    "v2.13.0-rc1 / release@example.com",
    "user1234@example.com / path/1234",
    "ops/team42 / ops@example.com",
]


@pytest.mark.parametrize(("secret", "text"), [(s, t) for _n, s, t in PAIRS], ids=[n for n, _s, _t in PAIRS])
def test_the_secret_beside_an_address_goes_and_the_address_stays(secret: str, text: str) -> None:
    line = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert out == text.replace("{s}", "[REDACTED:1]"), (line, out)


@pytest.mark.parametrize("text", KEPT)
def test_what_is_no_credential_beside_an_address_is_kept(text: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)
