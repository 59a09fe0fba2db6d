"""Secrets read from their context (issue 37): XML elements and attributes, connection strings
and URLs, and free text where a secret word stands a few words before the value.

Every value here is generated with a fixed seed, in the shapes the public corpora hold
(trufflehog's detector tests: Jenkins ``credentials.xml`` entries, .NET ``appSettings``,
JDBC URLs, log lines such as ``Your API key is …``). Each secret must go, whole, with the text
around it as it was; the look-alikes (UUIDs, hashes, versions, paths, plain words, templates)
must come back unchanged.
"""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy
from tests.redact.credentials import picker, seeded_per_test

RNG = random.Random(37_0001)
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


pick = picker(RNG)


_draws_of_its_own = seeded_per_test(RNG)


def password(n: int = 12) -> str:
    """A password: letters of both cases, digits and a symbol."""
    body = list(pick(ALNUM, n - 1))
    body.insert(RNG.randrange(1, n - 1), RNG.choice("!#%*+-"))
    return "".join(body)


def consonant_runs(n: int) -> str:
    """Lower-case letters in long runs with few vowels and a digit now and then (random keys of
    ``[a-z0-9]`` look like this: their letter runs are long, their vowels rare)."""
    out = ""
    while len(out) < n:
        out += "".join(RNG.choice("bcdfghjklmnpqrstvwxz") for _ in range(RNG.randint(4, 8)))
        out += RNG.choice(string.digits) * RNG.randint(1, 2)
    return out[:n]


def uuid() -> str:
    return "-".join(pick(HEX, k) for k in (8, 4, 4, 4, 12))


def jenkins(value: str, vendor: str = "acme") -> str:
    """A Jenkins ``credentials.xml`` string credential, as trufflehog's tests write them."""
    return (
        "<com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>\n"
        "  <scope>GLOBAL</scope>\n"
        f"  <id>{{{vendor}}}</id>\n"
        f"  <secret>{{{vendor} AQAAABAAA {value}}}</secret>\n"
        "  <description>configuration for production</description>\n"
        "  <creationDate>2023-05-18T14:32:10Z</creationDate>\n"
        "</com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>"
    )


# (case name, the secret, the text it sits in: "{s}" marks it)
XML: list[tuple[str, str, str]] = [
    ("jenkins secret, lower-case and digits", pick(LOWER_DIGITS, 32), jenkins("{s}")),
    (
        "jenkins secret, no vendor word",
        pick(ALNUM, 40),
        jenkins("{s}").replace("{acme AQAAABAAA", "{AQAAABAAA"),
    ),
    ("jenkins secret, hex", pick(HEX, 64), jenkins("{s}", "ambee")),
    (
        "jenkins secret, dashed groups",
        "-".join(pick(LOWER_DIGITS, k) for k in (8, 4, 4, 4, 12)),
        jenkins("{s}"),
    ),
    ("jenkins secret, base64", pick(ALNUM + "+/", 86) + "==", jenkins("{s}")),
    ("element named api-key", pick(LOWER_DIGITS, 24), "<api-key>{s}</api-key>"),
    ("namespaced element", password(), "<ns1:password>{s}</ns1:password>"),
    ("cdata", password(), "<password><![CDATA[{s}]]></password>"),
    ("cdata over lines", pick(ALNUM, 32), "<clientSecret>\n  <![CDATA[{s}]]>\n</clientSecret>"),
    ("account key element", pick(ALNUM + "+/", 86) + "==", "<account_key>{s}</account_key>"),
    ("bare key element, a credential-like value", password(16), "<key>{s}</key>"),
    (".net appSettings", pick(ALNUM, 32), '<add key="ApiKey" value="{s}" />'),
    (".net appSettings, value first", password(), '<add value="{s}" key="SmtpPassword"/>'),
    ("entry with a name attribute", pick(ALNUM, 32), '<entry name="token">{s}</entry>'),
    ("java properties xml", password(), '<entry key="db.password">{s}</entry>'),
    ("property with name and value", password(), '<property name="password" value="{s}"/>'),
    ("android string resource", pick(ALNUM, 39), '<string name="google_api_key">{s}</string>'),
    (
        ".net settings value element",
        pick(ALNUM, 32),
        '<setting name="ApiToken" serializeAs="String">\n  <value>{s}</value>\n</setting>',
    ),
    ("param with single quotes", password(), "<param name='secret' value='{s}' />"),
    ("meta csrf token", pick(ALNUM + "+/", 43) + "=", '<meta name="csrf-token" content="{s}">'),
    ("html-escaped element", password(), "&lt;password&gt;{s}&lt;/password&gt;"),
]

