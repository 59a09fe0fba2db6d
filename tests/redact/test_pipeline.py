"""What the default policy redacts, how, and what it leaves alone."""

from __future__ import annotations

import base64
import copy
import random
import re
from typing import Any

import orjson
import pytest

import harn_mcp_mock.redact as redact
from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy, Redactor, normalize_placeholders
from tests.redact.credentials import (
    ALNUM,
    BASE64,
    IN_CONTEXT,
    PEM,
    TOKENS,
    varied,
)

NUMBERED = re.compile(r"\[REDACTED:(\d+)\]")


def redactor(**kwargs: Any) -> Redactor:
    return RedactionPolicy.default().redactor(**kwargs)


def entropy_redactor(**kwargs: Any) -> Redactor:
    """The default policy with the (opt-in) entropy rule turned on."""
    return RedactionPolicy.from_dict({"entropy": {"enabled": True}}).redactor(**kwargs)


def call(arguments: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }


def dumped(value: Any) -> str:
    return orjson.dumps(value).decode()


# --- the public surface ----------------------------------------------------------------------


def test_the_package_exports_exactly_its_public_names_sorted() -> None:
    assert redact.__all__ == sorted(redact.__all__)
    assert redact.__all__ == ["PLACEHOLDER_RE", "RedactionPolicy", "Redactor", "normalize_placeholders"]


def test_placeholder_re_matches_numbered_and_normalised_placeholders_and_works_on_bytes() -> None:
    assert PLACEHOLDER_RE.fullmatch("[REDACTED:1]")
    assert PLACEHOLDER_RE.fullmatch("[REDACTED:4096]")
    assert PLACEHOLDER_RE.fullmatch("[REDACTED]")
    assert not PLACEHOLDER_RE.fullmatch("[REDACTED:]")
    assert re.compile(PLACEHOLDER_RE.pattern.encode()).search(b'{"a":"[REDACTED:7]"}')


# --- token formats -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_every_token_format_is_replaced_alone_inside_text_urls_and_json(name: str) -> None:
    token = TOKENS[name]
    texts = [
        token,
        f"my key is {token}.",
        f"https://api.example.com/v1/items?token={token}&page=2",
        f"https://api.example.com/{token}/items",
        f'{{"credential": "{token}"}}',
        f"line one\n{token}\nline three",
    ]
    red = redactor()
    for text in texts:
        out = red.redact_text(text)
        assert token not in out, text
        assert out == text.replace(token, "[REDACTED:1]"), (name, text, out)


@pytest.mark.parametrize("name", sorted(IN_CONTEXT))
def test_credentials_known_by_their_context_lose_only_the_secret_part(name: str) -> None:
    text, secret = IN_CONTEXT[name]
    out = redactor().redact_text(text)
    assert secret not in out
    assert "[REDACTED:1]" in out
    if name != "pem private key":  # the whole PEM block goes, markers included
        assert out == text.replace(secret, "[REDACTED:1]")


def test_a_pem_private_key_block_is_replaced_whole_even_without_its_end_marker() -> None:
    red = redactor()
    assert red.redact_text(f"before\n{PEM}\nafter") == "before\n[REDACTED:1]\nafter"
    cut = PEM.split("-----END")[0]
    out = red.redact_text(cut)
    assert out == "[REDACTED:2]"


def test_bearer_and_basic_in_plain_english_are_not_credentials() -> None:
    red = redactor()
    for text in [
        "Basic usage: call the tool with a city name.",
        "Bearer tokens are described in RFC 6750; basic authentication in RFC 7617.",
        "The bearer of this letter is trusted. Basic Authentication is supported.",
    ]:
        assert red.redact_text(text) == text


def test_a_token_in_a_message_string_is_replaced_and_the_rest_of_the_string_kept() -> None:
    token = TOKENS["github classic (ghp_)"]
    out = redactor().redact_message(call({"message": f"clone with {token} please"}))
    assert out["params"]["arguments"]["message"] == "clone with [REDACTED:1] please"


