"""The 2026-07-28 clients in the modes that record (docs/replay.md, "new_episodes").

A 2026-07-28 client (the official SDK's ``mcp.Client`` and fastmcp's ``Client``, both in
``auto`` mode) sends no ``initialize``: it asks ``server/discover`` and stamps its envelope
(version, clientInfo, capabilities) in every request's ``_meta``. ``replay --mode new_episodes``
must still forward its misses: the replay opens its own session with the live server
(``server/discover``, or a classic ``initialize`` when the live server refuses that), appends
what it recorded, and a ``--strict`` replay of the grown cassette then answers the same client
with nothing missed or unused. ``--mode all`` re-records such a client's session whole.

The matrix: both clients, ``new_episodes`` and ``all``, the replay over stdio and over
Streamable HTTP (``replay --http``), the live server after ``--`` or at ``--url``, against
``tests/servers/asking_server.py`` (an SDK ``MCPServer`` that speaks 2026-07-28 and asks the
client mid-call with ``input_required``) and server-everything (a handshake-era server: the
clients' probe is refused and they fall back to ``initialize``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.tape.model import load_tape
from tests.e2e.peers import WAIT
from tests.e2e.test_replay_eras import CALLBACKS, CALLS, SEEN, SERVER, asking_server_http, stop, texts
from tests.e2e.test_verify_unchanged import everything_http  # noqa: F401  (a fixture)
from tests.serving import url_process

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HARN = [sys.executable, "-m", "harn_mcp_mock"]
CLIENT_NAMES = ("sdk", "fastmcp")


# --- the clients: each runs a list of tool calls against a stdio command or a URL -------------

Calls = list[tuple[str, dict[str, Any]]]
Run = Callable[[list[str] | str, Calls], Awaitable[list[str]]]


async def via_sdk(target: list[str] | str, calls: Calls, mode: str = "auto") -> list[str]:
    from mcp import Client, StdioServerParameters

    server: Any = (
        target if isinstance(target, str) else StdioServerParameters(command=target[0], args=target[1:])
    )
    with anyio.fail_after(WAIT):
        async with Client(server, mode=mode, **CALLBACKS) as client:  # type: ignore[arg-type]
            assert client.protocol_version is not None
            return [texts(await client.call_tool(name, arguments)) for name, arguments in calls]


async def via_fastmcp(target: list[str] | str, calls: Calls, mode: str = "auto") -> list[str]:
    from tests.e2e.test_replay_eras import new_fastmcp_client

    client = new_fastmcp_client(target, mode)
    with anyio.fail_after(WAIT):
        async with client:
            return [texts(await client.call_tool_mcp(name, arguments)) for name, arguments in calls]


CLIENTS: dict[str, Run] = {
    "sdk": via_sdk,
    "fastmcp": via_fastmcp,
    "sdk-2026": functools.partial(via_sdk, mode="2026-07-28"),
    "fastmcp-2026": functools.partial(via_fastmcp, mode="2026-07-28"),
}
"""In mode ``auto`` (the matrix); pinned to ``2026-07-28``: no probe, and no fallback either."""


# --- serving ------------------------------------------------------------------------------------


def session(client: str, transport: str, args: list[str], calls: Calls) -> list[str]:
    """``client`` runs ``calls`` against ``harn mcp mock ARGS`` over ``transport``."""
    run = CLIENTS[client]
    if transport == "stdio":
        return anyio.run(run, [*HARN, *args], calls)
    with url_process([*args[:1], "--http", *args[1:]]) as (proc, url):
        seen = anyio.run(run, url, calls)
        stderr = stop(proc)
    assert "new_episodes needs" not in stderr, stderr
    return seen


@contextlib.contextmanager
def live_server(
    server: str, live: str, everything_command: list[str], everything_url: Callable[[], str]
) -> Iterator[list[str]]:
    """The live server's arguments: ``-- COMMAND`` or ``--url URL``."""
    if live == "command":
        yield ["--", *(SERVER if server == "asking" else everything_command)]
    elif server == "asking":
        with asking_server_http() as url:
            yield ["--url", url]
    else:
        yield ["--url", everything_url()]


