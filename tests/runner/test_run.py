"""``harn mcp mock run`` with real agent processes: the scripted agent on the official ``mcp``
SDK reading ``HARN_MCP_CONFIG``, agents that fail in each documented way, resume, gates."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import PathEscapeError, UsageError
from harn_mcp_mock.runner import build_matrix, parse_gates, run_episodes
from harn_mcp_mock.runner.run import summarise_failures
from harn_mcp_mock.shipped import resolve_spec

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 300


def agent_script(folder: Path, name: str, body: str) -> list[str]:
    """A small agent: a Python script with the runner's environment."""
    path = folder / f"{name}.py"
    path.write_text("import json, os, signal, subprocess, sys\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


def test_each_trial_gets_a_seed_and_run_id_derived_from_the_runs_seed() -> None:
    spec = resolve_spec("bank")
    doc = json.loads(spec.read_text())
    one = build_matrix([(spec, doc)], tasks=["pay-rent"], k=3, seed=7, faults=["flaky"])
    again = build_matrix([(spec, doc)], tasks=["pay-rent"], k=3, seed=7, faults=["flaky"])
    other = build_matrix([(spec, doc)], tasks=["pay-rent"], k=3, seed=8, faults=["flaky"])
    assert one == again
    assert [(t.profile, t.index, t.run_id) for t in one][:2] == [
        ("none", 1, "pay-rent.none.t1"),
        ("none", 2, "pay-rent.none.t2"),
    ]
    assert len({t.seed for t in one}) == 6 and [t.seed for t in one] != [t.seed for t in other]
    with pytest.raises(UsageError, match="no fault profile 'storm'"):
        build_matrix([(spec, doc)], faults=["storm"])
    with pytest.raises(UsageError, match="no spec has task 'fly'"):
        build_matrix([(spec, doc)], tasks=["fly"])


@pytest.mark.slow
def test_the_scripted_sdk_agent_runs_k_trials_and_the_run_is_scored(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    outcome = run_episodes(
        ["bank"], [*SCRIPTED, "good"], out=tmp_path / "out", tasks=["pay-rent"], k=2, workers=2, timeout=WAIT,
        on_trial=lambda record, done, total: seen.append((done, total)),
    )  # fmt: skip
    assert sorted(seen) == [(1, 2), (2, 2)]
    assert [r["status"] for r in outcome.trials] == ["scored", "scored"]
    (group,) = outcome.result.groups
    assert (group.world, group.pass_rate) == ("bank", 1)
    folder = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"
    assert {p.name for p in folder.iterdir()} >= {
        "state.json", "report.json", "tape.ndjson", "agent.stdout", "agent.stderr", "trial.json", "mcp.json",
    }  # fmt: skip
    config = json.loads((folder / "mcp.json").read_text())
    assert list(config["mcpServers"]) == ["bank"] and config["mcpServers"]["bank"]["args"][1].endswith(
        "bridge.py"
    )
    assert list(config) == ["mcpServers"]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["summary"] == {"runs": 2, "passed": 2, "excluded": 0, "merged": 0}


def test_exit_75_is_an_infrastructure_error_retried_then_kept_out_of_n(tmp_path: Path) -> None:
    agent = agent_script(tmp_path, "tempfail", "sys.exit(75)\n")
    outcome = run_episodes(
        ["bank"], agent, out=tmp_path / "out", tasks=["pay-rent"], max_retries=2, workers=1
    )
    (record,) = outcome.trials
    assert (record["status"], record["attempts"], record["exit_code"]) == ("infra_error", 3, 75)
    assert [e.infra_error for e in outcome.result.excluded] == ["the agent exited 75 (EX_TEMPFAIL)"]
    assert outcome.result.runs == []


def test_an_agent_that_fails_before_any_session_is_an_infrastructure_error_naming_its_last_words(
    tmp_path: Path,
) -> None:
    body = (
        "world = subprocess.Popen(json.loads(os.environ['HARN_WORLD_COMMAND']), stdin=subprocess.PIPE)\n"
        "world.kill(); world.wait()\n"
        "sys.exit('the tool server went away')\n"
    )
    outcome = run_episodes(
        ["bank"],
        agent_script(tmp_path, "crash", body),
        out=tmp_path / "out",
        tasks=["pay-rent"],
        max_retries=1,
    )
    (record,) = outcome.trials
    assert record["status"] == "infra_error" and record["attempts"] == 2
    assert record["infra_error"].startswith("the agent exited 1 before opening a session with the world")
    assert record["infra_error"].endswith("its stderr ended: the tool server went away")


def test_an_agent_over_the_timeout_is_stopped_scored_as_it_stands_and_not_retried(tmp_path: Path) -> None:
    body = (
        "world = subprocess.Popen(json.loads(os.environ['HARN_WORLD_COMMAND']), stdin=subprocess.PIPE)\n"
        "signal.pause()\n"  # holds the world open until the runner stops the group
    )
    outcome = run_episodes(
        ["bank"], agent_script(tmp_path, "stuck", body), out=tmp_path / "out", tasks=["pay-rent"], timeout=2
    )
    (record,) = outcome.trials
    assert record["status"] == "timeout" and record["exit_code"] == -signal.SIGTERM
    assert record["attempts"] == 1 and record["message"] == "timed out after 2 s"
    (run,) = outcome.result.runs
    assert not run.score.passed and not run.score.goal_match  # nothing was done: the goal is missed
    assert summarise_failures(outcome.trials, outcome.result)["timeout"] == 1


def test_a_second_run_resumes_and_other_settings_are_refused(tmp_path: Path) -> None:
    agent = agent_script(tmp_path, "idle", "sys.exit(75)\n")
    out = tmp_path / "out"
    first = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2, max_retries=0)
    assert len(first.trials) == 2
    (out / "trials" / "bank" / "pay-rent" / "none" / "2" / "trial.json").unlink()  # as if killed mid-trial
    ran: list[str] = []
    again = run_episodes(
        ["bank"], agent, out=out, tasks=["pay-rent"], k=2, max_retries=0,
        on_trial=lambda record, done, total: ran.append(record["run_id"]),
    )  # fmt: skip
    assert ran == ["pay-rent.none.t2"] and len(again.trials) == 2
    with pytest.raises(UsageError, match="holds a run with other settings \\(--k changed: 2 then, 3 now\\)"):
        run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=3)
    forced = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=3, max_retries=0, force=True)
    assert len(forced.trials) == 3