# --- secret keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "password",
        "Password",
        "new_password",
        "passwd",
        "api_key",
        "apiKey",
        "x-api-key",
        "X-Api-Key",
        "Authorization",
        "proxy-authorization",
        "auth",
        "client_secret",
        "clientSecret",
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "private_key",
        "privateKey",
        "cookie",
        "set-cookie",
        "session_id",
        "credentials",
        "aws_secret_access_key",
    ],
)
def test_a_secret_looking_key_has_its_whole_value_replaced(key: str) -> None:
    out = redactor().redact_message(call({key: "some value 42", "other": "kept"}))
    assert out["params"]["arguments"] == {key: "[REDACTED:1]", "other": "kept"}


@pytest.mark.parametrize(
    "key",
    [
        "tokens",
        "maxTokens",
        "max_tokens",
        "inputTokens",
        "outputTokens",
        "max_token",
        "progressToken",
        "nextCursor",
        "cursor",
        "nextPageToken",
        "author",
        "authority",
        "keys",
        "key",
        "monkey",
        "description",
        "tokenType",
        "token_type",
    ],
)
def test_keys_that_only_resemble_secret_keys_keep_their_values(key: str) -> None:
    message = call({key: "some value 42", "count": 7})
    assert redactor().redact_message(message) is message


def test_numbers_under_a_secret_key_are_replaced_but_booleans_and_null_are_not() -> None:
    out = redactor().redact_message(
        call({"pin_password": 1234, "api_key": 3.5, "token": True, "secret": None})
    )
    assert out["params"]["arguments"] == {
        "pin_password": "[REDACTED:1]",
        "api_key": "[REDACTED:2]",
        "token": True,
        "secret": None,
    }


def test_every_scalar_leaf_under_a_secret_key_is_replaced_at_any_depth() -> None:
    message = call(
        {
            "config": {
                "servers": [
                    {"name": "db", "credentials": {"user": "ada", "pass": ["x1", {"deep": 7}], "ok": False}}
                ]
            }
        }
    )
    out = redactor().redact_message(message)
    server = out["params"]["arguments"]["config"]["servers"][0]
    assert server == {
        "name": "db",
        "credentials": {
            "user": "[REDACTED:1]",
            "pass": ["[REDACTED:2]", {"deep": "[REDACTED:3]"}],
            "ok": False,
        },
    }