def report_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(path.read_bytes())
    return data


def tool_calls(cassette: Path) -> list[str]:
    """The tool of each recorded ``tools/call`` (a retry with ``inputResponses`` counts again)."""
    return [
        m.message["params"]["name"]
        for m in load_cassette(cassette).messages
        if m.direction == "client" and m.kind == "request" and m.method == "tools/call"
    ]


# --- the matrix ---------------------------------------------------------------------------------

ASKING_ONE, ASKING_ALL = CALLS[:1], CALLS
EVERYTHING_ONE: Calls = [("echo", {"message": "hello"})]
EVERYTHING_ALL: Calls = [*EVERYTHING_ONE, ("get-sum", {"a": 2, "b": 3.5})]
EVERYTHING_SEEN = ["Echo: hello", "The sum of 2 and 3.5 is 5.5."]

CASES = [
    pytest.param(server, client, transport, live, id=f"{server}-{client}-{transport}-{live}")
    for server in ("asking", "everything")
    for client in CLIENT_NAMES
    for transport, live in (("stdio", "command"), ("http", "command"), ("http", "url"))
]


@pytest.fixture
def everything_url(request: pytest.FixtureRequest) -> Callable[[], str]:
    """server-everything over Streamable HTTP, started when first asked for."""

    def get() -> str:
        return str(request.getfixturevalue("everything_http"))

    return get


def calls_of(server: str) -> tuple[Calls, Calls, list[str]]:
    """(the first call, all the calls, what all the calls give) for ``server``."""
    if server == "asking":
        return ASKING_ONE, ASKING_ALL, SEEN
    return EVERYTHING_ONE, EVERYTHING_ALL, EVERYTHING_SEEN


def needs(server: str, request: pytest.FixtureRequest) -> list[str]:
    """server-everything's stdio command (its fixture skips when it is not installed)."""
    return list(request.getfixturevalue("everything_command")) if server == "everything" else []


