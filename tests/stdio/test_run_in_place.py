"""What a server sent outside the request/response rhythm replays where it was recorded.

``tests/servers/noisy_server.py`` prints lines that are not JSON on stdout around its answers and
sends ``roots/list`` right after its ``initialize`` answer, before the client's
``notifications/initialized``. It is recorded through ``python -m harn_mcp_mock record`` with the
official SDK's ``ClientSession``; then:

* a raw JSON-RPC client sending the recorded client lines reads from
  ``python -m harn_mcp_mock replay --strict`` byte for byte what the live server printed for them,
  the non-JSON lines included;
* the SDK client, seen through a second recording proxy wrapped around the replay, receives the
  server messages and lines in the recorded order, and sees the same things (the skipped lines,
  the early roots request, the tool result) as with the live server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import stdio_client

from harn_mcp_mock.cassette.model import Cassette, load_cassette

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("stdio/test_run_in_place")

SERVER = Path(__file__).parents[1] / "servers" / "noisy_server.py"
NOISY = [sys.executable, str(SERVER)]
WAIT = 60  # seconds: the bound of one whole client session or process run
ROOT = types.Root(uri="file:///harn/in-place", name="in-place")  # type: ignore[arg-type]


def record_argv(cassette: Path, command: list[str]) -> list[str]:
    return [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette), "--", *command]


def replay_argv(cassette: Path, report: Path) -> list[str]:
    return [
        sys.executable,
        *("-m", "harn_mcp_mock", "replay", "--strict", "--report", str(report), "--cassette", str(cassette)),
    ]


async def sdk_session(command: list[str]) -> dict[str, Any]:
    """What the SDK client sees: the server, its tools, the early roots request, the tool result.
    (It logs and skips each line that is not JSON; the last one may come after the session
    ended, so they are compared on the wire, not here.)"""
    seen: dict[str, Any] = {"roots_requests": 0}

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        seen["roots_requests"] += 1
        return types.ListRootsResult(roots=[ROOT])

    params = StdioServerParameters(command=command[0], args=command[1:])
    with anyio.fail_after(WAIT):
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, list_roots_callback=roots) as session,
        ):
            init = await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool("echo", {"text": "hi"})
    seen["server"] = init.server_info.name
    seen["tools"] = [tool.name for tool in tools.tools]
    seen["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return seen


def server_side(cassette: Cassette) -> list[Any]:
    """The server's messages and lines in recorded order (ids of client requests left out)."""
    out: list[Any] = []
    for m in cassette.messages:
        if m.direction != "server":
            continue
        if m.invalid is not None:
            out.append(("line", m.raw))
        else:
            body = {k: v for k, v in m.message.items() if not (k == "id" and "method" not in m.message)}
            out.append((m.kind, body))
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    cassette = tmp_path_factory.mktemp("in-place") / "noisy.cassette.json"
    live = anyio.run(sdk_session, record_argv(cassette, NOISY))
    return cassette, live


def test_the_recording_holds_the_lines_and_the_early_request_in_place(
    recorded: tuple[Path, dict[str, Any]],
) -> None:
    cassette, live = recorded
    assert live["roots_requests"] == 1
    loaded = load_cassette(cassette)
    order = [("line", m.raw) if m.invalid else (m.direction, m.method or m.kind) for m in loaded.messages]
    start = order.index(("client", "initialize"))
    assert order[start + 1 : start + 4] == [
        ("line", "noisy-server: starting up"),
        ("server", "response"),
        ("server", "roots/list"),
    ]
    assert order.index(("server", "roots/list")) < order.index(("client", "notifications/initialized"))
    call = order.index(("client", "tools/call"))
    assert order[call + 1 : call + 4] == [
        ("line", "debug: echo called"),
        ("server", "response"),
        ("line", "debug: echo done"),
    ]


def test_a_raw_client_reads_byte_for_byte_what_the_live_server_printed(
    recorded: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    cassette, _ = recorded
    client = b"".join(
        orjson.dumps(m.message) + b"\n" for m in load_cassette(cassette).messages if m.direction == "client"
    )
    live = subprocess.run(NOISY, input=client, capture_output=True, timeout=WAIT, check=True)
    report = tmp_path / "report.json"
    replayed = subprocess.run(replay_argv(cassette, report), input=client, capture_output=True, timeout=WAIT)
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == live.stdout
    assert b"noisy-server: starting up\n" in replayed.stdout
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is True


def test_the_sdk_client_sees_the_recorded_order_and_the_same_things(
    recorded: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    cassette, live = recorded
    seen_path = tmp_path / "seen.cassette.json"
    report = tmp_path / "report.json"
    replayed = anyio.run(sdk_session, record_argv(seen_path, replay_argv(cassette, report)))
    assert replayed == live
    assert server_side(load_cassette(seen_path)) == server_side(load_cassette(cassette))
    assert json.loads(report.read_text(encoding="utf-8"))["ok"] is True
