"""``name = value`` under a name that only reads like a secret's, judged by length and entropy.

Issue 37: a value under such a name (``Key=``, ``mykey:``, ``AESKEY =``) was taken only when it
held a digit and three kinds of characters, so a one-case, lower-case-and-digits or hex key was
left in clear. Now a value is also taken when it is long enough for its alphabet and has the
entropy of random characters of it; plain words, names, templates, placeholders and runs of one
character are still kept. Values are generated here with a fixed seed.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.redact.rules import credential_like

RNG = random.Random(4242)
HEX = "0123456789abcdef"
LOWER_DIGITS = string.ascii_lowercase + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits


def pick(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


# (case, value, text: "{s}" marks the value). The names are ones the key rules do not take.
KEYS: list[tuple[str, str, str]] = [
    ("hex key after Key=", pick(HEX, 32), "[DEBUG] Using Key={s}"),
    ("hex key after a vendor and KEY", pick(HEX, 40), "[INFO] using acme KEY={s} now"),
    ("lower-case and digits after mykey", pick(LOWER_DIGITS, 31), "mykey: {s}"),
    ("upper-case and digits, spaced name", pick(UPPER_DIGITS, 20), "License key : {s}"),
    (
        "lower-case and digits, dash groups",
        pick(LOWER_DIGITS, 12) + "-" + pick(LOWER_DIGITS, 20),
        "app key = {s}",
    ),
    ("glued name ending in key", pick(HEX, 48), "AESKEY = '{s}'"),
    ("camelCase name ending in pass", pick(LOWER_DIGITS, 18), 'dbPass = "{s}"'),
    (
        "go := after a name ending in Key",
        pick(string.ascii_letters + string.digits, 40),
        'vendorKey := "{s}"',
    ),
    (
        "16 random lower-case letters in a URL's key parameter",
        pick(string.ascii_lowercase, 16),
        "https://api.example.org/v1/user?key={s}",
    ),
    (
        "hex with a version and a few other letters",
        "v1.0-" + pick(HEX, 8) + "vv" + pick(HEX, 14) + "-" + pick(HEX, 146),
        'ca_key: "{s}"',
    ),
    (
        "a token longer than 256 characters",
        pick(string.ascii_letters + string.digits + "+/", 900) + "=",
        "[DEBUG] Using Key = {s}",
    ),
    (
        "a quoted literal wrapped to the next line",
        pick(UPPER_DIGITS, 80),
        'const scrapingBeeApiKey =\n  "{s}"; // a comment',
    ),
    (
        "a value alone on a line after its label",
        pick(string.ascii_letters + string.digits + "+", 52),
        "## Save pass:\n\n\t\t{s}\n\n## Run",
    ),
    (
        "a password opening with '$' and a digit",
        "$4" + pick(string.ascii_letters + string.digits + "+.-", 22),
        "DB_PASSWORD={s}",
    ),
    (
        "a password opening with '%' and a digit",
        "%5k" + pick(string.ascii_letters + string.digits + "!_", 30),
        "DB_PASSWORD={s}",
    ),
    (
        "a password opening with '&'",
        "&2" + pick(string.ascii_letters + string.digits + "*+$%", 40),
        "DB_PASSWORD={s}",
    ),
    (
        "a literal black wrapped in parentheses",
        pick(string.ascii_letters + string.digits, 64),
        'OPENAI_API_KEY = (\n    "{s}"\n)',
    ),
    (
        "a notebook's value line after its label line",
        pick(UPPER_DIGITS, 80),
        '"source": [\n    "ScrapingBee API key:\\n",\n    "\\n",\n    "    {s}\\n",\n    "\\n"\n]',
    ),
    (
        "java's separator at the start of the next line",
        pick(string.ascii_letters + string.digits, 40),
        'static final String ACCOUNT_KEY\n        = "{s}";',
    ),
]

# Values under the same kind of names that are no credential.
KEPT = [
    "Key=partnerstack_settings",
    "key: required_field_name",
    "key = deadbeefdeadbeefdeadbeef",
    "Key=1234567890123456789012",
    "key: my-service-name-here",
    "KEY=${API_KEY}",
    "mykey: <your-key-goes-here>",
    "Key=ALLCAPSCONSTANTVALUENAME",
    "key: 3f2a9b1c",
    "app key = internationalization",
    "session: aaaaaaaaaaaaaaaaaaaaaaaa",
    'cacheKey := fmt.Sprintf("%s:%d", a, b)',
    "sessionKey := os.Getenv(name)",
    "key:\n  nested: abcD3fgh1jkl9",
    "password:\n  - first\n  - second",
    "API key:\n\nSee the settings page for yours.",
    "token =\n  compute_token(user)",
    "Title\n=====\nmore text",
    "x ${API_KEY:-default} y",
    "api_key = (\n    load_key()\n)",
    # found in installed packages' sources: reST fields after a line ending in a secret word,
    # the start of a string being built, namespaced names, one-case words joined
    "Returns the session token\n:return: bytes",
    "the key to pass\n:param grant_user: if granted, pass this",
    'secret_key_var = (\n    "export AWS_SECRET_ACCESS_KEY = "\n    + placeholder\n)',
    'SESSION_AUTH = (\n    "AWS::S3::DisableS3ExpressSessionAuth"\n)',
    'unrecognized_keys: "unrecognized_keys"',
    "'price_key': 'input_audio_tool_mtok',",
    "worker_id = metadata(key=GCE_TPU_WORKER_ID_KEY)",
    # references and entities, not values
    "DB_PASSWORD=$DB_PASSWORD_FROM_VAULT",
    "DB_PASSWORD=%DB_PASSWORD%",
    "password=&amp;",
    "token=&user=bob",
    "const crlf = '%0d%0aSet-Cookie:%20sid=attacker:/p'",
    "token = (\n    abcD3fgh1jkl9\n)",
    '"source": [\n    "API key:\\n",\n    "\\n",\n    "    See the settings page\\n"\n]',
]


@pytest.fixture(scope="module")
def policy() -> RedactionPolicy:
    return RedactionPolicy.default()


@pytest.mark.parametrize(("case", "value", "text"), KEYS, ids=[c for c, _v, _t in KEYS])
def test_a_one_case_or_hex_key_under_a_secret_like_name_goes_and_plain_values_stay(
    policy: RedactionPolicy, case: str, value: str, text: str
) -> None:
    line = text.replace("{s}", value)
    red = policy.redactor()
    assert red.redact_text(line) == text.replace("{s}", "[REDACTED:1]"), case
    for kept in KEPT:
        assert red.redact_text(kept) == kept


def test_the_judge_weighs_length_per_alphabet() -> None:
    # 24 hex digits are enough, 20 are not; 16 lower-case letters and digits are.
    assert credential_like(pick(HEX, 24))
    assert not credential_like(pick(HEX, 20))
    assert credential_like(pick(LOWER_DIGITS, 16))
    assert not credential_like(pick(LOWER_DIGITS, 12))
    # 16 random lower-case letters are enough (about 75 bits); words run together are not.
    assert credential_like(pick(string.ascii_lowercase, 16))
    assert not credential_like("partnerstackbase")
    assert not credential_like("authentication")
    # Placeholders and repeated patterns have too little entropy for their length.
    assert not credential_like("0123456789abcdef0123456789abcdef"[:24] * 2)
    assert not credential_like("x" * 32)
    assert not credential_like("0x" + pick(HEX, 16))  # a number written in hex
