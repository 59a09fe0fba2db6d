"""A second real client against a replay: the MCP Inspector's CLI (``mcp-inspector --cli``).

The Inspector (``@modelcontextprotocol/inspector``, pinned in ``tests/e2e/package.json``; a
TypeScript client on the TypeScript SDK, not ours and not the Python SDK) is run from
``tests/e2e/node_modules`` as ``mcp-inspector --cli <server command> --method ...``. Each
invocation is its own session (``initialize``, ``notifications/initialized``, then ``tools/list``,
and for ``tools/call`` a ``tools/list`` first, which the Inspector uses to convert ``--tool-arg``
values to the types of the tool's schema). For each invocation, against server-everything and
mcp-server-time:

1. the Inspector runs against the real server;
2. it runs again against ``harn mcp mock record --cassette F -- <server command>``: the same JSON
   output, and ``F`` holds exactly what the Inspector sent;
3. it runs against ``harn mcp mock replay --strict --report R --cassette F`` and prints output
   identical, byte for byte, to the recorded run's (mcp-server-time's current time included:
   the replay answers with the recorded instant), and the report is clean;
4. a ``tools/call`` that was never recorded makes the Inspector fail with the replay's -32050
   miss error, its explanation (the differing argument) printed as the Inspector's error.

Runs 1 and 2 can differ only in mcp-server-time's clock (the current time, today's date), which
is normalised with the rules of :mod:`tests.e2e.scenarios` for that comparison alone.

The launcher of the Inspector drops a ``--`` from its argv, and ``record`` needs one before a
server command with options of its own (``--local-timezone``), so the recording proxy is started
through a two-line ``exec`` script; the replay command has no ``--`` and is given as it is.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.cassette.model import Cassette, journal_path, load_cassette
from tests.e2e import scenarios
from tests.e2e.peers import WAIT

pytestmark = pytest.mark.e2e

CASSETTE_MISS = -32050

# What each Inspector invocation asks, after the server command. ASCII only (it goes through argv).
ECHO_MESSAGE = "hello from the inspector"
CALLS: dict[str, dict[str, tuple[str, ...]]] = {
    "everything": {
        "tools/list": ("--method", "tools/list"),
        "echo": ("--method", "tools/call", "--tool-name", "echo", "--tool-arg", f"message={ECHO_MESSAGE}"),
        "get-sum": (
            "--method",
            "tools/call",
            "--tool-name",
            "get-sum",
            "--tool-arg",
            "a=2",
            "--tool-arg",
            "b=3.5",
        ),
    },
    "time": {
        "tools/list": ("--method", "tools/list"),
        "get_current_time": (
            "--method",
            "tools/call",
            "--tool-name",
            "get_current_time",
            "--tool-arg",
            "timezone=UTC",
        ),
        "convert_time": (
            "--method",
            "tools/call",
            "--tool-name",
            "convert_time",
            "--tool-arg",
            "source_timezone=UTC",
            "--tool-arg",
            "time=09:30",
            "--tool-arg",
            "target_timezone=Asia/Kolkata",
        ),
    },
}
CASES = [(server, call) for server, calls in CALLS.items() for call in calls]

# Rules for comparing a live run with the recorded one (two live runs, different moments).
CLOCK_RULES: dict[str, tuple[scenarios.Rule, ...]] = {
    "get_current_time": scenarios.TIME_NOW_RULES,
    "convert_time": scenarios.TIME_CONVERT_RULES,
}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=WAIT,
        cwd=cwd,
        env={**os.environ, **scenarios.BASE_SERVER_ENV},
    )


def _json_output(run: subprocess.CompletedProcess[str], what: str) -> Any:
    assert run.returncode == 0, f"{what}: the Inspector exited {run.returncode}:\n{run.stderr}"
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(
            f"{what}: the Inspector printed no JSON ({exc}):\n{run.stdout}\n{run.stderr}"
        ) from exc


def _replay_argv(cassette: Path, report: Path) -> list[str]:
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


@dataclass(frozen=True)
class InspectorRecording:
    server: str
    call: str
    direct: subprocess.CompletedProcess[str]
    """The Inspector against the real server."""
    recorded: subprocess.CompletedProcess[str]
    """The Inspector against the recording proxy in front of the real server."""
    path: Path
    cassette: Cassette
    recorder_stderr: str


class InspectorLab:
    """Runs the Inspector against real servers and through the recorder, each invocation once."""

    def __init__(self, inspector: list[str], folder: Path) -> None:
        self.inspector = inspector
        self.folder = folder
        self._done: dict[tuple[str, str], InspectorRecording] = {}

    def inspect(self, target: list[str], server: str, call: str) -> subprocess.CompletedProcess[str]:
        return _run([*self.inspector, *target, *CALLS[server][call]], self.folder)

    def recording(self, server: str, call: str, command: list[str]) -> InspectorRecording:
        key = (server, call)
        if key not in self._done:
            self._done[key] = self._record(server, call, command)
        return self._done[key]

    def _record(self, server: str, call: str, command: list[str]) -> InspectorRecording:
        name = f"{server}-{call.replace('/', '-')}"
        path = self.folder / f"{name}.cassette.json"
        log = self.folder / f"{name}.record.stderr"
        script = self.folder / f"{name}.record.sh"
        # The server exits on its stdin's EOF: the shutdown timeout only bounds a hang (the 5 s
        # default SIGTERMed a peer tearing down under load in test_replay_peers).
        record = [sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(path)]
        record += ["--shutdown-timeout", str(WAIT), "--", *command]
        script.write_text(
            f"#!/bin/sh\nexec {shlex.join(record)} 2>>{shlex.quote(str(log))}\n", encoding="utf-8"
        )
        script.chmod(0o755)

        direct = self.inspect(command, server, call)
        recorded = self.inspect([str(script)], server, call)
        recorder_stderr = log.read_text(encoding="utf-8") if log.exists() else ""
        assert path.is_file() and not journal_path(path).exists(), f"no finished cassette:\n{recorder_stderr}"
        return InspectorRecording(server, call, direct, recorded, path, load_cassette(path), recorder_stderr)


@pytest.fixture(scope="module")
def lab(inspector_command: list[str], tmp_path_factory: pytest.TempPathFactory) -> InspectorLab:
    return InspectorLab(inspector_command, tmp_path_factory.mktemp("inspector"))


def _server_command(request: pytest.FixtureRequest, server: str) -> list[str]:
    """The command of the real server (``everything_command`` or ``time_command``)."""
    command: list[str] = request.getfixturevalue(f"{server}_command")
    return command


@pytest.mark.parametrize(("server", "call"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
def test_inspector_output_from_the_replay_is_identical_to_the_real_servers(
    lab: InspectorLab, server: str, call: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    rec = lab.recording(server, call, _server_command(request, server))

    # 1-2. Real server, and the same through the recorder: the proxy changes nothing the Inspector sees.
    direct = _json_output(rec.direct, f"{server} {call}, real server")
    recorded = _json_output(rec.recorded, f"{server} {call}, through the recorder")
    rules = CLOCK_RULES.get(call, ())
    assert scenarios.normalise(recorded, rules) == scenarios.normalise(direct, rules)
    if call == "tools/list":
        assert recorded["tools"], "the Inspector listed no tools"
    else:
        assert recorded["content"], recorded
        assert recorded.get("isError", False) is False, recorded

    # The cassette holds the Inspector's session and nothing else.
    cassette = rec.cassette
    assert cassette.complete
    assert cassette.meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}, rec.recorder_stderr
    client = [(m.kind, m.method) for m in cassette.messages if m.direction == "client"]
    expected = [
        ("request", "initialize"),
        ("notification", "notifications/initialized"),
        ("request", "tools/list"),
    ]
    if call != "tools/list":
        expected.append(("request", "tools/call"))
    assert client == expected
    if call != "tools/list":
        [made] = [m for m in cassette.messages if m.method == "tools/call"]
        assert made.message["params"]["name"] == call

    # 3. The replay: byte-identical output, and a clean strict run.
    report_path = tmp_path / "report.json"
    replayed = lab.inspect(_replay_argv(rec.path, report_path), server, call)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == rec.recorded.stdout
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["ok"] is True, report
    assert report["misses"] == [] and report["unused"] == [] and report["answer_mismatches"] == []
    requests = [m for m in cassette.messages if m.direction == "client" and m.kind == "request"]
    assert report["hits"] == report["requests"] == len(requests)


# A tools/call the recording never saw: (the recorded invocation, the argument changed, its recorded value).
MISSES: dict[str, tuple[str, str, str]] = {
    "everything": ("echo", "message=a message nobody recorded", f"message: recorded '{ECHO_MESSAGE}'"),
    "time": ("get_current_time", "timezone=Europe/Paris", "timezone: recorded 'UTC'"),
}


@pytest.mark.parametrize("server", list(MISSES))
def test_inspector_prints_the_replay_miss_for_an_unrecorded_tools_call(
    lab: InspectorLab, server: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    call, changed_arg, recorded_value = MISSES[server]
    rec = lab.recording(server, call, _server_command(request, server))
    report_path = tmp_path / "report.json"
    args = list(CALLS[server][call])
    args[args.index("--tool-arg") + 1] = changed_arg
    missed = _run([*lab.inspector, *_replay_argv(rec.path, report_path), *args], tmp_path)

    assert missed.returncode != 0
    assert missed.stdout.strip() == "", "no result may be printed for a miss"
    key, _, value = changed_arg.partition("=")
    # What the Inspector prints: its own prefix, the SDK's "MCP error <code>:", then the replay's
    # explanation naming the argument that differs.
    assert f"Failed to call tool {call}: MCP error {CASSETTE_MISS}: " in missed.stderr, missed.stderr
    assert "harn-mcp-mock replay: no recorded interaction matches this tools/call request" in missed.stderr
    assert f"params.arguments.{recorded_value}, got '{value}'" in missed.stderr, missed.stderr
    assert f"params.arguments.{key}" in missed.stderr

    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert [m["method"] for m in report["misses"]] == ["tools/call"]
    assert f"got '{value}'" in report["misses"][0]["explanation"]
    # The recorded call was never asked for; the handshake and the Inspector's tools/list were hits.
    assert [u["method"] for u in report["unused"]] == ["tools/call"]
    assert report["hits"] == report["requests"] - 1
