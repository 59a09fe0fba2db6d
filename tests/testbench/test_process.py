from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import pytest

from harn_mcp_mock.testbench import ProcessTapeDivergenceError, Testbench

REAL_POPEN = subprocess.Popen


def _tape(path: Path, *entries: dict[str, object]) -> Path:
    path.write_text(json.dumps({"version": 1, "entries": list(entries)}), encoding="utf-8")
    return path


def test_a_real_echo_is_recorded_then_replayed_without_spawning(tmp_path: Path) -> None:
    tape = tmp_path / "p.tape"
    rec = Testbench.builder().record_subprocesses(tape).build()
    with rec:
        done = subprocess.run(["echo", "hello"], capture_output=True, text=True, check=True)
    assert done.stdout == "hello\n"
    rec.finalize()
    entry = json.loads(tape.read_text())["entries"][0]
    assert (entry["program"], entry["args"], entry["cwd"], entry["stdout"]) == (
        "echo",
        ["hello"],
        None,
        "hello\n",
    )

    data = json.loads(tape.read_text())
    data["entries"][0]["stdout"] = "from the tape\n"  # proves replay does not spawn
    tape.write_text(json.dumps(data))
    with Testbench.builder().replay_subprocesses(tape).build():
        assert subprocess.check_output(["echo", "hello"]) == b"from the tape\n"
    assert subprocess.Popen is REAL_POPEN


def test_replay_fails_loudly_on_divergence(tmp_path: Path) -> None:
    tape = _tape(tmp_path / "p.tape", {"program": "git", "args": ["status"], "cwd": None, "stdout": ""})
    with Testbench.builder().replay_subprocesses(tape).build():
        with pytest.raises(ProcessTapeDivergenceError, match=r"diverged: tape has \('git', \['status'\]"):
            subprocess.run(["git", "log"], check=False)
        with pytest.raises(ProcessTapeDivergenceError, match="no process entry left"):
            subprocess.run(["git", "status"], check=False)
            subprocess.run(["git", "status"], check=False)


def test_cwd_null_is_a_wildcard_and_a_set_cwd_must_match(tmp_path: Path) -> None:
    tape = _tape(
        tmp_path / "p.tape",
        {"program": "ls", "args": [], "cwd": None, "stdout": "a\n"},
        {"program": "ls", "args": [], "cwd": "/srv", "stdout": "b\n"},
    )
    with Testbench.builder().replay_subprocesses(tape).build():
        assert subprocess.run(["ls"], cwd="/anywhere", capture_output=True).stdout == b"a\n"
        with pytest.raises(ProcessTapeDivergenceError, match="cwd='/srv'"):
            subprocess.run(["ls"], cwd="/elsewhere")


def test_replayed_duration_and_exit_code_reach_the_caller(tmp_path: Path) -> None:
    tape = _tape(
        tmp_path / "p.tape",
        {
            "program": "make",
            "args": [],
            "cwd": None,
            "stderr": "boom\n",
            "exit_code": 2,
            "duration_ms": 90_000,
        },
    )
    bench = Testbench.builder().paused_clock_at_ms(0).replay_subprocesses(tape).build()
    with bench:
        done = subprocess.run(["make"], capture_output=True)
        assert (done.returncode, done.stderr) == (2, b"boom\n")
        assert time.time() == 90.0  # allow-wall-clock: virtual
    assert bench.finalize().unused_process_entries == []


def test_unused_entries_are_reported_by_finalize(tmp_path: Path) -> None:
    tape = _tape(tmp_path / "p.tape", {"program": "true", "args": []})
    bench = Testbench.builder().replay_subprocesses(tape).build()
    with bench:
        pass
    assert [e.program for e in bench.finalize().unused_process_entries] == ["true"]


async def test_asyncio_subprocesses_record_and_replay(tmp_path: Path) -> None:
    tape = tmp_path / "p.tape"
    rec = Testbench.builder().paused_clock_at_ms().record_subprocesses(tape).build()
    with rec:
        proc = await asyncio.create_subprocess_exec("echo", "async", stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
    rec.finalize()
    assert out == b"async\n"
    with Testbench.builder().paused_clock_at_ms().replay_subprocesses(tape).build():
        proc = await asyncio.create_subprocess_exec("echo", "async", stdout=asyncio.subprocess.PIPE)
        assert await proc.communicate() == (b"async\n", None)
        assert proc.returncode == 0