def test_secret_keys_are_found_in_every_message_of_a_batch() -> None:
    batch = [
        call({"password": "first-pw"}, 1),
        {"jsonrpc": "2.0", "id": 2, "result": {"structuredContent": {"apiKey": "second-key"}}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": {"token": "third"}}},
    ]
    out = redactor().redact_message(batch)
    assert out[0]["params"]["arguments"]["password"] == "[REDACTED:1]"
    assert out[1]["result"]["structuredContent"]["apiKey"] == "[REDACTED:2]"
    assert out[2]["params"]["data"]["token"] == "[REDACTED:3]"


def test_a_key_that_is_itself_a_secret_is_renamed_to_its_placeholder() -> None:
    token = TOKENS["openai (sk-)"]
    out = redactor().redact_message({"jsonrpc": "2.0", "id": 1, "result": {token: "value", "b": 2}})
    assert out["result"] == {"[REDACTED:1]": "value", "b": 2}
    assert list(out["result"]) == ["[REDACTED:1]", "b"]


# --- free text ---------------------------------------------------------------------------------


def test_name_value_pairs_in_text_lose_the_value_when_the_name_is_secret() -> None:
    red = redactor()
    assert red.redact_text("login with password=hunter2 now") == "login with password=[REDACTED:1] now"
    assert (
        red.redact_text('{"user": "ada", "api_key": "k-12345"}')
        == '{"user": "ada", "api_key": "[REDACTED:2]"}'
    )
    assert red.redact_text("TOKEN: abc123def") == "TOKEN: [REDACTED:3]"
    assert red.redact_text(r"{\"secret\": \"s3cr3t!\"}") == r"{\"secret\": \"[REDACTED:4]\"}"
    assert red.redact_text("authorization: token ghx-12345678") == "authorization: token [REDACTED:5]"


def test_name_value_pairs_in_text_keep_plain_words_and_harmless_names() -> None:
    red = redactor()
    for text in [
        "password: required",
        "api_key: string",
        "max_tokens=4096, progress_token=abc123",
        "Returns: the weather for a city",
        "token: 5",
    ]:
        assert red.redact_text(text) == text


def test_redact_text_handles_stderr_lines_and_error_messages() -> None:
    token = TOKENS["slack bot (xoxb-)"]
    red = redactor()
    assert red.redact_text(f"ERROR 401 calling slack with {token}: invalid_auth") == (
        "ERROR 401 calling slack with [REDACTED:1]: invalid_auth"
    )


# --- numbering -----------------------------------------------------------------------------------


def test_the_same_secret_keeps_its_number_across_messages_and_different_secrets_get_new_ones() -> None:
    red = redactor()
    ghp, aws = TOKENS["github classic (ghp_)"], TOKENS["aws access key id (AKIA)"]
    first = red.redact_message(call({"message": f"{ghp} then {aws} then {ghp}"}))
    second = red.redact_message({"jsonrpc": "2.0", "id": 1, "result": {"text": f"got {aws}"}})
    third = red.redact_text(f"stderr: {ghp}")
    assert first["params"]["arguments"]["message"] == "[REDACTED:1] then [REDACTED:2] then [REDACTED:1]"
    assert second["result"]["text"] == "got [REDACTED:2]"
    assert third == "stderr: [REDACTED:1]"


def test_numbering_follows_first_sight_and_each_redactor_starts_again() -> None:
    a, b = TOKENS["google api key (AIza)"], TOKENS["jwt"]
    red = redactor()
    assert red.redact_text(f"{b} {a}") == "[REDACTED:1] [REDACTED:2]"
    assert redactor().redact_text(f"{a} {b}") == "[REDACTED:1] [REDACTED:2]"


def test_normalize_placeholders_drops_the_numbers_everywhere_and_returns_a_copy() -> None:
    value = {"a": "x [REDACTED:3] y [REDACTED:12]", "[REDACTED:1]": ["[REDACTED:2]", 5, None], "b": "plain"}
    out = normalize_placeholders(value)
    assert out == {"a": "x [REDACTED] y [REDACTED]", "[REDACTED]": ["[REDACTED]", 5, None], "b": "plain"}
    assert value["a"] == "x [REDACTED:3] y [REDACTED:12]"
    plain = {"k": ["v"]}
    copied = normalize_placeholders(plain)
    assert copied == plain and copied is not plain and copied["k"] is not plain["k"]


def test_placeholders_are_never_redacted_again() -> None:
    red = redactor()
    message = call({"password": "[REDACTED:7]", "note": "token=[REDACTED:3] and [REDACTED]"})
    assert red.redact_message(message) is message
    assert red.findings == {}


# --- literal secrets of the server: argv and environment ---------------------------------------------


def test_secret_environment_values_are_replaced_wherever_they_appear() -> None:
    value = "plain-looking-" + varied(10, 3)
    red = redactor(env={"MY_SERVICE_TOKEN": value, "HOME": "/home/ada", "SHORT_SECRET": "abc"})
    out = red.redact_message(call({"a": value, "b": f"prefix{value}suffix", "c": "/home/ada", "d": "abc"}))
    assert out["params"]["arguments"] == {
        "a": "[REDACTED:1]",
        "b": "prefix[REDACTED:1]suffix",
        "c": "/home/ada",
        "d": "abc",
    }
    assert red.findings == {"env": 2}


@pytest.mark.parametrize(
    "name",
    ["GITHUB_TOKEN", "DB_PASSWORD", "PASSWD", "OPENAI_API_KEY", "APIKEY", "MY_AUTH", "GOOGLE_CREDENTIALS",
     "SSH_PRIVATE_KEY", "AWS_ACCESS_KEY_ID", "SESSION_COOKIE", "STRIPE_KEY", "app_secret"],
)  # fmt: skip
def test_environment_variables_with_secret_names_become_literal_secrets(name: str) -> None:
    value = "v4lue-" + varied(8, 7)
    red = redactor(env={name: value})
    assert red.redact_text(f"x {value} y") == "x [REDACTED:1] y"


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "AUTHOR_NAME", "XAUTHORITY", "SSH_AUTH_SOCK", "XDG_SESSION_TYPE", "TOKEN_FILE", "PWD"],
)
def test_environment_variables_with_harmless_names_stay_visible(name: str) -> None:
    value = "/some/harmless/value-" + varied(6, 5)
    assert redactor(env={name: value}).redact_text(f"x {value} y") == f"x {value} y"


