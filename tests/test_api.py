"""The Python API: replay_session / ReplayTransport in memory, record_session through a real server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.api import (
    EpisodesTransport,
    RecordTransport,
    ReplayTransport,
    cassette_transport,
    open_replay,
    record_session,
    replay_session,
)
from harn_mcp_mock.cassette.model import Cassette, Message, journal_path, load_cassette, save_cassette
from harn_mcp_mock.errors import CassetteError, UsageError

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_api")

REPO = Path(__file__).resolve().parent.parent
NOTES = [sys.executable, str(REPO / "examples" / "servers" / "notes_server.py")]
SECRET = "sk-live-4f9c2a7e1b3d5f60718293a4b5c6d7e8"
TIMEOUT = 10

# --- cassettes ---------------------------------------------------------------------------------


def write_cassette(path: Path, wire: list[tuple[str, dict[str, Any]]]) -> Path:
    """Save a cassette of hand-made messages, pairing each response with its request by id."""
    messages: list[Message] = []
    open_requests: dict[tuple[str, bytes], int] = {}
    for seq, (direction, message) in enumerate(wire):
        entry = Message(seq, direction, message)
        if "method" in message and "id" in message:
            open_requests[(direction, orjson.dumps(message["id"]))] = seq
        elif "id" in message:
            other = "client" if direction == "server" else "server"
            entry.reply_to = open_requests.pop((other, orjson.dumps(message["id"])))
            entry.latency_ms = 1.0
        messages.append(entry)
    meta = {
        "server": {"handshake": "initialize"},
        "exit": {"code": 0, "signal": None, "reason": "client-eof"},
    }
    save_cassette(Cassette(messages, meta), path)
    return path


def handshake(*, tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """initialize, initialized and tools/list of a hand-made server."""
    init_params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "hand-made", "version": "1.0"},
    }
    return [
        ("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params}),
        ("server", {"jsonrpc": "2.0", "id": 0, "result": result}),
        ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("client", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("server", {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}),
    ]


SUMMARISE_TOOL = {"name": "summarise", "inputSchema": {"type": "object"}}


def sampling_cassette(path: Path) -> Path:
    """tools/call summarise: progress, a sampling request the client answers, progress, result."""
    sampling_params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise the notes."}}],
        "maxTokens": 50,
    }
    answer = {"role": "assistant", "content": {"type": "text", "text": "All is well."}, "model": "m-1"}
    call_params = {"name": "summarise", "arguments": {}, "_meta": {"progressToken": "recorded-token"}}
    return write_cassette(
        path,
        [
            *handshake(tools=[SUMMARISE_TOOL]),
            ("client", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call_params}),
            (
                "server",
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": "recorded-token", "progress": 1, "total": 2},
                },
            ),
            (
                "server",
                {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": sampling_params},
            ),
            ("client", {"jsonrpc": "2.0", "id": 0, "result": answer}),
            (
                "server",
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": "recorded-token", "progress": 2, "total": 2},
                },
            ),
            (
                "server",
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "result": {"content": [{"type": "text", "text": "All is well."}], "isError": False},
                },
            ),
        ],
    )


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_notes", {}),
    ("read_note", {"name": "welcome"}),
    ("write_note", {"name": "todo", "text": "buy milk"}),
    ("read_note", {"name": "todo"}),
    ("read_note", {"name": "nope"}),
    ("whoami", {}),
]


def dump(result: Any) -> Any:
    return result.model_dump(by_alias=True, mode="json", exclude_unset=True)


async def exercise(session: Any) -> dict[str, Any]:
    """The tools of the notes server, listed and called: results as JSON."""
    out: dict[str, Any] = {"tools": dump(await session.list_tools())}
    for index, (name, arguments) in enumerate(CALLS):
        out[f"{index}:{name}"] = dump(await session.call_tool(name, arguments))
    return out


@pytest.fixture(scope="module")
def notes_recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cassette recorded from examples/servers/notes_server.py, and what the live server answered."""
    path = tmp_path_factory.mktemp("notes") / "notes.cassette.json"

    async def record() -> dict[str, Any]:
        with anyio.fail_after(30):  # starting a Python server that imports the SDK
            async with record_session(path, NOTES, env={"NOTES_API_KEY": SECRET}) as session:
                return await exercise(session)

    return path, anyio.run(record)


