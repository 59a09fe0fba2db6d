"""The redactor's value memory: a value identified as a secret once is redacted everywhere after.

Values are assembled at run time (``varied``) so that this file holds no credential-shaped text.
"""

from __future__ import annotations

import base64
import json
import random
import re
import urllib.parse
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.cassette.model import cas_dir, load_cassette
from harn_mcp_mock.jsonrpc import CLIENT, SERVER
from harn_mcp_mock.record.recorder import Recorder
from harn_mcp_mock.redact import RedactionPolicy, Redactor
from harn_mcp_mock.redact.pipeline import CHASE_MIN, chaseable, credential_parts
from tests.redact.credentials import ALNUM, CONFIG_SPECIALS, config_dump, config_secret, varied

NUMBERED = re.compile(r"\[REDACTED:(\d+)\]")
TOLD = "vault-" + varied(14, 5)  # in no known format: only a name tells it is a secret


def redactor(**kwargs: Any) -> Redactor:
    return RedactionPolicy.default().redactor(**kwargs)


def text_result(text: str, rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}


def test_a_value_told_by_its_name_is_redacted_at_every_later_occurrence() -> None:
    red = redactor()
    first = red.redact_message({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"api_token": TOLD}})
    assert first["params"]["api_token"] == "[REDACTED:1]"
    b64 = base64.b64encode(f"user:{TOLD}".encode()).decode()
    later = [
        f"loaded value {TOLD} from vault",
        f"glued{TOLD}glued",
        f"?q={urllib.parse.quote(TOLD + '/x', safe='')}",
        json.dumps({"nested": json.dumps({"v": TOLD + '"'})}),
        f"basic {b64}",
    ]
    for i, text in enumerate(later):
        out = red.redact_message(text_result(text, i))["result"]["content"][0]["text"]
        assert TOLD not in out and urllib.parse.quote(TOLD) not in out, out
        assert set(NUMBERED.findall(out)) <= {"1", "2"}, out  # the same number (the JSON form may differ)
    assert TOLD not in red.redact_text(f"stderr: {TOLD}")
    # The other direction too, and in an object key.
    back = red.redact_message({"jsonrpc": "2.0", "id": 9, "method": "m", "params": {TOLD: 1, "q": TOLD}})
    assert TOLD not in orjson.dumps(back).decode()


def test_a_value_is_also_redacted_before_the_spot_that_tells_it() -> None:
    red = redactor()
    out = red.redact_text(f"see {TOLD} below; FOO_API_KEY={TOLD}")
    assert out == "see [REDACTED:1] below; FOO_API_KEY=[REDACTED:1]"
    other = "other-" + varied(12, 7)
    msg = {"a": f"first {other}", "b": {"password": other}}
    assert red.redact_message(msg) == {"a": "first [REDACTED:2]", "b": {"password": "[REDACTED:2]"}}


@pytest.mark.parametrize("head", ["Qm7!zR2#", "hunter2.", "Pa55w0rd-"])
def test_a_bare_repeat_a_detector_takes_only_part_of_is_still_redacted_whole(head: str) -> None:
    # The password holds a token in a known format: at its bare repeat the token's own detector
    # takes only the token, and the password's head must not stay in clear beside it.
    token = "xo" + "xb-" + "-".join([varied(12, 7, "0123456789"), varied(13, 3, "0123456789"), varied(24, 5)])
    password = head + token
    out = redactor().redact_text(f"DB_PASSWORD={password}\ncopy: {password} end")
    assert head not in out
    assert out == "DB_PASSWORD=[REDACTED:1]\ncopy: [REDACTED:1] end"


def test_a_string_found_clean_before_is_looked_at_again_after_learning() -> None:
    red = redactor()
    clean = text_result(f"status {TOLD}")
    assert red.redact_message(clean) is clean  # nothing known yet: cached as clean
    red.redact_message({"password": TOLD})
    assert TOLD not in red.redact_message(clean)["result"]["content"][0]["text"]
    assert red.learned == 1