def test_a_token_in_any_environment_value_becomes_a_literal_secret() -> None:
    token = TOKENS["openai (sk-)"]
    red = redactor(env={"OPENAI_CONFIG": f"key={token};region=eu"})
    assert red.redact_text(f"using {token}") == "using [REDACTED:1]"


def test_argv_values_of_secret_flags_are_literal_secrets_and_redact_argv_replaces_them() -> None:
    argv = [
        "my-server",
        "--token",
        "t0k3n-value-1",
        "--api-key=k3y-value-22",
        "--password",
        "pw9",
        "--port",
        "8080",
        "--verbose",
        "-p",
        "not-a-secret",
        "DB_PASSWORD=env-style-secret",
        "--max-tokens",
        "4096",
    ]
    red = redactor(argv=argv)
    assert red.redact_argv(argv) == [
        "my-server",
        "--token",
        "[REDACTED:1]",
        "--api-key=[REDACTED:2]",
        "--password",
        "[REDACTED:3]",
        "--port",
        "8080",
        "--verbose",
        "-p",
        "not-a-secret",
        "DB_PASSWORD=[REDACTED:4]",
        "--max-tokens",
        "4096",
    ]
    out = red.redact_message(call({"a": "t0k3n-value-1", "b": "x k3y-value-22 y", "c": "pw9", "d": "pw99"}))
    assert out["params"]["arguments"] == {
        "a": "[REDACTED:1]",
        "b": "x [REDACTED:2] y",
        "c": "[REDACTED:3]",
        "d": "pw99",
    }


def test_an_argv_element_holding_a_token_becomes_a_literal_secret() -> None:
    token = TOKENS["anthropic (sk-ant-)"]
    url = "https://hooks.example.com/" + token
    red = redactor(argv=["server", "--webhook", url])
    assert red.redact_argv(["server", "--webhook", url]) == [
        "server",
        "--webhook",
        "https://hooks.example.com/[REDACTED:1]",
    ]
    assert red.redact_text(f"posting to {token}") == "posting to [REDACTED:1]"


def test_a_secret_flag_followed_by_another_flag_has_no_value_to_hide() -> None:
    argv = ["server", "--token", "--verbose", "x"]
    assert redactor(argv=argv).redact_argv(argv) == argv


# --- the fast path and the input ---------------------------------------------------------------


def test_a_message_with_nothing_to_redact_is_returned_as_the_same_object() -> None:
    message = call({"message": "hello world"})
    tools = {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "tools": [
                {
                    "name": f"tool_{i}",
                    "description": "Fetches the weather forecast for a city (temperature, wind).",
                    "inputSchema": {
                        "$schema": "http://json-schema.org/draft-07/schema#",
                        "type": "object",
                        "properties": {"city": {"type": "string", "description": "e.g. Berlin"}},
                        "required": ["city"],
                    },
                }
                for i in range(10)
            ]
        },
    }
    red = redactor()
    for _ in range(2):  # also once the caches are warm
        assert red.redact_message(message) is message
        assert red.redact_message(tools) is tools
    assert red.findings == {}


def test_redaction_never_mutates_its_input_and_keeps_key_order() -> None:
    message = call({"z": 1, "password": "pw-1", "a": {"token": "t-2", "keep": [1, 2]}, "m": "x"})
    before = copy.deepcopy(message)
    out = redactor().redact_message(message)
    assert message == before
    assert list(out["params"]["arguments"]) == ["z", "password", "a", "m"]
    assert out["params"]["arguments"]["a"]["keep"] is message["params"]["arguments"]["a"]["keep"]


def test_any_json_value_can_be_redacted() -> None:
    token = TOKENS["github classic (ghp_)"]
    red = redactor()
    assert red.redact_message(f"raw {token}") == "raw [REDACTED:1]"
    assert red.redact_message(42) == 42
    assert red.redact_message(None) is None
    assert red.redact_message([1, "a", [f"{token}"]]) == [1, "a", ["[REDACTED:1]"]]


