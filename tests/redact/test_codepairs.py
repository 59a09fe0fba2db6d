"""A secret passed as code, a string literal naming it and another holding it (``code-literal-pair``,
issue 37): C# collection initialisers, ``Add``/``Set`` calls, header and environment indexes,
``assert.equal(x['Key'], 'v')``, Go and C++ brace pairs.

Every value here is generated with a fixed seed. Each secret must go, whole, with the code around
it as it was; look-alikes (names that are no secret's, plain words, URLs, empty values, flags)
must come back unchanged.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy

RNG = random.Random(37_0037)
ALNUM = string.ascii_letters + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits


def pick(alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` with a digit and a letter (when it has both)."""
    out = [RNG.choice(alphabet) for _ in range(n)]
    if any(c.isdigit() for c in alphabet) and not any(c.isdigit() for c in out):
        out[n // 2] = RNG.choice(string.digits)
    if not any(c.isalpha() for c in out):
        out[n // 3] = RNG.choice(string.ascii_letters)
    return "".join(out)


def base64_key(n: int = 86) -> str:
    return pick(ALNUM + "+/", n) + "=="


def password(n: int = 12) -> str:
    body = list(pick(ALNUM, n - 1))
    body.insert(RNG.randrange(1, n - 1), RNG.choice("!#%*+@"))
    return "".join(body)


# (case name, the secret, the code it sits in: "{s}" marks it)
PAIRS: list[tuple[str, str, str]] = [
    ("c# collection initialiser", base64_key(), '    { "AccountKey", "{s}" },'),
    ("c# initialiser, longer name", base64_key(), '{ "SecondaryAccountKey", "{s}" },'),
    ("dictionary add", base64_key(), 'this.Context.Add("AccountKey", "{s}");'),
    ("go header set", pick(ALNUM + "_+", 44) + "=", 'req.Header.Set("Acme-Api-Key", "{s}")'),
    ("go header, lower-case name", pick("0123456789abcdef", 64), 'req.Header.Set("x-acme-api-key", "{s}")'),
    ("authorization header, bearer", pick(ALNUM, 40), 'req.Header.Add("Authorization", "Bearer {s}")'),
    ("authorization index, no scheme", pick(ALNUM, 32), 'headers["Authorization"] = "{s}"'),
    ("authorization index, token scheme", pick(ALNUM, 12), "headers['Authorization'] = 'Token {s}'"),
    ("python environ", pick("0123456789abcdef", 32), "os.environ[\"ACME_API_KEY\"] = '{s}'"),
    ("ruby env", pick(LOWER_DIGITS, 40), "ENV['SECRET_TOKEN'] = \"{s}\""),
    ("node process.env", pick(ALNUM, 36), 'process.env["API_TOKEN"] = "{s}"'),
    ("assert equal on an index", base64_key(), "assert.equal(parsed['AccountKey'], '{s}');"),
    ("set property, dotted name", password(), 'System.getProperties().setProperty("db.password", "{s}");'),
    ("go brace pair", password(14), 'creds := []string{"password", "{s}"}'),
    ("c++ brace pair", password(), '{"password", "{s}"},'),
    ("set env", pick(ALNUM, 32), 'os.Setenv("ACME_SECRET", "{s}")'),
    ("getenv default", pick(ALNUM, 32), 'key := getEnv("ACME_TOKEN", "{s}")'),
    ("value on the next line", base64_key(), '{ "AccountKey",\n      "{s}" }'),
    ("weak name, credential-like value", pick(ALNUM, 32), 'm.Add("Key", "{s}")'),
    ("third argument", password(), 'vault.Write("kv", "password", "{s}")'),
]

KEPT = [
    'headers["Content-Type"] = "application/json"',
    'm.Add("Key", "Value")',
    'cfg.Add("key", "user_settings")',
    'os.environ["TOKEN_URL"] = "https://auth.example.org/oauth/token"',
    '{ "Password", "" }',
    'setProperty("password.required", "true")',
    'System.setProperty("password.policy", "strict")',
    'params.Set("page_token", "CiAKGjBpNDd2Nmp2Zml3eDAxOWk3ZWhjZDA4Nm11NxIKCgJp")',
    'i18n.t("password", "Enter your password")',
    'labels.put("token", "Token")',
    'form.get("password", "${DB_PASSWORD}")',
    'os.environ["API_KEY"] = "<your api key>"',
    'ENV["SECRET_TOKEN"] = ENV["OTHER_TOKEN"]',
    'keys.Add("private_key_path", "/etc/acme/key.pem")',
    '{ "AccountName", "storageacct2024" },',
    'replace("password", "********")',
    'headers["Authorization"] = "Bearer " + token',
    'req.Header.Add("X-Api-Key", "acme-2024-"+key)',
    '"db.example.org:API-4444444444444444", "db.example.org:API-5555555555555555",',
    'log("token", "received")',
    'x = ["key", "a1b2c3d4e5f6"]',
    'print("secret", "MY_SECRET_NAME")',
]


@pytest.mark.parametrize(("secret", "text"), [(s, t) for _n, s, t in PAIRS], ids=[n for n, _s, _t in PAIRS])
def test_the_secret_is_replaced_whole_and_nothing_else_changes(secret: str, text: str) -> None:
    code = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(code)
    assert out == text.replace("{s}", "[REDACTED:1]"), (code, out)


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept(text: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)


def test_the_secrets_are_gone_from_a_tool_result_and_remembered() -> None:
    source = "\n".join(t.replace("{s}", s) for _n, s, t in PAIRS)
    red = RedactionPolicy.default().redactor()
    message = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": source}]}}
    out = red.redact_message(message)["result"]["content"][0]["text"]
    for name, secret, _t in PAIRS:
        assert secret not in out, name
    for name, secret, _t in PAIRS:
        assert secret not in red.redact_text(f"echo {secret} done"), name


def test_a_policy_without_key_rules_reads_no_pair() -> None:
    policy = RedactionPolicy.from_dict({"extends": "none"})
    for _n, secret, text in PAIRS:
        code = text.replace("{s}", secret)
        assert policy.redactor().redact_text(code) == code