XML_KEPT = [
    "<password>required</password>",
    "<token></token>",
    "<password>${DB_PASSWORD}</password>",
    "<secret>{{ vault_secret }}</secret>",
    "<apiKey>%API_KEY%</apiKey>",
    "<secret>{acme}</secret>",
    "<key>city</key>",
    "<key>user_settings</key>",
    "<keyAlias>release-key</keyAlias>",
    '<string name="password_hint">Enter your password</string>',
    "<primaryKey>user_id</primaryKey>",
    "<publicKey>MFkwEwYHKoZIzj0CAQ6Ab8xq</publicKey>",
    "<sessionTimeout>30</sessionTimeout>",
    "<tokenUrl>https://example.org/oauth/token</tokenUrl>",
    '<entry key="cache.key">user_12345</entry>',
    '<add key="Version" value="1.2.3" />',
    '<add key="ApiKey" value="" />',
    '<input type="password" name="password" value="">',
    '<input type="hidden" name="api_key" value="{{ api_key }}">',
    "<p>Press any key to continue.</p>",
    "<id>550e8400-e29b-41d4-a716-446655440000</id>",
    "<sha256>9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08</sha256>",
    "<password><value>hunter</value></password>",
]

# Connection strings and URLs: the password part only.
CONNECTIONS: list[tuple[str, str, str]] = [
    ("jdbc oracle thin", password(), "jdbc:oracle:thin:scott/{s}@db.example.org:1521:orcl"),
    ("jdbc oracle thin, service", password(), 'url = "jdbc:oracle:thin:app/{s}@//db.example.org:1521/svc"'),
    ("sqlplus connect string", password(), "sqlplus -s scott/{s}@//db.example.org:1521/orcl"),
    ("jdbc mysql query", password(), "jdbc:mysql://db:3306/app?user=app&password={s}"),
    ("jdbc sqlserver", password(), "jdbc:sqlserver://db:1433;user=sa;password={s};encrypt=true"),
    ("ado.net", password(), "Server=tcp:db,1433;Database=app;User Id=sa;Password={s};"),
    ("odbc pwd", password(), "Driver={ODBC Driver 18};Server=db;UID=sa;PWD={s};"),
    ("mongodb+srv", password(), "mongodb+srv://app:{s}@cluster0.example.mongodb.net/db"),
    ("redis without a user", password(), "redis://:{s}@cache.example.org:6379/0"),
    ("atlassian url", pick(ALNUM, 24), "https://ada@example.org:{s}@company.atlassian.net/wiki"),
    ("token in a query", pick(ALNUM, 32), "https://api.example.org/v1/x?token={s}&page=2"),
    (
        "settings after a secret word: only the password",
        pick(ALNUM, 44),
        "cache token - '" + pick(ALNUM, 12) + ".redis.cache.windows.net:6380,password={s},ssl=True'",
    ),
    ("token as the url's user, hex", pick(HEX, 40), "git clone https://{s}@github.com/acme/app.git"),
    ("token as the url's user", pick(ALNUM + "_", 36), "remote = https://{s}@git.example.org/acme/app"),
]

CONNECTIONS_KEPT = [
    "jdbc:postgresql://localhost:5432/postgres",
    "jdbc:oracle:thin:@db.example.org:1521:orcl",
    "jdbc:oracle:thin:@//db.example.org:1521/svc",
    "jdbc:sqlserver://localhost:1433;databaseName=AdventureWorks",
    "sqlplus /nolog @scripts/setup.sql",
    "see docs/guide/setup@v2.md for the steps",
    "ssh://git@github.com/acme/app.git",
    "https://ada.lovelace@example.org/profile",
    "https://deploy-bot@git.example.org/acme/app",
    "https://build_user_2024@ci.example.org/job/7",
]

