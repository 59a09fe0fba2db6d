"""What ``harn mcp mock run`` prints at its end, with real agent processes: each trial's exact
cause (a timeout is a timeout, a crash names its exit code and last stderr line, a missed goal
names its predicates), a PASS whose agent crashed shown and counted apart, relative paths, one
interval per figure with a legend, and one line per trial only with ``--verbose``.

Before: a timed-out trial read ``goal: 4 of its predicates failed``, a crash was a plain
``goal:`` line, a PASS whose agent exited 1 was a plain PASS; every PASS had a ~200-character
line with an absolute path, and ``pass_rate`` and ``pass^1`` printed one figure with two intervals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
WAIT = 300


def _agent(folder: Path, name: str, play: str, after: str) -> list[str]:
    """The scripted agent playing ``play`` (good: the task done; bad: a wrong transfer), then
    ``after``."""
    body = (
        "import runpy, sys, threading\n"
        f"sys.argv = [{str(SCRIPTED)!r}, '--harn-trial', {play!r}]\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n" + after
    )
    (folder / f"{name}.py").write_text(body)
    return [sys.executable, f"{name}.py"]


def _run(folder: Path, out: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent"]
    return subprocess.run(
        [*command, "--out", out, *args], cwd=folder, capture_output=True, text=True, timeout=WAIT
    )


CRASH_AFTER = "sys.stderr.write('Traceback ...\\nValueError: boom after the goal\\n')\nsys.exit(1)\n"


def test_a_pass_whose_agent_crashed_is_shown_and_counted_apart(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "late", "good", CRASH_AFTER)
    done = _run(tmp_path, "out", "--k", "2", "--", *agent)
    assert done.returncode == 0, done.stderr
    assert "passed, but the agent exited non-zero (2; --strict-exit fails them)\n" in done.stdout
    for trial in (1, 2):
        assert (
            f"  PASS  bank/pay-rent/none/{trial}  passed, but the agent exited 1: ValueError: boom after "
            f"the goal  (out/trials/bank/pay-rent/none/{trial})\n"
        ) in done.stdout
    assert "failures by kind: none; 2 passed, but the agent exited non-zero\nresults: out/results.json\n" in (
        done.stdout
    )
    assert str(tmp_path) not in done.stdout and "[1/2]" not in done.stdout  # no line per trial
    # one interval per figure, with a legend
    assert "  pass_rate = pass^1 1.0000 [0.1979, 1.0000]  pass^2 1.0000 [" in done.stdout
    assert done.stdout.count("pass^1") == 1 and "[low, high]: its 95% interval)" in done.stdout


def test_a_crash_and_a_timeout_are_named_with_what_the_goal_missed(tmp_path: Path) -> None:
    crash = _agent(
        tmp_path, "crash", "bad", "sys.stderr.write('RuntimeError: model refused\\n')\nsys.exit(3)\n"
    )
    done = _run(tmp_path, "crashed", "--", *crash)
    assert done.returncode == 0, done.stderr
    assert (
        "failures (1)\n  FAIL  bank/pay-rent/none/1  crash (exit 3: RuntimeError: model refused); goal: "
        "/accounts/A-101/balance_cents equals 190000; collateral: /accounts/A-102/balance_cents  "
        "(crashed/trials/bank/pay-rent/none/1)\n"
    ) in done.stdout
    assert "failures by kind: 1 goal, 1 collateral, 1 crash\n" in done.stdout
    hung = _agent(tmp_path, "hung", "bad", "threading.Event().wait()\n")
    timed = _run(tmp_path, "timed", "--timeout", "2", "--grace", "0", "--", *hung)
    assert timed.returncode == 0, timed.stderr
    (line,) = [line for line in timed.stdout.splitlines() if line.startswith("  FAIL")]
    assert line.startswith("  FAIL  bank/pay-rent/none/1  timeout (after 2 s); goal: ")
    assert "predicates failed" not in timed.stdout and "crash" not in line
    assert "failures by kind: 1 timeout\n" in timed.stdout


def test_verbose_prints_a_line_per_trial(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "good", "good", "")
    done = _run(tmp_path, "out", "--verbose", "--", *agent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[1/1] bank/pay-rent/no faults/1: scored (exit 0, ")
    quiet = _run(tmp_path, "out", "--force", "--", *agent)
    assert quiet.stdout.startswith("eval: 1 trial(s) scored, 1 passed\n"), quiet.stdout
    assert "failures" not in quiet.stdout.split("failures by kind")[0]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["summary"]["passed"] == 1


def test_strict_exit_fails_a_pass_whose_agent_crashed_in_the_record_the_score_and_results(
    tmp_path: Path,
) -> None:
    """Before: no --strict-exit; the trial was a PASS in trial.json, results.json and eval."""
    agent = _agent(tmp_path, "late", "good", CRASH_AFTER)
    done = _run(tmp_path, "out", "--strict-exit", "--min-pass-rate", "1", "--", *agent)
    assert done.returncode == 1, done.stderr
    assert (
        "failures (1)\n  FAIL  bank/pay-rent/none/1  crash (exit 1: ValueError: boom after the goal)  "
        "(out/trials/bank/pay-rent/none/1)\n"
    ) in done.stdout
    assert "failures by kind: 1 crash\n" in done.stdout
    trial = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"
    reason = "the agent exited 1 (--strict-exit)"
    assert json.loads((trial / "trial.json").read_text())["exit_failed"] == reason
    (run,) = json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    assert run["exit_failed"] == reason and run["passed"] is False
    evaluated = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "eval", "--spec", "bank", "--state", str(trial / "report.json"),
         "--format", "json"],
        capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert json.loads(evaluated.stdout)["runs"][0]["passed"] is False, evaluated.stderr
    # the same folder without --strict-exit: judged again, a PASS counted apart
    again = _run(tmp_path, "out", "--", *agent)
    assert again.returncode == 0 and "1 passed, but the agent exited non-zero" in again.stdout, again.stdout
    assert "all 1 trials already finished" in again.stderr  # resumed: its stderr read from its folder
    assert (
        "  PASS  bank/pay-rent/none/1  passed, but the agent exited 1: ValueError: boom after the goal"
        in (again.stdout)
    )
