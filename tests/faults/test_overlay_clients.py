"""``replay --faults`` from the outside: the CLI over stdio and HTTP with clients we did not
write (the SDK's stdio client, fastmcp's HTTP client), the report and tape, the dry run, the
same faults in another process, and the pytest marker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.tape.model import load_tape
from tests.echo_cassette import echo_cassette
from tests.faults.sequences import ARGS, SECOND_THIRD_FIFTH, SEEN, seen_calls
from tests.serving import url_process
from tests.test_pytest_plugin import run

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
TIME = str(ROOT / "cassettes" / "time.cassette.json")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60


def rules_file(folder: Path, rules: list[dict[str, Any]]) -> str:
    path = folder / "faults.json"
    path.write_bytes(orjson.dumps(rules))
    return str(path)


async def stdio_calls(argv: list[str], calls: int) -> list[str]:
    """What the SDK's stdio client sees for ``calls`` convert_time calls against ``harn ARGV``."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "harn_mcp_mock", *argv])
    with anyio.fail_after(WAIT):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await seen_calls(session, calls)


async def test_over_stdio_the_sdk_client_sees_the_faults_and_the_report_and_tape_name_them(
    tmp_path: Path,
) -> None:
    rules = rules_file(tmp_path, SECOND_THIRD_FIFTH)
    report, tape = tmp_path / "report.json", tmp_path / "tape.ndjson"
    argv = [
        "replay",
        "--cassette",
        TIME,
        "--faults",
        rules,
        "--report",
        str(report),
        "--emit-tape",
        str(tape),
    ]
    seen = await stdio_calls(argv, 6)
    assert seen == SEEN

    fired = orjson.loads(report.read_bytes())["faults_fired"]
    assert [(f["fault"], f["kind"], f["ordinal"]) for f in fired] == [
        ("rl", "rate_limit", 2),
        ("te", "tool_error", 3),
        ("bye", "disconnect", 5),
    ]
    calls = [
        r
        for r in load_tape(tape).records
        if r.kind == "mcp_json_rpc" and r.fields.get("method") == "tools/call"
    ]
    marks = [r.fields.get("fault") for r in calls]
    assert marks == [
        None,
        {"id": "rl", "kind": "rate_limit"},
        {"id": "te", "kind": "tool_error"},
        None,
        {"id": "bye", "kind": "disconnect"},
    ]
    assert calls[-1].fields.get("unanswered") is True


async def test_another_process_with_the_same_seed_fires_the_same_faults(tmp_path: Path) -> None:
    rules = rules_file(
        tmp_path, [{"id": "p", "tool": "convert_time", "kind": "tool_error", "probability": 0.5}]
    )
    runs = []
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        report = tmp_path / f"{name}.json"
        argv = ["replay", "--cassette", TIME, "--faults", rules, "--seed", seed, "--report", str(report)]
        seen = await stdio_calls(argv, 12)
        runs.append((seen, [f["ordinal"] for f in orjson.loads(report.read_bytes())["faults_fired"]]))
    assert runs[0] == runs[1] and runs[0][1]
    assert runs[0][1] != runs[2][1]


def test_fastmcp_over_http_recovers_from_an_injected_429_by_retrying(
    tmp_path: Path, fastmcp_client: Any
) -> None:
    rules = rules_file(
        tmp_path,
        [{"id": "busy", "tool": "convert_time", "kind": "http_status", "status": 429, "on_calls": [2]}],
    )
    report = tmp_path / "report.json"
    argv = ["replay", "--http", "--cassette", TIME, "--faults", rules, "--report", str(report)]

    async def session(url: str) -> list[str]:
        seen: list[str] = []
        with anyio.fail_after(WAIT):
            async with fastmcp_client(url) as client:
                for _ in range(3):
                    for _attempt in range(3):  # fastmcp has no 429 retry of its own: the user's loop
                        try:
                            result = await client.call_tool("convert_time", ARGS)
                        except MCPError as exc:
                            seen.append(f"retry after: {exc.error.message}")
                            continue
                        seen.append("ok" if "Europe/Paris" in str(result.content) else "?")
                        break
        return seen

    with url_process(argv) as (proc, url):
        seen = anyio.run(session, url)
        proc.send_signal(2)
        assert proc.wait(timeout=WAIT) == 130
    assert seen == ["ok", "retry after: Server returned an error response", "ok", "ok"]
    fired = orjson.loads(report.read_bytes())["faults_fired"]
    assert [(f["fault"], f["kind"]) for f in fired] == [("busy", "http_status")]


def test_over_http_the_sdk_client_sees_an_in_band_rate_limit(tmp_path: Path) -> None:
    import mcp

    rules = rules_file(
        tmp_path, [{"id": "rl", "tool": "convert_time", "kind": "rate_limit", "on_calls": [1]}]
    )

    async def first_call(url: str) -> str:
        with anyio.fail_after(WAIT):
            async with mcp.Client(url, mode="legacy") as client:
                try:
                    await client.session.call_tool("convert_time", ARGS)
                except MCPError as exc:
                    return f"{exc.error.code} {exc.error.message} {exc.error.data}"
        return "no error"

    with url_process(["replay", "--http", "--cassette", TIME, "--faults", rules]) as (_, url):
        seen = anyio.run(first_call, url)
    assert (
        seen
        == "-32000 rate limited: retry after 1 s {'kind': 'rate_limit', 'status': 429, 'retry_after_ms': 1000}"
    )


