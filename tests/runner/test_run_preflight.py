"""``run`` checks each spec before any agent starts: a spec that would score agents wrongly (a
Python effect that does not load, an empty goal, a goal that holds at the start, a reference
solution that fails or misses its goal) is refused with exit 2 and one line naming the spec file
and the task or field, and the agent (which would leave a file) never starts.

Before: the broken effect module scored every trial as the agent's missed goal and exited 0,
the empty or already-met goal passed an agent that did nothing, exit 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import ClientSession

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import Trial, parse_gates, run_episodes
from tests.broken_worlds import CASES, Case, on_purpose
from tests.runner.test_run import _run_cli

STARTED = "the agent started"


def agent(marker: Path) -> list[str]:
    """``-- AGENT``: an agent that says it started on stdout (kept in its trial's
    ``agent.stdout``, whatever isolation the runner puts it in) and leaves ``marker`` where it may
    write."""
    code = f"import sys\nprint({STARTED!r})\ntry:\n    open(sys.argv[1], 'w').close()\nexcept OSError:\n    pass\n"
    return ["--", sys.executable, "-c", code, str(marker)]


def agent_outputs(out: Path) -> list[str]:
    return [p.read_text() for p in sorted(out.glob("trials/*/*/*/*/agent.stdout"))]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_run_refuses_the_spec_before_any_agent_starts(case: Case, tmp_path: Path) -> None:
    spec = case.write(tmp_path)
    marker = tmp_path / "the-agent-started"
    done = _run_cli(["--spec", spec.name, "--out", "out", *agent(marker)], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"harn mcp mock run: error: {spec}:{case.where}: {case.what.replace('@', '')}\n"
    assert done.stdout == ""
    assert not marker.exists() and not (tmp_path / "out").exists()  # no folder, run.json or lock file


def test_an_in_process_run_is_refused_the_same_way(tmp_path: Path) -> None:
    started: list[str] = []

    async def in_process(session: ClientSession, trial: Trial) -> None:
        started.append(trial.task)

    case = next(c for c in CASES if c.name == "goal-at-start")
    spec = case.write(tmp_path)
    with pytest.raises(UsageError) as refused:
        run_episodes([spec], in_process, out=tmp_path / "out")
    assert str(refused.value) == f"{spec.resolve()}:{case.where}: {case.what}"
    assert started == []


def test_only_the_tasks_the_run_runs_are_checked(tmp_path: Path) -> None:
    """A ``--task`` selection runs a sound task of a spec whose other task is broken."""
    doc = json.loads(next(c for c in CASES if c.name == "empty-goal").write(tmp_path).read_text())
    doc["tasks"].append(
        {"id": "sound", "goal": [{"path": "/x", "equals": 1}], "reference": [{"tool": "bump"}]}
    )
    (tmp_path / "mixed.world.json").write_text(json.dumps(doc))
    marker = tmp_path / "the-agent-started"
    refused = _run_cli(["--spec", "mixed.world.json", "--out", "all", *agent(marker)], tmp_path)
    assert refused.returncode == 2 and ":task 't': the goal is empty" in refused.stderr
    assert not marker.exists() and not (tmp_path / "all" / "trials").exists()
    chosen = _run_cli(
        ["--spec", "mixed.world.json", "--task", "sound", "--out", "one", "--verbose", *agent(marker)],
        tmp_path,
    )
    assert chosen.returncode == 0, chosen.stderr
    assert "probe/sound/no faults/1: scored" in chosen.stdout
    assert agent_outputs(tmp_path / "one") == [f"{STARTED}\n"]


def test_a_goal_that_holds_at_the_start_on_purpose_runs(tmp_path: Path) -> None:
    spec = on_purpose([]).write(tmp_path)
    done = _run_cli(["--spec", spec.name, "--out", "out", *agent(tmp_path / "the-agent-started")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert agent_outputs(tmp_path / "out") == [f"{STARTED}\n"]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["summary"]["passed"] == 1  # doing nothing is the task


def _left(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_gate_the_run_cannot_meet_is_refused_before_any_agent_starts(tmp_path: Path) -> None:
    """Before: ``--min-pass-k 3=0.5`` with ``--k 2`` ran every trial, then exited 1."""
    marker = tmp_path / "the-agent-started"
    done = _run_cli(
        ["--spec", "bank", "--task", "pay-rent", "--k", "2", "--min-pass-k", "3=0.5",
         "--out", "out", *agent(marker)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "harn mcp mock run: error: --min-pass-k: --min-pass-k 3=0.5: pass^3 needs at least 3 trials "
        "per task, and --k is 2 (raise --k to 3, or gate on pass^2)\n"
    )
    assert done.stdout == "" and not marker.exists() and not (tmp_path / "out").exists()


def test_an_in_process_run_refuses_the_gate_too(tmp_path: Path) -> None:
    started: list[str] = []

    async def in_process(session: ClientSession, trial: Trial) -> None:
        started.append(trial.task)

    with pytest.raises(UsageError, match="pass\\^2 needs at least 2 trials per task, and --k is 1"):
        run_episodes(["bank"], in_process, out=tmp_path / "out", gates=parse_gates(["2=0.5"]))
    assert started == [] and not (tmp_path / "out").exists()


def test_a_refused_run_writes_nothing_so_the_corrected_command_runs(tmp_path: Path) -> None:
    """Before: a bad ``--preload`` was refused after ``run.json`` was written, and the corrected
    command (another --k) was refused for it: "--k changed"."""
    marker = tmp_path / "the-agent-started"
    out = tmp_path / "runs" / "bank"
    command = agent(marker)
    (tmp_path / "agent.py").write_text(command[3])
    script = ["--", sys.executable, "agent.py", str(marker)]
    bad = _run_cli(
        ["--spec", "bank", "--task", "pay-rent", "--k", "2", "--out", "runs/bank",
         "--preload", "no_such_module_of_harn", *script],
        tmp_path,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "--preload" in bad.stderr and "no_such_module_of_harn" in bad.stderr
    assert not marker.exists() and not (tmp_path / "runs").exists()  # no run.json, no lock, no folder
    good = _run_cli(
        ["--spec", "bank", "--task", "pay-rent", "--k", "1", "--out", "runs/bank", *script], tmp_path
    )
    assert good.returncode == 0, good.stderr
    assert (out / "run.json").is_file() and agent_outputs(out) == [f"{STARTED}\n"]


def test_a_resume_refusal_names_every_difference_and_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    """Before: only the first difference was named (the agent command), and a folder copied
    without its lock file got one."""
    marker = tmp_path / "the-agent-started"
    first = _run_cli(["--spec", "bank", "--task", "pay-rent", "--out", "out", *agent(marker)], tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "out" / ".harn-run.lock").unlink()  # as a copied folder has none
    before = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    other = agent(marker)
    other[-2] = other[-2] + "\n"  # another agent command
    refused = _run_cli(["--spec", "bank", "--task", "pay-rent", "--k", "2", "--out", "out", *other], tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "holds a run with other settings (the agent command changed: " in refused.stderr
    assert "; --k changed: 1 then, 2 now): use another --out, or --force to rerun it" in refused.stderr
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == before
