"""``--baseline DIR``: this run against an earlier one, per task (regressed and fixed only when
Fisher's exact test says so, else within_noise; still failing, new, gone) and per group (pass^k
deltas); ``--fail-on-regression`` turns a significant regression into exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import compare, load_baseline, parse_gates, run_episodes
from harn_mcp_mock.runner.baseline import classify, render_comparison

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]


def _eval(tasks: dict[str, tuple[int, int]], pass_k: dict[int, str]) -> dict[str, Any]:
    return {
        "format": "harn-mcp-mock/eval",
        "version": 2,
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
    before = _eval(
        {
            "a": (2, 2),
            "b": (0, 2),
            "c": (1, 2),
            "d": (2, 2),
            "e": (8, 8),
            "f": (0, 8),
            "g": (3, 6),
            "gone": (1, 1),
        },
        {1: "3/4", 2: "1/2"},
    )
    after = _eval(
        {
            "a": (1, 2),
            "b": (2, 2),
            "c": (0, 2),
            "d": (2, 2),
            "e": (0, 8),
            "f": (8, 8),
            "g": (3, 6),
            "new": (2, 2),
        },
        {1: "1/2", 2: "1/4"},
    )
    comparison = compare(before, after)
    assert [(t.task, t.status) for t in comparison.tasks] == [
        ("a", "within_noise"), ("b", "within_noise"), ("c", "within_noise"), ("d", "still passing"),
        ("e", "regressed"), ("f", "fixed"), ("g", "still failing"), ("gone", "gone"), ("new", "new"),
    ]  # fmt: skip
    by_task = {t.task: t for t in comparison.tasks}
    assert by_task["e"].p_value == pytest.approx(2 / comb(16, 8))  # the two extreme tables
    assert by_task["b"].p_value == pytest.approx(1 / 3) and by_task["new"].p_value is None
    # a stricter alpha can turn a significant change into noise
    assert classify((8, 8), (0, 8), alpha=0.0001) == ("within_noise", pytest.approx(2 / comb(16, 8)))
    (group,) = comparison.groups
    assert group.pass_power_k == {1: (Fraction(3, 4), Fraction(1, 2)), 2: (Fraction(1, 2), Fraction(1, 4))}
    doc = comparison.to_dict()
    assert doc["alpha"] == 0.05 and doc["test"] == "fisher-exact, two-sided"
    assert doc["summary"]["regressed"] == 1 and doc["summary"]["within_noise"] == 3
    assert doc["tasks"][0]["status"] == "within_noise" and doc["tasks"][0]["p_value"] == 1.0
    assert doc["tasks"][0]["pass_power_k"][1] == {"k": 2, "before": 1.0, "after": 0.0}
    text = render_comparison(comparison)
    assert "(Fisher's exact test, alpha 0.05)" in text
    assert "within_noise   bank/a (no faults): 2/2 -> 1/2 passed (p = 1)" in text
    assert "regressed      bank/e (no faults): 8/8 -> 0/8 passed (p = 0.000155)" in text
    assert "bank (no faults): pass^1 0.750 -> 0.500 (-0.250), pass^2 0.500 -> 0.250 (-0.250)" in text
    assert "bank/d" not in text  # still passing: nothing to say


def test_a_baseline_that_is_not_an_eval_result_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_baseline(tmp_path)
    (tmp_path / "results.json").write_text('{"format": "other"}')
    with pytest.raises(UsageError, match="not an eval result"):
        load_baseline(tmp_path)


def test_a_run_against_its_baseline_names_the_gone_task(tmp_path: Path) -> None:
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


BANK_TASKS = ["pay-rent", "top-up-and-pay", "refund-double-charge", "freeze-stolen-card"]


@pytest.mark.slow
def test_an_unchanged_agent_regresses_nothing_and_one_that_stops_solving_regresses_every_task(
    tmp_path: Path,
) -> None:
    good = run_episodes(["bank"], in_process("good"), out=tmp_path / "good", k=4)
    same = run_episodes(
        ["bank"], in_process("good"), out=tmp_path / "same", k=4, seed=1, baseline=tmp_path / "good"
    )
    assert same.comparison is not None and good.result.groups[0].pass_rate == 1
    assert {t.status for t in same.comparison.tasks} == {"still passing"} and not same.comparison.regressed
    broken = run_episodes(["bank"], in_process("bad"), out=tmp_path / "bad", k=4, baseline=tmp_path / "good")
    assert broken.comparison is not None
    assert [(t.task, t.status) for t in broken.comparison.tasks] == [
        (t, "regressed") for t in sorted(BANK_TASKS)
    ]
    assert all(t.p_value == pytest.approx(2 / 70) for t in broken.comparison.tasks)  # 4/4 -> 0/4
    # With too few trials the same collapse is noise: 1/1 -> 0/1 proves nothing.
    one = run_episodes(
        ["bank"], in_process("bad"), out=tmp_path / "one", tasks=["pay-rent"], baseline=tmp_path / "good"
    )
    assert one.comparison is not None
    assert [t.status for t in one.comparison.tasks if t.after] == ["within_noise"]


@pytest.mark.slow
def test_a_50_percent_agent_against_itself_stays_within_noise_over_20_seeds(tmp_path: Path) -> None:
    # The flaky style behaves well or badly by a coin of (seed, run id). Each seed's run is
    # compared with the previous seed's: 20 comparisons of 2 tasks, 6 trials each. The test's
    # chance of a false alarm at a pass rate of 1/2 is 0.6% per task (Fisher is conservative).
    tasks = ["pay-rent", "freeze-stolen-card"]
    previous = run_episodes(["bank"], in_process("flaky"), out=tmp_path / "s0", tasks=tasks, k=6, seed=0)
    rates = [previous.result.groups[0].pass_rate]
    statuses: list[str] = []
    for seed in range(1, 21):
        run = run_episodes(
            ["bank"],
            in_process("flaky"),
            out=tmp_path / f"s{seed}",
            tasks=tasks,
            k=6,
            seed=seed,
            baseline=tmp_path / f"s{seed - 1}",
        )
        assert run.comparison is not None
        statuses += [t.status for t in run.comparison.tasks]
        rates.append(run.result.groups[0].pass_rate)
    assert len(statuses) == 40
    assert "regressed" not in statuses and "fixed" not in statuses
    assert "within_noise" in statuses  # the counts did move
    assert 0.3 < float(sum(rates)) / len(rates) < 0.7  # and the agent is a coin


@pytest.mark.slow
def test_fail_on_regression_exits_1_only_for_a_significant_regression(tmp_path: Path) -> None:
    run_episodes(["bank"], in_process("good"), out=tmp_path / "good", tasks=["pay-rent"], k=4)
    cli = [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent", "--k", "4"]
    cli += ["--baseline", "good", "--fail-on-regression"]
    same = subprocess.run(
        [*cli, "--out", "same", "--", *SCRIPTED, "good"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert same.returncode == 0, same.stderr
    assert "against the baseline" in same.stdout and "regressed" not in same.stdout
    done = subprocess.run(
        [*cli, "--out", "bad", "--", *SCRIPTED, "bad"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "regressed      bank/pay-rent (no faults): 4/4 -> 0/4 passed (p = 0.0286)" in done.stdout
    assert (
        "1 task(s) regressed significantly against the baseline (alpha 0.05): bank/pay-rent (no faults)"
        in done.stderr
    )
    assert json.loads((tmp_path / "bad" / "baseline.json").read_text())["tasks"][0]["status"] == "regressed"
    # A stricter --alpha: the same collapse is within noise, and CI passes.
    strict = subprocess.run(
        [*cli, "--out", "bad", "--alpha", "0.01", "--", *SCRIPTED, "bad"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert strict.returncode == 0, strict.stderr
    assert "within_noise   bank/pay-rent (no faults): 4/4 -> 0/4 passed (p = 0.0286)" in strict.stdout


def test_a_gate_on_the_lower_bound_asks_for_evidence_not_luck(tmp_path: Path) -> None:
    # Gates live in runner/run.py; they are tested here beside the other noise-aware checks.
    gates = parse_gates(["1=0.9"], 0.9, "lower")
    assert [g.name for g in gates] == [
        "--min-pass-k 1=0.9 (lower bound)",
        "--min-pass-rate 0.9 (lower bound)",
    ]
    lucky = run_episodes(
        ["bank"], in_process("good"), out=tmp_path / "run", tasks=["pay-rent"], k=4, gates=gates
    )
    # 4 of 4 is a point estimate of 1, but its 95% interval reaches down to 0.396.
    assert lucky.failed_gates == [
        "--min-pass-k 1=0.9 (lower bound): bank (no faults) is 1.000, its lower bound "
        f"{lucky.result.groups[0].pass_power_k_interval[1][0]:.3f}",
        "--min-pass-rate 0.9 (lower bound): bank (no faults) is 1.000, its lower bound 0.396",
    ]
    on_point = run_episodes(
        ["bank"],
        in_process("good"),
        out=tmp_path / "run",
        tasks=["pay-rent"],
        k=4,
        gates=parse_gates(["1=0.9"]),
    )
    assert on_point.failed_gates == [] and on_point.exit_code == 0
    with pytest.raises(UsageError, match="use point or lower"):
        parse_gates(["1=0.9"], None, "upper")
