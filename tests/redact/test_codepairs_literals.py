"""A literal that a secret's name stands for in code (issue 37): the fallback of a lookup
(``process.env.API_KEY || "…"``, ``${API_KEY:-…}``), a function returning one literal, a brace
initialiser, a quoted key in an associative array (``'account_key' => '…'``).

Every value here is generated with a fixed seed at import. Each secret must go, whole, with the
code around it as it was; look-alikes (names that are no secret's, words, templates, validation
rules, empty values) must come back unchanged.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy
from tests.redact.credentials import record_texts

RNG = random.Random(37_0038)
ALNUM = string.ascii_letters + string.digits


def pick(alphabet: str, n: int) -> str:
    out = [RNG.choice(alphabet) for _ in range(n)]
    out[n // 2] = RNG.choice(string.digits)
    out[n // 3] = RNG.choice(string.ascii_uppercase)
    out[n // 4] = RNG.choice(string.ascii_lowercase)
    return "".join(out)


def base64_key(n: int = 86) -> str:
    return pick(ALNUM + "+/", n) + "=="


# (case name, the secret, the code it sits in: "{s}" marks it)
LITERALS: list[tuple[str, str, str]] = [
    ("node env fallback", pick(ALNUM, 32), 'const key = process.env.ACME_API_KEY || "{s}";'),
    (
        "fallback wrapped by a formatter",
        base64_key(),
        'export const key =\n  process.env.ACCOUNT_KEY ||\n  "{s}";',
    ),
    ("nullish fallback on a property", pick(ALNUM, 24), "const token = config.apiToken ?? '{s}';"),
    ("vite env fallback", pick(ALNUM, 40), "const s = import.meta.env.VITE_SECRET || `{s}`"),
    ("ruby env index fallback", pick(ALNUM, 28), "key = ENV['STRIPE_SECRET_KEY'] || '{s}'"),
    ("getenv call fallback", pick(ALNUM, 20), 'const t = getenv("AUTH_TOKEN") ?? "{s}";'),
    ("shell default", pick(ALNUM, 36), 'curl -H "X-Api-Key: ${ACME_API_KEY:-{s}}" https://api.example.org'),
    ("shell assign default", pick(ALNUM, 36), ": ${DB_PASSWORD:={s}}"),
    ("go getter", pick(ALNUM, 24), 'func getBetterStackToken() string{ return "{s}" }'),
    ("go method getter", pick(ALNUM, 30), 'func (c *Client) apiKey() string {\n\treturn "{s}"\n}'),
    ("python getter", pick(ALNUM, 32), 'def get_api_key():\n    return "{s}"'),
    ("js getter", pick(ALNUM, 32), "function secretToken() {\n  return '{s}';\n}"),
    (
        "c++ brace initialiser over a line break",
        base64_key(),
        'static const std::string AzuriteAccountKey{\n    "{s}"};',
    ),
    ("c++ brace initialiser", pick(ALNUM, 24), 'std::string apiSecret{"{s}"};'),
    ("php array", base64_key(), "\t'account_key' => '{s}',"),
    ("ruby hash", pick(ALNUM, 32), '{ "client_secret" => "{s}" }'),
]

LOGIN, ROW = pick(ALNUM, 18), pick(ALNUM, 30)

KEPT = [
    'const name = user.name || "anonymous1234"',
    'const key = process.env.ACME_API_KEY || ""',
    'const key = process.env.ACME_API_KEY || "<your api key>"',
    'const url = process.env.TOKEN_URL || "https://auth.example.org/oauth/token"',
    "const mode = process.env.NODE_ENV ?? 'production'",
    'echo "${API_KEY:-}"',
    'echo "${API_KEY:-changeme}"',
    'echo "${HOME:-/root}" ${PORT:-8080}',
    'def token_type():\n    return "bearer"',
    'func getPassword() string { return "" }',
    'func userName() string { return "Xk8vQ2mPz7LwRt4Y" }',
    'std::string accountName{"storageacct2024"};',
    'names := []string{"Xk8vQ2mPz7LwRt4Y"}',
    "'password' => 'required|string|min:8|confirmed',",
    "'account_key' => 'required|string'",
    "'token' => 'Bearer',",
    "'api_key' => env('STRIPE_KEY'),",
    "'endpoint' => 'http://localhost:10000/devstoreaccount1',",
]


@pytest.mark.parametrize(
    ("secret", "text"), [(s, t) for _n, s, t in LITERALS], ids=[n for n, _s, _t in LITERALS]
)
def test_the_secret_is_replaced_whole_and_nothing_else_changes(secret: str, text: str) -> None:
    code = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(code)
    assert out == text.replace("{s}", "[REDACTED:1]"), (code, out)


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept(text: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)


def test_a_policy_without_key_rules_reads_no_literal() -> None:
    policy = RedactionPolicy.from_dict({"extends": "none"})
    for _n, secret, text in LITERALS:
        code = text.replace("{s}", secret)
        assert policy.redactor(argv=["srv"], env={}).redact_text(code) == code


def test_a_recording_writes_none_of_them_nor_of_the_pairs_and_rows(tmp_path: Path) -> None:
    """``harn mcp mock record`` as a real process, in front of a server whose tool results hold
    the literals above, login pairs and a settings table: no written byte holds a secret, raw
    or JSON-escaped, and each bare repeat in a later result is gone too (the value memory)."""
    cases = [(s, t.replace("{s}", s)) for _n, s, t in LITERALS]
    cases += [(LOGIN, f"checkvist: {LOGIN} / ops.team@example.com"), (ROW, f"| API_KEY | Your key | {ROW} |")]
    texts = [t for _s, t in cases] + [" ".join(f"echo {s}" for s, _t in cases)]
    written = record_texts(tmp_path, texts)
    for secret, text in cases:
        for form in (secret, json.dumps(secret)[1:-1]):
            assert form.encode() not in written, text
