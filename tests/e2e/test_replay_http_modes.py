"""``replay --http`` in every record mode, with the official SDK client over Streamable HTTP and
real servers: mcp-server-time (stdio, the live server after ``--``) and server-everything (its
Streamable HTTP transport, the live server given by ``--url``).

* ``once`` records when the cassette is missing (while serving), and replays it after;
* ``new_episodes`` answers what the cassette holds and forwards the rest to the live server
  (after ``--`` and at ``--url``), appending it: a later ``--mode none --strict`` serves both;
* ``all`` re-records an existing cassette;
* ``--emit-tape`` writes a replay's exchanges over HTTP to an event tape.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.tape.fidelity import compare
from harn_mcp_mock.tape.model import load_tape
from tests.e2e.peers import WAIT
from tests.e2e.test_verify_unchanged import everything_http  # noqa: F401  (a fixture)
from tests.http.test_replay_server_sessions import stop
from tests.serving import url_process

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CONVERT = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``harn mcp mock replay --http ARGS`` as a child process: (process, URL)."""
    with url_process(["replay", "--http", *args]) as (proc, url):
        yield proc, url


def methods(cassette: Path) -> list[str]:
    """The methods of the client requests a cassette holds, in order."""
    return [
        str(m.method)
        for m in load_cassette(cassette).messages
        if m.direction == "client" and m.kind == "request"
    ]


def tool_calls(cassette: Path) -> list[Any]:
    return [
        m.message["params"]["name"]
        for m in load_cassette(cassette).messages
        if m.direction == "client" and m.kind == "request" and m.method == "tools/call"
    ]


async def time_session(url: str, *, convert: bool) -> list[str]:
    """The SDK over Streamable HTTP: list the tools, then (``convert``) convert a time."""
    with anyio.fail_after(WAIT):
        async with mcp.Client(url, mode="legacy") as client:
            listed = await client.list_tools()
            seen = sorted(tool.name for tool in listed.tools)
            if convert:
                result = await client.call_tool("convert_time", CONVERT)
                assert not result.is_error
                (content,) = result.content
                assert content.type == "text"
                seen.append(orjson.loads(content.text)["target"]["timezone"])
    return seen


