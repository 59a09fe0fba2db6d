"""A server's questions (sampling, elicitation, roots) replay across protocol eras (docs/replay.md).

``tests/servers/asking_server.py`` is an SDK ``MCPServer`` whose tools ask the client; it asks
as the negotiated protocol says: on 2026-07-28 an ``input_required`` result the client retries
with ``inputResponses``, before that a ``sampling/createMessage``, ``elicitation/create`` or
``roots/list`` request mid-call. It is recorded through ``record`` (stdio) and ``record --url``
(Streamable HTTP) once by a handshake-era client (``ClientSession.initialize()``, 2025-11-25)
and once by a 2026-07-28 one (``mcp.Client``, ``auto``), then each cassette is replayed with
``replay --strict`` (and ``replay --http --strict``) to clients of the other era: the official
SDK (``legacy``, ``auto``, a pinned ``2026-07-28``) and fastmcp's ``Client``. Each client sees
the results the recording client saw, its answers match the recorded ones, and the replay
reports no miss, no unused interaction and no differing answer. The in-process
``ReplayTransport`` (``harn_mcp_mock.api``) bridges the same way.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from harn_mcp_mock.cassette.model import load_cassette
from tests.e2e.peers import WAIT
from tests.serving import url_process

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "asking_server.py")]
HARN = [sys.executable, "-m", "harn_mcp_mock"]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("summarize", {"text": "hello"}),
    ("confirm", {"action": "deploy"}),
    ("where", {}),
    ("plan", {"topic": "launch"}),
]
SEEN = [
    "summary of 5 characters: a short summary",
    "deploy: confirmed",
    "roots: file:///tmp/project",
    "plan for launch: a short summary; ok=True; 1 root(s)",
]
SAMPLED = types.CreateMessageResult(
    role="assistant", content=types.TextContent(type="text", text="a short summary"), model="test-model"
)
ROOT_URI = "file:///tmp/project"


# --- the clients ---------------------------------------------------------------------------


async def sample(_: ClientRequestContext, __: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return SAMPLED


async def elicit(_: ClientRequestContext, __: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def roots(_: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI)])  # type: ignore[arg-type]


CALLBACKS: dict[str, Any] = {
    "sampling_callback": sample,
    "elicitation_callback": elicit,
    "list_roots_callback": roots,
}


def texts(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


@asynccontextmanager
async def legacy_session(target: list[str] | str) -> AsyncIterator[ClientSession]:
    if isinstance(target, str):
        async with (
            streamable_http_client(target) as (read, write),
            ClientSession(read, write, **CALLBACKS) as s,
        ):
            yield s
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write, **CALLBACKS) as s:
            yield s


async def sdk_legacy(target: list[str] | str) -> tuple[str | None, list[str]]:
    """``ClientSession.initialize()``: the 2025-11-25 handshake, questions as requests."""
    with anyio.fail_after(WAIT):
        async with legacy_session(target) as session:
            init = await session.initialize()
            seen = [texts(await session.call_tool(name, arguments)) for name, arguments in CALLS]
    return init.protocol_version, seen


def sdk_client(mode: str) -> Callable[[list[str] | str], Any]:
    async def run(target: list[str] | str) -> tuple[str | None, list[str]]:
        server: Any = (
            target if isinstance(target, str) else StdioServerParameters(command=target[0], args=target[1:])
        )
        with anyio.fail_after(WAIT):
            async with Client(server, mode=mode, **CALLBACKS) as client:  # type: ignore[arg-type]
                seen = [texts(await client.call_tool(name, arguments)) for name, arguments in CALLS]
                return client.protocol_version, seen

    return run


def new_fastmcp_client(target: list[str] | str, mode: str) -> Any:
    """fastmcp's client in ``mode`` over a command (stdio) or a URL, answering sampling,
    elicitation and roots as the SDK clients here do."""
    from fastmcp import Client as FastClient
    from fastmcp.client.transports import StdioTransport

    async def fast_sample(*_: Any) -> types.CreateMessageResult:
        return SAMPLED

    async def fast_elicit(*_: Any) -> dict[str, Any]:
        return {"ok": True}

    transport: Any = (
        target if isinstance(target, str) else StdioTransport(target[0], target[1:], keep_alive=False)
    )
    return FastClient(
        transport,
        roots=[ROOT_URI],
        sampling_handler=fast_sample,
        elicitation_handler=fast_elicit,  # type: ignore[arg-type]
        mode=mode,  # type: ignore[arg-type]
    )


def fastmcp_client(mode: str) -> Callable[[list[str] | str], Any]:
    async def run(target: list[str] | str) -> tuple[str | None, list[str]]:
        client = new_fastmcp_client(target, mode)
        with anyio.fail_after(WAIT):
            async with client:
                seen = [texts(await client.call_tool(name, arguments)) for name, arguments in CALLS]
                return client.protocol_version, seen

    return run


CLIENTS: dict[str, Callable[[list[str] | str], Any]] = {
    "sdk-legacy": sdk_legacy,
    "sdk-auto": sdk_client("auto"),
    "sdk-2026": sdk_client("2026-07-28"),
    "fastmcp-legacy": fastmcp_client("legacy"),
    "fastmcp-auto": fastmcp_client("auto"),
    "fastmcp-2026": fastmcp_client("2026-07-28"),
}
RECORDED_BY = {"2025-11-25": "sdk-legacy", "2026-07-28": "sdk-auto"}


# --- serving -------------------------------------------------------------------------------


def stop(proc: subprocess.Popen[bytes]) -> str:
    """SIGTERM (as an MCP host stops a server); its stderr, which holds no traceback."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=WAIT)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr, stderr
    return stderr