@pytest.mark.parametrize(
    ("value", "chased"),
    [
        ("hunter2", True),  # 7 characters, letters and a digit
        ("s3cr3t-Value-9", True),
        ("abc12", False),  # too short
        ("required", False),  # a plain word
        ("Password", False),
        ("correct-horse-battery", True),  # words, but a passphrase's length
        ("12345678", False),  # a number
        ("2026-11-27T05:00:00Z", False),
        ("https://example.com/a", False),
        ("true", False),
    ],
)
def test_which_values_are_chased(value: str, chased: bool) -> None:
    assert chaseable(value) is chased
    red = redactor()
    red.redact_message({"password": value})
    out = red.redact_text(f"later {value} here")
    assert (value not in out) is chased, out


def test_ordinary_words_are_never_mangled_by_a_short_or_plain_secret() -> None:
    red = redactor()
    red.redact_message({"password": "abc", "token": "enabled", "secret": "1234"})
    text = "abc enabled 1234 stays as it is"
    assert red.redact_text(text) == text
    assert CHASE_MIN == 8


def test_authorization_keeps_its_scheme_word_and_loses_every_credential_part() -> None:
    key_id, sig = "AKID" + varied(12, 7).upper(), varied(64, 3, "0123456789abcdef")
    token = varied(24, 11)
    nonce, response = varied(32, 5, "0123456789abcdef"), varied(32, 7, "0123456789abcdef")
    basic = base64.b64encode(b"ada:" + token.encode()).decode()
    digest = (
        f'Digest username="ada", realm="r", nonce="{nonce}", uri="/x", response="{response}", '
        f'cnonce="{token[:8]}"'
    )
    aws = (
        f"AWS4-HMAC-SHA256 Credential={key_id}/20260101/us-east-1/s3/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={sig}"
    )
    cases = [
        (f"Bearer {token}", "Bearer [REDACTED:1]", [token]),
        (f"SSWS {token}", "SSWS [REDACTED:1]", [token]),
        (f"Token {token}", "Token [REDACTED:1]", [token]),
        (f"MyScheme {token}", "MyScheme [REDACTED:1]", [token]),
        (f"Basic {basic}", "Basic [REDACTED:1]", [basic, token]),
        (
            digest,
            'Digest username="ada", realm="r", nonce="[REDACTED:1]", uri="/x", response="[REDACTED:2]", '
            'cnonce="[REDACTED:3]"',
            [nonce, response, token[:8]],
        ),
        (
            aws,
            "AWS4-HMAC-SHA256 Credential=[REDACTED:1], SignedHeaders=host;x-amz-date, Signature=[REDACTED:2]",
            [key_id, sig],
        ),
    ]
    for value, shown, parts in cases:
        for header in ("Authorization", "proxy-authorization"):
            red = redactor()
            assert red.redact_message({header: value}) == {header: shown}
            # In text, the same parts go (numbers may differ: the text is redacted by one rule).
            text = red.redact_text(f"{header}: {value}\nnext")
            assert NUMBERED.sub("#", text) == NUMBERED.sub("#", f"{header}: {shown}\nnext"), text
            # The credential parts are remembered (Basic: the password too; AWS4: the key id).
            later = red.redact_text(" ".join(parts))
            assert not set(parts) & set(later.split()), later


def test_credential_parts() -> None:
    assert credential_parts("Bearer abc.def") == ["abc.def"]
    assert credential_parts("Basic " + base64.b64encode(b"u:pw-123456").decode())[1:] == [
        "u:pw-123456",
        "pw-123456",
    ]
    assert credential_parts("some value 42") == []


def test_header_options_on_a_command_line_are_secrets_unless_harmless() -> None:
    value = "hdr-" + varied(16, 13)
    argv = [
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        f"X-Upstream-Key: {value}",
        "-H",
        "Accept: text/plain",
    ]
    argv += ["--header=Authorization:SSWS " + value + "2", "--header", "User-Agent:agent/1.0"]
    red = redactor(argv=argv)
    shown = red.redact_argv(argv)
    assert shown[3] == "X-Upstream-Key: [REDACTED:1]" and shown[5] == "Accept: text/plain"
    assert shown[6] == "--header=Authorization:SSWS [REDACTED:2]" and shown[8] == "User-Agent:agent/1.0"
    assert value not in red.redact_text(f"echo {value} and {value}2")


