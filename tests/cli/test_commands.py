"""The command bodies: `run --plan`, output paths refused up front, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harn_mcp_mock.cli import apps
from harn_mcp_mock.scoring.stats import detectable_drop

TIME_CASSETTE = Path(__file__).resolve().parents[2] / "cassettes" / "time.cassette.json"


def test_run_plan_prints_the_trials_and_the_detectable_drop_and_runs_nothing(tmp_path: Path) -> None:
    baseline = tmp_path / "results.json"
    group = {"world": "bank", "faults": None, "tasks": [{"task": "pay-rent", "c": 3, "n": 4}]}
    baseline.write_text(json.dumps({"format": "harn-mcp-mock/eval", "version": 2, "groups": [group]}))
    out = tmp_path / "never"
    args = ["run", "--spec", "bank", "--k", "16", "--faults", "flaky", "--out", str(out), "--plan"]
    result = CliRunner().invoke(apps.mock.app, [*args, "--baseline", str(baseline)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        lines[0]
        == "plan: 128 trials: 8 task x fault profile pairs of bank, k=16 each (nothing runs with --plan)"
    )
    assert f"  from 1.00: {detectable_drop(1.0, 16):.3f}" in lines
    assert f"  bank/pay-rent (faults none) at 0.75: {detectable_drop(0.75, 16):.3f}" in lines
    assert not out.exists()  # nothing ran, nothing was written
    bad = CliRunner().invoke(apps.mock.app, [*args, "--alpha", "2"])
    assert bad.exit_code == 2 and "--alpha: alpha must be between 0 and 1" in bad.output


def test_verify_with_a_report_path_it_cannot_write_is_one_line_and_exit_2_not_1(tmp_path: Path) -> None:
    """Exit 1 would say the cassette drifted; on the start-up fast path this was a traceback."""
    import subprocess
    import sys

    from tests.echo_cassette import echo_cassette

    cassette = tmp_path / "echo.cassette.json"
    echo_cassette(cassette, "hi")
    (tmp_path / "out").mkdir()
    cmd = [sys.executable, "-m", "harn_mcp_mock", "verify", "--cassette", str(cassette)]
    result = subprocess.run(
        [*cmd, "--candidate", str(cassette), "--report", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"harn mcp mock verify: error: {tmp_path / 'out'}: cannot write it: it is a folder"
    ]


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (["world", "--spec", "notes"], "--state-out"),
        (["world", "--spec", "notes"], "--report"),
        (["replay", "--cassette", str(TIME_CASSETTE)], "--report"),
        (["replay", "--http", "--cassette", str(TIME_CASSETTE)], "--report"),
    ],
)
@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_an_output_file_that_cannot_be_written_is_refused_before_serving(
    command: list[str], flag: str, where: str, tmp_path: Path
) -> None:
    """It failed at the end of the session, after the agent had done all its work. The client
    here never closes stdin: only a check made before serving lets the process end."""
    import subprocess
    import sys

    (tmp_path / "out").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    target = tmp_path / ("out" if where == "folder" else "notes.txt/state.json")
    argv = [sys.executable, "-m", "harn_mcp_mock", *command, flag, str(target)]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        try:
            code = proc.wait(timeout=60)
        finally:
            proc.kill()
        stdout, stderr = proc.communicate()
    said = "it is a folder" if where == "folder" else f"{tmp_path / 'notes.txt'} is a file, not a folder"
    prog = "harn mcp mock " + command[0]
    assert (code, stdout, stderr.decode().splitlines()) == (
        2,
        b"",
        [f"{prog}: error: {target}: cannot write it: {said}"],
    )


@pytest.mark.parametrize("command", ["verify", "eval"])
def test_verify_and_eval_refuse_their_report_path_before_comparing_or_scoring(
    command: str, tmp_path: Path
) -> None:
    """The inputs are bad too (absent): the report's path is refused first, as it is what the
    command would otherwise fail on after the work (a live verify runs the whole cassette)."""
    (tmp_path / "out").mkdir()
    absent = str(tmp_path / "absent.json")
    args = {
        "verify": ["verify", "--cassette", absent, "--candidate", absent],
        "eval": ["eval", "--spec", "notes", "--state", absent],
    }[command]
    result = CliRunner().invoke(apps.mock.app, [*args, "--report", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"harn mcp mock {command}: error: {tmp_path / 'out'}: cannot write it: it is a folder"
    ]
