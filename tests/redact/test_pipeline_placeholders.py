"""One placeholder number per secret value, whichever channel carries it (docs/redaction.md,
"same secret, same number"): the command line (``--header``, a secret flag, ``NAME=value``), the
server's environment, HTTP headers, message bodies and free text of one recording.

Values are assembled at run time (``varied``) so that this file holds no credential-shaped text.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from harn_mcp_mock.redact import RedactionPolicy
from tests.redact.credentials import varied

TOKEN = "tq-" + varied(26, 7)
KEY = "kz-" + varied(20, 11)
NUMBER = re.compile(r"\[REDACTED:(\d+)\]")


def echo(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["--url", "http://127.0.0.1/mcp", "--header", f"Authorization: Bearer {TOKEN}"], {}),
        (["--url", "http://127.0.0.1/mcp", "--header", f"authorization:Bearer {TOKEN}"], {}),
        (["srv", "--auth-token", f"Bearer {TOKEN}"], {}),
        (["srv", f"--api-token=Bearer {TOKEN}"], {}),
        (["srv", f"API_TOKEN=Bearer {TOKEN}"], {}),
        (["srv"], {"SERVICE_TOKEN": f"Bearer {TOKEN}"}),
    ],
    ids=["header", "header-lowercase", "flag", "flag-equals", "env-style-arg", "env"],
)
def test_a_bearer_token_has_one_number_in_every_channel(argv: list[str], env: dict[str, str]) -> None:
    red = RedactionPolicy.default().redactor(argv=argv, env=env)
    shown = " ".join(red.redact_argv(argv))
    written = [
        shown,
        red.redact_message(echo(f"Authorization: Bearer {TOKEN}; bare {TOKEN}"))["result"]["content"][0][
            "text"
        ],
        red.redact_message({"headers": {"Authorization": f"Bearer {TOKEN}", "x-echo": f"Bearer {TOKEN}"}}),
        red.redact_text(f"error: token {TOKEN} refused"),
        red.redact_message({"params": {"client_secret": f"Bearer {TOKEN}"}}),
    ]
    text = str(written)
    assert TOKEN not in text
    assert set(NUMBER.findall(text)) == {"1"}, written
    assert "Bearer [REDACTED:1]" in written[1] and "bare [REDACTED:1]" in written[1]


def test_header_values_and_their_echoes_share_numbers_in_any_order() -> None:
    argv = [
        "--url",
        "http://127.0.0.1/mcp",
        "--header",
        f"X-Api-Key:{KEY}",
        "--header",
        f"Authorization: Bearer {TOKEN}",
    ]
    red = RedactionPolicy.default().redactor(argv=argv)
    body = red.redact_message(echo(f"{TOKEN} then Authorization: Bearer {TOKEN} and {KEY}"))
    shown = red.redact_argv(argv)
    assert shown[3] == "X-Api-Key:[REDACTED:2]" and shown[5] == "Authorization: Bearer [REDACTED:1]", shown
    text = body["result"]["content"][0]["text"]
    assert text == "[REDACTED:1] then Authorization: Bearer [REDACTED:1] and [REDACTED:2]", text