def test_http_status_needs_http_and_a_bad_rule_is_exit_2_before_serving(tmp_path: Path) -> None:
    rules = rules_file(tmp_path, [{"id": "s", "kind": "http_status", "status": 503}])
    done = subprocess.run(
        [*HARN, "replay", "--cassette", TIME, "--faults", rules],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "fault 's': kind http_status needs --http" in done.stderr
    bad = rules_file(tmp_path, [{"id": "s", "kind": "ghost_success"}])
    done = subprocess.run(
        [*HARN, "replay", "--cassette", TIME, "--faults", bad],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert (
        done.returncode == 2
        and done.stderr.count("\n") == 1
        and "[0].kind: kind 'ghost_success' changes world state" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_show_faults_is_a_dry_run_that_warns_about_rules_that_never_fire(tmp_path: Path) -> None:
    rules = rules_file(
        tmp_path,
        [
            {"id": "second", "tool": "convert_time", "kind": "rate_limit", "on_calls": [2]},
            {"id": "ghost", "tool": "get_weather", "kind": "timeout"},
        ],
    )
    done = subprocess.run(
        [*HARN, "show", "--cassette", TIME, "--faults", rules], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0
    assert "second (rate_limit, tool convert_time): fires on call 2 (seq 7)" in done.stdout
    assert "ghost (timeout, tool get_weather): never fires: no tool 'get_weather'" in done.stdout
    assert "warning: fault 'ghost' can never fire" in done.stderr
    as_json = subprocess.run(
        [*HARN, "show", "--cassette", TIME, "--faults", rules, "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    plan = orjson.loads(as_json.stdout)["faults"]
    assert [r["fault"] for r in plan["rules"]] == ["second", "ghost"]


FAULTED_TEST = """
import pytest
from mcp.shared.exceptions import MCPError

def faults(kind):
    return pytest.mark.mcp_mock("echo.cassette.json", faults=[{"id": "f", "tool": "echo", "kind": kind, "on_calls": [1]}])

@pytest.mark.parametrize(
    "seen",
    [
        pytest.param("rate limited: retry after 1 s", marks=faults("rate_limit")),
        pytest.param("service unavailable: the service is down for now", marks=faults("unavailable")),
    ],
)
async def test_the_agent_retries(mcp_mock, seen):
    async with mcp_mock.session() as session:
        with pytest.raises(MCPError, match=seen):
            await session.call_tool("echo", {"text": "hi"})
        result = await session.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"

@pytest.mark.mcp_mock("echo.cassette.json", faults=[{"id": "te", "tool": "echo", "kind": "tool_error", "message": "nope"}])
async def test_a_tool_error_with_the_recording_left_unused_passes(mcp_mock):
    async with mcp_mock.session() as session:
        result = await session.call_tool("echo", {"text": "hi"})
    assert result.is_error and result.content[0].text == "nope"

@pytest.mark.mcp_mock("echo.cassette.json", faults=[{"id": "x", "kind": "meteor"}])
async def test_a_bad_rule_is_named(mcp_mock):
    async with mcp_mock.session():
        pass
"""


def test_the_pytest_marker_takes_fault_rules(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\nfilterwarnings = error\n"
    )
    echo_cassette(pytester.path / "cassettes" / "echo.cassette.json", "hi")
    pytester.makepyfile(test_faulted=FAULTED_TEST)
    result = run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*FaultRulesError: faults[[]0[]].kind: unknown fault kind 'meteor'*"])


def test_over_http_a_malformed_answer_and_a_disconnect_reach_the_sdk_client_as_such(tmp_path: Path) -> None:
    import mcp

    rules = rules_file(
        tmp_path,
        [
            {"id": "mal", "tool": "convert_time", "kind": "malformed", "on_calls": [1]},
            {"id": "bye", "tool": "convert_time", "kind": "disconnect", "on_calls": [2]},
        ],
    )

    async def calls(url: str) -> list[str]:
        seen: list[str] = []
        with anyio.fail_after(WAIT):
            async with mcp.Client(url, mode="legacy") as client:
                for _ in range(3):
                    try:
                        await client.session.call_tool("convert_time", ARGS)
                        seen.append("ok")
                    except MCPError as exc:
                        seen.append(exc.error.message.split(":")[0])
        return seen

    with url_process(["replay", "--http", "--cassette", TIME, "--faults", rules]) as (_, url):
        seen = anyio.run(calls, url)
    assert seen == ["Failed to parse JSON response", "SSE stream ended without a response", "Not Found"]


async def test_a_hang_leaves_the_decision_to_the_clients_own_timeout(tmp_path: Path) -> None:

    rules = rules_file(tmp_path, [{"id": "h", "tool": "convert_time", "kind": "hang", "on_calls": [1]}])
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "harn_mcp_mock", "replay", "--cassette", TIME, "--faults", rules]
    )
    with anyio.fail_after(WAIT):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with pytest.raises(MCPError, match="'tools/call' timed out"):
                await session.call_tool("convert_time", ARGS, read_timeout_seconds=0.2)
            again = await session.call_tool("convert_time", ARGS)  # the session goes on
    assert "Europe/Paris" in str(again.content)