def test_fingerprints_carry_learned_values_to_a_replay() -> None:
    red = redactor()
    red.redact_message({"password": TOLD})
    replay = RedactionPolicy.default().redactor(fingerprints=red.fingerprints())
    assert replay.redact_text(f"GET /?q={TOLD} ok") == "GET /?q=[REDACTED:1] ok"
    assert replay.redact_text(f"then {TOLD}glued") == "then [REDACTED:1]glued"  # now learned


def test_the_recorder_redacts_earlier_messages_and_drops_their_blobs(tmp_path: Path) -> None:
    cassette = tmp_path / "c.cassette.json"
    red = redactor()
    recorder = Recorder(
        cassette, red, command=["srv", f"--note={TOLD}"], policy_name="default", policy_digest="d"
    )
    big = "lorem ipsum " * 600 + TOLD
    recorder.feed(
        SERVER,
        orjson.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": big}}) + b"\n",
    )
    recorder.feed(
        SERVER,
        orjson.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": TOLD}}) + b"\n",
    )
    recorder.feed(
        CLIENT, orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"password": TOLD}}) + b"\n"
    )
    recorder.finish(
        {"code": 0, "signal": None, "reason": "client-eof"},
        {"http": [{"method": "POST", "status": 200, "headers": {"x": TOLD}}]},
    )
    written = cassette.read_bytes() + b"".join(p.read_bytes() for p in cas_dir(cassette).iterdir())
    assert TOLD.encode() not in written
    loaded = load_cassette(cassette)
    assert loaded.meta["command"] == ["srv", "--note=[REDACTED:1]"]
    assert len(list(cas_dir(cassette).iterdir())) == 1  # the blob that held the secret is gone


# --- names: one classifier for keys, flags, env vars, query parameters and cookies ----------


@pytest.mark.parametrize(
    "name",
    [
        "db-pass",
        "DB_PASS",
        "MYSQL_PWD",
        "PGPASS",
        "GH_PAT",
        "pwd",
        "pw",
        "psswd",
        "fcm-server-key",
        "private-token-header",
        "okta-ssws",
        "PHPSESSID",
        "connect.sid",
        "JSESSIONID",
        "X-Amz-Signature",
        "X-Goog-Signature",
        "sig",
    ],
)
def test_short_and_odd_secret_names_are_secret_as_keys_flags_and_text(name: str) -> None:
    value = "v4l-" + varied(14, 9)
    red = redactor(argv=["srv", f"--{name}={value}"])
    assert red.redact_argv(["srv", f"--{name}={value}"])[1] == f"--{name}=[REDACTED:1]"
    assert red.redact_message({name: "another-" + varied(10, 3)}) == {name: "[REDACTED:2]"}
    assert "[REDACTED:" in red.redact_text(f"{name}={varied(12, 5)}x9&next=1")


@pytest.mark.parametrize("name", ["MYSQL_PWD", "PGPASS", "GH_PAT", "DB_PASS", "OKTA_SSWS"])
def test_short_secret_env_names_make_literal_secrets(name: str) -> None:
    value = "env-" + varied(13, 11)
    red = redactor(env={name: value, "PWD": "/home/ada/project", "OLDPWD": "/home/ada"})
    assert red.redact_text(f"using {value} in /home/ada/project") == "using [REDACTED:1] in /home/ada/project"


@pytest.mark.parametrize(
    "name",
    [
        "passenger",
        "keyboard",
        "compass",
        "bypass",
        "tokenizer",
        "max_tokens",
        "sidebar",
        "signal",
        "session_count",
        "author",
        "primary_key",
        "path",
        "pattern",
        "patch",
        "sidecar",
        "signature",
        "passes",
        "pass_count",
        "OLDPWD",
        "NODE_PATH",
    ],
)
def test_harmless_look_alike_names_keep_their_values(name: str) -> None:
    value = "kept-" + varied(12, 7)
    red = redactor(env={"PWD": value, "OLDPWD": value, "NODE_PATH": value, "PASSENGER_APP_ENV": value})
    message = {name: value, "note": f"{name}={value}"}
    assert red.redact_message(message) is message
    assert red.redact_argv(["srv", f"--{name}", value]) == ["srv", f"--{name}", value]