# A secret word within a few words before the value, in prose or a log line.
PROSE: list[tuple[str, str, str]] = [
    ("your api key is", pick(ALNUM, 32), "Your API key is {s}, keep it safe."),
    ("vendor key is, hex", pick(HEX, 32), "Your ACME key is {s}, which you will need."),
    ("token then verb", pick(ALNUM, 40), "token {s} was rejected by the server"),
    ("log line, using token", "spu-" + pick(HEX, 32), "[DEBUG] Using token {s}"),
    ("password for a user", password(10), "password for admin - {s}"),
    ("authorization key", pick(ALNUM, 28), "Authorization key {s}"),
    ("vendor name and key", pick(LOWER_DIGITS, 32), "the mailgun key {s} is for the eu region"),
    ("vendor token with a dash", pick(ALNUM, 36), "acme token - '{s}'"),
    ("vendor secret with a dash", pick(ALNUM + "_-", 40), "acme secret - '{s}'\nacme client id - 'web'"),
    ("pass in quotes", password(14), "ldap bind 'cn=admin,dc=example,dc=org' pass '{s}'"),
    ("access token in parentheses", pick(ALNUM, 40), "Access token (read-only): {s}"),
    ("api key, uuid", uuid(), "The API key is {s}."),
    ("secret, two linking words", pick(ALNUM, 24), "the client secret for staging is now {s}"),
    ("session token in a sentence", pick(ALNUM + "-_", 48), "Session token {s} expires in an hour."),
    ("a value longer than the window", pick(HEX, 128), "acme token - '{s}'"),
    ("an equals sign inside", pick(ALNUM, 15) + "=" + pick(ALNUM, 28), "acme token - '{s}'"),
    ("long runs of letters", consonant_runs(32), "acme token - '{s}'"),
    ("twelve characters right after", pick(LOWER_DIGITS, 12), "acme token - '{s}'"),
    (
        "vowels as in words, consonant runs as in random letters",
        "ua31kstrvboe52iax07qmpdle",
        "acme token - '{s}'",
    ),
    (
        "after a word and an equals sign",
        "eu01xx" + pick(HEX, 34) + "-ACME",
        "acme mobile app token EU = '{s}'",
    ),
]

PROSE_KEPT = [
    "the key is to keep commits small",
    "Press any key to continue",
    "token count 1234567890",
    "the primary key 7f3a9c2b8e1d4f60 is unique",
    "public key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtq8vS5Yx2mB0pL4wK7dR9fH3jN6cQ1zE8uT5oA2iV",
    "key id 3AA5C34371567BD2",
    "next page token CiAKGjBpNDd2Nmp2Zml3eDAxOWk3ZWhjZDA4Nm11NxIKCgJpZBIEdGVzdBgB",
    "the token bug was fixed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "session ended at 2024-05-18T14:32:10Z",
    "secret sauce recipe v2.3.1",
    "password reset link sent to ada@example.org",
    "the api key file /etc/app/api.key",
    "password policy requires 12 characters",
    "sort key created_at_2024",
    "the token tokenizer_v2_final was used",
    "key features: speed, safety and simplicity",
    "the secret of getUserName2 is in the docs",
    "access token endpoint https://example.org/oauth2/token",
    "cache key user:12345:profile",
    "max tokens 4096, input tokens 1234",
    "token type Bearer, scope read write",
    "the token for request 550e8400-e29b-41d4-a716-446655440000 was issued",
    "password hash $2b$12$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUV012",
    "signing key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "key 2024-01-15",
    "key version 3.14.159",
    "the token is user_settings_v2",
    "key ab12cd34ef, then the next step",
]


@pytest.mark.parametrize(
    ("secret", "text"),
    [(s, t) for _n, s, t in XML + CONNECTIONS + PROSE],
    ids=[n for n, _s, _t in XML + CONNECTIONS + PROSE],
)
def test_the_secret_is_replaced_whole_and_nothing_else_changes(secret: str, text: str) -> None:
    line = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert out == text.replace("{s}", "[REDACTED:1]"), (line, out)


@pytest.mark.parametrize("text", XML_KEPT + CONNECTIONS_KEPT + PROSE_KEPT)
def test_look_alikes_are_kept(text: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)


def test_the_same_secrets_are_gone_from_a_tool_result_and_remembered() -> None:
    cases = XML + CONNECTIONS + PROSE
    texts = "\n".join(t.replace("{s}", s) for _n, s, t in cases)
    red = RedactionPolicy.default().redactor()
    message = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": texts}]}}
    out = red.redact_message(message)["result"]["content"][0]["text"]
    for name, secret, _t in cases:
        assert secret not in out, name
    # Each value learned in context is redacted where it comes back bare.
    for name, secret, _t in cases:
        assert secret not in red.redact_text(f"echo {secret} done"), name


def test_a_policy_without_key_rules_reads_no_context() -> None:
    policy = RedactionPolicy.from_dict({"extends": "none"})
    for _n, secret, text in XML + PROSE:
        line = text.replace("{s}", secret)
        assert policy.redactor().redact_text(line) == line


