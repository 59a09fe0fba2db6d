"""2026-07-28 multi-round-trip requests and HTTP routing headers against a real SDK server.

`tests/servers/mrtr_server.py` is an SDK ``MCPServer`` whose ``summarize`` tool samples the
client's model: on 2026-07-28 the first ``tools/call`` answers ``input_required`` with a sealed
``requestState``, the SDK client retries with ``inputResponses`` and the state. Recorded with
the SDK ``mcp.Client`` (auto mode: ``server/discover``), over stdio and Streamable HTTP.

* ``requestState`` is opaque server state, not a secret: recorded as it was.
* live ``verify`` sends the live server's own fresh state (the recorded one is expired or
  foreign), and finds nothing against the unchanged server, over stdio and over ``--url``;
  over HTTP it sends the routing headers 2026-07-28 requires (``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) so the server serves the modern era.
* replay leaves the state out of matching, and a client whose model answers differently gets
  the recorded result, reported as a differing answer, not a miss.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types as types
import pytest
from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext

from harn_mcp_mock.api import ReplayTransport
from harn_mcp_mock.cassette.model import Cassette, load_cassette
from harn_mcp_mock.redact import PLACEHOLDER_RE
from harn_mcp_mock.verify.run import verify
from tests.http.test_record_proxy import recording, serve_app_lifespan
from tests.servers.mrtr_server import build
from tests.steady import STEADY_FLOOR_MS

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("verify/test_answers_round_trips")

TIMEOUT = 60
SERVER = [sys.executable, str(Path(__file__).parents[1] / "servers" / "mrtr_server.py")]
HARN = [sys.executable, "-m", "harn_mcp_mock"]


def reply(text: str) -> Any:
    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model="m"
        )

    return sampling


async def session(client: mcp.Client) -> list[str]:
    said = []
    for name, arguments in (("summarize", {"text": "hello world"}), ("add", {"a": 1, "b": 2})):
        result = await client.call_tool(name, arguments)
        said.append(result.content[0].text)  # type: ignore[union-attr]
    return said


@pytest.fixture(scope="module")
def stdio_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("mrtr") / "mrtr.cassette.json"
    command = [*HARN, "record", "--quiet", "--cassette", str(cassette), "--", *SERVER]

    async def run() -> None:
        with anyio.fail_after(TIMEOUT):
            params = StdioServerParameters(command=command[0], args=command[1:])
            async with mcp.Client(params, sampling_callback=reply("a short summary")) as client:
                assert await session(client) == ["summary of 11 characters: a short summary", "3"]

    anyio.run(run)
    return cassette


def states(cassette: Cassette) -> tuple[list[str], list[str]]:
    """The requestState values the server issued, and those the client echoed."""
    issued = [
        m.message["result"]["requestState"]
        for m in cassette.messages
        if m.direction == "server" and "requestState" in (m.message.get("result") or {})
    ]
    echoed = [
        m.message["params"]["requestState"]
        for m in cassette.messages
        if m.direction == "client" and "requestState" in (m.message.get("params") or {})
    ]
    return issued, echoed


def test_request_state_is_recorded_as_it_was(stdio_cassette: Path) -> None:
    issued, echoed = states(load_cassette(stdio_cassette))
    assert len(issued) == 1 and issued == echoed
    assert not PLACEHOLDER_RE.search(issued[0]) and len(issued[0]) > 40


@pytest.mark.slow
def test_live_verify_sends_the_live_servers_fresh_state(stdio_cassette: Path, tmp_path: Path) -> None:
    saved = tmp_path / "live.cassette.json"
    result = verify(stdio_cassette, command=SERVER, save_candidate=saved, latency_floor_ms=STEADY_FLOOR_MS)
    assert [f.rule for f in result.findings] == []
    issued, echoed = states(load_cassette(saved))
    assert len(issued) == 1 and issued == echoed  # the live server's own state went back to it
    assert issued != states(load_cassette(stdio_cassette))[0]
    assert verify(stdio_cassette, candidate=stdio_cassette).findings == []
    # A cassette recorded before requestState was kept holds a placeholder: the live state
    # replaces it all the same.
    old = tmp_path / "old.cassette.json"
    old.write_text(
        stdio_cassette.read_text().replace(states(load_cassette(stdio_cassette))[0][0], "[REDACTED:1]")
    )
    assert verify(old, command=SERVER, latency_floor_ms=STEADY_FLOOR_MS).findings == []


def test_another_models_answer_is_a_differing_answer_not_a_miss(stdio_cassette: Path) -> None:
    async def run() -> tuple[list[str], Any]:
        transport = ReplayTransport(stdio_cassette)
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(transport, sampling_callback=reply("another model's words")) as client:
                said = await session(client)
        return said, transport.report

    said, report = anyio.run(run)
    assert said == ["summary of 11 characters: a short summary", "3"]  # as recorded
    assert report.misses == []
    assert [(m["method"], m["seq"]) for m in report.answer_mismatches] == [("tools/call", 4)]
    assert "another model" in report.answer_mismatches[0]["got"]


SEEN: list[tuple[str, dict[str, str]]] = []
"""(HTTP method, request headers) of every request the upstream got, in order."""


def capturing(app: Any) -> Any:
    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            SEEN.append((scope["method"], {k.decode(): v.decode() for k, v in scope["headers"]}))
        await app(scope, receive, send)

    return wrapped


@pytest.fixture
def http_upstream() -> Iterator[str]:
    SEEN.clear()
    with serve_app_lifespan(capturing(build().streamable_http_app(stateless_http=True))) as url:
        yield url


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_verify_url_speaks_the_2026_http_era(http_upstream: str, tmp_path: Path) -> None:
    cassette = tmp_path / "mrtr-http.cassette.json"

    async def run(url: str) -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(url, sampling_callback=reply("a short summary")) as client:
                await session(client)
                looked = await client.call_tool("lookup", {"region": "eu-west"})
                assert looked.is_error is False

    with recording(cassette, http_upstream, []) as (proxy, _result):
        anyio.run(run, proxy)
    base = load_cassette(cassette)
    assert base.server["handshake"] == "server/discover"
    saved = tmp_path / "live.cassette.json"
    SEEN.clear()
    result = verify(cassette, url=http_upstream, save_candidate=saved, latency_floor_ms=STEADY_FLOOR_MS)
    assert [(f.rule, f.tool, f.message) for f in result.findings] == []
    posts = [h for method, h in SEEN if method == "POST"]
    assert posts and all(h["mcp-protocol-version"] == "2026-07-28" and "mcp-method" in h for h in posts)
    assert [h["mcp-name"] for h in posts if h["mcp-method"] == "tools/call"] == [
        "summarize",
        "summarize",
        "add",
        "lookup",
    ]
    assert [h.get("mcp-param-region") for h in posts if h.get("mcp-name") == "lookup"] == ["eu-west"]
    cand = load_cassette(saved)
    assert cand.server["handshake"] == "server/discover"  # served as 2026-07-28, not as legacy
    assert {e["status"] for e in cand.meta["http"]} == {200}
    answers = [m.message for m in cand.messages if m.direction == "server"]
    assert all("error" not in a and a["result"].get("isError") is not True for a in answers)
    assert all(a["result"].get("resultType") in ("complete", "input_required") for a in answers)
    issued, echoed = states(cand)
    assert len(issued) == 1 and issued == echoed


def test_a_recorded_placeholder_state_still_matches_on_replay(stdio_cassette: Path, tmp_path: Path) -> None:
    # A cassette recorded before requestState was kept holds a placeholder in its place.
    text = stdio_cassette.read_text()
    issued = states(load_cassette(stdio_cassette))[0][0]
    old = tmp_path / "old.cassette.json"
    old.write_text(text.replace(issued, "[REDACTED:1]"))

    async def run() -> Any:
        transport = ReplayTransport(old)
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(transport, sampling_callback=reply("a short summary")) as client:
                await session(client)
        return transport.report

    report = anyio.run(run)
    assert report.clean, report.to_dict()


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_verify_url_sends_the_negotiated_version_on_get_and_delete(tmp_path: Path) -> None:
    """A 2025-11-25 session (``initialize``): the version goes on every POST after it, GET and DELETE."""
    cassette = tmp_path / "legacy.cassette.json"
    SEEN.clear()
    with serve_app_lifespan(capturing(build().streamable_http_app())) as upstream:
        with recording(cassette, upstream, []) as (proxy, _result):

            async def run() -> None:
                with anyio.fail_after(TIMEOUT):
                    async with mcp.Client(proxy, mode="legacy", sampling_callback=reply("words")) as client:
                        await client.call_tool("add", {"a": 1, "b": 2})

            anyio.run(run)
        SEEN.clear()
        assert verify(cassette, url=upstream, latency_floor_ms=STEADY_FLOOR_MS).findings == []
    methods = {method for method, _ in SEEN}
    assert {"POST", "GET", "DELETE"} <= methods
    after_init = SEEN[1:]
    assert all(h.get("mcp-protocol-version") == "2025-11-25" for _, h in after_init), after_init
    assert all("mcp-method" not in h for _, h in SEEN)  # not a 2026-07-28 request
