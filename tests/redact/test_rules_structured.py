"""Secrets inside structured values in text (issue 37): only the secret part is replaced.

A ``"auth"`` of a Docker config written as JSON inside a string inside a string (its quotes
escaped twice, ``\\\\\\"auth\\\\\\":\\\\\\"…\\\\\\"``), and an environment value whose secret holds
``&`` (``PASSWORD=git&<date>&<base64>``, an Azure API Management repository key) while the
``&`` of a query string or of an HTML entity still ends the value. All values are made up here.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from harn_mcp_mock.redact import RedactionPolicy

RNG = random.Random(3738)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def pick(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


AUTH = base64.b64encode(f"builder:{pick(ALNUM, 14)}".encode()).decode()
REPO_KEY = f"git&202611291200&{pick(B64, 86)}=="

# (case, text, what it must become: [REDACTED:1] in place of the secret)
CASES: list[tuple[str, str, str]] = [
    (
        "docker auth, quotes escaped twice",
        'environment = ["DOCKER_AUTH_CONFIG={\\\\\\"auths\\\\\\":{\\\\\\"registry.example.test:5000\\\\\\":'
        '{\\\\\\"auth\\\\\\":\\\\\\"' + AUTH + '\\\\\\"}}}"]',
        'environment = ["DOCKER_AUTH_CONFIG={\\\\\\"auths\\\\\\":{\\\\\\"registry.example.test:5000\\\\\\":'
        '{\\\\\\"auth\\\\\\":\\\\\\"[REDACTED:1]\\\\\\"}}}"]',
    ),
    (
        "docker auth, quotes escaped once",
        '{\\"auths\\":{\\"registry.example.test\\":{\\"auth\\":\\"' + AUTH + '\\"}}}',
        '{\\"auths\\":{\\"registry.example.test\\":{\\"auth\\":\\"[REDACTED:1]\\"}}}',
    ),
    (
        "a password holding '&'",
        f"REPO_URL=https://demo.scm.example.test\nPASSWORD={REPO_KEY}\n",
        "REPO_URL=https://demo.scm.example.test\nPASSWORD=[REDACTED:1]\n",
    ),
    (
        "a password in a query string ends at the next parameter",
        "https://example.test/login?user=ada&password=Zx9q8Lm7Kp&next=%2Fhome",
        "https://example.test/login?user=ada&password=[REDACTED:1]&next=%2Fhome",
    ),
    (
        "a password in a form body ends at the next parameter",
        "POST body: username=ada&password=Zx9q8Lm7Kp&remember=1",
        "POST body: username=ada&password=[REDACTED:1]&remember=1",
    ),
    (
        "a password before an HTML entity ends there",
        "url: db://host/?password=Zx9q8Lm7Kp&amp;ssl=true",
        "url: db://host/?password=[REDACTED:1]&amp;ssl=true",
    ),
]


@pytest.mark.parametrize(("case", "text", "want"), CASES, ids=[c for c, _t, _w in CASES])
def test_only_the_secret_part_of_a_structured_value_goes(case: str, text: str, want: str) -> None:
    red = RedactionPolicy.default().redactor()
    assert red.redact_text(text) == want, case
