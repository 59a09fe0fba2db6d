"""Budgets: usage lines summed per trial, --max-tokens/--max-cost score a trial over_budget,
--run-max-cost stops scheduling (resumable), tokens, cost and passes per dollar in results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.budget import Budget, Usage, read_usage

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
AGENT = f"""
import json, os, runpy, sys

# A model call's usage, as an agent (or the scripted LLM endpoint) reports it, then the
# scripted agent solves the task for real.
with open(os.environ["HARN_USAGE_FILE"], "a") as usage:
    usage.write(json.dumps({{"input_tokens": 40, "output_tokens": 12, "cost_usd": 0.002}}) + "\\n")
    usage.write(json.dumps({{"input_tokens": 30, "output_tokens": 22}}) + "\\n")
sys.argv = [{str(SCRIPTED)!r}, "--harn-trial", "good"]
runpy.run_path({str(SCRIPTED)!r}, run_name="__main__")
"""


def test_usage_lines_are_summed_and_bad_ones_make_the_usage_invalid(tmp_path: Path) -> None:
    path = tmp_path / "usage.ndjson"
    assert read_usage(path) is None
    path.write_text(
        '{"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5}\n'
        '{"output_tokens": 7}\n'
        "[1, 2]\n"
        '{"input_tokens": -3}\n'
        '{"input_tokens": 4, "output_tok'  # torn: the agent was killed mid-line
    )
    usage = read_usage(path)
    assert usage == Usage(10, 12, 0.5, calls=2, invalid=3, invalid_reason="line 3: not a JSON object")
    assert usage.problem == "line 3: not a JSON object (and 2 more invalid)"
    assert Usage.from_dict(usage.to_dict()) == usage  # as trial.json keeps it, for a resume


def test_a_budget_names_what_a_trial_went_over() -> None:
    usage = Usage(100, 20, 0.25, calls=3)
    assert Budget(max_tokens=120).over(usage) is None
    assert Budget(max_tokens=119).over(usage) == "120 tokens > --max-tokens 119"
    assert Budget(max_cost=0.2).over(usage) == "$0.2500 > --max-cost $0.2"
    assert Budget().over(usage) is None and Budget(max_tokens=1).over(None) is None
    with pytest.raises(UsageError, match="--max-cost: must be a number above 0"):
        Budget(max_cost=0)


def test_a_record_is_judged_by_each_runs_budget_from_the_usage_it_recorded() -> None:
    from harn_mcp_mock.runner.folder import TrialRecord, WorldReport

    state = {"format": "harn-mcp-mock/world-state", "run_id": "t.none.t1", "seed": 1, "state": {}}
    record = TrialRecord("bank", "t", "none", 1, "t.none.t1", 1, "scored", usage=Usage(8, 4, 0.01, calls=1))
    record.world_report = WorldReport(state, {**state, "format": "harn-mcp-mock/world-report"})
    record.judge(Budget(max_tokens=10))
    assert record.over_budget == "12 tokens > --max-tokens 10"
    assert record.world_report.state["usage"] == {
        "input_tokens": 8,
        "output_tokens": 4,
        "cost_usd": 0.01,
        "calls": 1,
    }
    assert record.world_report.scored["over_budget"] == "12 tokens > --max-tokens 10"
    record.judge(Budget(max_tokens=100))  # a resume with a larger budget
    assert record.over_budget is None and "over_budget" not in record.world_report.scored
    assert record.to_json()["usage"]["calls"] == 1 and "over_budget" not in record.to_json()


def run(tmp_path: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "agent.py").write_text(AGENT)
    cli = [
        sys.executable,
        "-m",
        "harn_mcp_mock",
        "run",
        "--spec",
        "bank",
        "--task",
        "pay-rent",
        "--workers",
        "1",
    ]
    return subprocess.run(
        [*cli, "--out", out, *extra, "--", sys.executable, "agent.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_max_tokens_scores_every_trial_over_budget_and_results_show_the_spend(tmp_path: Path) -> None:
    done = run(tmp_path, "capped", "--k", "2", "--max-tokens", "10")
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "capped" / "results.json").read_text())
    runs = results["runs"]
    assert len(runs) == 2 and all(r["over_budget"] == "104 tokens > --max-tokens 10" for r in runs)
    assert all(r["goal_match"] and not r["passed"] for r in runs)  # solved, but over budget
    (task,) = results["groups"][0]["tasks"]
    assert task["c"] == 0 and task["usage"] == {
        "input_tokens": 140,
        "output_tokens": 68,
        "cost_usd": 0.004,
        "runs": 2,
        "pass_per_dollar": 0.0,
    }
    assert "over_budget: 104 tokens > --max-tokens 10" in done.stdout
    assert "2 over_budget" in done.stdout
    assert "208 tokens, $0.0040, 0.0 passes per $" in done.stdout
    # The same run with a larger budget: nothing reruns, the trials are judged again and pass.
    again = run(tmp_path, "capped", "--k", "2", "--max-tokens", "1000")
    assert again.returncode == 0, again.stderr
    group = json.loads((tmp_path / "capped" / "results.json").read_text())["groups"][0]
    assert group["tasks"][0]["c"] == 2 and group["usage"]["pass_per_dollar"] == pytest.approx(500.0)


@pytest.mark.slow
def test_run_max_cost_stops_scheduling_and_a_larger_cap_resumes(tmp_path: Path) -> None:
    """Before: exit 0 ("every trial finished") and "run the same command again to resume",
    which stopped again at once, exit 0."""
    stopped = run(tmp_path, "paid", "--k", "3", "--run-max-cost", "0.003")
    advice = (
        "harn mcp mock run: stopped by --run-max-cost 0.003: the run has spent $0.0040; raise "
        "--run-max-cost above 0.0040 to run the 1 trial(s) left (exit 3)\n"
    )
    assert stopped.returncode == 3, stopped.stderr
    assert "--run-max-cost 0.003: the run has spent $0.0040; no further trial starts\n" in stopped.stderr
    assert advice in stopped.stderr and "run the same command again" not in stopped.stderr
    assert len(json.loads((tmp_path / "paid" / "results.json").read_text())["runs"]) == 2
    again = run(tmp_path, "paid", "--k", "3", "--run-max-cost", "0.003")  # the same command: no trial
    assert again.returncode == 3 and advice in again.stderr, again.stderr
    assert len(json.loads((tmp_path / "paid" / "results.json").read_text())["runs"]) == 2
    resumed = run(tmp_path, "paid", "--k", "3", "--run-max-cost", "1")
    assert resumed.returncode == 0, resumed.stderr
    group = json.loads((tmp_path / "paid" / "results.json").read_text())["groups"][0]
    assert group["tasks"][0]["n"] == 3 and group["usage"]["cost_usd"] == pytest.approx(0.006)


def test_an_in_process_agent_reports_usage_and_max_tokens_10_scores_every_trial_over_budget(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(ROOT / "examples" / "agent"))
    from scripted_agent import in_process

    from harn_mcp_mock.runner import Budget, Trial, report_usage, run_episodes

    good = in_process("good")

    async def agent(session: object, trial: Trial) -> None:
        assert report_usage(input_tokens=40, output_tokens=12, cost_usd=0.002)  # one model call
        await good(session, trial)

    outcome = run_episodes(["bank"], agent, out=tmp_path / "run", k=2, budget=Budget(max_tokens=10))
    runs = outcome.result.runs
    assert len(runs) == 8 and all(r.score.over_budget == "52 tokens > --max-tokens 10" for r in runs)
    assert all(r.score.goal_match and not r.score.passed for r in runs)
    assert outcome.result.groups[0].usage is not None and outcome.result.groups[
        0
    ].usage.cost_usd == pytest.approx(0.016)
    assert not report_usage(1, 1)  # outside a trial (and without HARN_USAGE_FILE): nowhere to write