@contextmanager
def asking_server_http() -> Iterator[str]:
    proc = subprocess.Popen([*SERVER, "--http"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout and proc.stderr
    try:
        line = proc.stdout.readline().decode().strip()
        assert line.startswith("HARN-LISTENING "), proc.stderr.read()
        yield line.removeprefix("HARN-LISTENING ")
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        proc.stdout.close()
        proc.stderr.close()


async def record(era: str, transport: str, cassette: Path) -> list[str]:
    client = CLIENTS[RECORDED_BY[era]]
    if transport == "stdio":
        version, seen = await client([*HARN, "record", "--cassette", str(cassette), "--", *SERVER])
    else:
        with asking_server_http() as upstream:
            with url_process(["record", "--cassette", str(cassette), "--url", upstream]) as (proc, url):
                version, seen = await client(url)
                stop(proc)
    assert version == era
    return seen  # type: ignore[no-any-return]


async def replay(client: str, transport: str, cassette: Path, report: Path) -> tuple[str | None, list[str]]:
    args = ["replay", "--strict", "--report", str(report), "--cassette", str(cassette)]
    if transport == "stdio":
        return await CLIENTS[client]([*HARN, *args])  # type: ignore[no-any-return]
    with url_process([*args[:1], "--http", *args[1:]]) as (proc, url):
        outcome = await CLIENTS[client](url)
        stop(proc)
    return outcome  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """The cassette of ``(era, transport)``, recorded once per module when first asked for."""
    folder = tmp_path_factory.mktemp("eras")
    made: dict[tuple[str, str], Path] = {}

    def get(era: str, transport: str) -> Path:
        if (era, transport) not in made:
            path = folder / f"{era}-{transport}.cassette.json"
            assert anyio.run(record, era, transport, path) == SEEN
            made[era, transport] = path
        return made[era, transport]

    return get


def questions(cassette: Path) -> list[str]:
    """How the recorded server asked: the methods of its questions, in order."""
    asked: list[str] = []
    for m in load_cassette(cassette).messages:
        message = m.message if isinstance(m.message, dict) else {}
        if m.direction == "server" and message.get("method") is not None and "id" in message:
            asked.append(str(message["method"]))
        result = message.get("result")
        if (
            m.direction == "server"
            and isinstance(result, dict)
            and result.get("resultType") == "input_required"
        ):
            asked.extend(str(r["method"]) for r in result["inputRequests"].values())
    return asked


ASKED = ["sampling/createMessage", "elicitation/create", "roots/list"]
CROSSINGS = [
    ("2026-07-28", "sdk-legacy", "2025-11-25"),
    ("2026-07-28", "fastmcp-legacy", "2025-11-25"),
    ("2025-11-25", "sdk-2026", "2026-07-28"),
    ("2025-11-25", "fastmcp-2026", "2026-07-28"),
    ("2025-11-25", "sdk-auto", "2025-11-25"),  # the probe is refused: it falls back to initialize
    ("2025-11-25", "fastmcp-auto", "2025-11-25"),
]


# One xdist group per cassette (`make test` runs --dist loadgroup): each is recorded once.
CASES = [
    pytest.param(era, client, client_era, transport, marks=pytest.mark.xdist_group(f"eras-{era}-{transport}"))
    for transport in ("stdio", "http")
    for era, client, client_era in CROSSINGS
]


@pytest.mark.parametrize(("era", "client", "client_era", "transport"), CASES)
def test_a_recording_of_one_era_answers_a_client_of_the_other_with_its_questions(
    era: str,
    client: str,
    client_era: str,
    transport: str,
    cassettes: Callable[[str, str], Path],
    tmp_path: Path,
) -> None:
    cassette = cassettes(era, transport)
    assert questions(cassette) == [*ASKED, *ASKED]  # each tool's, then plan's three
    report_path = tmp_path / "report.json"

    version, seen = anyio.run(replay, client, transport, cassette, report_path)

    assert (version, seen) == (client_era, SEEN)
    report = orjson.loads(report_path.read_bytes())
    assert report["misses"] == [] and report["answer_mismatches"] == [], report
    assert report["unused"] == [] and report["ok"] is True, report


@pytest.mark.parametrize(
    ("era", "mode"),
    [
        pytest.param("2026-07-28", "legacy", marks=pytest.mark.xdist_group("eras-2026-07-28-stdio")),
        pytest.param("2025-11-25", "2026-07-28", marks=pytest.mark.xdist_group("eras-2025-11-25-stdio")),
    ],
)
def test_in_process_replay_bridges_the_eras_too(
    era: str, mode: str, cassettes: Callable[[str, str], Path]
) -> None:
    from harn_mcp_mock.api import ReplayTransport

    transport = ReplayTransport(cassettes(era, "stdio"))

    async def run() -> tuple[str | None, list[str]]:
        with anyio.fail_after(WAIT):
            async with Client(transport, mode=mode, **CALLBACKS) as client:  # type: ignore[arg-type]
                seen = [texts(await client.call_tool(name, arguments)) for name, arguments in CALLS]
                return client.protocol_version, seen

    assert anyio.run(run) == ("2025-11-25" if mode == "legacy" else mode, SEEN)
    assert transport.report is not None and transport.report.clean, transport.report