def test_gates(tmp_path: Path) -> None:
    assert [g.name for g in parse_gates(["1=0.9", "4=0.5"], 0.8)] == [
        "--min-pass-k 1=0.9", "--min-pass-k 4=0.5", "--min-pass-rate 0.8",
    ]  # fmt: skip
    for bad in ("x=1", "0=0.5", "1=2", "1"):
        with pytest.raises(UsageError, match="bad gate"):
            parse_gates([bad])


def _run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARN, "run", *args], cwd=cwd, capture_output=True, text=True, timeout=WAIT)


@pytest.mark.slow
def test_the_cli_gates_a_ci_step_and_names_the_failing_gate(tmp_path: Path) -> None:
    naive = [*SCRIPTED, "bad"]
    done = _run_cli(
        [
            "--spec",
            "bank",
            "--task",
            "pay-rent",
            "--k",
            "2",
            "--out",
            "out",
            "--min-pass-k",
            "1=0.5",
            "--verbose",
            "--",
            *naive,
        ],
        tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "harn mcp mock run: gate failed: --min-pass-k 1=0.5: bank (no faults) is 0.000" in done.stderr
    assert done.stdout.startswith("[1/2] bank/pay-rent/no faults/")
    assert "failures by kind:" in done.stdout and "pass_rate = pass^1 0.0000" in done.stdout
    passing = _run_cli(
        [
            "--spec",
            "bank",
            "--task",
            "pay-rent",
            "--out",
            "good",
            "--min-pass-rate",
            "1",
            "--",
            *SCRIPTED,
            "good",
        ],
        tmp_path,
    )
    assert passing.returncode == 0, passing.stderr
    usage = _run_cli(["--spec", "bank", "--k", "0", "--", "true"], tmp_path)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1
    assert (
        usage.stderr == "harn mcp mock run: error: --k: must be a positive integer, got 0\n"
    )  # --k said once


@pytest.mark.slow
def test_a_runner_killed_with_sigkill_resumes_where_it_stopped(tmp_path: Path) -> None:
    args = [
        "--spec",
        "bank",
        "--task",
        "pay-rent",
        "--k",
        "3",
        "--workers",
        "1",
        "--out",
        "out",
        "--verbose",
        "--",
        *SCRIPTED,
        "good",
    ]
    proc = subprocess.Popen([*HARN, "run", *args], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # one trial finished
    proc.kill()
    proc.wait(timeout=WAIT)
    proc.stdout.close()
    assert first.startswith("[1/3]")
    done = _run_cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    resumed = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert 1 <= len(resumed) <= 2 and resumed[-1].startswith("[3/3]")
    results: dict[str, Any] = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["summary"]["runs"] == 3 and results["summary"]["passed"] == 3


def test_a_relative_agent_command_runs_from_where_run_was_started_and_a_missing_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agents").mkdir()
    agent_script(tmp_path / "agents", "tempfail", "sys.exit(75)\n")
    monkeypatch.chdir(tmp_path)
    outcome = run_episodes(
        ["bank"], [sys.executable, "agents/tempfail.py"], out="out", tasks=["pay-rent"], max_retries=0
    )
    assert outcome.trials[0]["exit_code"] == 75
    with pytest.raises(UsageError, match="the agent command 'no-such-agent' was not found"):
        run_episodes(["bank"], ["no-such-agent"], out="out2")


@pytest.mark.slow
def test_bad_option_values_and_a_spec_that_does_not_compile_exit_2_before_any_trial(tmp_path: Path) -> None:
    base = ["--spec", "bank", "--task", "pay-rent", "--out", "out"]
    for bad, where in [
        (["--workers", "-1"], "--workers"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "-3"], "--timeout"),
        (["--max-retries", "-1"], "--max-retries"),
        (["--grace", "-1"], "--grace"),
        (["--output-cap", "-5"], "--output-cap"),
    ]:
        done = _run_cli([*base, *bad, "--", "true"], tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and where in done.stderr, (
            bad,
            done.stderr,
        )
    spec = json.loads(resolve_spec("bank").read_text())
    spec["tools"][0]["effects"] = [{"op": "explode", "path": "/x"}]
    (tmp_path / "broken.world.json").write_text(json.dumps(spec))
    marker = tmp_path / "started"
    done = _run_cli(["--spec", "broken.world.json", "--out", "out", "--", "touch", str(marker)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "broken.world.json:tools[0].effects[0].op" in done.stderr and "+--" not in done.stderr
    assert not marker.exists() and not (tmp_path / "out" / "trials").exists()


def test_infrastructure_errors_and_runs_with_nothing_scored_exit_75(tmp_path: Path) -> None:
    missing = _run_cli(
        ["--spec", "bank", "--task", "pay-rent", "--out", "a", "--", sys.executable, "no-such-agent.py"],
        tmp_path,
    )
    assert missing.returncode == 75, missing.stderr
    assert "before opening a session with the world; its stderr ended:" in missing.stdout
    assert (
        "no-such-agent.py" in missing.stdout and "1 trial(s) ended as infrastructure errors" in missing.stderr
    )
    crash = agent_script(tmp_path, "crash", "raise SystemExit('cannot import my model')\n")
    crashed = _run_cli(["--spec", "bank", "--task", "pay-rent", "--out", "b", "--", *crash], tmp_path)
    assert crashed.returncode == 75 and "cannot import my model" in crashed.stdout
    again = _run_cli(["--spec", "bank", "--task", "pay-rent", "--out", "b", "--", *crash], tmp_path)
    assert "all 1 trials already finished (use --force to run them again)" in again.stderr


def test_a_trial_folder_replaced_by_a_symlink_or_a_broken_trial_file_is_refused_on_resume(
    tmp_path: Path,
) -> None:
    agent = agent_script(tmp_path, "idle", "sys.exit(0)\n")
    out = tmp_path / "out"
    run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2)
    trial = out / "trials" / "bank" / "pay-rent" / "none"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (trial / "2").rename(tmp_path / "moved")
    (trial / "2").symlink_to(elsewhere)
    with pytest.raises(PathEscapeError, match="is a symlink or not a folder: refusing to write through it"):
        run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2)
    assert list(elsewhere.iterdir()) == []
    (trial / "2").unlink()
    (tmp_path / "moved").rename(trial / "2")
    (trial / "1" / "trial.json").write_text("[]")
    with pytest.raises(UsageError, match=r"1/trial.json: is not a trial record"):
        run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2)
    (trial / "1" / "trial.json").unlink()
    (trial / "1" / "trial.json").mkdir()
    with pytest.raises(UsageError, match=r"1/trial.json: is not a regular file"):
        run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2)


def test_ctrl_c_stops_a_hung_agent_says_so_and_a_second_one_ends_it_now(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ready")
    fifo = os.open(tmp_path / "ready", os.O_RDWR | os.O_NONBLOCK)
    hung = agent_script(
        tmp_path,
        "hung",
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"f = open({str(tmp_path / 'ready')!r}, 'w'); f.write(str(os.getpid()) + '\\n'); f.close()\n"
        "signal.pause()\n",
    )
    args = [
        "--spec",
        "bank",
        "--task",
        "pay-rent",
        "--k",
        "2",
        "--workers",
        "1",
        "--grace",
        "600",
        "--out",
        "out",
        "--sandbox",
        "none",  # the test reads the agent's pid: a host pid only without a PID namespace
    ]
    proc = subprocess.Popen(
        [*HARN, "run", *args, "--", *hung], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    assert select.select([fifo], [], [], WAIT)[0]
    pid = int(os.read(fifo, 100))
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line == (
        "harn mcp mock run: stopping: waiting up to 600 s for 1 running trial(s) (Ctrl-C again to stop them now)\n"
    )
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, err
    assert "stopping the running trials now" in err and "2 trial(s) not run" in err
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not (tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1" / "trial.json").exists()
    os.close(fifo)
