"""A secret written as a name/value pair in text (``name-value-pair``, issue 37).

``{"name": "DB_PASSWORD", "value": "…"}`` (Kubernetes ``env`` lists, ECS task definitions, Azure
``secrets`` arrays, SSM parameters, Postman environments) printed in a tool's text, as JSON, a
Python literal, escaped JSON or YAML: the value goes when the name is a secret's; values under
other names, templates and empty values stay. All values are made up here.
"""

from __future__ import annotations

import random
import string

import pytest

from harn_mcp_mock.redact import RedactionPolicy

RNG = random.Random(3739)
ALNUM = string.ascii_letters + string.digits


def pick(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


V = pick(ALNUM, 20) + "+" + pick(ALNUM, 11)

# (case, text with {v} where the secret stands)
CAUGHT: list[tuple[str, str]] = [
    (
        "kubernetes env list as JSON",
        '"env": [{"name": "DB_PASSWORD", "value": "{v}"}, {"name": "MODE", "value": "x"}]',
    ),
    ("azure secrets array", '"secrets":[{"name":"registry-password","value":"{v}"}]}'),
    ("postman environment", '{"key": "client_secret", "value": "{v}", "enabled": true}'),
    ("value first, title case", '{"Value": "{v}", "Name": "ApiKey"}'),
    ("python literal, a path as the name", "{'Value': '{v}', 'Name': '/prod/db/password'}"),
    ("escaped json in a string", '"{\\"name\\":\\"api-key\\",\\"value\\":\\"{v}\\"}"'),
    ("yaml env list", "env:\n- name: DB_PASSWORD\n  value: {v}\n- name: MODE\n  value: fast\n"),
    ("yaml, quoted value", "  - name: API_TOKEN\n    value: '{v}'\n"),
]

KEPT = [
    '[{"name": "LOG_LEVEL", "value": "debug"}, {"name": "APP_NAME", "value": "Zx9q8Lm7Kp2Wv4Nb"}]',
    '{"key": "page_token", "value": "Zx9q8Lm7Kp2Wv4Nb6Tr"}',
    '{"name": "password", "value": ""}',
    '{"name": "password", "value": "${DB_PASSWORD}"}',
    '{"name": "db_password", "value": "required"}',
    "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef: {name: app, key: token}\n",
    "- name: REPLICAS\n  value: '3'\n",
]


@pytest.mark.parametrize(("case", "text"), CAUGHT, ids=[c for c, _t in CAUGHT])
def test_the_value_of_a_secret_named_pair_goes(case: str, text: str) -> None:
    red = RedactionPolicy.default().redactor()
    out = red.redact_text(text.replace("{v}", V))
    assert out == text.replace("{v}", "[REDACTED:1]"), case


@pytest.mark.parametrize("text", KEPT)
def test_pairs_under_other_names_templates_and_empty_values_stay(text: str) -> None:
    assert RedactionPolicy.default().redactor().redact_text(text) == text


def test_a_tool_result_loses_the_value_and_keeps_the_names() -> None:
    text = "deployment env:\n" + CAUGHT[0][1].replace("{v}", V)
    message = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}]}}
    out = RedactionPolicy.default().redactor().redact_message(message)["result"]["content"][0]["text"]
    assert V not in out and '"name": "DB_PASSWORD"' in out and '"value": "x"' in out
