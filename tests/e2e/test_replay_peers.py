"""Differential tests of replay with real peers: record a real server, replay it, same results.

For ``@modelcontextprotocol/server-everything`` (tools, progress, sampling, elicitation, roots,
logging, resources, prompts, completion) and ``mcp-server-time``, each in both client modes of the
official ``mcp`` SDK ``Client`` (``auto``: ``server/discover`` probe, then fallback; ``legacy``:
``initialize`` only), the scenario drivers of :mod:`tests.e2e.scenarios` run once through
``python -m harn_mcp_mock record --cassette F -- <server command>`` (the live run; its result is
what the client saw of the real server) and are then pointed at the cassette alone:

* ``python -m harn_mcp_mock replay --strict --report R --cassette F`` gives the client exactly the
  same normalised result, exits 0 (so ``--strict`` found no miss, no unused interaction and no
  client answer differing from the recording), and its report says ``ok`` with zero misses;
* on the wire, the replay sends the recorded server messages, all of them, in the recorded order,
  with only JSON-RPC ids (and progress tokens) rewritten: observed by recording the replay itself;
* in process, ``harn_mcp_mock.api.replay_session(F)`` answers a recorded tool call with the very
  result the live server sent, and ``mcp.Client(harn_mcp_mock.api.ReplayTransport(F))`` lists the
  tools and calls them with the live results;
* a cassette recorded in ``legacy`` mode serves a client in ``auto`` mode: the replay answers its
  ``server/discover`` probe with -32601 as a classic server does, the client falls back to
  ``initialize``, and the results equal the legacy run's.

Timer-driven server messages. server-everything also sends messages from timers: a ``roots/list``
request 350 ms after ``notifications/initialized`` and a log line once the roots arrive (and, had
the scenario left it on, a simulated log message every 5 s). A replay has no timers: it sends each
recorded server message at the point of the request/response sequence where it was recorded (with
the client request that was in flight, or right after the response that preceded it), never after
a delay of its own. The client-side results cannot tell: the scenario already reports roots
requests as a bool and log messages as a distinct, sorted set, because their number depends on
timing even between two live runs. The wire test shows the replay reproduces the recorded ones
exactly, whatever their number was.

Each (server, mode) pair is recorded once per module and shared by the tests.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from harn_mcp_mock import api
from harn_mcp_mock.cassette.model import Cassette, Message, journal_path, load_cassette
from tests.e2e import scenarios
from tests.e2e.peers import WAIT
from tests.e2e.scenarios import run_everything, run_time

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e/test_replay_peers")]


HANDSHAKE_ERA = "2025-11-25"
METHOD_NOT_FOUND = -32601

Driver = Callable[..., Awaitable[dict[str, Any]]]
DRIVERS: dict[str, Driver] = {"everything": run_everything, "time": run_time}
CASES = [("everything", "auto"), ("everything", "legacy"), ("time", "auto"), ("time", "legacy")]
LEGACY_CASES = [case for case in CASES if case[1] == "legacy"]


def _ids(cases: list[tuple[str, str]]) -> list[str]:
    return [f"{server}-{mode}" for server, mode in cases]


def record_argv(cassette: Path, command: list[str]) -> list[str]:
    # The server exits on its stdin's EOF: the shutdown timeout only bounds a hang. At the 5 s
    # default, mcp-server-time tearing down on a loaded machine (load average 12) was SIGTERMed.
    return [
        *[sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette)],
        *["--shutdown-timeout", str(WAIT), "--", *command],
    ]


def replay_argv(cassette: Path, report: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "replay",
        "--strict",
        "--report",
        str(report),
        "--cassette",
        str(cassette),
    ]


# The SDK's stdio client does not expose the server's exit code: this transparent shim runs the
# command with the same stdin/stdout/stderr, writes its exit code to a file, and exits with it.
_EXIT_CODE_SHIM = (
    "import subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(str(code))\n"
    "sys.exit(code)\n"
)


def exit_code_recorded(code_file: Path, argv: list[str]) -> list[str]:
    """``argv`` run through a shim that leaves its exit code in ``code_file``."""
    return [sys.executable, "-c", _EXIT_CODE_SHIM, str(code_file), *argv]


# --- the recordings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    server: str
    mode: str
    path: Path
    cassette: Cassette
    result: dict[str, Any]
    """The scenario's result through the recording proxy: what the client saw of the live server."""

    def client_requests(self) -> list[Message]:
        return [m for m in self.cassette.messages if m.direction == "client" and m.kind == "request"]

    def live_result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The ``result`` the live server sent to the (only) recorded ``method`` request with ``params``."""
        [request] = [
            m
            for m in self.client_requests()
            if m.method == method and _without_meta(m.message.get("params") or {}) == params
        ]
        [answer] = [m for m in self.cassette.messages if m.reply_to == request.seq]
        result: dict[str, Any] = answer.message["result"]
        return result


def _without_meta(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "_meta"}


class Recordings:
    """Each (server, mode) recorded once, on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._done: dict[tuple[str, str], Recorded] = {}

    def get(self, server: str, mode: str, command: list[str]) -> Recorded:
        key = (server, mode)
        if key not in self._done:
            self._done[key] = self._record(server, mode, command)
        return self._done[key]

    def _record(self, server: str, mode: str, command: list[str]) -> Recorded:
        path = self.folder / f"{server}-{mode}.cassette.json"
        stderr_path = self.folder / f"{server}-{mode}.record.stderr"
        with stderr_path.open("w", encoding="utf-8") as errlog:
            run = partial(DRIVERS[server], record_argv(path, command), mode=mode, errlog=errlog)
            result = anyio.run(run)
        stderr = stderr_path.read_text(encoding="utf-8")
        assert path.is_file() and not journal_path(path).exists(), f"the recording did not finish:\n{stderr}"
        cassette = load_cassette(path)
        assert cassette.complete, stderr
        assert cassette.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}, stderr
        assert result["stream_errors"] == [], result["stream_errors"]
        return Recorded(server, mode, path, cassette, result)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Recordings:
    return Recordings(tmp_path_factory.mktemp("replay-cassettes"))


