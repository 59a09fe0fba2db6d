"""`harn mcp mock run --plan`: the trials a run would start and the drop its k can detect."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from harn_mcp_mock.cli import apps
from harn_mcp_mock.scoring.stats import detectable_drop


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