@pytest.mark.parametrize("n", [1, 40])
def test_many_elements_and_sentences_in_one_text(n: int) -> None:
    """The rules find every instance in a long text, not only the first of each kind."""
    secrets = [pick(ALNUM, 32) for _ in range(n)]
    lines = []
    for i, s in enumerate(secrets):
        lines.append(
            f"<entry name='svc{i}_token'>{s}</entry>" if i % 2 else f"the svc{i} token is {s} for now"
        )
        lines.append("<p>filler text with a monkey, a turkey and 3 keys</p>")
    out = RedactionPolicy.default().redactor().redact_text("\n".join(lines))
    for s in secrets:
        assert s not in out
    assert out.count("monkey, a turkey and 3 keys") == n


# Harmless shapes after a secret word: never altered, whatever the word and the words between.
_VOCABULARY = [
    "user",
    "settings",
    "cache",
    "created",
    "final",
    "value",
    "config",
    "service",
    "profile",
    "default",
]
_HARMLESS = st.one_of(
    st.uuids().map(str),
    st.binary(min_size=20, max_size=32).map(bytes.hex),  # sha1, sha256 digests
    st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 999)).map(
        lambda v: "v{}.{}.{}".format(*v)
    ),
    st.lists(st.sampled_from(_VOCABULARY), min_size=3, max_size=5).map(lambda w: "/" + "/".join(w) + ".txt"),
    st.dates().map(lambda d: d.isoformat() + "T10:20:30Z"),
    st.integers(10**9, 10**15).map(str),
    st.tuples(st.lists(st.sampled_from(_VOCABULARY), min_size=2, max_size=4), st.integers(0, 99)).map(
        lambda t: "_".join(t[0]) + f"_{t[1]}"
    ),
    st.lists(st.sampled_from(_VOCABULARY), min_size=2, max_size=3).map(
        lambda w: ".".join(w) + "@example.org"
    ),
    st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=3).map(
        lambda w: "https://example.org/" + "/".join(w) + "?page=2"
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["token", "key", "secret", "password", "API key", "access token", "Client Secret"]),
    st.sampled_from(["for request", "of the build", "used by the job", "in file"]),
    st.sampled_from([" ", " is ", " - ", ": "]),
    _HARMLESS,
)
def test_harmless_identifiers_after_a_secret_word_are_kept(
    word: str, between: str, link: str, value: str
) -> None:
    red = RedactionPolicy.default().redactor()
    for text in (f"the {word} {between}{link}{value} was issued", f"<p>{word} {between} {value}</p>"):
        out = red.redact_text(text)
        assert not PLACEHOLDER_RE.search(out), (text, out)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["password", "apiKey", "ns:clientSecret", "auth_token", "db.password", "SmtpPassword"]),
    st.sampled_from(["element", "entry", "add", "cdata"]),
    st.text(ALNUM + "+/_-", min_size=20, max_size=60).filter(
        lambda v: any(c.isdigit() for c in v) and sum(c.isalpha() for c in v) >= 2 and v[0].isalnum()
    ),
)
def test_a_credential_under_a_secret_name_in_xml_is_replaced_whole(name: str, shape: str, value: str) -> None:
    local = name.rpartition(":")[2]
    text = {
        "element": f"<{name}>{value}</{name}>",
        "entry": f'<entry key="{local}">\n  {value}\n</entry>',
        "add": f'<add key="{local}" value="{value}" />',
        "cdata": f"<{local}><![CDATA[{value}]]></{local}>",
    }[shape]
    out = RedactionPolicy.default().redactor().redact_text(text)
    assert value not in out and out == text.replace(value, "[REDACTED:1]"), (text, out)


def test_random_letters_of_both_cases_after_a_secret_word_are_a_value() -> None:
    """A value of letters only (no digit) is no plain word when its letters are random: each of
    600 random 20-letter values of both cases is replaced after ``token``; camelCase names made of
    words stay (before, every value of letters only counted as a word of the sentence, and about
    3 in 100 such values were left in clear)."""
    rng = random.Random(37_0602)
    values = ["".join(rng.choice(string.ascii_letters) for _ in range(20)) for _ in range(600)]
    kept = []
    for value in values:
        out = RedactionPolicy.default().redactor().redact_text(f"token {value} was rejected")
        if value in out:
            kept.append(value)
    assert len(kept) <= 3, kept  # a rare draw reads as words or has too little entropy
    names = (
        "AuthenticationFailedBecauseExpired",
        "AbstractSingletonProxyFactoryBean",
        "HTTPSConnectionPoolManager",
    )
    for name in names:
        text = f"the token {name} was rejected"
        assert RedactionPolicy.default().redactor().redact_text(text) == text
