"""Fake but format-valid credentials for the redaction tests, assembled at run time.

Nothing here is a real secret, and no literal in this file has the shape of one, so secret
scanners stay quiet about the repository.
"""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"
BASE64 = ALNUM + "+/"


def varied(length: int, step: int, alphabet: str = ALNUM) -> str:
    """A deterministic, random-looking run of ``length`` characters of ``alphabet``."""
    return "".join(alphabet[(i * step + 3) % len(alphabet)] for i in range(length))


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(obj)).rstrip(b"=").decode()


def pem_private_key() -> str:
    begin, end = "-----BEGIN ", "-----END "
    body = "\n".join(varied(64, step, BASE64) for step in (3, 5, 7, 11))
    return f"{begin}RSA PRIVATE KEY-----\n{body}\n{varied(24, 13, BASE64)}==\n{end}RSA PRIVATE KEY-----"


TOKENS: dict[str, str] = {
    "github classic (ghp_)": "ghp_" + varied(36, 7),
    "github oauth (gho_)": "gho_" + "A" * 36,
    "github user-to-server (ghu_)": "ghu_" + varied(36, 5),
    "github server-to-server (ghs_)": "ghs_" + varied(36, 11),
    "github refresh (ghr_)": "ghr_" + varied(36, 13),
    "github fine-grained (github_pat_)": "github_pat_" + varied(22, 3) + "_" + varied(59, 5),
    "aws access key id (AKIA)": "AKIA" + "HARNFAKE" + varied(8, 5, UPPER_DIGITS),
    "aws temporary key id (ASIA)": "ASIA" + varied(16, 7, UPPER_DIGITS),
    "openai (sk-)": "sk-" + varied(48, 11),
    "openai project (sk-proj-)": "sk-proj-" + varied(40, 3, URLSAFE) + varied(40, 9),
    "anthropic (sk-ant-)": "sk-ant-api03-" + varied(90, 7, URLSAFE) + "AA",
    "slack bot (xoxb-)": "xoxb-" + "1234567890-987654321012-" + varied(24, 5),
    "slack user (xoxp-)": "xoxp-" + "1234567890-1234567890-" + varied(32, 3),
    "google api key (AIza)": "AIza" + varied(35, 9, URLSAFE),
    "jwt": _b64url({"alg": "HS256", "typ": "JWT"})
    + "."
    + _b64url({"sub": "1234567890", "name": "Ada"})
    + "."
    + varied(43, 7, URLSAFE),
}
"""Credentials found by their format alone, wherever they are."""

AWS_SAK = varied(40, 7, BASE64)
BEARER_VALUE = varied(40, 13, URLSAFE)
BASIC_VALUE = base64.b64encode(b"ada:s3cret-pw!").decode()
URL_PW = "pw-" + varied(12, 5)
PEM = pem_private_key()

# (The texts are put together so that these lines do not read as "name = secret" themselves.)
IN_CONTEXT: dict[str, tuple[str, str]] = {
    "aws secret access key": (" = ".join(("aws_secret_access_key", AWS_SAK)), AWS_SAK),
    "bearer value": ("Authorization: Bearer " + BEARER_VALUE, BEARER_VALUE),
    "basic value": (
        "curl -H 'Authorization: Basic " + BASIC_VALUE + "' https://api.example.com",
        BASIC_VALUE,
    ),
    "url password": ("postgres://admin:" + URL_PW + "@db.example.com:5432/app", URL_PW),
    "pem private key": ("the key:\n" + PEM + "\n", PEM.splitlines()[1]),
}
"""(text holding a credential, the secret part of it) for credentials known by their context."""


# A service's config dump (issue 37): values of varied length and characters.
CONFIG_SPECIALS = "+/=.*?|^${"  # regex metacharacters and base64's; none ends an assignment's value
_QUOTES = ("", '"', "'")


def config_secret(rng: random.Random) -> str:
    """A random secret-looking value, 16 to 80 characters, starting with a letter or digit."""
    length = rng.randint(16, 80)
    body = [rng.choice(ALNUM) for _ in range(length)]
    for _ in range(rng.randint(1, 6)):
        body[rng.randrange(1, length)] = rng.choice(CONFIG_SPECIALS)
    return "".join(body)


def config_dump(secrets: list[str], rng: random.Random) -> str:
    """``NAME=value`` lines (the value bare or quoted), each followed by a sentence repeating it bare."""
    lines = []
    for i, value in enumerate(secrets):
        quote = rng.choice(_QUOTES)
        lines.append(f"SERVICE_{i}_TOKEN={quote}{value}{quote}")
        lines.append(f"The service connects with {value} as its credential.")
    return "\n".join(lines)


def test_the_redaction_test_sources_hold_no_credential_in_a_known_format() -> None:
    from pathlib import Path

    from harn_mcp_mock.redact import RedactionPolicy

    formats = RedactionPolicy.default().to_dict()["redact"]["patterns"]
    redactor = RedactionPolicy.from_dict({"extends": "none", "redact": {"patterns": formats}}).redactor()
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        assert redactor.redact_text(source) == source, f"{path.name} holds something that looks like a secret"


def seeded_per_test(rng: random.Random) -> Any:
    """An autouse fixture (assign it to a module-level name) that seeds ``rng`` with each test's
    name: what a test draws does not depend on which tests ran before it in the same worker
    (pytest-xdist splits a module its own way)."""
    import pytest  # (the benchmarks import this module too)

    @pytest.fixture(autouse=True)
    def _draws_of_its_own(request: pytest.FixtureRequest) -> None:
        rng.seed(request.node.name)

    return _draws_of_its_own


def picker(rng: random.Random) -> Callable[[str, int], str]:
    """``pick(alphabet, n)``: ``n`` characters of ``alphabet`` drawn from ``rng``, with a digit and
    a letter when it has both."""

    def pick(alphabet: str, n: int) -> str:
        out = [rng.choice(alphabet) for _ in range(n)]
        digits = [c for c in alphabet if c.isdigit()]
        letters = [c for c in alphabet if c.isalpha()]
        if digits and not any(c.isdigit() for c in out):
            out[n // 2] = rng.choice(digits)
        if letters and not any(c.isalpha() for c in out):
            out[n // 3] = rng.choice(letters)
        return "".join(out)

    return pick


_SERVER = """
import json, sys
texts = json.load(open(sys.argv[1], encoding="utf-8"))
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "samples", "version": "1"}}
    elif msg.get("method") == "tools/list":
        result = {"tools": [{"name": "read", "inputSchema": {"type": "object"}}]}
    else:
        text = texts[msg["params"]["arguments"]["i"]]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def record_texts(tmp_path: Path, texts: list[str], *, timeout: float = 60) -> bytes:
    """Every byte ``harn mcp mock record``, run as a real process, writes for a session whose
    tool results are ``texts`` (one call each, from a server of our own): the cassette, its CAS
    blobs and whatever else lands in its folder, joined. (The redaction benchmark's end-to-end
    check records the corpora's samples through it too.)"""
    (tmp_path / "server.py").write_text(_SERVER)
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    messages: list[dict[str, object]] = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}]
    messages.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    messages += [
        {
            "jsonrpc": "2.0",
            "id": i + 1,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"i": i}},
        }
        for i in range(len(texts))
    ]
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "record",
        "--quiet",
        "--cassette",
        str(out / "s.cassette.json"),
    ]
    cmd += ["--", sys.executable, str(tmp_path / "server.py"), str(tmp_path / "texts.json")]
    stdin = "".join(json.dumps(m) + "\n" for m in messages).encode()
    done = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(b'"result"') == len(texts) + 1
    return b"\n".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())