async def everything_session(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    with anyio.fail_after(WAIT):
        async with mcp.Client(url, mode="legacy") as client:
            texts = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error
                content = result.content[0]
                assert content.type == "text"
                texts.append(content.text)
    return texts


def report_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(path.read_bytes())
    return data


def test_once_records_through_the_stdio_server_then_replays(time_command: list[str], tmp_path: Path) -> None:
    cassette = tmp_path / "time.cassette.json"
    with serving("--mode", "once", "--cassette", str(cassette), "--", *time_command) as (proc, url):
        recorded = anyio.run(lambda: time_session(url, convert=True))
        stop(proc)
    assert recorded == ["convert_time", "get_current_time", "Asia/Tokyo"]
    assert methods(cassette)[0] == "initialize" and tool_calls(cassette) == ["convert_time"]

    report = tmp_path / "report.json"
    args = ["--mode", "once", "--strict", "--cassette", str(cassette), "--report", str(report)]
    with serving(*args, "--", *time_command) as (proc, url):
        replayed = anyio.run(lambda: time_session(url, convert=True))
        stop(proc)
    assert replayed == recorded
    summary = report_of(report)
    assert summary["ok"] is True and summary["recorded"] == 0, summary  # nothing went live


def test_new_episodes_forwards_what_the_cassette_lacks_to_the_stdio_server(
    time_command: list[str], tmp_path: Path
) -> None:
    cassette = tmp_path / "time.cassette.json"
    with serving("--mode", "all", "--cassette", str(cassette), "--", *time_command) as (proc, url):
        anyio.run(lambda: time_session(url, convert=False))
        stop(proc)
    assert tool_calls(cassette) == []

    report = tmp_path / "episodes.json"
    args = ["--mode", "new_episodes", "--cassette", str(cassette), "--report", str(report)]
    with serving(*args, "--", *time_command) as (proc, url):
        mixed = anyio.run(lambda: time_session(url, convert=True))
        stop(proc)
    assert mixed == ["convert_time", "get_current_time", "Asia/Tokyo"]
    summary = report_of(report)
    assert summary["recorded"] == 1 and summary["misses"] == [], summary  # only the call went live
    assert tool_calls(cassette) == ["convert_time"]  # appended

    strict = ["--strict", "--cassette", str(cassette), "--report", str(report)]
    with serving(*strict) as (proc, url):
        assert anyio.run(lambda: time_session(url, convert=True)) == mixed
        stop(proc)
    assert report_of(report)["misses"] == []


def test_all_rerecords_an_existing_cassette(time_command: list[str], tmp_path: Path) -> None:
    cassette = tmp_path / "time.cassette.json"
    with serving("--mode", "once", "--cassette", str(cassette), "--", *time_command) as (proc, url):
        anyio.run(lambda: time_session(url, convert=True))
        stop(proc)
    assert tool_calls(cassette) == ["convert_time"]
    with serving("--mode", "all", "--cassette", str(cassette), "--", *time_command) as (proc, url):
        anyio.run(lambda: time_session(url, convert=False))
        stop(proc)
    assert tool_calls(cassette) == []  # the new recording replaced the old one


def test_once_and_new_episodes_with_a_streamable_http_server_at_url(
    everything_http: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    cassette = tmp_path / "everything.cassette.json"
    echo = ("echo", {"message": "hello"})
    add = ("get-sum", {"a": 2, "b": 3.5})
    with serving("--mode", "once", "--cassette", str(cassette), "--url", everything_http) as (proc, url):
        first = anyio.run(lambda: everything_session(url, [echo]))
        stop(proc)
    assert tool_calls(cassette) == ["echo"]

    report = tmp_path / "episodes.json"
    args = ["--mode", "new_episodes", "--cassette", str(cassette), "--url", everything_http]
    with serving(*args, "--report", str(report)) as (proc, url):
        both = anyio.run(lambda: everything_session(url, [echo, add]))
        stop(proc)
    assert both[0] == first[0] and "5.5" in both[1]
    assert report_of(report)["recorded"] == 1
    assert tool_calls(cassette) == ["echo", "get-sum"]

    with serving("--strict", "--cassette", str(cassette), "--report", str(report)) as (proc, url):
        assert anyio.run(lambda: everything_session(url, [echo, add])) == both
        stop(proc)
    assert report_of(report)["misses"] == []


def test_emit_tape_over_http_writes_each_exchange_and_two_replays_match(
    time_command: list[str], tmp_path: Path
) -> None:
    cassette = tmp_path / "time.cassette.json"
    with serving("--mode", "once", "--cassette", str(cassette), "--", *time_command) as (proc, url):
        anyio.run(lambda: time_session(url, convert=True))
        stop(proc)
    tapes = [tmp_path / "a.tape", tmp_path / "b.tape"]
    for tape in tapes:
        with serving("--cassette", str(cassette), "--emit-tape", str(tape)) as (proc, url):
            anyio.run(lambda: time_session(url, convert=True))
            stop(proc)
    a, b = (load_tape(tape) for tape in tapes)
    calls = [r.fields for r in a.records if r.kind == "mcp_json_rpc"]
    assert {f.get("method") for f in calls} >= {"initialize", "tools/list", "tools/call"}
    assert compare(a, b, "semantic").identical


def test_a_live_servers_questions_reach_the_http_client_while_recording(tmp_path: Path) -> None:
    """The SDK server of tests/servers/asking_server.py asks the client mid-call (sampling,
    elicitation, roots: the 2025-11-25 era's requests). Recording it over HTTP (``all``), and
    forwarding a miss to it (``new_episodes``), its questions reach the SDK client on the
    request's stream and its answers go back; the recording then replays them."""
    from tests.e2e.test_replay_eras import CALLS, SEEN, SERVER, sdk_client

    legacy = sdk_client("legacy")
    cassette = tmp_path / "asking.cassette.json"
    with serving("--mode", "all", "--cassette", str(cassette), "--", *SERVER) as (proc, url):
        _version, seen = anyio.run(legacy, url)
        stop(proc)
    assert seen == SEEN
    recorded = [m.method for m in load_cassette(cassette).messages if m.direction == "server" and m.method]
    assert {"sampling/createMessage", "elicitation/create", "roots/list"} <= set(recorded)

    # Keep the handshake and the first call only; new_episodes asks the live server the rest.
    first = [name for name, _ in CALLS[:1]]
    trimmed = tmp_path / "first.cassette.json"
    with serving("--mode", "all", "--cassette", str(trimmed), "--", *SERVER) as (proc, url):
        anyio.run(lambda: sdk_client_calls(url, CALLS[:1]))
        stop(proc)
    assert tool_calls(trimmed) == first
    report = tmp_path / "episodes.json"
    args = ["--mode", "new_episodes", "--cassette", str(trimmed), "--report", str(report), "--", *SERVER]
    with serving(*args) as (proc, url):
        _version, seen = anyio.run(legacy, url)
        stop(proc)
    assert seen == SEEN
    assert report_of(report)["recorded"] == len(CALLS) - 1
    with serving("--strict", "--cassette", str(trimmed), "--report", str(report)) as (proc, url):
        _version, seen = anyio.run(legacy, url)
        stop(proc)
    assert seen == SEEN and report_of(report)["misses"] == []


async def sdk_client_calls(url: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    from tests.e2e.test_replay_eras import CALLBACKS

    with anyio.fail_after(WAIT):
        async with mcp.Client(url, mode="legacy", **CALLBACKS) as client:
            for name, arguments in calls:
                assert not (await client.call_tool(name, arguments)).is_error