# --- replay_session --------------------------------------------------------------------------


async def test_a_replayed_session_returns_what_the_live_server_returned(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    path, live = notes_recording
    with anyio.fail_after(TIMEOUT):
        async with replay_session(path) as session:
            replayed = await exercise(session)
    live = dict(live)
    assert replayed.pop("5:whoami") != live.pop("5:whoami")  # the secret: see the next test
    assert replayed == live


async def test_strict_order_replays_the_recorded_order_and_names_the_expected_request_on_a_miss(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = notes_recording
    with anyio.fail_after(TIMEOUT):
        async with replay_session(path, strict_order=True) as session:
            await exercise(session)
        async with replay_session(path, strict_order=True) as session:
            with pytest.raises(
                MCPError, match=r"strict order: expected 'tools/list' \(recorded seq \d+\) next"
            ):
                await session.call_tool("whoami", {})


async def test_the_recorded_session_keeps_its_tools_and_results(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    _, live = notes_recording
    assert [t["name"] for t in live["tools"]["tools"]] == ["list_notes", "read_note", "write_note", "whoami"]
    assert live["1:read_note"]["structuredContent"] == {
        "name": "welcome",
        "text": "Notes live in memory; nothing is written to disk.",
        "words": 9,
    }
    assert live["4:read_note"]["isError"] is True


async def test_the_server_secret_reaches_the_live_client_but_never_the_cassette(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    path, live = notes_recording
    assert live["5:whoami"]["content"][0]["text"] == f"authenticated with key {SECRET}"
    assert SECRET not in path.read_text()
    with anyio.fail_after(TIMEOUT):
        async with replay_session(path) as session:
            replayed = await session.call_tool("whoami", {})
    assert SECRET not in orjson.dumps(dump(replayed)).decode()
    assert "REDACTED" in replayed.content[0].text  # type: ignore[union-attr]


async def test_a_request_with_no_recorded_match_fails_naming_the_method_and_nearest_candidate(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = notes_recording
    with anyio.fail_after(TIMEOUT):
        async with open_replay(path) as replay:
            await replay.session.list_tools()
            with pytest.raises(MCPError) as caught:
                await replay.session.call_tool("read_note", {"name": "welcom"})
    assert caught.value.error.code == -32050
    assert "tools/call" in str(caught.value)
    assert "params.arguments.name: recorded 'welcome', got 'welcom'" in str(caught.value)
    assert replay.report is not None
    assert [m["method"] for m in replay.report.misses] == ["tools/call"]


async def test_the_report_lists_the_recorded_interactions_the_session_never_used(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = notes_recording
    with anyio.fail_after(TIMEOUT):
        async with open_replay(path) as replay:
            await replay.session.list_tools()
            await replay.session.call_tool("list_notes", {})
    assert replay.report is not None
    assert replay.report.misses == []
    assert [(u["method"], orjson.loads(u["params"])["name"]) for u in replay.report.unused] == [
        ("tools/call", name) for name, _ in CALLS[1:]
    ]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_mcp_client_replays_through_the_transport_in_either_handshake_mode(
    notes_recording: tuple[Path, dict[str, Any]], mode: str
) -> None:
    path, live = notes_recording
    transport = ReplayTransport(path)
    with anyio.fail_after(TIMEOUT):
        async with Client(transport, mode=mode) as client:
            listed = await client.call_tool("list_notes", {})
            assert client.session.initialize_result is not None
    assert dump(listed) == live["0:list_notes"]
    assert transport.report is not None
    assert transport.report.misses == []


async def test_the_request_meta_reaches_the_engine_unchanged(
    notes_recording: tuple[Path, dict[str, Any]],
) -> None:
    transport = ReplayTransport(notes_recording[0])
    seen: list[Any] = []
    receive = transport.engine.receive

    def spy(message: Any) -> Any:
        seen.append(message)
        return receive(message)

    transport.engine.receive = spy  # type: ignore[method-assign]
    with anyio.fail_after(TIMEOUT):
        async with Client(transport, mode="legacy") as client:
            await client.session.call_tool("list_notes", {}, meta={"trace": "abc"})
    call = next(m for m in seen if m.get("method") == "tools/call")
    assert call["params"] == {"name": "list_notes", "arguments": {}, "_meta": {"trace": "abc"}}


async def test_a_server_sampling_request_reaches_the_callback_and_progress_uses_the_clients_token(
    tmp_path: Path,
) -> None:
    path = sampling_cassette(tmp_path / "sampling.cassette.json")
    asked: list[str] = []
    progress: list[tuple[float, float | None]] = []
    sent: list[Any] = []

    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        asked.append(params.messages[0].content.text)  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="All is well."), model="m-1"
        )

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    transport = ReplayTransport(path)
    receive = transport.engine.receive

    def spy(message: Any) -> Any:
        sent.append(message)
        return receive(message)

    transport.engine.receive = spy  # type: ignore[method-assign]
    with anyio.fail_after(TIMEOUT):
        async with Client(transport, mode="legacy", sampling_callback=sampling) as client:
            result = await client.session.call_tool("summarise", {}, progress_callback=on_progress)
    assert asked == ["Summarise the notes."]
    assert progress == [(1, 2), (2, 2)]
    assert dump(result)["content"] == [{"type": "text", "text": "All is well."}]
    call = next(m for m in sent if m.get("method") == "tools/call")
    assert call["params"]["_meta"]["progressToken"] != "recorded-token"  # the client's own token
    assert transport.report is not None and transport.report.clean


async def test_a_client_answer_that_differs_from_the_recording_is_reported(tmp_path: Path) -> None:
    path = sampling_cassette(tmp_path / "sampling.cassette.json")

    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Something else."), model="m-2"
        )

    with anyio.fail_after(TIMEOUT):
        async with open_replay(path, sampling_callback=sampling) as replay:
            await replay.session.list_tools()
            await replay.session.call_tool("summarise", {})
    assert replay.report is not None
    assert [m["method"] for m in replay.report.answer_mismatches] == ["tools/call"]


async def test_recorded_latency_delays_answers_without_reordering_them(tmp_path: Path) -> None:
    path = sampling_cassette(tmp_path / "latency.cassette.json")
    progress: list[float] = []

    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="All is well."), model="m-1"
        )

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(TIMEOUT):
        async with open_replay(path, latency="recorded", sampling_callback=sampling) as replay:
            await replay.session.list_tools()
            result = await replay.session.call_tool("summarise", {}, progress_callback=on_progress)
    assert progress == [1, 2]  # both before the (delayed) result, in recorded order
    assert dump(result)["content"] == [{"type": "text", "text": "All is well."}]
    assert replay.report is not None and replay.report.clean


async def test_a_recorded_response_the_sdk_cannot_read_becomes_an_error_not_a_hang(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "bad.cassette.json",
        [
            *handshake(tools=[SUMMARISE_TOOL]),
            ("client", {"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            ("server", {"jsonrpc": "2.0", "id": 2, "result": None}),
        ],
    )
    with anyio.fail_after(TIMEOUT):
        async with replay_session(path) as session:
            with pytest.raises(MCPError, match="the recorded response is not valid JSON-RPC for the SDK"):
                await session.send_ping()


async def test_an_engine_failure_answers_the_request_and_counts_as_a_miss(tmp_path: Path) -> None:
    transport = ReplayTransport(sampling_cassette(tmp_path / "s.cassette.json"))
    receive = transport.engine.receive

    def broken(message: Any) -> Any:
        if message.get("method") == "tools/list":
            raise KeyError("boom")
        return receive(message)

    transport.engine.receive = broken  # type: ignore[method-assign]
    with anyio.fail_after(TIMEOUT):
        async with Client(transport, mode="legacy") as client:
            with pytest.raises(MCPError, match="replay engine failed: KeyError"):
                await client.session.list_tools()
    assert transport.report is not None
    assert [m["method"] for m in transport.report.misses] == ["tools/list"]


# --- choosing by record mode -----------------------------------------------------------------


def test_mode_none_replays_and_never_needs_a_command(tmp_path: Path) -> None:
    path = sampling_cassette(tmp_path / "a.cassette.json")
    assert isinstance(cassette_transport(path, mode="none"), ReplayTransport)
    assert isinstance(cassette_transport(path, mode="once", command=NOTES), ReplayTransport)


def test_mode_once_records_only_when_the_cassette_is_missing(tmp_path: Path) -> None:
    assert isinstance(
        cassette_transport(tmp_path / "new.cassette.json", mode="once", command=NOTES), RecordTransport
    )
    assert isinstance(
        cassette_transport(tmp_path / "new.cassette.json", mode="rewrite", command=NOTES), RecordTransport
    )


def test_a_recording_mode_without_a_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"needs command=\[\.\.\.\]"):
        cassette_transport(tmp_path / "new.cassette.json", mode="once")


def test_mode_none_with_no_cassette_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        cassette_transport(tmp_path / "missing.cassette.json")


def test_new_episodes_needs_a_command_and_records_all_when_there_is_no_cassette(tmp_path: Path) -> None:
    path = sampling_cassette(tmp_path / "a.cassette.json")
    with pytest.raises(UsageError, match="new_episodes"):
        cassette_transport(path, mode="new_episodes")
    assert isinstance(cassette_transport(path, mode="new_episodes", command=NOTES), EpisodesTransport)
    missing = tmp_path / "none-yet.cassette.json"
    assert isinstance(cassette_transport(missing, mode="record_missing", command=NOTES), RecordTransport)


@pytest.mark.slow
async def test_new_episodes_replays_hits_records_misses_and_the_result_replays_strictly(
    tmp_path: Path,
) -> None:
    path = tmp_path / "episodes.cassette.json"
    with anyio.fail_after(60):
        async with replay_session(path, mode="once", command=NOTES) as session:
            first = await session.call_tool("read_note", {"name": "welcome"})
        async with open_replay(path, mode="new_episodes", command=NOTES) as replay:
            again = await replay.session.call_tool("read_note", {"name": "welcome"})
            new = await replay.session.call_tool("write_note", {"name": "b", "text": "fresh"})
        assert replay.report is not None
        assert replay.report.recorded >= 1 and not replay.report.misses
        assert dump(again) == dump(first)
        async with open_replay(path, mode="none", strict_order=False) as strict:
            assert dump(await strict.session.call_tool("read_note", {"name": "welcome"})) == dump(first)
            assert dump(await strict.session.call_tool("write_note", {"name": "b", "text": "fresh"})) == dump(
                new
            )
    assert strict.report is not None and not strict.report.misses
    calls = [m.message["params"]["name"] for m in load_cassette(path).messages if m.method == "tools/call"]
    assert calls == ["read_note", "write_note"]


# --- recording -------------------------------------------------------------------------------


async def test_a_recording_replays_with_identical_results(tmp_path: Path) -> None:
    path = tmp_path / "rec.cassette.json"
    with anyio.fail_after(30):
        async with replay_session(path, mode="once", command=NOTES) as session:
            live = await session.call_tool("write_note", {"name": "a", "text": "one two"})
        async with replay_session(path, mode="once", command=NOTES) as session:
            replayed = await session.call_tool("write_note", {"name": "a", "text": "one two"})
    assert dump(replayed) == dump(live)
    cassette = load_cassette(path)
    assert cassette.meta["exit"] == {"code": None, "signal": None, "reason": "client-closed"}
    assert cassette.server["handshake"] == "initialize"
    assert [m.method for m in cassette.messages if m.direction == "client"] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/list",
    ]


async def test_mcp_client_in_auto_mode_records_the_modern_handshake_and_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "auto.cassette.json"
    with anyio.fail_after(30):
        async with Client(RecordTransport(path, NOTES), mode="auto") as client:
            live = await client.call_tool("list_notes", {})
        replay = ReplayTransport(path)
        async with Client(replay, mode="auto") as client:
            replayed = await client.call_tool("list_notes", {})
        async with replay_session(path) as session:  # follows the recorded server/discover handshake
            again = await session.call_tool("list_notes", {})
            assert session.discover_result is not None
    assert dump(replayed) == dump(live) == dump(again)
    assert load_cassette(path).server["attempts"] == [{"method": "server/discover"}]
    assert replay.report is not None and replay.report.clean


async def test_a_server_that_dies_before_a_word_keeps_the_cassette_and_is_one_server_start_error(
    tmp_path: Path,
) -> None:
    """Record mode all with a typo in the server's path (python starts, then exits 2): the
    cassette used to be replaced by one whose every request went unanswered."""
    from harn_mcp_mock.errors import ServerStartError

    path = tmp_path / "x.cassette.json"
    with anyio.fail_after(TIMEOUT):
        async with record_session(path, NOTES) as session:
            await session.list_tools()
    before = path.read_bytes()
    typo = [sys.executable, str(tmp_path / "no_such_server.py")]
    with anyio.fail_after(TIMEOUT), pytest.raises(ServerStartError, match="ended the session before writing"):
        async with Client(RecordTransport(path, typo, errlog=sys.stderr), mode="legacy") as client:
            await client.list_tools()
    assert path.read_bytes() == before
    assert not journal_path(path).exists()


async def test_a_server_that_cannot_start_is_a_server_start_error_and_leaves_no_journal(
    tmp_path: Path,
) -> None:
    from harn_mcp_mock.errors import ServerStartError

    path = tmp_path / "x.cassette.json"
    with anyio.fail_after(TIMEOUT), pytest.raises(ServerStartError, match="cannot start the server"):
        async with record_session(path, [str(tmp_path / "no-such-server")]):
            pass
    assert [p async for p in anyio.Path(tmp_path).iterdir()] == []


# --- the docs --------------------------------------------------------------------------------


def python_blocks(doc: Path) -> list[str]:
    return [part.split("```", 1)[0] for part in doc.read_text().split("```python\n")[1:]]


@pytest.mark.slow
def test_every_example_in_the_python_api_docs_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = REPO / "docs" / "python-api.md"
    blocks = python_blocks(doc)
    assert len(blocks) == 8
    for block in blocks:
        code = block.replace('"examples/servers/notes_server.py"', repr(NOTES[1]))
        exec(compile(code, str(doc), "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out
    miss = next(line for line in printed.splitlines() if line.startswith("harn-mcp-mock replay:"))
    assert f"\n{miss}\n" in doc.read_text()


@pytest.mark.e2e
async def test_new_episodes_runs_in_process_and_appends_a_real_servers_new_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, time_command: list[str]
) -> None:
    from harn_mcp_mock.jsonrpc import stdio as spawning

    time_server = time_command
    path = tmp_path / "time.cassette.json"
    with anyio.fail_after(60):
        async with replay_session(path, mode="once", command=time_server) as session:
            await session.call_tool("get_current_time", {"timezone": "UTC"})
        started: list[list[str]] = []
        real_popen = spawning.subprocess.Popen

        def popen(args: list[str], **kwargs: Any) -> Any:
            started.append(list(args))
            return real_popen(args, **kwargs)

        async def no_child(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("new_episodes must not start a child harn-mcp-mock")

        monkeypatch.setattr(spawning.subprocess, "Popen", popen)
        monkeypatch.setattr(anyio, "open_process", no_child)
        async with open_replay(path, mode="new_episodes", command=time_server) as replay:
            converted = await replay.session.call_tool(
                "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
            )
    assert started == [time_server]  # the live server, started on the miss: nothing else
    assert not converted.is_error
    assert replay.report is not None and replay.report.recorded == 1 and not replay.report.misses
    calls = [m.message["params"]["name"] for m in load_cassette(path).messages if m.method == "tools/call"]
    assert calls == ["get_current_time", "convert_time"]