def test_findings_count_redacted_values_per_rule_without_secret_material() -> None:
    red = redactor(env={"SERVICE_TOKEN": "svc-" + varied(12, 3)})
    ghp = TOKENS["github classic (ghp_)"]
    red.redact_message(call({"password": "a1b2c3", "note": f"{ghp} and {ghp}", "x": "svc-" + varied(12, 3)}))
    findings = red.findings
    assert findings == {"secret-key": 1, "github-token": 2, "env": 1}
    assert findings is not red.findings


# --- false positives: real traffic that must survive --------------------------------------------


SURVIVORS = [
    "550e8400-e29b-41d4-a716-446655440000",  # UUID
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",  # git SHA-1
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  # sha256 hex
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "2024-01-15T10:30:00.000Z",
    "2026-11-21T15:42:10+01:00",
    "/home/ada/projects/harn-mcp-mock/tests/unit/test_redact.py",
    "C:/Users/AdaLovelace/AppData/Local/Programs/Python311/python.exe",
    "/usr/local/lib/python3.11/site-packages/orjson/__init__.py",
    "/tmp/ci-final2/tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    "/home/bob/proj2/src/v3/data_2024/file.json",
    "./build/x86_64-linux-gnu/lib3p/libfoo2bar.so.1",
    "https://github.com/modelcontextprotocol/python-sdk/blob/main/README.md",
    "http://json-schema.org/draft-07/schema#",
    "getUserProfileInformationFromDatabase",
    "com.example.service.UserAuthenticationService",
    "notifications/tools/list_changed",
    "The quick brown fox jumps over the lazy dog; internationalization-related refactoring.",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "ubuntu-22.04-x86_64-server-cloudimg-amd64",
    "eslint-plugin-react-hooks@4.6.0",
]


@pytest.mark.parametrize("text", SURVIVORS)
def test_ordinary_identifiers_hashes_dates_paths_and_urls_are_not_redacted(text: str) -> None:
    message = call({"value": text, "nested": [{"text": f"see {text} for details"}]})
    assert redactor().redact_message(message) is message


def test_free_standing_random_ids_are_left_alone_by_the_default_policy() -> None:
    red = redactor()
    keys = ["".join(random.Random(seed).choices(ALNUM, k=32)) for seed in range(50)]
    for key in keys:
        assert red.redact_text(f"use {key} here") == f"use {key} here", key


def test_random_ids_are_secrets_when_their_context_says_so() -> None:
    red = redactor()
    for seed in range(20):
        key = "".join(random.Random(seed).choices(ALNUM, k=32))
        for text in (f"API_KEY={key}", f'"client_secret": "{key}"', f"Authorization: Bearer {key}"):
            assert key not in red.redact_text(text), text
        message = call({"apiKey": key, "note": f"token={key}"})
        assert key not in orjson.dumps(red.redact_message(message)).decode()


def test_random_looking_32_character_keys_are_caught_by_the_opt_in_entropy_rule() -> None:
    red = entropy_redactor()
    keys = ["".join(random.Random(seed).choices(ALNUM, k=32)) for seed in range(50)]
    for key in keys:
        assert red.redact_text(f"use {key} here") != f"use {key} here", key


def test_a_random_segment_of_a_file_path_is_still_caught() -> None:
    red = entropy_redactor()
    for seed in range(20):
        key = "".join(random.Random(seed).choices(ALNUM, k=32))
        for text in (f"/var/lib/app/{key}/config.json", f"~/.cache/tokens/{key}"):
            assert key not in red.redact_text(text), text
            assert red.redact_text(text).startswith(text[:5])  # the rest of the path stays


def test_progress_tokens_and_cursors_survive_even_when_random_looking() -> None:
    token, cursor = varied(32, 7), base64.b64encode(b'{"page": 2, "offset": 100}').decode()
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": 1},
    }
    request = call({"x": 1})
    request["params"]["_meta"] = {"progressToken": token}
    listing = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [], "nextCursor": cursor}}
    red = redactor()
    for message in (
        progress,
        request,
        listing,
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": cursor}},
    ):
        assert red.redact_message(message) is message