@pytest.fixture
def recorded(request: pytest.FixtureRequest, recordings: Recordings) -> Recorded:
    """The recording of the ``(server, mode)`` this test is parametrized with (made at setup)."""
    server, mode = request.param
    command: list[str] = request.getfixturevalue(f"{server}_command")
    return recordings.get(server, mode, command)


def _read_report(path: Path, stderr: str) -> dict[str, Any]:
    assert path.is_file(), f"the replay wrote no report; its stderr:\n{stderr}"
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report


def _assert_clean(report: dict[str, Any], stderr: str) -> None:
    assert report["ok"] is True, (report, stderr)
    assert report["misses"] == [], stderr
    assert report["unused"] == []
    assert report["answer_mismatches"] == []
    assert report["recorded"] == 0


# --- the same client script against the replay process ----------------------------------------


@pytest.mark.parametrize("recorded", CASES, ids=_ids(CASES), indirect=True)
async def test_strict_replay_gives_the_client_the_live_results(recorded: Recorded, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    code_file = tmp_path / "replay.exit-code"
    stderr_path = tmp_path / "replay.stderr"
    command = exit_code_recorded(code_file, replay_argv(recorded.path, report_path))
    with stderr_path.open("w", encoding="utf-8") as errlog:
        replayed = await DRIVERS[recorded.server](command, mode=recorded.mode, errlog=errlog)
    stderr = stderr_path.read_text(encoding="utf-8")

    # Whole-result equality: handshake facts, every step's result, progress, sampling and
    # elicitation requests, roots, log messages and notification counts.
    assert replayed == recorded.result
    assert replayed["stream_errors"] == []

    # The replay exited by itself once the client closed its stdin, with 0: under --strict, no
    # request missed, every recorded interaction was used, and every client answer (roots,
    # sampling, elicitation) was the recorded one.
    assert code_file.is_file(), f"the replay did not exit by itself; its stderr:\n{stderr}"
    assert code_file.read_text(encoding="utf-8") == "0", stderr
    report = _read_report(report_path, stderr)
    _assert_clean(report, stderr)
    assert report["cassette"] == str(recorded.path)
    # Every request the client made was answered from the cassette, one per recorded request.
    assert report["hits"] == report["requests"] == len(recorded.client_requests())


def _wire(message: Any) -> Any:
    """A message as compared on the wire: without its JSON-RPC id, a progress token as ``<token>``."""
    assert isinstance(message, dict), message
    out = {k: v for k, v in message.items() if k != "id"}
    if out.get("method") == "notifications/progress":
        out["params"] = {**out["params"], "progressToken": "<token>"}
    return out


def _traffic(cassette: Cassette) -> dict[str, list[Any]]:
    """The messages of each direction, in order; the client's answers to server requests apart."""
    out: dict[str, list[Any]] = {"server": [], "client requests": [], "client answers": []}
    for m in cassette.messages:
        if m.direction == "server":
            out["server"].append([m.kind, _wire(m.message)])
        elif m.kind in ("request", "notification"):
            out["client requests"].append([m.kind, _wire(m.message)])
        else:
            out["client answers"].append([m.kind, _wire(m.message)])
    return out


@pytest.mark.parametrize("recorded", CASES, ids=_ids(CASES), indirect=True)
async def test_on_the_wire_the_replay_sends_exactly_the_recorded_server_messages(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Seen through ``harn mcp mock record`` (proven transparent by test_record_peers)."""
    seen_path = tmp_path / "replay-seen.cassette.json"
    stderr_path = tmp_path / "stderr"
    command = record_argv(seen_path, replay_argv(recorded.path, tmp_path / "report.json"))
    with stderr_path.open("w", encoding="utf-8") as errlog:
        replayed = await DRIVERS[recorded.server](command, mode=recorded.mode, errlog=errlog)
    stderr = stderr_path.read_text(encoding="utf-8")
    assert replayed == recorded.result
    seen = load_cassette(seen_path)
    # The recorder's exit record is the replay's own exit code (--strict: 0 means clean).
    assert seen.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}, stderr

    live, replay = _traffic(recorded.cassette), _traffic(seen)
    # Every server message (responses, notifications, server-to-client requests, timer-driven
    # ones included), byte for byte in content, in the recorded order.
    assert replay["server"] == live["server"]
    # The same client, so the same requests; and the same answers to the re-issued server requests.
    assert replay["client requests"] == live["client requests"]
    assert replay["client answers"] == live["client answers"]


# --- in process: the Python API ----------------------------------------------------------------


async def _fixed_roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[scenarios.FIXED_ROOT])


# One tool call per cassette: (tool, arguments, the scenario's step label, its normalisation).
ONE_CALL: dict[str, tuple[str, dict[str, Any], str, tuple[scenarios.Rule, ...]]] = {
    "everything": (
        "echo",
        {"message": "hello from harn e2e ✓"},
        "tools/call echo",
        scenarios.EVERYTHING_RULES,
    ),
    "time": (
        "get_current_time",
        {"timezone": "UTC"},
        "tools/call get_current_time UTC",
        scenarios.TIME_NOW_RULES,
    ),
}


@pytest.mark.parametrize("recorded", CASES, ids=_ids(CASES), indirect=True)
async def test_replay_session_answers_a_tool_call_with_the_live_result(recorded: Recorded) -> None:
    name, arguments, step, rules = ONE_CALL[recorded.server]
    events: list[str] = []
    with anyio.fail_after(WAIT):
        async with api.replay_session(
            recorded.path, on_event=events.append, list_roots_callback=_fixed_roots
        ) as session:
            result = await session.call_tool(name, arguments)
    assert isinstance(result, types.CallToolResult), result
    # The very result the live server sent (for mcp-server-time: the recorded instant, not now).
    live = types.CallToolResult.model_validate(
        recorded.live_result("tools/call", {"name": name, "arguments": arguments})
    )
    assert result == live
    assert scenarios.normalise(scenarios.dump(result), rules) == recorded.result["steps"][step]
    assert events == []  # no miss, no client answer differing from the recording


# (server, recorded mode, client mode): each cassette in its own mode, and the legacy ones in auto.
CLIENT_CASES = [(server, mode, mode) for server, mode in CASES] + [
    (server, mode, "auto") for server, mode in LEGACY_CASES
]

# The calls the in-process client makes: (scenario step label, tool, arguments).
CLIENT_CALLS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "everything": [
        ("tools/call echo", "echo", {"message": "hello from harn e2e ✓"}),
        ("tools/call get-sum", "get-sum", {"a": 2, "b": 3.5}),
        ("tools/call get-structured-content", "get-structured-content", {"location": "Chicago"}),
    ],
    "time": [
        ("tools/call get_current_time UTC", "get_current_time", {"timezone": "UTC"}),
        (
            "tools/call convert_time UTC 09:30 Asia/Kolkata",
            "convert_time",
            {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Kolkata"},
        ),
        ("tools/call no_such_tool", "no_such_tool", {}),
    ],
}


def _rules_for(label: str) -> tuple[scenarios.Rule, ...]:
    if "get_current_time" in label:
        return scenarios.TIME_NOW_RULES
    if "convert_time" in label:
        return scenarios.TIME_CONVERT_RULES
    return scenarios.EVERYTHING_RULES


@pytest.mark.parametrize(
    ("recorded", "client_mode"),
    [((server, mode), client_mode) for server, mode, client_mode in CLIENT_CASES],
    ids=[f"{server}-{mode}-cassette-{client}-client" for server, mode, client in CLIENT_CASES],
    indirect=["recorded"],
)
async def test_mcp_client_over_replay_transport_gets_the_live_results(
    recorded: Recorded, client_mode: str
) -> None:
    transport = api.ReplayTransport(recorded.path)
    got: dict[str, Any] = {}
    with anyio.fail_after(WAIT):
        async with Client(transport, mode=client_mode, list_roots_callback=_fixed_roots) as client:
            protocol_version = client.protocol_version
            server_info = scenarios.dump(client.server_info) if client.server_info is not None else None
            got["tools/list"] = scenarios.dump(await client.list_tools())
            for label, name, arguments in CLIENT_CALLS[recorded.server]:
                try:
                    result = await client.call_tool(name, arguments)
                except MCPError as exc:  # a recorded JSON-RPC error comes back as one
                    got[label] = {"error": {"code": exc.code, "message": exc.error.message}}
                else:
                    got[label] = scenarios.normalise(scenarios.dump(result), _rules_for(label))

    live = recorded.result
    assert protocol_version == live["protocol_version"]
    assert server_info == live["server_info"]
    assert got == {label: live["steps"][label] for label in got}
    report = transport.report
    assert report is not None
    assert report.misses == []
    assert report.answer_mismatches == []
    # A legacy cassette has no server/discover: the auto client's probe is the one request the
    # replay answers itself (-32601), and that is not a miss.
    probed_without_recording = client_mode == "auto" and recorded.mode == "legacy"
    assert report.requests - report.hits == (1 if probed_without_recording else 0)


# --- a legacy cassette, an auto client ---------------------------------------------------------


@pytest.mark.parametrize("recorded", LEGACY_CASES, ids=_ids(LEGACY_CASES), indirect=True)
async def test_a_legacy_cassette_replays_for_an_auto_client_that_falls_back(
    recorded: Recorded, tmp_path: Path
) -> None:
    assert "server/discover" not in [m.method for m in recorded.client_requests()]
    seen_path = tmp_path / "replay-seen.cassette.json"
    report_path = tmp_path / "report.json"
    stderr_path = tmp_path / "stderr"
    command = record_argv(seen_path, replay_argv(recorded.path, report_path))
    with stderr_path.open("w", encoding="utf-8") as errlog:
        replayed = await DRIVERS[recorded.server](command, mode="auto", errlog=errlog)
    stderr = stderr_path.read_text(encoding="utf-8")

    # The same results as the legacy run: mcp-server-time served 2026-07-28 to the live auto
    # client, but this cassette holds a 2025-11-25 session, and the replay serves that one.
    assert replayed == recorded.result
    assert replayed["protocol_version"] == HANDSHAKE_ERA

    seen = load_cassette(seen_path)
    discover, answer, initialize = seen.messages[:3]
    assert (discover.direction, discover.kind, discover.method) == ("client", "request", "server/discover")
    assert (answer.direction, answer.kind, answer.reply_to) == ("server", "error", discover.seq)
    assert answer.message["error"]["code"] == METHOD_NOT_FOUND
    assert (initialize.direction, initialize.method) == ("client", "initialize")
    assert seen.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}, stderr

    report = _read_report(report_path, stderr)
    _assert_clean(report, stderr)
    assert report["hits"] == len(recorded.client_requests())
    assert report["requests"] == report["hits"] + 1  # the probe, answered -32601 and not a miss
