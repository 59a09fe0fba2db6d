"""A random key standing in a name's place, whatever the name (issue 37, ``random-after-name``).

trufflehog's detector tests put most keys after the bare name of a service, not after a secret
word (``acme: "…"``, ``acme '…'``, ``acmeAuth := …``, ``acme token - '…'``). The rule judges the
value (length, entropy, alphabet, not a word, a UUID, a hash under a hash's name, a path…) and the
shape of the place it stands in, never the name's spelling: no list of vendors. Every value here is
generated with a fixed seed, and the names are invented. MCP traffic is full of harmless random
ids (``msg_01…``, ``toolu_…``, request ids, cursors, etags, git SHAs): those must come back as
they were, whatever name stands before them.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy
from tests.redact.credentials import picker, seeded_per_test

RNG = random.Random(37_0042)
LOWER_DIGITS = string.ascii_lowercase + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


pick = picker(RNG)


_draws_of_its_own = seeded_per_test(RNG)


def redact(text: str) -> str:
    return RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)


# (case, the secret, the text: "{s}" marks it). The names are invented service names.
NAMED: list[tuple[str, str, str]] = [
    ("name, colon, double quotes", pick(LOWER_DIGITS, 30), 'zorbly: "{s}"'),
    ("name, colon, bare", pick(ALNUM, 32), "quandrix: {s}"),
    ("name = single quotes", pick(ALNUM, 40), "    fenwick = '{s}'"),
    ("go walrus, quoted, camelCase name", pick(ALNUM, 32), 'apiZephyr := "{s}"'),
    ("go walrus, bare, a weak name", pick(LOWER_DIGITS, 40), "brambleAuth := {s}"),
    ("name - quoted", pick(ALNUM, 64), "wexford - '{s}'"),
    ("two words and a dash", pick(string.ascii_uppercase, 20), "quillon token - '{s}'"),
    ("name and a quoted value, line start", pick(ALNUM, 32), "trovix '{s}' 'https://eu.example.org'"),
    ("name and a quoted value, lower case and digits", pick(LOWER_DIGITS, 16), "\tgrenlo '{s}'"),
    ("name=value in one run", pick(ALNUM, 44), "\t\tmarrow_b={s}"),
    ("upper case and digits, keyword argument", pick(UPPER_DIGITS, 80), "top(scraping_fox = '{s}')"),
    ("dash-joined random groups", "-".join(pick(LOWER_DIGITS, k) for k in (8, 4, 4, 4, 12)), "lorvak '{s}'"),
    ("underscores and dashes", pick(ALNUM, 20) + "_" + pick(ALNUM, 6) + "-" + pick(ALNUM, 8), "ostrel '{s}'"),
    ("json text, a name that says nothing", pick(ALNUM, 36), '{{"pellwood": "{s}"}}'),
]


@pytest.mark.parametrize(("secret", "text"), [(s, t) for _n, s, t in NAMED], ids=[n for n, _s, _t in NAMED])
def test_a_random_key_in_a_names_place_is_replaced_whole(secret: str, text: str) -> None:
    line = text.replace("{s}", secret)
    assert redact(line) == text.replace("{s}", "[REDACTED:1]"), line


def test_a_second_quoted_value_after_a_comma_goes_too() -> None:
    first, second = pick(ALNUM, 20), pick(HEX, 40)
    line = f"gorsedd = '{first}', '{second}'"
    assert redact(line) == "gorsedd = '[REDACTED:1]', '[REDACTED:2]'"


def test_several_names_in_one_text_are_each_found() -> None:
    secrets = [pick(ALNUM, 32) for _ in range(30)]
    text = "\n".join(f"svc{chr(97 + i % 26)}{i}: {s}\nnote: build {i} passed" for i, s in enumerate(secrets))
    out = redact(text)
    assert all(s not in out for s in secrets)
    assert out.count("passed") == 30


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# Harmless random-looking values in a name's place: ids, hashes, cursors, etags, public values.
KEPT = [
    # MCP and vendor ids: a name of an id, or a prefixed id
    f'"id": "msg_01{pick(ALNUM, 22)}"',
    f"tool_use_id: toolu_01{pick(ALNUM, 22)}",
    f'"request_id": "req_{pick(ALNUM, 24)}"',
    f"x-request-id: {pick(HEX, 32)}",
    f'{{"requestId": "{pick(ALNUM, 24)}"}}',
    f"session: {{'spreadsheetId': '{pick(ALNUM, 44)}'}}",
    f'"nextCursor": "{pick(ALNUM, 40)}"',
    f"cursor: {pick(ALNUM, 32)}",
    f'"after": "{_b64(b"cursor:v2:" + bytes(RNG.randrange(256) for _ in range(12)))}"',
    '"state": "' + _b64(b'{"page":3,"size":50,"sort":"name"}') + '"',
    f"offset: itr{pick(ALNUM, 14)}",
    # hashes under a hash's name, and hex without an explicit separator
    f"commit {pick(HEX, 40)}",
    f"commit: {pick(HEX, 40)}",
    f'"sha": "{pick(HEX, 40)}"',
    f"merge_commit_sha = {pick(HEX, 40)}",
    f"shasum: {pick(HEX, 40)}",
    f"checksum: {pick(HEX, 64)}",
    f"Digest: sha256:{pick(HEX, 64)}",
    f"parent {pick(HEX, 40)}",
    f"traceparent: 00-{pick(HEX, 32)}-{pick(HEX, 16)}-01",
    f"trace_id={pick(HEX, 32)}",
    f"relay '{pick(HEX, 40)}'",
    f'plumwick: "{pick(HEX, 40)}"',
    f"SPEC CHECKSUMS:\n  ReactNativeThing: {pick(HEX, 40)}\n  Zorbkit: {pick(HEX, 40)}\n",
    f"sops:\n  mac: ENC[AES256_GCM,data:{pick(ALNUM, 20)}==,iv:{pick(ALNUM, 43)}=,tag:{pick(ALNUM, 22)}==,type:str]",
    f"meraki: abdefghjk0123456789mnopqrstuvwx{pick(HEX, 8)}",
    f"cf-ray: {pick(HEX, 16)}-SJC",
    f'etag: "{pick(HEX, 8)}-{pick(ALNUM, 27)}"',
    f'processed "{pick(HEX, 8)}-{pick(ALNUM + "_-", 27)}"',
    f'"fingerprint": "{pick(ALNUM, 16)}"',
    f"PUBLIC KEY: MFkwEwYHKoZIzj0{pick(ALNUM, 16)}",
    f"commit sha: '{pick(ALNUM, 24)}'",
    f'"signature": "{pick(ALNUM, 120)}"',
    # UUIDs, ULIDs, versions, paths, hosts, e-mail addresses, words
    f"railway = '{pick(HEX, 8)}-{pick(HEX, 4)}-4{pick(HEX, 3)}-a{pick(HEX, 3)}-{pick(HEX, 12)}'",
    f"job: 01{pick('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)}",
    "release: 2024.11.29-rc.1+build.7731",
    "output: /home/runner/work/_temp/a8Kq2mZ9xL3pR7tV/report.json",
    "endpoint: api-7c9f8d6b5.eu-west-1.example.org",
    "contact: svc.bot.7Kq2mZ9xL3pR@example.org",
    "HOSTNAME=web-7c9f8d6b5-x2k4p",
    "pod: payments-api-7c9f8d6b5-x2k4p",
    "module: DetectorType_BrowserStackLocal",
    f"Spreadsheet: 1{pick(ALNUM + '_-', 43)}",
    f"user = '{pick(ALNUM, 20)}'",
    f"Tracking number: 1Z{pick(UPPER_DIGITS, 16)}",
    f'{{"from": "{pick(ALNUM, 44)}", "mint": "{pick(ALNUM, 44)}"}}',
    "summary: getUserProfileSettingsFromCache",
    # a word of a sentence, not a name: no quote and no separator
    f"processed {pick(ALNUM, 32)}",
    f"find {pick(UPPER_DIGITS, 26)}",
    f"Found item {pick(ALNUM, 32)} in the index.",
    f"uploaded to 'bucket' as '{pick(ALNUM, 32)}'",
    # short values: too few characters to tell a key from a name
    f"kanbo '{pick(UPPER_DIGITS, 12)}'",
    f"route: {pick(string.ascii_lowercase, 18)}",
]


@pytest.mark.parametrize("text", KEPT)
def test_harmless_values_in_a_names_place_are_kept(text: str) -> None:
    out = redact(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)


def test_a_policy_without_key_rules_reads_no_name() -> None:
    policy = RedactionPolicy.from_dict({"extends": "none"})
    for _n, secret, text in NAMED:
        line = text.replace("{s}", secret)
        assert policy.redactor().redact_text(line) == line


_NAMES = st.sampled_from(["commit", "sha", "parent", "etag", "digest", "revision", "request_id", "trace"])
_SEPARATORS = st.sampled_from([": ", " = ", "=", ' "', ": '"])


@settings(max_examples=200, deadline=None)
@given(_NAMES, _SEPARATORS, st.binary(min_size=16, max_size=32).map(bytes.hex))
def test_hashes_under_a_hash_or_id_name_are_kept(name: str, separator: str, digest: str) -> None:
    quote = separator.strip(" :=")
    line = f"{name}{separator}{digest}{quote}"
    assert redact(line) == line


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["acme", "zorbly", "svc", "upstream", "build"]), _SEPARATORS, st.uuids().map(str))
def test_uuids_in_a_names_place_are_kept(name: str, separator: str, value: str) -> None:
    quote = separator.strip(" :=")
    line = f"{name}{separator}{value}{quote}"
    assert redact(line) == line


def test_mcp_ids_in_json_text_are_kept() -> None:
    """A tool's JSON output full of ids: every value comes back as it was."""
    import json

    ids = {
        "id": "msg_01" + pick(ALNUM, 22),
        "tool_use_id": "toolu_01" + pick(ALNUM, 22),
        "request_id": "req_" + pick(ALNUM, 24),
        "conversation": "conv_" + pick(ALNUM, 24),
        "nextCursor": pick(ALNUM, 40),
        "etag": f'W/"{pick(HEX, 8)}-{pick(ALNUM, 27)}"',
        "head_sha": pick(HEX, 40),
        "node_id": "PR_kwDO" + pick(ALNUM, 14),
        "uuid": "550e8400-e29b-41d4-a716-446655440000",
        "version": "1.42.0",
    }
    text = json.dumps(ids, indent=2)
    assert redact(text) == text