@pytest.mark.parametrize(("server", "client", "transport", "live"), CASES)
def test_new_episodes_records_a_2026_clients_misses_and_the_grown_cassette_replays_strictly(
    server: str,
    client: str,
    transport: str,
    live: str,
    fastmcp_client: Any,
    everything_url: Callable[[], str],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    one, every, seen = calls_of(server)
    command = needs(server, request)
    cassette, report = tmp_path / "c.cassette.json", tmp_path / "report.json"
    with live_server(server, "command", command, everything_url) as target:
        assert session(client, "stdio", ["record", "--cassette", str(cassette), *target], one) == seen[:1]
    recorded = tool_calls(cassette)

    with live_server(server, live, command, everything_url) as target:
        episodes = ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--report", str(report)]
        assert session(client, transport, [*episodes, *target], every) == seen

    summary = report_of(report)
    assert summary["misses"] == [] and summary["recorded"] > 0, summary
    grown = tool_calls(cassette)
    assert grown[: len(recorded)] == recorded and len(grown) > len(recorded), grown  # appended

    strict = ["replay", "--strict", "--cassette", str(cassette), "--report", str(report)]
    assert session(client, transport, strict, every) == seen
    summary = report_of(report)
    assert summary["misses"] == [] and summary["unused"] == [] and summary["ok"] is True, summary


@pytest.mark.parametrize(("server", "client", "transport", "live"), CASES)
def test_all_rerecords_a_2026_clients_session_and_it_replays_strictly(
    server: str,
    client: str,
    transport: str,
    live: str,
    fastmcp_client: Any,
    everything_url: Callable[[], str],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    one, every, seen = calls_of(server)
    command = needs(server, request)
    cassette, report = tmp_path / "c.cassette.json", tmp_path / "report.json"
    with live_server(server, "command", command, everything_url) as target:
        session(client, "stdio", ["record", "--cassette", str(cassette), *target], one)

    with live_server(server, live, command, everything_url) as target:
        rerecord = ["replay", "--mode", "all", "--cassette", str(cassette)]
        assert session(client, transport, [*rerecord, *target], every) == seen
    assert {name for name, _ in every} <= set(tool_calls(cassette))

    strict = ["replay", "--strict", "--cassette", str(cassette), "--report", str(report)]
    assert session(client, transport, strict, every) == seen
    summary = report_of(report)
    assert summary["misses"] == [] and summary["unused"] == [] and summary["ok"] is True, summary


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_every_request_of_a_2026_client_is_on_the_tape_and_in_the_report_whatever_its_status(
    client: str,
    fastmcp_client: Any,
    everything_http: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """server-everything over HTTP refuses the clients' ``server/discover`` with HTTP 400 (it
    has no session for it); ``replay --http`` answers it with that status again, and the request
    is on the tape (``http_status``) and counted in the report like the rest."""
    cassette, tape, report = tmp_path / "c.cassette.json", tmp_path / "replay.tape", tmp_path / "r.json"
    recording = ["record", "--cassette", str(cassette), "--url", everything_http]
    with url_process(recording) as (proc, url):
        assert anyio.run(CLIENTS[client], url, EVERYTHING_ALL) == EVERYTHING_SEEN
        stop(proc)
    statuses = [entry["status"] for entry in load_cassette(cassette).meta["http"]]
    assert 400 in statuses, statuses
    requests = [str(m.method) for m in load_cassette(cassette).requests()]

    replay = ["replay", "--cassette", str(cassette), "--emit-tape", str(tape), "--report", str(report)]
    assert session(client, "http", replay, EVERYTHING_ALL) == EVERYTHING_SEEN

    records = [r.fields for r in load_tape(tape).records if r.kind == "mcp_json_rpc"]
    taped = [
        str(f["method"]) for f in records if f["direction"] == "client->server" and not f.get("notification")
    ]
    assert taped == requests
    assert [f["http_status"] for f in records if "http_status" in f] == [400]
    summary = report_of(report)
    assert summary["requests"] == len(requests) and summary["misses"] == [], summary


@pytest.mark.parametrize("client", ["sdk-2026", "fastmcp-2026"])
@pytest.mark.parametrize(("transport", "live"), [("stdio", "command"), ("http", "command"), ("http", "url")])
def test_new_episodes_opens_a_classic_session_for_a_pinned_2026_client_with_a_handshake_era_server(
    client: str,
    transport: str,
    live: str,
    fastmcp_client: Any,
    everything_command: list[str],
    everything_url: Callable[[], str],
    tmp_path: Path,
) -> None:
    """A client pinned to 2026-07-28 against a cassette of a handshake-era server (recorded by
    a classic client) and that server live: the replay's ``server/discover`` is refused, so it
    sends an ``initialize`` of its own; the miss goes without the client's envelope, and its
    answer reaches the client as a 2026-07-28 result."""
    cassette, report = tmp_path / "c.cassette.json", tmp_path / "report.json"
    recording = ["record", "--cassette", str(cassette), "--", *everything_command]
    assert anyio.run(via_sdk, [*HARN, *recording], EVERYTHING_ONE, "legacy") == EVERYTHING_SEEN[:1]

    with live_server("everything", live, everything_command, everything_url) as target:
        episodes = ["replay", "--mode", "new_episodes", "--cassette", str(cassette), "--report", str(report)]
        assert session(client, transport, [*episodes, *target], EVERYTHING_ALL) == EVERYTHING_SEEN
    assert report_of(report)["recorded"] == 1
    [added] = [m for m in load_cassette(cassette).requests() if m.method == "tools/call"][1:]
    assert "io.modelcontextprotocol/protocolVersion" not in str(added.message), added.message

    strict = ["replay", "--strict", "--cassette", str(cassette), "--report", str(report)]
    assert session(client, transport, strict, EVERYTHING_ALL) == EVERYTHING_SEEN
    summary = report_of(report)
    assert summary["misses"] == [] and summary["ok"] is True, summary
