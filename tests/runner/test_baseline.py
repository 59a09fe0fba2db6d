"""``--baseline DIR``: this run against an earlier one, per task (regressed, fixed, still failing,
new, gone) and per group (pass^k deltas); ``--fail-on-regression`` turns a regression into exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import compare, load_baseline, run_episodes
from harn_mcp_mock.runner.baseline import render_comparison

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]


def _eval(tasks: dict[str, tuple[int, int]], pass_k: dict[int, str]) -> dict[str, Any]:
    return {
        "format": "harn-mcp-mock/eval",
        "groups": [
            {
                "world": "bank",
                "faults": None,
                "tasks": [{"task": t, "c": c, "n": n} for t, (c, n) in tasks.items()],
                "pass_rate": {"exact": "1/2"},
                "pass_power_k": [{"k": k, "exact": v} for k, v in pass_k.items()],
            }
        ],
    }


def test_each_task_is_classified_and_each_group_gets_its_pass_k_deltas() -> None:
    before = _eval({"a": (2, 2), "b": (0, 2), "c": (1, 2), "d": (2, 2), "gone": (1, 1)}, {1: "3/4", 2: "1/2"})
    after = _eval({"a": (1, 2), "b": (2, 2), "c": (0, 2), "d": (2, 2), "new": (2, 2)}, {1: "1/2", 2: "1/4"})
    comparison = compare(before, after)
    assert [(t.task, t.status) for t in comparison.tasks] == [
        ("a", "regressed"), ("b", "fixed"), ("c", "still failing"), ("d", "still passing"),
        ("gone", "gone"), ("new", "new"),
    ]  # fmt: skip
    (group,) = comparison.groups
    assert group.pass_power_k == {1: (Fraction(3, 4), Fraction(1, 2)), 2: (Fraction(1, 2), Fraction(1, 4))}
    doc = comparison.to_dict()
    assert doc["summary"]["regressed"] == 1 and doc["tasks"][0]["pass_power_k"][1] == {
        "k": 2, "before": 1.0, "after": 0.0,
    }  # fmt: skip
    text = render_comparison(comparison)
    assert "regressed      bank/a (no faults): 2/2 -> 1/2 passed" in text
    assert "bank (no faults): pass^1 0.750 -> 0.500 (-0.250), pass^2 0.500 -> 0.250 (-0.250)" in text
    assert "bank/d" not in text  # still passing: nothing to say


def test_a_baseline_that_is_not_an_eval_result_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_baseline(tmp_path)
    (tmp_path / "results.json").write_text('{"format": "other"}')
    with pytest.raises(UsageError, match="not an eval result"):
        load_baseline(tmp_path)


def test_a_run_against_its_baseline_names_the_regressed_task_and_can_fail_ci(tmp_path: Path) -> None:
    good = run_episodes(
        ["bank"], in_process("good"), out=tmp_path / "good", tasks=["pay-rent", "freeze-stolen-card"]
    )
    assert good.result.groups[0].pass_rate == 1
    again = run_episodes(
        ["bank"], in_process("good"), out=tmp_path / "again", tasks=["pay-rent"], baseline=tmp_path / "good"
    )
    assert again.comparison is not None
    assert [(t.task, t.status) for t in again.comparison.tasks] == [
        ("freeze-stolen-card", "gone"), ("pay-rent", "still passing"),
    ]  # fmt: skip
    assert json.loads((tmp_path / "again" / "baseline.json").read_text())["summary"]["gone"] == 1
    args = ["--spec", "bank", "--task", "pay-rent", "--out", "bad", "--baseline", "good"]
    cli = [sys.executable, "-m", "harn_mcp_mock", "run", *args]
    done = subprocess.run(
        [*cli, "--fail-on-regression", "--", *SCRIPTED, "bad"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "regressed      bank/pay-rent (no faults): 1/1 -> 0/1 passed" in done.stdout
    assert "1 task(s) regressed against the baseline: bank/pay-rent (no faults)" in done.stderr
    lenient = subprocess.run(
        [*cli, "--", *SCRIPTED, "bad"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert lenient.returncode == 0 and "1 regressed" in lenient.stdout  # reported; not a failure unless asked
