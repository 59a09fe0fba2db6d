"""A planted secret never appears in any byte ``harn mcp mock record`` writes.

Real peers (``@modelcontextprotocol/server-everything``, driven by the official ``mcp`` SDK
client) are recorded through ``python -m harn_mcp_mock record`` with fake but format-valid
secrets planted where secrets really leak from:

* the server's environment (a ``GITHUB_TOKEN``, and a password in no known format whose only
  tell is its variable's name), which server-everything's ``get-env`` tool prints;
* the server's argv (``--api-key <key>`` and ``--token=<value in no known format>``, through a
  tiny wrapper script that drops the flags and execs the real server);
* a tool argument, echoed back in the tool output (``echo``);
* a tool output over 4 KiB, which lands in the CAS sidecar instead of the cassette;
* the journal of a recorder killed mid-session (before it could finish the cassette), and the
  cassette ``harn mcp mock recover`` makes of it.

Each test first proves the secret really crossed the wire (the client saw it), then reads every
file under its ``tmp_path`` (cassette, sidecar blobs, journal, the recorder's captured stderr)
as bytes and checks that neither the secret nor its JSON-escaped, URL-encoded or base64 forms
occur anywhere; then that redaction placeholders (``[REDACTED:n]``) stand where the secrets were,
so no test passes vacuously, and that one secret got one placeholder number throughout a cassette.

The secrets are assembled at run time so that this source file holds none.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import signal
import string
import subprocess
import sys
import sysconfig
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import orjson
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client
from mcp.client.stdio import stdio_client

from harn_mcp_mock.cassette.model import Cassette, Message, cas_dir, journal_path, load_cassette
from harn_mcp_mock.store.cas import INLINE_THRESHOLD
from tests.e2e import scenarios
from tests.e2e.peers import WAIT

pytestmark = pytest.mark.e2e

ALNUM = string.ascii_letters + string.digits


def _varied(length: int, step: int, alphabet: str = ALNUM) -> str:
    """A deterministic, non-repeating-looking run of ``length`` characters."""
    return "".join(alphabet[(i * step + 3) % len(alphabet)] for i in range(length))


# Fake, format-valid credentials, assembled here so that no scanner flags this file.
GITHUB_PAT = "ghp_" + _varied(36, 7)
OPENAI_KEY = "sk-" + _varied(48, 11)
AWS_KEY_ID = "AKIA" + "HARNFAKE" + _varied(8, 5, string.ascii_uppercase + string.digits)
# Secrets in no known format: only where they come from (a secret-named env var, a secret-named
# flag) says they are secrets; the redactor must then also find them anywhere else.
DB_PASSWORD = "hunter2-" + "harn-e2e-db"
ARGV_TOKEN = "harn-e2e-sesame-" + "argv"

PLACEHOLDER = re.compile(r"\[REDACTED:(\d+)\]")
PLACEHOLDER_BYTES = b"[REDACTED:"

WRAPPER = '''\
"""Drop `--api-key VALUE` and `--token=VALUE` from the argv, note our pid if asked, exec the server."""
import os
import sys

args = [arg for arg in sys.argv[1:] if not arg.startswith("--token=")]
if "--api-key" in args:
    at = args.index("--api-key")
    del args[at : at + 2]
pid_file = os.environ.get("HARN_E2E_PID_FILE")
if pid_file:
    with open(pid_file, "w") as out:
        out.write(str(os.getpid()))
os.execv(args[0], args)
'''


# --- recording a session ---------------------------------------------------------------------


def record_argv(cassette: Path, command: list[str]) -> list[str]:
    return [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", *command]


@dataclass
class Session:
    results: list[dict[str, Any]]
    """What the client got from each tool call (the unredacted wire)."""
    path: Path
    cassette: Cassette
    stderr: bytes
    """The recorder's stderr (and the server's, which it inherits)."""

    def calls(self, tool: str) -> list[Message]:
        return [
            m
            for m in self.cassette.messages
            if m.direction == "client" and m.method == "tools/call" and m.message["params"]["name"] == tool
        ]

    def answer_to(self, request: Message) -> Message:
        [answer] = [m for m in self.cassette.messages if m.reply_to == request.seq]
        return answer


async def _call_tools(
    command: list[str],
    calls: list[tuple[str, dict[str, Any]]],
    *,
    env: Mapping[str, str] | None,
    errlog: IO[str],
) -> list[dict[str, Any]]:
    params = scenarios.server_parameters(command, env)
    results: list[dict[str, Any]] = []
    with anyio.fail_after(WAIT):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:  # type: ignore[arg-type]
            for name, arguments in calls:
                results.append(scenarios.dump(await client.call_tool(name, arguments)))
    return results


async def record_session(
    folder: Path,
    command: list[str],
    calls: list[tuple[str, dict[str, Any]]],
    *,
    env: Mapping[str, str] | None = None,
) -> Session:
    """Call ``calls`` on ``command`` through the recorder, recording into ``folder``."""
    path = folder / "session.cassette.json"
    stderr_path = folder / "recorder.stderr"
    with stderr_path.open("w", encoding="utf-8") as errlog:
        results = await _call_tools(record_argv(path, command), calls, env=env, errlog=errlog)
    assert not journal_path(path).exists(), "the recording was not finished"
    return Session(results, path, load_cassette(path), stderr_path.read_bytes())


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


# --- scanning what was written ---------------------------------------------------------------


def secret_forms(secret: str) -> dict[str, bytes]:
    """The byte strings that would betray ``secret``: as is, escaped, encoded.

    For base64, the secret may start at any of three alignments inside a larger encoded text;
    for each, the part of the encoding that depends on the secret's bytes alone is kept.
    """
    raw = secret.encode()
    forms = {
        "raw": raw,
        "json": json.dumps(secret)[1:-1].encode(),
        "json-ascii": json.dumps(secret, ensure_ascii=True)[1:-1].encode(),
        "url": urllib.parse.quote(secret, safe="").encode(),
        "utf-16": secret.encode("utf-16-le"),
    }
    for shift in range(3):
        encoded = base64.b64encode(b"\x00" * shift + raw)
        core = encoded[4 if shift else 0 : -4]
        forms[f"base64+{shift}"] = core
        forms[f"base64url+{shift}"] = core.replace(b"+", b"-").replace(b"/", b"_")
    return forms


def written_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def assert_never_written(root: Path, secrets: Mapping[str, str]) -> list[Path]:
    """No file under ``root`` holds any form of any of ``secrets``; returns the files read."""
    files = written_files(root)
    leaks = []
    for path in files:
        data = path.read_bytes()
        for name, secret in secrets.items():
            for form, needle in secret_forms(secret).items():
                if needle in data:
                    leaks.append(f"{path.relative_to(root)}: {name} ({form})")
    assert leaks == [], "secrets written to disk:\n" + "\n".join(leaks)
    return files


def all_recorded_bytes(path: Path) -> bytes:
    """The cassette (or its journal) and every sidecar blob, concatenated."""
    parts = [path.read_bytes() if path.exists() else journal_path(path).read_bytes()]
    sidecar = cas_dir(path)
    if sidecar.exists():
        parts.extend(blob.read_bytes() for blob in sorted(sidecar.iterdir()))
    return b"\n".join(parts)


def placeholder_numbers(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def the_placeholder(text: str) -> str:
    """The one placeholder number in ``text`` (however many times it occurs)."""
    numbers = set(placeholder_numbers(text))
    assert len(numbers) == 1, f"expected one placeholder in {text[:300]!r}, found {sorted(numbers)}"
    return numbers.pop()


def numbers_in(values: Iterable[bytes]) -> set[str]:
    found: set[str] = set()
    for value in values:
        found.update(m.decode() for m in re.findall(rb"\[REDACTED:(\d+)\]", value))
    return found


# --- the tests -------------------------------------------------------------------------------


async def test_secrets_in_the_servers_environment_are_never_written(
    everything_command: list[str], tmp_path: Path
) -> None:
    session = await record_session(
        tmp_path,
        everything_command,
        [
            ("get-env", {}),
            ("echo", {"message": f"my token is {GITHUB_PAT}"}),
            ("echo", {"message": f"connect using {DB_PASSWORD} now"}),
        ],
        env={"GITHUB_TOKEN": GITHUB_PAT, "HARN_E2E_DB_PASSWORD": DB_PASSWORD},
    )
    env_result, token_echo, password_echo = session.results

    # On the wire: the server really had the secrets in its environment and printed them.
    printed = json.loads(_text(env_result))
    assert printed["GITHUB_TOKEN"] == GITHUB_PAT
    assert printed["HARN_E2E_DB_PASSWORD"] == DB_PASSWORD
    assert _text(token_echo) == f"Echo: my token is {GITHUB_PAT}"
    assert _text(password_echo) == f"Echo: connect using {DB_PASSWORD} now"

    secrets = {"GITHUB_TOKEN": GITHUB_PAT, "HARN_E2E_DB_PASSWORD": DB_PASSWORD}
    files = assert_never_written(tmp_path, secrets)
    assert session.path in files
    assert GITHUB_PAT.encode() not in session.stderr and DB_PASSWORD.encode() not in session.stderr

    # In the cassette: a placeholder where each value was, the same one in every message.
    [get_env] = session.calls("get-env")
    recorded_env = json.loads(_text(session.answer_to(get_env).message["result"]))
    token = the_placeholder(recorded_env["GITHUB_TOKEN"])
    password = the_placeholder(recorded_env["HARN_E2E_DB_PASSWORD"])
    assert recorded_env["GITHUB_TOKEN"] == f"[REDACTED:{token}]"
    assert recorded_env["HARN_E2E_DB_PASSWORD"] == f"[REDACTED:{password}]"
    assert token != password
    assert recorded_env["TZ"] == "UTC"  # the rest of the environment is kept
    token_call, password_call = session.calls("echo")
    expected = [
        (token_call, f"my token is [REDACTED:{token}]"),
        # The password has no known format: only knowing the server's environment finds it here.
        (password_call, f"connect using [REDACTED:{password}] now"),
    ]
    for call, message in expected:
        assert call.message["params"]["arguments"]["message"] == message
        assert _text(session.answer_to(call).message["result"]) == f"Echo: {message}"
    assert numbers_in([all_recorded_bytes(session.path)]) == {token, password}
    assert sum(session.cassette.meta["redaction"]["findings"].values()) >= 6


async def test_secrets_in_the_server_argv_are_never_written(
    everything_command: list[str], tmp_path: Path
) -> None:
    wrapper = tmp_path / "argv_wrapper.py"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    command = [
        sys.executable,
        str(wrapper),
        "--api-key",
        OPENAI_KEY,
        f"--token={ARGV_TOKEN}",
        *everything_command,
    ]
    message = f"the key from argv: {OPENAI_KEY}, and the token: {ARGV_TOKEN}"
    session = await record_session(tmp_path, command, [("echo", {"message": message})])
    # On the wire: the wrapped server started, and the client sent the secrets and got them back.
    assert _text(session.results[0]) == f"Echo: {message}"

    secrets = {"--api-key": OPENAI_KEY, "--token=": ARGV_TOKEN}
    files = assert_never_written(tmp_path, secrets)
    assert session.path in files
    assert OPENAI_KEY.encode() not in session.stderr and ARGV_TOKEN.encode() not in session.stderr

    # meta.command keeps the argv's shape with the values replaced, and the same secrets in a
    # message get the same placeholders.
    recorded = session.cassette.meta["command"]
    assert len(recorded) == len(command)
    key = the_placeholder(recorded[3])
    token = the_placeholder(recorded[4])
    assert key != token
    assert recorded == [
        sys.executable,
        str(wrapper),
        "--api-key",
        f"[REDACTED:{key}]",
        f"--token=[REDACTED:{token}]",
        *everything_command,
    ]
    [echo] = session.calls("echo")
    sent = f"the key from argv: [REDACTED:{key}], and the token: [REDACTED:{token}]"
    assert echo.message["params"]["arguments"]["message"] == sent
    assert _text(session.answer_to(echo).message["result"]) == f"Echo: {sent}"
    assert numbers_in([all_recorded_bytes(session.path)]) == {key, token}

    # `show` prints the (redacted) command: still no secret.
    with anyio.fail_after(WAIT):
        shown = await anyio.run_process(
            [*_harn(), "mcp", "mock", "show", "--cassette", str(session.path)], check=False
        )
    assert shown.returncode == 0, shown.stderr
    for secret in secrets.values():
        assert secret.encode() not in shown.stdout + shown.stderr
    assert f"--api-key [REDACTED:{key}] --token=[REDACTED:{token}]".encode() in shown.stdout


async def test_secrets_in_a_tool_argument_and_its_output_are_never_written(
    everything_command: list[str], tmp_path: Path
) -> None:
    first = f"deploy with {AWS_KEY_ID} and {OPENAI_KEY}, then rotate {AWS_KEY_ID}"
    second = f"still {OPENAI_KEY}"
    session = await record_session(
        tmp_path,
        everything_command,
        [("echo", {"message": first}), ("echo", {"message": second})],
    )
    # On the wire: request and response both carried the secrets.
    assert [_text(r) for r in session.results] == [f"Echo: {first}", f"Echo: {second}"]

    assert_never_written(tmp_path, {"AWS key id": AWS_KEY_ID, "OpenAI key": OPENAI_KEY})
    assert AWS_KEY_ID.encode() not in session.stderr and OPENAI_KEY.encode() not in session.stderr

    calls = session.calls("echo")
    assert len(calls) == 2
    sent = [c.message["params"]["arguments"]["message"] for c in calls]
    match = re.fullmatch(
        r"deploy with \[REDACTED:(\d+)\] and \[REDACTED:(\d+)\], then rotate \[REDACTED:\1\]", sent[0]
    )
    assert match, sent[0]
    aws, openai = match.groups()
    assert aws != openai  # two secrets, two placeholders; the repeated one kept its number
    assert sent[1] == f"still [REDACTED:{openai}]"  # and across messages
    # The output is the argument echoed: redacted identically.
    for call, message in zip(calls, sent, strict=True):
        assert _text(session.answer_to(call).message["result"]) == f"Echo: {message}"
    assert numbers_in([all_recorded_bytes(session.path)]) == {aws, openai}


async def test_a_secret_in_a_large_output_is_redacted_inside_the_cas_blob(
    everything_command: list[str], tmp_path: Path
) -> None:
    filler = "lorem ipsum dolor sit amet " * 200
    message = f"{filler}{GITHUB_PAT} {filler}"
    assert len(message.encode()) > 2 * INLINE_THRESHOLD
    session = await record_session(tmp_path, everything_command, [("echo", {"message": message})])
    assert _text(session.results[0]) == f"Echo: {message}"

    files = assert_never_written(tmp_path, {"GITHUB_PAT": GITHUB_PAT})
    blobs = [p for p in files if p.parent == cas_dir(session.path)]
    # Both the request and the response went to the sidecar, redacted inside the blob.
    document = orjson.loads(session.path.read_bytes())
    spilled = {entry["blob"]["blake3"] for entry in document["messages"] if "blob" in entry}
    [echo] = session.calls("echo")
    answer = session.answer_to(echo)
    for msg in (echo, answer):
        entry = document["messages"][msg.seq]
        assert "blob" in entry and "message" not in entry, f"seq {msg.seq} was not spilled to the CAS"
    assert {p.name for p in blobs} == spilled
    redacted_blobs = [p for p in blobs if PLACEHOLDER_BYTES in p.read_bytes()]
    assert len(redacted_blobs) >= 2
    assert PLACEHOLDER_BYTES not in session.path.read_bytes()  # the placeholders are in the blobs

    sent = echo.message["params"]["arguments"]["message"]
    number = the_placeholder(sent)
    assert sent == f"{filler}[REDACTED:{number}] {filler}"
    assert _text(answer.message["result"]) == f"Echo: {sent}"


# --- a recorder killed mid-session -----------------------------------------------------------


def _harn() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / "harn"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from harn_mcp_mock.cli.main import harn_main; harn_main()"]


def _wait_for_exit(pid: int) -> None:
    """Block until process ``pid`` (not our child) is gone, bounded; no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], WAIT)
        assert ready, f"process {pid} still running after {WAIT}s"
    finally:
        os.close(fd)


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


