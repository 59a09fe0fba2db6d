"""Policy files: what they add and allow, how they are checked, and the digest."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.errors import RedactionPolicyError
from harn_mcp_mock.redact import RedactionPolicy
from tests.redact.credentials import TOKENS, varied

EXAMPLE: dict[str, Any] = {
    "version": 1,
    "extends": "default",
    "redact": {
        "keys": ["x-internal-key", "re:^internal_"],
        "pointers": ["/params/arguments/ssn", "/result/structuredContent/*/email"],
        "patterns": [{"name": "employee-id", "regex": "EMP-[0-9]{6}"}],
        "env": ["MY_SERVICE_CREDS"],
    },
    "allow": {
        "keys": ["session_id"],
        "pointers": ["/result/content/*/text"],
        "patterns": ["^sk-test-fixture-[a-z]+$"],
    },
    "entropy": {"enabled": True, "min_length": 24, "threshold": 4.0},
}


def write(tmp_path: Path, doc: Any, name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": arguments},
    }


def result(body: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": body}


# --- the built-in default ---------------------------------------------------------------------


def test_the_default_policy_ships_as_package_data_and_is_named_default() -> None:
    raw = resources.files("harn_mcp_mock.redact").joinpath("policies/default.json").read_bytes()
    shipped = orjson.loads(raw)
    policy = RedactionPolicy.default()
    assert policy.name == "default"
    assert shipped["version"] == 1
    assert {p["name"] for p in shipped["redact"]["patterns"]} == {
        p["name"] for p in policy.to_dict()["redact"]["patterns"]
    }
    assert RedactionPolicy.default() is policy


def test_the_default_policy_names_a_rule_for_every_token_format() -> None:
    names = {p["name"] for p in RedactionPolicy.default().to_dict()["redact"]["patterns"]}
    assert names >= {
        "github-token",
        "aws-access-key-id",
        "aws-secret-access-key",
        "openai-api-key",
        "anthropic-api-key",
        "slack-token",
        "google-api-key",
        "jwt",
        "private-key",
        "bearer-token",
        "basic-auth",
        "url-password",
    }


# --- the digest and the effective policy -----------------------------------------------------------


def test_the_digest_is_blake3_of_the_canonical_effective_policy_and_stable() -> None:
    from harn_mcp_mock.store.canonical import digest_json

    policy = RedactionPolicy.default()
    assert policy.digest == "blake3:" + digest_json(policy.to_dict())
    assert policy.digest.startswith("blake3:") and len(policy.digest) == len("blake3:") + 64
    assert RedactionPolicy.from_dict({}).digest == policy.digest
    assert RedactionPolicy.from_dict(policy.to_dict()).digest == policy.digest


def test_the_digest_ignores_order_duplicates_and_case_of_plain_names() -> None:
    a = RedactionPolicy.from_dict({"redact": {"keys": ["B-Key", "a-key", "a-key"], "env": ["X", "y"]}})
    b = RedactionPolicy.from_dict({"redact": {"keys": ["a-key", "b-key"], "env": ["Y", "x"]}})
    assert a.digest == b.digest
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize(
    "change",
    [
        {"redact": {"keys": ["another"]}},
        {"redact": {"pointers": ["/params/x"]}},
        {"redact": {"patterns": [{"name": "p", "regex": "P-[0-9]{4}"}]}},
        {"redact": {"env": ["SOME_VAR"]}},
        {"allow": {"keys": ["k"]}},
        {"allow": {"patterns": ["^x$"]}},
        {"entropy": {"threshold": 4.5}},
        {"entropy": {"enabled": True}},
        {"extends": "none"},
    ],
)
def test_any_change_to_what_the_policy_does_changes_the_digest(change: dict[str, Any]) -> None:
    assert RedactionPolicy.from_dict(change).digest != RedactionPolicy.default().digest


def test_to_dict_is_the_merged_effective_policy_sorted_and_a_fresh_copy() -> None:
    policy = RedactionPolicy.from_dict(EXAMPLE, source="example")
    effective = policy.to_dict()
    default = RedactionPolicy.default().to_dict()
    assert effective["version"] == 1
    assert "extends" not in effective
    assert effective["redact"]["keys"] == sorted(
        {*default["redact"]["keys"], "x-internal-key", "re:^internal_"}
    )
    assert effective["entropy"]["threshold"] == 4.0
    assert effective["entropy"]["max_length"] == default["entropy"]["max_length"]
    names = [p["name"] for p in effective["redact"]["patterns"]]
    assert names == sorted(names) and "employee-id" in names
    effective["redact"]["keys"].clear()
    assert policy.to_dict()["redact"]["keys"]
    orjson.dumps(effective)


def test_extends_none_starts_from_an_empty_policy() -> None:
    policy = RedactionPolicy.from_dict({"extends": "none", "redact": {"keys": ["only-this"]}})
    red = policy.redactor()
    out = red.redact_message(call({"only-this": "x", "password": "kept", "t": TOKENS["openai (sk-)"]}))
    assert out["params"]["arguments"] == {
        "only-this": "[REDACTED:1]",
        "password": "kept",
        "t": TOKENS["openai (sk-)"],
    }


def test_a_user_pattern_with_the_name_of_a_default_one_replaces_it() -> None:
    policy = RedactionPolicy.from_dict({"redact": {"patterns": [{"name": "jwt", "regex": "JWT-[0-9]{8}"}]}})
    assert {"name": "jwt", "regex": "JWT-[0-9]{8}"} in policy.to_dict()["redact"]["patterns"]
    red = policy.redactor()
    assert red.redact_text("a JWT-12345678 b") == "a [REDACTED:1] b"
    assert red.findings == {"jwt": 1}


# --- what a user policy adds -------------------------------------------------------------------------


def test_a_user_policy_adds_keys_pointers_patterns_and_env_names(tmp_path: Path) -> None:
    policy = RedactionPolicy.load(write(tmp_path, EXAMPLE))
    assert policy.name == str(tmp_path / "policy.json")
    red = policy.redactor(env={"MY_SERVICE_CREDS": "creds-" + varied(10, 3)})
    out = red.redact_message(
        call(
            {
                "X-Internal-Key": "abc",
                "internal_ref": 7,
                "ssn": "123-45-6789",
                "note": "employee EMP-004217 uses creds-" + varied(10, 3),
                "password": "still redacted",
            }
        )
    )
    assert out["params"]["arguments"] == {
        "X-Internal-Key": "[REDACTED:1]",
        "internal_ref": "[REDACTED:2]",
        "ssn": "[REDACTED:3]",
        "note": "employee [REDACTED:4] uses [REDACTED:5]",
        "password": "[REDACTED:6]",
    }
    people = result(
        {"structuredContent": [{"name": "Ada", "email": "ada@example.com"}, {"email": "b@example.com"}]}
    )
    assert red.redact_message(people)["result"]["structuredContent"] == [
        {"name": "Ada", "email": "[REDACTED:7]"},
        {"email": "[REDACTED:8]"},
    ]
    assert red.findings["employee-id"] == 1 and red.findings["pointer"] == 3


def test_a_redact_pointer_to_an_object_replaces_every_scalar_below_it() -> None:
    policy = RedactionPolicy.from_dict({"redact": {"pointers": ["/params/arguments/profile"]}})
    out = policy.redactor().redact_message(
        call({"profile": {"name": "Ada", "tags": ["a", 1, True]}, "x": "y"})
    )
    assert out["params"]["arguments"] == {
        "profile": {"name": "[REDACTED:1]", "tags": ["[REDACTED:2]", "[REDACTED:3]", True]},
        "x": "y",
    }


def test_double_star_pointers_match_at_any_depth_and_apply_to_each_message_of_a_batch() -> None:
    policy = RedactionPolicy.from_dict({"redact": {"pointers": ["/**/iban"]}})
    red = policy.redactor()
    batch = [
        call({"account": {"iban": "DE00 1234"}}),
        result({"structuredContent": {"rows": [{"iban": "FR76 5678", "bank": "x"}]}}),
        {"jsonrpc": "2.0", "id": 3, "result": {"iban": "NL91 0000"}},
    ]
    out = red.redact_message(batch)
    assert out[0]["params"]["arguments"]["account"]["iban"] == "[REDACTED:1]"
    assert out[1]["result"]["structuredContent"]["rows"][0] == {"iban": "[REDACTED:2]", "bank": "x"}
    assert out[2]["result"]["iban"] == "[REDACTED:3]"


def test_pointer_segments_can_escape_slash_and_tilde() -> None:
    policy = RedactionPolicy.from_dict({"redact": {"pointers": ["/result/a~1b/c~0d"]}})
    out = policy.redactor().redact_message(result({"a/b": {"c~d": "hide", "c": "keep"}}))
    assert out["result"] == {"a/b": {"c~d": "[REDACTED:1]", "c": "keep"}}


# --- what a user policy allows -------------------------------------------------------------------------


def test_an_allowed_key_beats_a_secret_key_rule() -> None:
    red = RedactionPolicy.from_dict(EXAMPLE).redactor()
    out = red.redact_message(call({"session_id": "s-123456", "sessionId": "s-654321"}))
    assert out["params"]["arguments"] == {"session_id": "s-123456", "sessionId": "[REDACTED:1]"}


def test_an_allowed_pointer_beats_entropy_but_not_token_formats() -> None:
    red = RedactionPolicy.from_dict(EXAMPLE).redactor()
    random_text = "opaque " + varied(40, 7)
    token = TOKENS["github classic (ghp_)"]
    message = result(
        {"content": [{"type": "text", "text": random_text}, {"type": "text", "text": f"x {token}"}]}
    )
    out = red.redact_message(message)
    assert out["result"]["content"][0]["text"] == random_text
    assert out["result"]["content"][1]["text"] == "x [REDACTED:1]"
    assert red.redact_message(result({"other": random_text}))["result"]["other"] == "opaque [REDACTED:2]"


def test_an_allowed_subtree_pointer_beats_a_redact_pointer_and_a_secret_key_inside_it() -> None:
    policy = RedactionPolicy.from_dict(
        {
            "redact": {"pointers": ["/params/arguments/**"]},
            "allow": {"pointers": ["/params/arguments/public/**"]},
        }
    )
    out = policy.redactor().redact_message(
        call({"public": {"password": "shown", "n": 1}, "private": "hidden"})
    )
    assert out["params"]["arguments"] == {"public": {"password": "shown", "n": 1}, "private": "[REDACTED:1]"}


def test_the_nearest_rule_decides_so_a_secret_key_below_an_allowed_key_is_redacted() -> None:
    policy = RedactionPolicy.from_dict({"allow": {"keys": ["metadata"]}})
    out = policy.redactor().redact_message(call({"metadata": {"owner": "ada", "password": "pw-1"}}))
    assert out["params"]["arguments"]["metadata"] == {"owner": "ada", "password": "[REDACTED:1]"}


def test_an_allow_pattern_beats_every_redact_rule() -> None:
    red = RedactionPolicy.from_dict(EXAMPLE).redactor(argv=["srv", "--token", "sk-test-fixture-alpha"])
    out = red.redact_message(call({"password": "sk-test-fixture-beta", "note": "use sk-test-fixture-alpha"}))
    assert out["params"]["arguments"] == {
        "password": "sk-test-fixture-beta",
        "note": "use sk-test-fixture-alpha",
    }
    assert red.redact_argv(["srv", "--token", "sk-test-fixture-alpha"]) == [
        "srv",
        "--token",
        "sk-test-fixture-alpha",
    ]


def test_an_allowed_env_name_keeps_its_value_visible() -> None:
    policy = RedactionPolicy.from_dict({"allow": {"env": ["BUILD_TOKEN"]}})
    value = "build-" + varied(10, 3)
    assert policy.redactor(env={"BUILD_TOKEN": value}).redact_text(value) == value


# --- bad policy files ----------------------------------------------------------------------------------

SECRET_IN_FILE = TOKENS["github classic (ghp_)"]

BAD: list[tuple[Any, str, str]] = [
    ("{", "", "not valid JSON (line 1, column 2)"),
    ([], "", "must be a JSON object"),
    ({"redact": {"keyz": []}}, ":redact.keyz", "unknown field"),
    ({"allow": {"pointerz": []}}, ":allow.pointerz", "unknown field"),
    ({"entropy": {"min_lenght": 9}}, ":entropy.min_lenght", "unknown field"),
    ({"version": 2}, ":version", "newer than this harn-mcp-mock reads"),
    ({"version": 0}, ":version", "must be 1"),
    ({"version": "1"}, ":version", "must be an integer"),
    ({"extends": "strict"}, ":extends", 'must be "default" or "none"'),
    ({"redact": []}, ":redact", "must be a JSON object"),
    ({"redact": {"keys": "password"}}, ":redact.keys", "must be a list of strings"),
    ({"redact": {"keys": ["ok", 3]}}, ":redact.keys[1]", "must be a string"),
    ({"redact": {"keys": [""]}}, ":redact.keys[0]", "must not be empty"),
    ({"redact": {"keys": ["re:(unclosed"]}}, ":redact.keys[0]", "invalid regular expression"),
    ({"redact": {"env": ["re:"]}}, ":redact.env[0]", "'re:' must be followed by a regular expression"),
    ({"redact": {"pointers": ["params/x"]}}, ":redact.pointers[0]", "must start with '/'"),
    ({"redact": {"pointers": ["/a/~2"]}}, ":redact.pointers[0]", "'~' must be followed by 0 or 1"),
    ({"allow": {"pointers": ["/a/x~"]}}, ":allow.pointers[0]", "'~' must be followed by 0 or 1"),
    ({"redact": {"patterns": ["EMP-1"]}}, ":redact.patterns[0]", "must be a JSON object"),
    ({"redact": {"patterns": [{"regex": "x"}]}}, ":redact.patterns[0].name", "missing"),
    ({"redact": {"patterns": [{"name": "n"}]}}, ":redact.patterns[0].regex", "missing"),
    (
        {"redact": {"patterns": [{"name": "n", "regex": "x", "flags": "i"}]}},
        ":redact.patterns[0].flags",
        "unknown field",
    ),
    (
        {"redact": {"patterns": [{"name": "n", "regex": "[x"}]}},
        ":redact.patterns[0].regex",
        "invalid regular expression",
    ),
    (
        {"redact": {"patterns": [{"name": "n", "regex": "x*"}]}},
        ":redact.patterns[0].regex",
        "can match the empty string",
    ),
    (
        {"redact": {"patterns": [{"name": "bad name!", "regex": "x"}]}},
        ":redact.patterns[0].name",
        "must be letters",
    ),
    (
        {"redact": {"patterns": [{"name": "entropy", "regex": "x"}]}},
        ":redact.patterns[0].name",
        "built-in rule",
    ),
    (
        {"redact": {"patterns": [{"name": "a", "regex": "x"}, {"name": "a", "regex": "y"}]}},
        ":redact.patterns[1].name",
        "used twice",
    ),
    ({"allow": {"patterns": ["(?P<"]}}, ":allow.patterns[0]", "invalid regular expression"),
    ({"entropy": {"enabled": "yes"}}, ":entropy.enabled", "must be true or false"),
    ({"entropy": {"min_length": 4}}, ":entropy.min_length", "must be between 8 and 4096"),
    ({"entropy": {"min_length": 24.5}}, ":entropy.min_length", "must be an integer"),
    (
        {"entropy": {"min_length": 100, "max_length": 50}},
        ":entropy.max_length",
        "must not be below entropy.min_length",
    ),
    ({"entropy": {"threshold": 0}}, ":entropy.threshold", "must be above 0 and at most 8"),
    ({"entropy": {"threshold": True}}, ":entropy.threshold", "must be a number"),
    ({"entropy": {"skip_pointers": ["nope"]}}, ":entropy.skip_pointers[0]", "must start with '/'"),
    ({SECRET_IN_FILE: 1}, "", "unknown field (name not shown)"),
    ({"redact": {"keys": ["re:" + SECRET_IN_FILE + "("]}}, ":redact.keys[0]", "invalid regular expression"),
    (
        {"redact": {"patterns": [{"name": SECRET_IN_FILE + "!", "regex": "x"}]}},
        ":redact.patterns[0].name",
        "must be letters",
    ),
    (
        {"redact": {"patterns": [{"name": "n", "regex": SECRET_IN_FILE + "["}]}},
        ":redact.patterns[0].regex",
        "invalid regular",
    ),
    (
        {"version": 1, "redact": {"keys": ["ok"]}, "allow": {"keys": "re:" + SECRET_IN_FILE}},
        ":allow.keys",
        "must be a list of strings",
    ),
]


@pytest.mark.parametrize(("doc", "where", "message"), BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_every_problem_in_a_policy_file_names_the_file_and_the_field(
    tmp_path: Path, doc: Any, where: str, message: str
) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(RedactionPolicyError) as caught:
        RedactionPolicy.load(path)
    text = str(caught.value)
    assert text.startswith(f"{path}{where}: "), text
    assert message in text
    assert "\n" not in text
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("doc", "where", "message"), BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_no_error_about_a_policy_file_quotes_a_value_from_it(
    tmp_path: Path, doc: Any, where: str, message: str
) -> None:
    with pytest.raises(RedactionPolicyError) as caught:
        RedactionPolicy.load(write(tmp_path, doc))
    assert SECRET_IN_FILE not in str(caught.value)
    assert "ghp_" not in str(caught.value)


def test_a_missing_policy_file_is_a_policy_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(RedactionPolicyError, match=r"absent\.json: cannot read the policy file"):
        RedactionPolicy.load(path)


def test_from_dict_names_its_source_in_errors() -> None:
    with pytest.raises(RedactionPolicyError, match=r"^inline:redact\.keyz: unknown field$"):
        RedactionPolicy.from_dict({"redact": {"keyz": []}}, source="inline")


def test_the_documented_example_policy_loads(tmp_path: Path) -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "redaction.md"
    text = doc.read_text(encoding="utf-8")
    block = text.split("```json\n", 1)[1].split("```", 1)[0]
    policy = RedactionPolicy.load(write(tmp_path, block))
    assert policy.digest != RedactionPolicy.default().digest


def test_the_built_in_policy_passes_the_checks_a_user_policy_gets() -> None:
    # The default policy is loaded without compiling its patterns (start-up speed); here it
    # goes through every check a policy file gets, so a broken built-in pattern still fails.
    raw = resources.files("harn_mcp_mock.redact").joinpath("policies/default.json").read_bytes()
    doc = orjson.loads(raw)
    checked = RedactionPolicy.from_dict({**doc, "extends": "none"}, source="default.json")
    assert checked.to_dict() == RedactionPolicy.default().to_dict()


def test_the_precomputed_pattern_facts_are_current() -> None:
    from harn_mcp_mock.redact.gates import index_entries
    from harn_mcp_mock.redact.policy import default_index_patterns

    shipped = orjson.loads(
        resources.files("harn_mcp_mock.redact").joinpath("policies/default.facts.json").read_bytes()
    )
    assert shipped == index_entries(default_index_patterns()), (
        "regenerate: python -c 'from harn_mcp_mock.redact.policy import write_facts_index; write_facts_index()'"
    )


def test_a_pattern_rule_compiles_its_expression_only_when_its_gate_admits_text() -> None:
    from harn_mcp_mock.redact.gates import Text
    from harn_mcp_mock.redact.rules import PatternRule

    rule = PatternRule("t", r"tok_(?P<secret>[A-Za-z0-9]{20})")
    assert rule(Text("nothing to see here")) == []
    assert rule._compiled is None
    assert rule(Text("x tok_abcdefghij0123456789 y")) == [(6, 26, "t")]
    assert rule._compiled is not None


def test_the_precomputed_default_digest_is_the_digest_of_the_default_policy() -> None:
    default = RedactionPolicy.default()
    recomputed = RedactionPolicy(default.to_dict(), "default")
    assert default.digest == recomputed.digest