_INVENTED = st.sampled_from(["zorbly", "quandrix", "fenwick", "trovix", "ostrelio", "marrowby", "pelluxa"])
_SHAPES = st.sampled_from(
    ['{n}: "{v}"', "{n} = '{v}'", '{n} := "{v}"', "{n} - '{v}'", "{n} '{v}'", "{n}={v}"]
)
_KEYS = st.one_of(
    st.text(ALNUM, min_size=20, max_size=64),
    st.text(LOWER_DIGITS, min_size=24, max_size=64),
    st.text(UPPER_DIGITS, min_size=24, max_size=80),
).filter(lambda v: sum(c.isdigit() for c in v) >= 3 and sum(c.isalpha() for c in v) >= 8)


@settings(max_examples=300, deadline=None)
@given(_INVENTED, _SHAPES, _KEYS)
def test_random_keys_after_invented_names_are_replaced(name: str, shape: str, value: str) -> None:
    """Whatever the service's name, a key of random letters and digits in its place goes (a key
    that reads as words, a run of one character or a ULID's shape may be kept: not asserted)."""
    import re

    from harn_mcp_mock.redact.rules import random_key, sequential

    line = shape.format(n=name, v=value)
    out = redact(line)
    ulid = re.fullmatch(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", value)
    if random_key(value) and not sequential(value) and not ulid:
        assert value not in out, line
        assert out == line.replace(value, "[REDACTED:1]"), (line, out)


def test_tool_outputs_full_of_ids_and_hashes_come_back_unchanged() -> None:
    """What developer tools print through MCP: git, docker, kubectl, HTTP headers, lock files,
    paginated JSON. Random-looking, none a credential: the rule must leave all of it."""
    sha = [pick(HEX, 40) for _ in range(4)]
    outputs = [
        f"commit {sha[0]}\nMerge: {sha[1][:7]} {sha[2][:7]}\nAuthor: Ada <ada@example.org>\n\n    fix: retry\n",
        f"tree {sha[1]}\nparent {sha[2]}\nauthor Ada <ada@example.org> 1732870000 +0000\n",
        f"* [new ref]         {sha[3]} -> origin/main\nHEAD is now at {sha[3][:7]} fix: retry",
        f"Digest: sha256:{pick(HEX, 64)}\nStatus: Downloaded newer image for nginx:latest",
        f"NAME                                READY   STATUS\npayments-api-7c9f8d6b5-{pick(LOWER_DIGITS, 5)}   1/1     Running",
        "HTTP/1.1 200 OK\n"
        f'ETag: W/"{pick(HEX, 8)}-{pick(ALNUM + "_-", 27)}"\n'
        f"X-Request-Id: {pick(ALNUM, 32)}\n"
        f"x-amz-request-id: {pick(UPPER_DIGITS, 16)}\n"
        f"traceparent: 00-{pick(HEX, 32)}-{pick(HEX, 16)}-01\n",
        f"PODS:\n  - Alamofire (5.9.1)\n\nSPEC CHECKSUMS:\n  Alamofire: {pick(HEX, 40)}\n\nCOCOAPODS: 1.15.2\n",
        f'{{"items": [{{"id": "rec{pick(ALNUM, 14)}", "createdTime": "2024-11-29T10:00:00.000Z"}}],'
        f' "offset": "itr{pick(ALNUM, 14)}/rec{pick(ALNUM, 14)}"}}',
        f'{{"messages": [{{"ts": "1732870000.123456", "client_msg_id": "{pick(HEX, 8)}-{pick(HEX, 4)}-4{pick(HEX, 3)}-'
        f'8{pick(HEX, 3)}-{pick(HEX, 12)}"}}], "response_metadata": {{"next_cursor": "{pick(ALNUM, 24)}"}}}}',
        f'{{"type": "tool_use", "id": "toolu_01{pick(ALNUM, 22)}", "name": "search", "input": {{}}}}',
    ]
    red = RedactionPolicy.default().redactor(argv=["srv"], env={})
    for text in outputs:
        message = {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": text}]}}
        assert red.redact_message(message) == message, text
