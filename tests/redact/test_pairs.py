"""The other half of a credential pair (``credential-pair``): a random id, user or account under an
id-like name is redacted beside a secret another rule found, and kept anywhere else.

Values are generated at run time from fixed seeds (``varied``, ``random.Random``), so this file
holds no credential-shaped text. Each message of the tests holds a pair that must be redacted
and ids that must be kept, so that every test fails on a redactor without the rule.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

import pytest

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.redact.pairs import PAIR_RULE, id_name, random_id
from tests.redact.credentials import varied

LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"

CLIENT = varied(24, 7)  # a mixed-case id
CLIENT_HEX = varied(32, 5, HEX)
USER = varied(20, 11, LOWER_DIGITS)
SECRET = varied(32, 13)
SECRET2 = varied(28, 17)
RESOURCE_UUID = str(uuid.UUID(int=random.Random(37).getrandbits(128)))
SHA = varied(40, 3, HEX)
OTHER = varied(18, 29)


def text_of(text: str) -> str:
    red = RedactionPolicy.default().redactor()
    out = red.redact_message(
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    )
    result: str = out["result"]["content"][0]["text"]
    return result


def joined(*lines: str) -> str:
    return "\n".join(lines)


def assign(name: str, value: str, sep: str = "=") -> str:
    return f"{name}{sep}{value}"


# (text, the id half that must go, values that must stay)
TEXT_PAIRS = [
    pytest.param(
        joined(
            assign("CLIENT_ID", CLIENT_HEX), assign("CLIENT_SECRET", SECRET), assign("REQUEST_ID", CLIENT)
        ),
        CLIENT_HEX,
        [CLIENT],
        id="env lines: a hex client id beside its secret (a request id kept)",
    ),
    pytest.param(
        f"box id = '{CLIENT}' box secret = '{SECRET}' trace_id = '{USER}'",
        CLIENT,
        [USER],
        id="one line: spaced names (a trace id kept)",
    ),
    pytest.param(
        joined("api:", f'  vendor_id: "{USER}"', f'  vendor_secret: "{SECRET}"', f'  vendor_build: "{SHA}"'),
        USER,
        [SHA],
        id="yaml: lower-case letters and digits",
    ),
    pytest.param(
        joined(f"[DEBUG] Using acme ID={CLIENT}", f"[DEBUG] Using acme password={SECRET}", "[INFO] 200 OK"),
        CLIENT,
        ["200"],
        id="log lines: a bare ID= one line from the secret",
    ),
    pytest.param(
        joined(f'acmeID := "{CLIENT}"', f'acmeToken := "{SECRET}"', f'commitID := "{SHA}"'),
        CLIENT,
        [SHA],
        id="go: camelCase ID (a commit hash kept)",
    ),
    pytest.param(
        joined("<cred>", f"  <username>{USER}</username>", f"  <password>{SECRET}</password>", "</cred>"),
        USER,
        ["cred"],
        id="xml: a user element beside a password element",
    ),
    pytest.param(
        json.dumps({"accessId": CLIENT, "accessKey": SECRET, "clusterName": "prod-eu-1"}, indent=2),
        CLIENT,
        ["prod-eu-1"],
        id="json text: an access id beside its key",
    ),
    pytest.param(
        joined(
            assign("account", USER, ": "),
            assign("api_token", SECRET, ": "),
            assign("version", "2.14.1", ": "),
        ),
        USER,
        ["2.14.1"],
        id="an account beside a token (a version kept)",
    ),
]


@pytest.mark.parametrize(("text", "pair", "kept"), TEXT_PAIRS)
def test_the_id_half_beside_a_secret_in_text_is_redacted_and_its_neighbours_kept(
    text: str, pair: str, kept: list[str]
) -> None:
    out = text_of(text)
    assert SECRET not in out
    assert pair not in out
    for value in kept:
        assert value in out


# (text, the pair's id that must go, an id that must stay though it is under an id name)
TEXT_KEPT = [
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), "", assign("user_id", USER)),
        USER,
        id="a blank line ends the group",
    ),
    pytest.param(
        joined(
            assign("client_id", CLIENT),
            assign("client_secret", SECRET),
            "# one",
            "# two",
            assign("account_id", USER),
        ),
        USER,
        id="three lines away",
    ),
    pytest.param(
        json.dumps([{"client_id": CLIENT, "client_secret": SECRET}, {"user_id": USER, "name": "ada"}]),
        USER,
        id="minified json: an id in the next object",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), assign("org_id", RESOURCE_UUID)),
        RESOURCE_UUID,
        id="a UUID, paired or not",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), assign("user", "ada.lovelace")),
        "ada.lovelace",
        id="a user name made of words",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), assign("user", "admin2024")),
        "admin2024",
        id="a word and a number",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), assign("user_id", "1234567890")),
        "1234567890",
        id="a number",
    ),
    pytest.param(
        joined(
            assign("client_id", CLIENT),
            assign("client_secret", SECRET),
            assign("account", "/srv/data/x1y2z3"),
        ),
        "/srv/data/x1y2z3",
        id="a path",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("password", SECRET), assign("key_id", SHA)),
        SHA,
        id="a hex id whose name shares no word with the secret's",
    ),
    pytest.param(
        joined(
            assign("client_id", CLIENT),
            assign("client_secret", SECRET),
            assign("username", base64.b64encode(b"deploy-bot").decode()),
        ),
        base64.b64encode(b"deploy-bot").decode(),
        id="base64 of a name (a Kubernetes Secret's data)",
    ),
    pytest.param(
        joined(assign("client_id", CLIENT), assign("client_secret", SECRET), assign("user", "$DB_USER")),
        "$DB_USER",
        id="a template",
    ),
]


@pytest.mark.parametrize(("text", "kept"), TEXT_KEPT)
def test_ids_outside_the_pair_structure_or_not_random_are_kept(text: str, kept: str) -> None:
    out = text_of(text)
    assert SECRET not in out and CLIENT not in out  # the pair itself goes
    assert kept in out


def test_a_lone_id_and_an_id_beside_a_harmless_value_are_kept() -> None:
    text = joined(assign("client_id", CLIENT), assign("user_id", USER), assign("mode", "fast"))
    assert text_of(text) == text
    message = {"jsonrpc": "2.0", "id": 1, "params": {"client_id": CLIENT, "userId": USER, "name": "prod"}}
    assert RedactionPolicy.default().redactor().redact_message(message) is message


def test_in_a_json_object_the_id_beside_a_replaced_secret_gets_its_own_placeholder() -> None:
    red = RedactionPolicy.default().redactor()
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "params": {
            "arguments": {
                "resource": {"id": RESOURCE_UUID, "name": "db"},
                "service": {"client_id": CLIENT, "client_secret": SECRET, "requestId": USER},
                "other": {"client_id": SHA, "label": "x"},
            }
        },
    }
    out = red.redact_message(message)
    args = out["params"]["arguments"]
    assert out["id"] == 7
    assert args["resource"] == {"id": RESOURCE_UUID, "name": "db"}  # a UUID in another object
    assert args["service"]["client_secret"] == "[REDACTED:1]"
    assert args["service"]["client_id"] == "[REDACTED:2]"
    assert args["service"]["requestId"] == USER  # no credential's id
    assert args["other"] == {"client_id": SHA, "label": "x"}  # no secret beside it
    assert red.findings.get(PAIR_RULE) == 1
    # The id is remembered: where it comes back, it gets the same number.
    echo = red.redact_message({"jsonrpc": "2.0", "id": 8, "result": {"note": f"client {CLIENT} ok"}})
    assert echo["result"]["note"] == "client [REDACTED:2] ok"


def test_an_id_beside_a_text_that_holds_a_secret_is_kept() -> None:
    red = RedactionPolicy.default().redactor()
    message = {
        "userId": USER,
        "note": f"logged in with password={SECRET}",
        "login": {"user": CLIENT, "password": SECRET2},
    }
    out = red.redact_message(message)
    assert out["userId"] == USER  # the note is no credential's value: only a whole secret makes a pair
    assert out["note"] == "logged in with password=[REDACTED:1]"
    assert out["login"] == {"user": "[REDACTED:3]", "password": "[REDACTED:2]"}


def test_an_objects_own_id_beside_a_secret_is_kept() -> None:
    red = RedactionPolicy.default().redactor()
    row = {"id": CLIENT, "_id": OTHER, "username": USER, "password": SECRET}
    assert red.redact_message(row) == {
        "id": CLIENT,
        "_id": OTHER,
        "username": "[REDACTED:2]",
        "password": "[REDACTED:1]",
    }
    text = json.dumps({"id": CLIENT, "login": USER, "password": SECRET})
    assert text_of(text) == json.dumps({"id": CLIENT, "login": "[REDACTED:1]", "password": "[REDACTED:2]"})


def test_numbers_and_uuids_beside_a_secret_stay_in_a_json_object() -> None:
    red = RedactionPolicy.default().redactor()
    message = {"id": 7, "user_id": 123456789, "org_id": RESOURCE_UUID, "app_id": CLIENT, "token": SECRET}
    out = red.redact_message(message)
    assert out == {
        "id": 7,
        "user_id": 123456789,
        "org_id": RESOURCE_UUID,
        "app_id": "[REDACTED:2]",
        "token": "[REDACTED:1]",
    }


def test_generated_pairs_are_redacted_and_generated_harmless_ids_kept() -> None:
    rng = random.Random(3700)
    names = [
        ("client_id", "client_secret"),
        ("app_id", "app_secret"),
        ("user", "password"),
        ("key_id", "api_key"),
    ]
    for _ in range(200):
        id_name_, secret_name = rng.choice(names)
        alphabet = rng.choice(
            [string.ascii_letters + string.digits, LOWER_DIGITS, string.ascii_uppercase + string.digits]
        )
        ident = "".join(rng.choice(alphabet) for _ in range(rng.randint(10, 40)))
        if sum(c.isdigit() for c in ident) < 3 or sum(c.isalpha() for c in ident) < 3:
            continue
        secret = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32)) + "9aZ"
        harmless = rng.choice(
            [str(rng.randint(1, 10**12)), str(uuid.UUID(int=rng.getrandbits(128))), "ada", "1.2.3"]
        )
        sep = rng.choice(["=", ": ", " = ", ":="])
        text = joined(f"{id_name_}{sep}{ident}", f"{secret_name}{sep}{secret}", f"trace_id{sep}{harmless}")
        out = text_of(text)
        assert ident not in out and secret not in out, text
        assert harmless in out, text


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("client_id", ["client"]),
        ("CLIENT_ID", ["client"]),
        ("bulksmsID", ["bulksms"]),
        ("auth0_clientID", ["auth", "0", "client"]),
        ("userName", []),
        ("ID", []),
        ("request_id", None),
        ("traceId", None),
        ("valid", None),
        ("uuid", None),
        ("secret", None),
    ],
)
def test_id_names(name: str, stem: list[str] | None) -> None:
    assert id_name(name) == stem


@pytest.mark.parametrize(
    ("value", "paired", "expected"),
    [
        (CLIENT, False, True),
        (USER, False, True),
        ("cxq7wm2v", False, True),
        (CLIENT_HEX, False, False),
        (CLIENT_HEX, True, True),
        (RESOURCE_UUID, True, False),
        ("api2cart", False, False),
        ("admin2024", False, False),
        ("ada.lovelace", False, False),
        ("2026-11-29T03:00:00Z", False, False),
        ("v1.22.3", False, False),
        ("https://example.com/a1b2c3d4", False, False),
        ("store-one.example.com", False, False),
        ("XXXXXXXXXXXXXXXX", False, False),
        ("${CLIENT_ID}", False, False),
        ("myServiceName", False, False),
    ],
)
def test_random_ids(value: str, paired: bool, expected: bool) -> None:
    assert random_id(value, paired=paired) is expected
