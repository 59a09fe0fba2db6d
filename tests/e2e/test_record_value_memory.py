"""Value memory through real processes: a value identified as a secret once is never written.

``python -m harn_mcp_mock record`` records tests/servers/memory_server.py (an MCP server on the
official SDK) driven by the official SDK client, over stdio (with ``--emit-tape``) and over
Streamable HTTP (``record --url --header ...``). Each secret here is in no known format: only
one spot tells it is a secret (a client argument under a secret name, ``NAME=value`` text, a
``--header`` value). It then comes back elsewhere, free-standing: in the same text before the
spot that told, in later messages of both directions, in a log notification, a tool error, a
text over 4 KiB (a sidecar blob), URL-encoded and inside base64; and one secret is named only in
a *later* message than the one that first carried it. Every byte written (cassette, sidecar
blobs, tape and its sidecars, the recorder's stderr) is scanned for each secret raw, JSON-escaped,
URL-encoded and base64-encoded. The secrets are assembled at run time: this file holds none.
"""

from __future__ import annotations

import base64
import os
import random
import re
import signal
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.tape import load_tape
from tests.e2e import scenarios
from tests.e2e.test_record_secrets import assert_never_written, secret_forms
from tests.redact.credentials import config_dump, config_secret

pytestmark = pytest.mark.e2e

WAIT = 60
SERVER = str(Path(__file__).parents[1] / "servers" / "memory_server.py")


def _made(seed: int, n: int = 14) -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(alphabet[(i * seed + seed * seed) % len(alphabet)] for i in range(n))


CLIENT_TOKEN = "mem-" + _made(7)  # told by a client argument `api_token`
EARLY = "e4rly-" + _made(11)  # told by `FOO_API_KEY=` after it already stood in the same text
LATE = "l4te-" + _made(13)  # carried free in message 1, told only by a later `password`
SHORT = "hunter2"  # 7 characters, letters and a digit: still chased


def _calls() -> list[tuple[str, dict[str, Any]]]:
    wrapped = base64.b64encode(f"user:{CLIENT_TOKEN}".encode()).decode()
    return [
        ("echo", {"text": f"remember {LATE} for later"}),
        ("configure", {"settings": {"api_token": CLIENT_TOKEN, "db": {"password": SHORT}}}),
        ("echo", {"text": f"loaded value {CLIENT_TOKEN} from vault; the db says {SHORT}!"}),
        ("echo", {"text": f"see {EARLY} below; FOO_API_KEY={EARLY}"}),
        ("echo", {"text": f"again {EARLY}, {CLIENT_TOKEN}{SHORT} glued"}),
        ("log", {"text": f"query ?q={urllib.parse.quote(CLIENT_TOKEN + '/x')} and {wrapped}"}),
        ("fail", {"text": f"the token {CLIENT_TOKEN}"}),
        ("big", {"text": f"deep inside {CLIENT_TOKEN} and {EARLY}, {LATE}"}),
        ("configure", {"settings": {"password": LATE}}),
        ("echo", {"text": f"and {LATE} once more"}),
    ]


async def _drive(client: Client) -> list[str]:
    said = []
    for name, arguments in _calls():
        result = await client.call_tool(name, arguments)
        said.append(str(scenarios.dump(result)))
    return said


def _all_forms_absent(folder: Path, *, tape_too: bool) -> None:
    secrets = {"client token": CLIENT_TOKEN, "early": EARLY, "late": LATE}
    assert_never_written(folder, secrets)
    # A 7-character secret's base64 forms are too short to be its own: raw, escaped and encoded.
    data = b"\n".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())
    for form in ("raw", "json", "url"):
        assert secret_forms(SHORT)[form] not in data, form
    if tape_too:
        assert any(p.name.startswith("m.tape") for p in folder.iterdir()), "the tape was scanned"


async def test_stdio_a_value_told_once_is_redacted_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cassette, tape = out / "m.cassette.json", out / "m.tape.jsonl"
    command = [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette)]
    command += ["--emit-tape", str(tape), "--", sys.executable, SERVER]
    params = scenarios.server_parameters(command)
    with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(WAIT):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            said = await _drive(client)
    assert CLIENT_TOKEN in said[2] and EARLY in said[3] and LATE in said[0]  # they crossed the wire
    # LATE went to the tape, its sidecar (the `big` answer) and the journal before it was told:
    # the recording's end redacts the cassette, its blobs and the tape again, and drops the
    # blobs that held it. (The recorder's stderr is the server's too: not scanned.)
    _all_forms_absent(out, tape_too=True)
    assert any(p.is_file() for p in (out / "m.tape.jsonl.cas").iterdir())  # a payload over 4 KiB
    tape_text = tape.read_text()
    assert "[REDACTED:" in tape_text
    for record in load_tape(tape):
        for name in ("request", "response", "payload"):
            if name in record.fields:
                record.payload(name)  # the digests follow the payloads: verified on read
    text = cassette.read_text()
    numbers = set(re.findall(r"\[REDACTED:(\d+)\]", text))
    assert len(numbers) >= 4, numbers  # CLIENT_TOKEN, SHORT, EARLY, LATE (one number each)
    recorded = load_cassette(cassette)
    assert recorded.meta["redaction"]["fingerprints"]["values"]