async def test_a_killed_recorders_journal_and_the_recovered_cassette_hold_no_secret(
    everything_command: list[str], tmp_path: Path
) -> None:
    wrapper = tmp_path / "argv_wrapper.py"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    pid_file = tmp_path / "server.pid"
    cassette = tmp_path / "killed.cassette.json"
    command = record_argv(
        cassette, [sys.executable, str(wrapper), "--api-key", OPENAI_KEY, *everything_command]
    )
    env = {
        **os.environ,
        **scenarios.BASE_SERVER_ENV,
        "GITHUB_TOKEN": GITHUB_PAT,
        "HARN_E2E_PID_FILE": str(pid_file),
    }
    secrets = {"argv": OPENAI_KEY, "env": GITHUB_PAT, "argument": AWS_KEY_ID}
    message = f"{AWS_KEY_ID} / {GITHUB_PAT} / {OPENAI_KEY}"

    with (tmp_path / "recorder.stderr").open("wb") as errlog, anyio.fail_after(WAIT):
        process = await anyio.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env
        )
        async with process:
            try:
                assert process.stdin is not None and process.stdout is not None
                reader = BufferedByteReceiveStream(process.stdout)

                async def answer(request_id: int) -> dict[str, Any]:
                    while True:
                        got = orjson.loads(await reader.receive_until(b"\n", 1 << 22))
                        if got.get("id") == request_id and "method" not in got:
                            return dict(got)

                init = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "e2e", "version": "0"},
                }
                await process.stdin.send(
                    _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
                )
                assert "result" in await answer(1)
                await process.stdin.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                call = {"name": "echo", "arguments": {"message": message}}
                await process.stdin.send(
                    _line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
                )
                echoed = await answer(2)
                assert echoed["result"]["content"][0]["text"] == f"Echo: {message}"  # the secrets crossed
            finally:
                process.kill()  # SIGKILL: no chance to finish the cassette
                await process.wait()
    assert process.returncode == -signal.SIGKILL
    # The server got SIGTERM (PR_SET_PDEATHSIG) when the recorder died.
    await anyio.to_thread.run_sync(_wait_for_exit, int(pid_file.read_text()))

    assert not cassette.exists() and journal_path(cassette).exists()
    files = assert_never_written(tmp_path, secrets)
    assert journal_path(cassette) in files
    assert PLACEHOLDER_BYTES in journal_path(cassette).read_bytes()

    unfinished = load_cassette(cassette)
    assert not unfinished.complete
    number = the_placeholder(unfinished.meta["command"][3])
    [sent] = [m for m in unfinished.messages if m.method == "tools/call"]
    numbers = placeholder_numbers(sent.message["params"]["arguments"]["message"])
    assert len(numbers) == 3 and len(set(numbers)) == 3
    assert numbers[2] == number  # the argv secret, seen again in a message

    with anyio.fail_after(WAIT):
        recovered = await anyio.run_process(
            [*_harn(), "mcp", "mock", "recover", "--cassette", str(cassette)], check=False
        )
    assert recovered.returncode == 0, recovered.stderr
    assert not any(
        form in recovered.stdout + recovered.stderr
        for s in secrets.values()
        for form in secret_forms(s).values()
    )
    assert cassette.exists() and not journal_path(cassette).exists()
    assert_never_written(tmp_path, secrets)
    finished = load_cassette(cassette)
    assert finished.meta["exit"]["reason"] == "recorder-died"
    assert [m.message for m in finished.messages] == [m.message for m in unfinished.messages]
