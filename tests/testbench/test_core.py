"""All axes together, through the API and the CLI; the tape is byte-identical across runs."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harn_mcp_mock.cli.testbench import app
from harn_mcp_mock.testbench import Testbench, llm_call

runner = CliRunner()

SCRIPT = textwrap.dedent(
    """
    import datetime, os, socket, subprocess, sys, time
    from harn_mcp_mock.testbench import NetworkDeniedError, llm_call

    root = sys.argv[1]
    started = time.time()  # allow-wall-clock: virtual
    time.sleep(600)  # allow-wall-clock: virtual
    reply = llm_call({"prompt": "summarise"})["text"]
    listing = subprocess.run(["ls", "-1"], capture_output=True, text=True).stdout
    with open(os.path.join(root, "report.txt"), "w") as fh:
        fh.write(f"{datetime.datetime.now(datetime.UTC).isoformat()} {reply} {listing.split()}\\n")
    os.remove(os.path.join(root, "stale.txt"))
    try:
        socket.create_connection(("192.0.2.1", 80))
    except NetworkDeniedError:
        pass
    print("elapsed", time.time() - started)  # allow-wall-clock: virtual
    sys.exit(int(sys.argv[2]))
    """
)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "stale.txt").write_text("old\n")
    llm = tmp_path / "llm.jsonl"
    llm.write_text(json.dumps({"response": {"text": "all good"}}) + "\n")
    tape = tmp_path / "p.tape"
    tape.write_text(
        json.dumps(
            {
                "version": 1,
                "entries": [
                    {"program": "ls", "args": ["-1"], "cwd": None, "stdout": "a\nb\n", "duration_ms": 1500}
                ],
            }
        )
    )
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    return {"root": root, "llm": llm, "tape": tape, "script": script, "tmp": tmp_path}


def _run(world: dict[str, Path], name: str, exit_code: str = "0") -> tuple[int, str, Path]:
    out = world["tmp"] / name
    result = runner.invoke(
        app,
        [
            "run", str(world["script"]),
            "--llm-fixture", str(world["llm"]),
            "--fs-overlay", str(world["root"]),
            "--process-replay", str(world["tape"]),
            "--emit-diff", str(out.with_suffix(".diff")),
            "--emit-tape", str(out),
            "--", str(world["root"]), exit_code,
        ],
    )  # fmt: skip
    return result.exit_code, result.output, out


def test_cli_run_composes_every_axis_and_propagates_the_exit_code(world: dict[str, Path]) -> None:
    code, output, tape = _run(world, "run1.tape", exit_code="3")
    assert code == 3, output
    assert "elapsed 601.5" in output
    assert (world["root"] / "stale.txt").exists() and not (world["root"] / "report.txt").exists()
    assert tape.with_suffix(".diff").read_text() == (
        "--- /dev/null\n+++ b/report.txt\n+2026-01-01T00:10:01.500000+00:00 all good ['a', 'b']\n"
        "--- a/stale.txt\n+++ /dev/null\n-old\n"
    )
    kinds = [json.loads(line).get("kind") for line in tape.read_text().splitlines()[1:]]
    for kind in ("clock_read", "clock_sleep", "llm_call", "process_spawn", "file_write", "file_delete"):
        assert kind in kinds


def test_two_runs_of_the_same_script_write_byte_identical_tapes(world: dict[str, Path]) -> None:
    code1, out1, tape1 = _run(world, "a.tape")
    code2, out2, tape2 = _run(world, "b.tape")
    assert (code1, code2) == (0, 0), out1 + out2
    assert tape1.read_bytes() == tape2.read_bytes()


def test_cli_reports_a_leak_as_a_one_line_error(tmp_path: Path) -> None:
    script = tmp_path / "leak.py"
    script.write_text("import socket\nsocket.create_connection(('192.0.2.1', 80))\n")
    result = runner.invoke(app, ["run", str(script)])
    assert result.exit_code == 1
    assert "network egress to 192.0.2.1:80 denied" in result.output


def test_cli_replay_fails_when_taped_calls_are_never_made(tmp_path: Path) -> None:
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    tape = tmp_path / "p.tape"
    tape.write_text(json.dumps({"version": 1, "entries": [{"program": "true", "args": []}]}))
    result = runner.invoke(app, ["replay", str(script), "--process-tape", str(tape)])
    assert result.exit_code == 1
    assert "process replay diverged: 1 taped call(s) never made" in result.output


def test_cli_refuses_contradictory_flags(tmp_path: Path) -> None:
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    result = runner.invoke(app, ["run", str(script), "--network", "real", "--allow-host", "x"])
    assert result.exit_code == 2
    assert "--allow-host/--deny-loopback need --network deny" in result.output


def test_api_composition_in_one_with_block(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("v1\n")
    llm = tmp_path / "llm.jsonl"
    llm.write_text(json.dumps({"response": {"ok": True}}) + "\n")
    tape = tmp_path / "p.tape"
    tape.write_text(json.dumps({"version": 1, "entries": [{"program": "date", "args": [], "stdout": "x\n"}]}))
    bench = (
        Testbench.builder()
        .paused_clock_at_ms(1_767_225_600_000)
        .replay_llm(llm)
        .fs_overlay(tmp_path)
        .replay_subprocesses(tape)
        .deny_network()
        .build()
    )
    with bench:
        assert llm_call({"q": 1}) == {"ok": True}
        assert subprocess.check_output(["date"]) == b"x\n"
        (tmp_path / "f.txt").write_text("v2\n")
        assert time.time() == 1_767_225_600.0  # allow-wall-clock: virtual
    result = bench.finalize()
    assert [(c.path, c.kind) for c in result.fs_diff] == [("f.txt", "modified")]
    assert result.unified_diff() == "--- a/f.txt\n+++ b/f.txt\n-v1\n+v2\n"


def test_every_patch_is_undone_on_exit(tmp_path: Path) -> None:
    import asyncio
    import builtins
    import datetime
    import os
    import socket

    tape = tmp_path / "p.tape"
    watched = {
        "open": (builtins, "open"),
        "os.stat": (os, "stat"),
        "os.remove": (os, "remove"),
        "Popen": (subprocess, "Popen"),
        "create_subprocess_exec": (asyncio, "create_subprocess_exec"),
        "asyncio.sleep": (asyncio, "sleep"),
        "getaddrinfo": (socket, "getaddrinfo"),
        "create_connection": (socket, "create_connection"),
        "time.time": (time, "time"),
        "time.monotonic": (time, "monotonic"),
        "datetime": (datetime, "datetime"),
    }
    before = {name: getattr(obj, attr) for name, (obj, attr) in watched.items()}
    assert "connect" not in vars(socket.socket)
    bench = (
        Testbench.builder()
        .paused_clock_at_ms()
        .fs_overlay(tmp_path)
        .record_subprocesses(tape)
        .deny_network()
        .build()
    )
    with bench:
        assert all(getattr(obj, attr) is not before[name] for name, (obj, attr) in watched.items())
    assert {name: getattr(obj, attr) for name, (obj, attr) in watched.items()} == before
    assert "connect" not in vars(socket.socket)


def test_the_public_names_are_exactly_these() -> None:
    import harn_mcp_mock.testbench as tb

    assert tb.__all__ == sorted(
        [
            "DEFAULT_START_MS", "FsChange", "LlmFixtureError", "LlmFixtures", "NetworkDeniedError",
            "ProcessEntry", "ProcessTapeDivergenceError", "Testbench", "TestbenchBuilder", "TestbenchError",
            "TestbenchResult", "current", "is_active", "llm_call", "render_unified_diff", "request_digest",
        ]
    )  # fmt: skip


def test_the_cli_default_start_is_the_library_default() -> None:
    from harn_mcp_mock.cli import testbench as cli
    from harn_mcp_mock.testbench import DEFAULT_START_MS

    assert cli.DEFAULT_START_MS == DEFAULT_START_MS