def test_base64_images_audio_and_blobs_are_data_not_secrets() -> None:
    small = base64.b64encode(bytes(range(256)) * 2).decode()  # under the entropy max length
    large = base64.b64encode(bytes((i * 7919) % 251 for i in range(6000))).decode()
    result = {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {
            "content": [
                {"type": "image", "data": small, "mimeType": "image/png"},
                {"type": "audio", "data": large, "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": small}},
            ]
        },
    }
    contents = {"jsonrpc": "2.0", "id": 10, "result": {"contents": [{"uri": "file:///b.bin", "blob": small}]}}
    sampling = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {"role": "user", "content": {"type": "image", "data": small, "mimeType": "image/png"}}
            ]
        },
    }
    red = redactor()
    for message in (result, contents, sampling):
        assert red.redact_message(message) is message


def test_token_formats_still_apply_inside_data_fields() -> None:
    token = TOKENS["github classic (ghp_)"]
    result = {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "image", "data": f"{token}"}]}}
    assert redactor().redact_message(result)["result"]["content"][0]["data"] == "[REDACTED:1]"


def test_a_long_random_string_outside_data_fields_is_entropy_scanned_when_entropy_is_on() -> None:
    key = varied(40, 7, BASE64)
    message = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"value": key}}}
    assert redactor().redact_message(message) is message
    assert (
        entropy_redactor().redact_message(message)["result"]["structuredContent"]["value"] == "[REDACTED:1]"
    )


def test_strings_of_alphanumerics_longer_than_the_entropy_limit_are_left_alone() -> None:
    payload = "".join(ALNUM[(i * i + 7 * i) % 62] for i in range(2000))
    message = call({"payload": payload})
    assert redactor().redact_message(message) is message


def test_a_literal_secret_is_also_found_url_encoded_and_inside_base64() -> None:
    value = "p@ss word/" + varied(10, 7)
    red = redactor(env={"DB_PASSWORD": value})
    for prefix in (b"", b"x", b"xy"):
        blob = base64.b64encode(prefix + b"password=" + value.encode() + b";").decode()
        out = red.redact_message({"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"blob": blob}]}})
        decoded = base64.b64decode(out["result"]["contents"][0]["blob"]).decode()  # text: decoded, redacted
        assert decoded == prefix.decode() + "password=[REDACTED:1];"
        encoded = base64.b64encode(b"\x89PNG\x00" + prefix + value.encode() + b"\x00").decode()
        out = red.redact_message({"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"blob": encoded}]}})
        assert "[REDACTED:" in out["result"]["contents"][0]["blob"]  # binary: the base64 form
    quoted = red.redact_text(
        "GET /login?pw=" + value.replace("@", "%40").replace(" ", "%20").replace("/", "%2F")
    )
    assert quoted.startswith("GET /login?pw=[REDACTED:")


def test_the_python_example_in_the_redaction_docs_runs() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "redaction.md").read_text(encoding="utf-8")
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/redaction.md", "exec"), {})


def test_the_env_secrets_are_kept_as_keyed_fingerprints_never_as_values() -> None:
    value = "hunter2-" + varied(12, 5)
    recording = redactor(env={"DB_PASSWORD": value, "HOME": "/home/ada"})
    known = recording.fingerprints()
    assert known is not None and value not in orjson.dumps(known).decode()
    assert known["scheme"] == "blake3-keyed-128" and len(known["values"]) == 1
    assert redactor(env={"HOME": "/home/ada"}).fingerprints() is None
    replaying = redactor(env={}, fingerprints=known)
    for text in (value, f"login with {value} now", "postgres://ada:" + value + "@db/x", f"pw={value}"):
        assert value not in replaying.redact_text(text), text
    message = call({"q": f"note for {value}"})
    assert replaying.redact_message(message)["params"]["arguments"]["q"] == "note for [REDACTED:1]"


@pytest.mark.parametrize(
    "meta",
    [
        None,
        "x",
        {},
        {"scheme": "other"},
        {"scheme": "blake3-keyed-128", "key": "zz", "values": ["a"]},
        {"scheme": "blake3-keyed-128", "key": "00" * 32, "values": "a"},
    ],
)
def test_malformed_fingerprints_are_ignored(meta: Any) -> None:
    message = call({"q": "hello"})
    assert redactor(fingerprints=meta).redact_message(message) is message