def test_name_value_pairs_with_a_secret_name_have_their_value_redacted() -> None:
    red = redactor()
    k8s = {
        "env": [
            {"name": "DB_PASSWORD", "value": "pw-" + varied(10, 3)},
            {"name": "LOG_LEVEL", "value": "debug"},
        ]
    }
    assert red.redact_message(k8s) == {
        "env": [{"name": "DB_PASSWORD", "value": "[REDACTED:1]"}, {"name": "LOG_LEVEL", "value": "debug"}]
    }
    ssm = {
        "Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "ssm-" + varied(11, 5)}
    }
    assert red.redact_message(ssm)["Parameter"]["Value"] == "[REDACTED:2]"
    plain = {"name": "temperature", "value": "21.5"}
    assert red.redact_message(plain) is plain
    assert red.redact_message({"name": "PWD", "value": "/home/ada"}) == {
        "name": "PWD",
        "value": "[REDACTED:3]",
    }
    assert red.redact_text("cd /home/ada") == "cd /home/ada"  # a path is not chased


def test_base64_wrapped_env_text_and_kubernetes_secret_data_are_decoded_and_scanned() -> None:
    password = "k8s-" + varied(13, 5)
    env_text = base64.b64encode(f"DB_HOST=db\nDB_PASSWORD={password}\n".encode()).decode()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "data": {"app.env": env_text, "host": base64.b64encode(b"db.internal:5432").decode()},
    }
    red = redactor()
    out = red.redact_message(secret)
    assert out["data"] == {"app.env": "[REDACTED:1]", "host": secret["data"]["host"]}
    assert red.redact_text(f"data:\n  app.env: {env_text}\n") == "data:\n  app.env: [REDACTED:1]\n"
    assert red.redact_text(f"the password {password} again") == "the password [REDACTED:2] again"
    harmless = base64.b64encode(b"greeting=hello world, see you=later\n").decode()
    assert red.redact_text(f"payload {harmless}") == f"payload {harmless}"


@pytest.mark.parametrize(
    ("template", "rule"),
    [
        ("machine api.example.com login ada password {v}", "netrc-password"),
        ("default login ada password {v}", "netrc-password"),
        ("db.internal:5432:app:ada:{v}", "pgpass-line"),
        ("*:*:*:ada:{v}", "pgpass-line"),
        ("docker login -u ada -p {v} registry.example.com", "docker-login-password"),
        ("docker login --password={v}", "docker-login-password"),
        ("mysql -uroot -p{v} app", "mysql-password-flag"),
        ("mysql -u root -p {v} app", "mysql-password-flag"),
    ],
)
def test_command_and_file_forms_lose_their_password(template: str, rule: str) -> None:
    value = "Cf7-" + varied(10, 7)
    red = redactor()
    out = red.redact_text("x\n" + template.format(v=value) + "\ny")
    assert value not in out and "[REDACTED:1]" in out
    assert sum(red.findings.values()) == 1 and (rule in red.findings or "--password" in template)


@pytest.mark.parametrize(
    "text",
    [
        "machine learning login flow password reset",
        "12:30:45:67:89",
        "run mysql -p to be prompted",
        "docker login -p $TOKEN",
        "mysql -h db -P 3306 -u root -p",
        "mysql -u root -p mydb",
    ],
)
def test_command_and_file_look_alikes_are_kept(text: str) -> None:
    assert redactor().redact_text(text) == text


# --- the memory at scale: a config dump, each value repeated bare ------------------------------


@pytest.mark.parametrize("n", [1, 2, 16, 17, 64, 200, 1000])
def test_every_value_of_a_config_dump_is_redacted_at_every_occurrence(n: int) -> None:
    rng = random.Random(n)
    secrets = [config_secret(rng) for _ in range(n)]
    red = redactor()
    out = red.redact_message(text_result(config_dump(secrets, rng)))["result"]["content"][0]["text"]
    assert [s for s in secrets if s in out] == []
    # One number per value, the same at its NAME= copy and its bare repeat.
    numbers = NUMBERED.findall(out)
    assert len(numbers) == 2 * n and len(set(numbers)) == n
    assert all(numbers[2 * i] == numbers[2 * i + 1] for i in range(n)), out[:2000]
    # And in every later message, bare, in any order.
    rng.shuffle(secrets)
    later = red.redact_message(text_result(" ".join(secrets), 2))["result"]["content"][0]["text"]
    assert [s for s in secrets if s in later] == []


