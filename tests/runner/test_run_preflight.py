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
from harn_mcp_mock.runner import Trial, run_episodes
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
    assert not marker.exists() and not (tmp_path / "out" / "trials").exists()


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
        ["--spec", "mixed.world.json", "--task", "sound", "--out", "one", *agent(marker)], tmp_path
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
