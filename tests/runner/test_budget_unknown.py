"""A budget and no usage reported (issue 36, item 4): with ``--max-tokens``/``--max-cost`` a trial
whose agent reported no usage at all is ``usage_unknown`` (its spending cannot be judged), never a
silent PASS: in its record, its world's documents, results.json and the summary; each run judges
it again by its own budget. Without a budget nothing changes.

Real agent processes (the scripted agent solves the task for real, reporting nothing); every wait
is bounded by a subprocess timeout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harn_mcp_mock.runner.budget import Budget, Usage

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
WAIT = 120
UNKNOWN = "no usage reported: --max-tokens 100 cannot be judged"


def run_cli(tmp_path: Path, out: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """``harn mcp mock run`` of the scripted agent (which reports no usage) on one task."""
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent",
         "--workers", "1", "--out", out, *flags, "--", sys.executable, str(SCRIPTED), "--harn-trial",
         "good"],
        cwd=tmp_path, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip


def trial_files(out: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    folder = out / "trials" / "bank" / "pay-rent" / "none" / "1"
    record, state, report = (
        json.loads((folder / name).read_text()) for name in ("trial.json", "state.json", "report.json")
    )
    return record, state, report


def only_run(out: Path) -> dict[str, Any]:
    (run,) = json.loads((out / "results.json").read_text())["runs"]
    assert isinstance(run, dict)
    return run


def test_a_budget_names_why_a_trial_without_usage_cannot_be_judged() -> None:
    assert Budget(max_tokens=100).unknown(None) == UNKNOWN
    assert Budget(max_tokens=100).unknown(Usage()) == UNKNOWN  # nothing summed, nothing invalid
    assert (
        Budget(max_tokens=5, max_cost=0.5).unknown(None)
        == "no usage reported: --max-tokens 5 and --max-cost $0.5 cannot be judged"
    )
    assert Budget(max_tokens=100).unknown(Usage(1, 0, calls=1)) is None  # reported: judged
    assert Budget(max_tokens=100).unknown(Usage(invalid=1, invalid_reason="x")) is None  # usage_invalid
    assert Budget(run_max_cost=1).unknown(None) is None and Budget().unknown(None) is None


def test_max_tokens_and_no_usage_reported_is_usage_unknown_and_fails(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "out", "--max-tokens", "100")
    assert done.returncode == 0, done.stderr
    record, state, report = trial_files(tmp_path / "out")
    assert record["usage_unknown"] == UNKNOWN and "usage" not in record
    assert state["usage_unknown"] == UNKNOWN and report["usage_unknown"] == UNKNOWN
    run = only_run(tmp_path / "out")
    assert run["goal_match"] and not run["passed"] and run["usage_unknown"] == UNKNOWN  # solved
    assert "1 usage_unknown" in done.stdout, done.stdout
    assert f"usage_unknown: {UNKNOWN}" in done.stdout  # the cause, as run's summary names it
    # The same run without a budget: nothing reruns, the trial is judged again and passes.
    again = run_cli(tmp_path, "out")
    assert again.returncode == 0, again.stderr
    run = only_run(tmp_path / "out")
    assert run["passed"] and "usage_unknown" not in run


def test_no_budget_and_no_usage_is_unchanged(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "out")
    assert done.returncode == 0, done.stderr
    record, state, report = trial_files(tmp_path / "out")
    assert not {"usage", "usage_unknown", "over_budget"} & (record.keys() | state.keys() | report.keys())
    run = only_run(tmp_path / "out")
    assert run["passed"] and "usage_unknown" not in run
    assert "usage_unknown" not in done.stdout
