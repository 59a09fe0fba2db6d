"""``--baseline``'s run-level test: an agent broken on 3 of 4 bank tasks at k=3 (each 3/3 -> 0/3,
never significant alone) regresses the run, ``--fail-on-regression`` exits 1; the drops each test
can detect are stated at the start and in ``results.json``; a blind comparison warns, and
``--strict-power`` refuses it before any agent starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.runner import run_episodes
from harn_mcp_mock.runner.baseline import render_comparison
from harn_mcp_mock.scoring.eval import EvalResult

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
BANK_TASKS = ["pay-rent", "top-up-and-pay", "refund-double-charge", "freeze-stolen-card"]
KEPT = "pay-rent"


class BrokenButOne:
    """The scripted agent, good on ``pay-rent`` and bad on every other task."""

    def __init__(self) -> None:
        self.good, self.bad = in_process("good"), in_process("bad")
        self.__qualname__ = "BrokenButOne"

    async def __call__(self, session: Any, trial: Any) -> None:
        await (self.good if trial.task == KEPT else self.bad)(session, trial)


def _wrapper(tmp_path: Path) -> list[str]:
    """A command agent doing what :class:`BrokenButOne` does, as its own process."""
    script = tmp_path / "broken_but_one.py"
    script.write_text(
        "import os, sys\n"
        f"style = 'good' if os.environ['HARN_TASK_ID'] == {KEPT!r} else 'bad'\n"
        f"os.execv(sys.executable, [sys.executable, {str(SCRIPTED)!r}, '--harn-trial', style])\n"
    )
    return [sys.executable, str(script)]


@pytest.mark.slow
def test_three_tasks_broken_at_k_3_regress_the_run_though_no_task_alone_can(tmp_path: Path) -> None:
    run_episodes(["bank"], in_process("good"), out=tmp_path / "good", k=3)
    broken = run_episodes(["bank"], BrokenButOne(), out=tmp_path / "bad", k=3, baseline=tmp_path / "good")
    comparison = broken.comparison
    assert comparison is not None
    assert sorted(t.status for t in comparison.tasks) == ["still passing"] + ["within_noise"] * 3
    assert not comparison.regressed and comparison.run_regressed
    assert comparison.run is not None and comparison.run.p_value == pytest.approx(1 / 4000)
    assert (comparison.run.before, comparison.run.after) == ((12, 12), (3, 12))
    assert (
        "  run-level: regressed over 4 task(s) compared (3 informative): 12/12 -> 3/12 passed (p = 0.00025"
        in (render_comparison(comparison))
    )
    written = json.loads((tmp_path / "bad" / "baseline.json").read_text())
    assert written["run_level"]["status"] == "regressed"
    assert written["run_level"]["p_value"] == pytest.approx(1 / 4000)
    # results.json states what the comparison could detect, and its reader reads it back.
    results = json.loads((tmp_path / "bad" / "results.json").read_text())
    assert results["detectable_drop"] == {
        "power": 0.8, "alpha": 0.05, "k": 3, "tasks": 4, "from_rate": 1.0, "per_task": None, "run_level": 0.536,
    }  # fmt: skip
    read = EvalResult.from_json(results)
    assert read.detectable is not None and read.detectable.run_level == 0.536
    assert read.to_dict() == results
    del results["detectable_drop"]  # a results.json from before the field still reads
    assert EvalResult.from_json(results).detectable is None


@pytest.mark.slow
def test_fail_on_regression_exits_1_for_a_run_level_regression_and_says_what_it_could_see(
    tmp_path: Path,
) -> None:
    run_episodes(["bank"], in_process("good"), out=tmp_path / "good", k=3)
    cli = [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--k", "3"]
    cli += ["--baseline", "good", "--fail-on-regression", "--out", "bad", "--", *_wrapper(tmp_path)]
    done = subprocess.run(cli, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "run-level: regressed over 4 task(s) compared" in done.stdout
    assert "the run as a whole regressed significantly against the baseline (alpha 0.05, p = 0.00025" in (
        done.stderr
    )
    assert (
        "with k=3 and 4 task(s), at alpha 0.05 the comparison detects (80% of the time, from a pass "
        "rate of 1.00) in one task no fall at all (Fisher), in every task at once a fall of 0.536 or more"
        in done.stderr.splitlines()[0]
    )
    assert "no regression can be detected" not in done.stderr


def test_a_blind_comparison_warns_in_one_line_and_strict_power_refuses_it_before_any_agent(
    tmp_path: Path,
) -> None:
    run_episodes(["bank"], in_process("good"), out=tmp_path / "good", tasks=[KEPT], k=2)
    agent = [sys.executable, "-c", "pass"]
    cli = [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", KEPT, "--k", "2"]
    cli += ["--baseline", "good", "--out", "blind"]
    strict = subprocess.run(
        [*cli, "--strict-power", "--", *agent], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert strict.returncode == 2, strict.stderr
    refusal = [line for line in strict.stderr.splitlines() if "no regression can be detected" in line]
    assert refusal == [
        "harn mcp mock run: error: with k=2 and 1 task(s) no regression can be detected at alpha 0.05, "
        "in one task or in the run as a whole: --k 4 at least"
    ]
    assert not (tmp_path / "blind").exists()  # refused before run.json, before any trial
    warned = subprocess.run([*cli, "--", *agent], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert json.loads((tmp_path / "blind" / "results.json").read_text())["summary"]["runs"] == 2  # it ran
    warnings = [line for line in warned.stderr.splitlines() if "no regression can be detected" in line]
    assert len(warnings) == 1 and warnings[0].startswith("harn mcp mock run: warning: ")
    alone = subprocess.run(
        [*cli[:-4], "--strict-power", "--", *agent], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert alone.returncode == 2 and "--strict-power needs --baseline DIR" in alone.stderr