UPSTREAM_KEY = "upk-" + _made(17)  # a --header value in no known format
SSWS_TOKEN = "00" + _made(19, 38)  # an Okta-style SSWS token, told only by its header


def _first_line(proc: subprocess.Popen[bytes]) -> str:
    """The URL a child prints as its first line (it exits, closing stdout, if it cannot start)."""
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    assert line.startswith("http://127.0.0.1:"), line
    return line


async def _drive_http(url: str) -> list[str]:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("echo", {"text": f"the key is {UPSTREAM_KEY} and the token {SSWS_TOKEN}"}),
        ("configure", {"settings": {"api_token": CLIENT_TOKEN}}),
        ("log", {"text": f"later {CLIENT_TOKEN} and {urllib.parse.quote(UPSTREAM_KEY)}"}),
        ("big", {"text": f"deep {SSWS_TOKEN}"}),
    ]
    with anyio.fail_after(WAIT):
        async with Client(url, mode="legacy") as client:
            return [str(scenarios.dump(await client.call_tool(name, args))) for name, args in calls]


def test_http_header_values_and_what_they_told_are_never_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cassette = out / "h.cassette.json"
    env = {**os.environ, "UPSTREAM_KEY": UPSTREAM_KEY}
    upstream = subprocess.Popen(
        [sys.executable, SERVER, "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        upstream_url = _first_line(upstream)
        recorder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harn_mcp_mock",
                "record",
                "--cassette",
                str(cassette),
                "--url",
                upstream_url,
                "--header",
                f"X-Upstream-Key:{UPSTREAM_KEY}",
                "--header",
                f"Authorization: SSWS {SSWS_TOKEN}",
                "--header",
                "User-Agent: memory-test/1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            url = _first_line(recorder)
            said = anyio.run(_drive_http, url)
        finally:
            recorder.send_signal(signal.SIGINT)
            _, stderr = recorder.communicate(timeout=WAIT)
    finally:
        upstream.terminate()
        upstream.communicate(timeout=WAIT)
    assert UPSTREAM_KEY in said[0] and CLIENT_TOKEN in said[1]  # they crossed the wire
    assert recorder.returncode == 0, stderr.decode()[-2000:]
    (out / "recorder.stderr").write_bytes(stderr)
    assert_never_written(out, {"header": UPSTREAM_KEY, "ssws": SSWS_TOKEN, "client token": CLIENT_TOKEN})
    recorded = load_cassette(cassette)
    command = recorded.meta["command"]
    assert "X-Upstream-Key:[REDACTED:1]" in command and "Authorization: SSWS [REDACTED:2]" in command
    assert "User-Agent: memory-test/1" in command  # a harmless header stays readable
    assert recorded.meta["http"], "the HTTP exchanges were kept"


def _rpc(i: int, method: str, **params: Any) -> bytes:
    import json

    return json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n"


def _call(proc: subprocess.Popen[bytes], i: int, method: str, **params: Any) -> dict[str, Any]:
    """Send one request to the recorder and read lines until its answer (notifications pass)."""
    import json

    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_rpc(i, method, **params))
    proc.stdin.flush()
    for line in proc.stdout:
        answer = json.loads(line)
        if answer.get("id") == i:
            return dict(answer)
    raise AssertionError(f"the recorder closed its output before answering request {i}")


def _handshake(proc: subprocess.Popen[bytes]) -> None:
    """The classic handshake: ``initialize`` (answered), then ``notifications/initialized``."""
    _call(
        proc,
        0,
        "initialize",
        protocolVersion="2025-06-18",
        capabilities={},
        clientInfo={"name": "t", "version": "1"},
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


def late_session(proc: subprocess.Popen[bytes]) -> None:
    """LATE travels free (plain, inside base64, in a text over 4 KiB), then a `password` tells it."""
    _handshake(proc)
    wrapped = base64.b64encode(f"user:{LATE}".encode()).decode()
    calls = [
        ("echo", {"text": f"remember {LATE} for later"}),
        ("echo", {"text": f"basic {wrapped}"}),
        ("big", {"text": f"deep inside {LATE}"}),
        ("configure", {"settings": {"password": LATE}}),
    ]
    for i, (name, arguments) in enumerate(calls, start=1):
        answer = _call(proc, i, "tools/call", name=name, arguments=arguments)
        assert "result" in answer, answer


def start_recording(out: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "record",
        "--quiet",
        "--cassette",
        str(out / "s.cassette.json"),
    ]
    command += ["--emit-tape", str(out / "s.tape.jsonl"), "--", sys.executable, SERVER]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_recording_stopped_by_a_signal_writes_no_value_told_later(
    tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proc = start_recording(out)
    try:
        late_session(proc)
        proc.send_signal(sig)
        # stdin stays open until the recorder has ended: only the signal ends the recording
        # (communicate() would close it at once, and a recorder that reads that EOF before it
        # runs its signal handler takes the signal as "stop now": the server gets SIGTERM, 143)
        proc.wait(timeout=WAIT)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    finally:
        proc.kill()
        proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    assert (out / "s.cassette.json").exists() and not (out / "s.cassette.json.journal").exists()
    assert_never_written(out, {"late": LATE})  # cassette, its blobs, the tape and its blobs
    assert (out / "s.tape.jsonl.cas").is_dir()


@pytest.mark.slow
def test_a_killed_recording_is_recovered_with_the_memory_its_journal_carries(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cassette = out / "s.cassette.json"
    proc = start_recording(out)
    try:
        late_session(proc)
        proc.kill()  # SIGKILL: no handler runs, nothing is redacted again
        proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    journal = cassette.with_name(cassette.name + ".journal")
    # What a kill leaves (docs/redaction.md): the journal and the tape as written, LATE's first
    # mentions in clear; the journal also holds the fingerprints of what the recorder had learned.
    assert LATE.encode() in journal.read_bytes()
    assert any(b'"learned"' in line for line in journal.read_bytes().splitlines()[1:])
    before = {int(n) for n in re.findall(r"\[REDACTED:(\d+)\]", journal.read_text())}
    assert LATE.encode() in (out / "s.tape.jsonl").read_bytes()  # the tape too, as written
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "recover", "--cassette", str(cassette)],
        capture_output=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert not journal.exists()
    # Recovery finds LATE by its fingerprint where it stands as a word, then chases it in every
    # form (inside base64 too), and drops the blob of the long answer that held it; the tape the
    # journal names, and its sidecar, are redacted again with the same memory.
    assert b"tape " in done.stderr and b"redacted again" in done.stderr
    assert_never_written(out, {"late": LATE})
    # The fingerprint does not say which placeholder the value had: it gets a number of its own,
    # after those in use (never one that stands for another secret).
    [request] = [m for m in load_cassette(cassette).requests() if m.id == 1]
    first = request.message["params"]["arguments"]["text"]
    assert first == f"remember [REDACTED:{max(before) + 1}] for later", first


def test_a_config_dump_of_200_secrets_each_repeated_bare_leaves_none_on_disk(tmp_path: Path) -> None:
    """A tool result of 200 ``NAME=value`` lines, each followed by a sentence repeating its value
    bare (issue 37: past about 16 the bare repeats were written in clear). Only the server says
    them: the client asks for a file's text by its path."""
    rng = random.Random(37)
    secrets = [config_secret(rng) for _ in range(200)]
    dump = tmp_path / "service.env"
    dump.write_text(config_dump(secrets, rng))
    out = tmp_path / "out"
    out.mkdir()
    proc = start_recording(out)
    try:
        _handshake(proc)
        answer = _call(proc, 1, "tools/call", name="config", arguments={"path": str(dump)})
        said = str(answer["result"])
        assert all(s in said for s in secrets)  # they crossed the wire
        _, stderr = proc.communicate(timeout=WAIT)  # the client's EOF ends the recording
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr.decode()[-2000:]
    assert (out / "s.cassette.json").exists() and (out / "s.tape.jsonl").exists()
    assert any((out / "s.cassette.json.cas").iterdir())  # the dump went to a CAS blob
    files = assert_never_written(out, {f"secret {i}": s for i, s in enumerate(secrets)})
    assert any(p.parent.name == "s.tape.jsonl.cas" for p in files)  # the tape's sidecar was read


ARGV_TOKEN = "av-" + _made(23, 24)  # the server's `--auth-token "Bearer <token>"`
ENV_TOKEN = "ev-" + _made(29, 24)  # the server's `SERVICE_TOKEN="Bearer <token>"`
_ONE = r"\[REDACTED:(\d+)\]"


def test_stdio_one_number_per_secret_across_argv_env_messages_and_tape(tmp_path: Path) -> None:
    """docs/redaction.md, "same secret, same number": a token given to the server as
    ``Bearer <token>`` on its command line and in its environment, echoed in a tool result with
    its scheme word and bare, has one number in the cassette's command, its messages and the
    tape (it had two: the whole ``Bearer <token>`` was a literal of its own)."""
    out = tmp_path / "out"
    out.mkdir()
    cassette, tape = out / "s.cassette.json", out / "s.tape.jsonl"
    command = [sys.executable, "-m", "harn_mcp_mock", "record", "--quiet", "--cassette", str(cassette)]
    command += [
        "--emit-tape",
        str(tape),
        "--",
        sys.executable,
        SERVER,
        "--auth-token",
        f"Bearer {ARGV_TOKEN}",
    ]
    env = {**os.environ, "SERVICE_TOKEN": f"Bearer {ENV_TOKEN}"}
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        _handshake(proc)
        text = (
            f"Authorization: Bearer {ARGV_TOKEN}; bare {ARGV_TOKEN}; env Bearer {ENV_TOKEN}, bare {ENV_TOKEN}"
        )
        answer = _call(proc, 1, "tools/call", name="echo", arguments={"text": text})
        assert ARGV_TOKEN in str(answer)  # it crossed the wire
        _, stderr = proc.communicate(timeout=WAIT)  # stdin closed: the recording ends
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr.decode()[-2000:]
    assert_never_written(out, {"argv": ARGV_TOKEN, "env": ENV_TOKEN})
    recorded = load_cassette(cassette)
    [shown] = [a for a in recorded.meta["command"] if "Bearer" in a]
    argv_number = re.fullmatch(r"Bearer " + _ONE, shown)
    assert argv_number, shown
    a = argv_number[1]
    shape = rf"Authorization: Bearer \[REDACTED:{a}\]; bare \[REDACTED:{a}\]; env Bearer {_ONE}, bare {_ONE}"
    for written in (cassette.read_text(), tape.read_text()):
        echoed = re.findall(shape, written.replace('\\"', '"'))
        assert echoed and all(e == echoed[0][0] and e != a for pair in echoed for e in pair), echoed


def test_http_one_number_per_secret_across_headers_command_and_messages(tmp_path: Path) -> None:
    """A bearer token given with ``record --header`` (the HTTP transport's request header) and
    echoed by the server, with its scheme word and bare: one number in the cassette's command and
    its messages (the echo with ``Bearer`` got a number of its own)."""
    out = tmp_path / "out"
    out.mkdir()
    cassette = out / "h.cassette.json"
    env = {**os.environ, "UPSTREAM_KEY": UPSTREAM_KEY}
    upstream = subprocess.Popen(
        [sys.executable, SERVER, "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        upstream_url = _first_line(upstream)
        headers = [
            "--header",
            f"X-Upstream-Key:{UPSTREAM_KEY}",
            "--header",
            f"Authorization: Bearer {ARGV_TOKEN}",
        ]
        recorder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harn_mcp_mock",
                "record",
                "--cassette",
                str(cassette),
                "--url",
                upstream_url,
                *headers,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            url = _first_line(recorder)

            async def drive() -> str:
                text = f"Authorization: Bearer {ARGV_TOKEN}; bare {ARGV_TOKEN}; key {UPSTREAM_KEY}"
                with anyio.fail_after(WAIT):
                    async with Client(url, mode="legacy") as client:
                        return str(scenarios.dump(await client.call_tool("echo", {"text": text})))

            said = anyio.run(drive)
        finally:
            recorder.send_signal(signal.SIGINT)
            _, stderr = recorder.communicate(timeout=WAIT)
    finally:
        upstream.terminate()
        upstream.communicate(timeout=WAIT)
    assert ARGV_TOKEN in said
    assert recorder.returncode == 0, stderr.decode()[-2000:]
    assert_never_written(out, {"header": UPSTREAM_KEY, "bearer": ARGV_TOKEN})
    command = load_cassette(cassette).meta["command"]
    key = re.fullmatch(r"X-Upstream-Key:" + _ONE, command[3])
    bearer = re.fullmatch(r"Authorization: Bearer " + _ONE, command[5])
    assert key and bearer, command
    k, b = key[1], bearer[1]
    text = cassette.read_text()
    shape = rf"Authorization: Bearer \[REDACTED:{b}\]; bare \[REDACTED:{b}\]; key \[REDACTED:{k}\]"
    assert re.search(shape, text), re.findall(r"Authorization: [^;]*; bare [^;]*; key \S*", text)
