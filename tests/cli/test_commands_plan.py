"""``run --plan`` states what the run-level test of ``--baseline`` can detect beside the per-task
figures (cli/commands.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from harn_mcp_mock.cli import apps
from harn_mcp_mock.scoring.stats import stratified_detectable_drop


def test_run_plan_states_the_run_level_detectable_drop(tmp_path: Path) -> None:
    args = ["run", "--spec", "bank", "--k", "3", "--out", str(tmp_path / "never"), "--plan"]
    result = CliRunner().invoke(apps.mock.app, args)
    assert result.exit_code == 0, result.output
    assert "  from 1.00: none (even a fall to 0 needs more trials)" in result.output.splitlines()
    assert stratified_detectable_drop(4, 3) == 0.536
    assert (
        "and the run-level test (stratified exact, over its 4 task(s)) a fall of every task's pass rate "
        "from 1.00 of at least: 0.536" in result.output.splitlines()
    )
    assert not (tmp_path / "never").exists()