@st.composite
def secret_values(draw: st.DrawFn) -> str:
    """A secret-looking value: 16 to 80 characters, a letter first, with upper and lower case
    letters and a digit among regex metacharacters and base64's (never a plain word or number,
    which the memory does not chase by design)."""
    head = draw(st.sampled_from(ALNUM[:52])) + draw(st.sampled_from("ABCDEFGHJKLMNPQRSTUVWXYZ"))
    head += draw(st.sampled_from("abcdefghjkmnpqrstuvwxyz")) + draw(st.sampled_from("23456789"))
    rest = draw(st.text(st.sampled_from(ALNUM + CONFIG_SPECIALS), min_size=12, max_size=76))
    return head + rest


@st.composite
def config_texts(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A config dump of N secrets: for each a ``NAME=value`` line (bare or quoted) and a sentence
    repeating the value bare, all lines in a random order (a repeat may come before its name)."""
    secrets = draw(st.lists(secret_values(), min_size=1, max_size=250, unique=True))
    lines = []
    for i, value in enumerate(secrets):
        quote = draw(st.sampled_from(["", '"', "'"]))
        lines.append(f"APP_{i}_SECRET={quote}{value}{quote}")
        lines.append(f"Connecting with {value} now.")
    return "\n".join(draw(st.permutations(lines))), secrets


@settings(max_examples=15)
@given(config_texts())
def test_no_value_of_any_config_dump_survives_in_that_message_or_later_ones(
    case: tuple[str, list[str]],
) -> None:
    text, secrets = case
    red = redactor()
    out = red.redact_message(text_result(text))["result"]["content"][0]["text"]
    assert [s for s in secrets if s in out] == []
    assert len(set(NUMBERED.findall(out))) == len(secrets)  # one number per value
    later = red.redact_text(" | ".join(reversed(secrets)))
    assert [s for s in secrets if s in later] == []


@pytest.mark.parametrize("long_first", [True, False])
def test_a_value_taught_by_one_string_is_redacted_in_the_strings_and_keys_before_it(long_first: bool) -> None:
    # A long text (searched by pass 1 at once) and a short string and a key: whichever teaches
    # the value (last), the strings and keys looked at before it learned are scanned again.
    filler = "lorem ipsum dolor sit amet " * 200  # over 4 KiB
    long_text = f"{filler} FOO_API_KEY={TOLD} {filler}" if long_first else f"{filler} bare {TOLD} {filler}"
    short = f"bare {TOLD} here" if long_first else f"FOO_API_KEY={TOLD}"
    teller, other = (long_text, short) if long_first else (short, long_text)
    message = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": other, f"k{TOLD}": 1, "b": teller}}
    out = orjson.dumps(redactor().redact_message(message)).decode()
    assert TOLD not in out
    assert set(NUMBERED.findall(out)) == {"1"}, out[:300]


def test_a_string_seen_again_is_redacted_as_the_first_time() -> None:
    """The detectors' hits in a short string are remembered for the next time it comes (the same
    argument in every call): the same output each time, whatever was appended to the hits of the
    first (a credential pair's id half), and what the memory learned meanwhile still counts."""
    secret, client = varied(24, 7), varied(16, 11)
    text = f"client_id={client} client_secret={secret}"
    red = RedactionPolicy.default().redactor()
    first = red.redact_text(text)
    assert secret not in first and client not in first
    assert [red.redact_text(text) for _ in range(3)] == [first] * 3
    later = "blue7horse7staple"  # nothing a detector takes alone
    again = f"{text} and {later}"
    assert later in red.redact_text(again)  # unknown yet
    red.learn(later, "test")
    assert later not in red.redact_text(again)  # the memory is looked in each time
