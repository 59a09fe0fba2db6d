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
