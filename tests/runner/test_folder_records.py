"""Scores come from the runner's own world, never from files an agent can write: hostile agents
(real processes) that rename their trial folder away and leave forged files at its path, replace
it with a symlink, or overwrite a finished sibling's files after a resume. The runner scores
from the world it held, writes each trial's files itself where it means to, and a resume takes a
finished trial only with the files the runner wrote. The agents run without a sandbox (under
bubblewrap the run folder is not even visible: tests/runner/test_sandbox.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.runner import run_episodes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

FORGER = '''
import json, os, shutil, sys
from pathlib import Path

mode, passing, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
run_id, seed = os.environ["HARN_RUN_ID"], int(os.environ["HARN_SEED"])
world = next(iter(json.load(open(os.environ["HARN_MCP_CONFIG"]))["mcpServers"]))


def folder_of(run_id):
    """A trial's folder, from its run id (task.profile.tN) and the run's --out."""
    task, profile, index = run_id.rsplit(".", 2)
    return Path(out, "trials", world, task, profile, index[1:])


def forge(where, run_id, seed):
    """A passing state, report and trial record, labelled as the trial's own."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("state.json", "report.json"):
        doc = json.loads((passing / name).read_text())
        doc.update(run_id=run_id, seed=seed)
        (where / name).write_text(json.dumps(doc))
    record = json.loads((passing / "trial.json").read_text())
    record.update(run_id=run_id, seed=seed, trial=int(run_id.rsplit(".t", 1)[1]))
    (where / "trial.json").write_text(json.dumps(record))


mine = folder_of(run_id)  # (HARN_TRIAL_DIR is the agent's scratch folder, not this one)
if mode == "computed":  # rename my folder away, leave a forged one at its path
    mine.rename(mine.with_name(mine.name + ".away"))
    forge(mine, run_id, seed)
elif mode == "symlink":  # my folder becomes a link to a forged one elsewhere
    elsewhere = Path(out).parent / ("elsewhere-" + run_id)
    forge(elsewhere, run_id, seed)
    shutil.rmtree(mine)
    mine.symlink_to(elsewhere)
elif mode == "sibling" and Path(out).parent.joinpath("FORGE").exists():  # trial 1's files
    task, profile, index = run_id.rsplit(".", 2)
    sibling = f"{task}.{profile}.t1"
    doc = json.loads((folder_of(sibling) / "state.json").read_text())
    forge(folder_of(sibling), sibling, doc["seed"])
'''


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files of a trial that passed pay-rent (the scripted agent, in-process): what a forger copies."""
    tmp = tmp_path_factory.mktemp("passing")
    outcome = run_episodes(["bank"], in_process("good"), out=tmp / "out", tasks=["pay-rent"])
    assert outcome.result.runs[0].score.passed
    return tmp / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"


def forger(tmp_path: Path, mode: str, passing: Path, out: Path) -> list[str]:
    script = tmp_path / "forger.py"
    script.write_text(FORGER, encoding="utf-8")
    return [sys.executable, str(script), mode, str(passing), str(out)]


def results(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "results.json").read_text())
    return doc


@pytest.mark.parametrize("mode", ["computed", "symlink"])
def test_an_agent_that_moves_its_trial_folder_away_and_leaves_forged_files_is_scored_from_the_world(
    tmp_path: Path, passing: Path, mode: str
) -> None:
    out = tmp_path / "out"
    agent = forger(tmp_path, mode, passing, out)
    outcome = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2, workers=1, sandbox="none")
    assert [r["status"] for r in outcome.trials] == ["scored", "scored"]
    assert [run.score.passed for run in outcome.result.runs] == [False, False]
    assert results(out)["summary"] == {"runs": 2, "passed": 0, "excluded": 0, "merged": 0}
    trials = out / "trials" / "bank" / "pay-rent" / "none"
    for index in ("1", "2"):
        folder = trials / index  # the runner's files, at the trial's path, in a real folder
        assert folder.is_dir() and not folder.is_symlink()
        report = json.loads((folder / "report.json").read_text())
        assert (report["passed"], report["sessions"], report["run_id"]) == (
            False,
            0,
            f"pay-rent.none.t{index}",
        )
        assert json.loads((folder / "trial.json").read_text())["sessions"] == 0
        assert (folder / "agent.stdout").exists() and (folder / "mcp.json").exists()
        away = trials / f"{index}.away"
        if mode != "symlink":  # nothing of the runner's went after the folder the agent moved
            assert (
                away.is_dir() and not (away / "report.json").exists() and not (away / "trial.json").exists()
            )
    if mode == "symlink":  # the link's target was never written through
        elsewhere = tmp_path / "elsewhere-pay-rent.none.t1"
        assert json.loads((elsewhere / "report.json").read_text())["passed"] is True
    # A resume takes the trials as finished, with the files the runner wrote: still no pass.
    again = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2, workers=1, sandbox="none")
    assert [run.score.passed for run in again.result.runs] == [False, False]


def test_a_later_trial_that_overwrites_a_finished_siblings_files_after_a_resume_changes_no_score(
    tmp_path: Path, passing: Path
) -> None:
    out = tmp_path / "out"
    agent = forger(tmp_path, "sibling", passing, out)
    first = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=2, workers=1, sandbox="none")
    assert [run.score.passed for run in first.result.runs] == [False, False]
    (out / "trials" / "bank" / "pay-rent" / "none" / "2" / "trial.json").unlink()  # as if killed mid-trial
    (tmp_path / "FORGE").touch()  # from now on, the agent forges trial 1's files
    ran: list[str] = []
    second = run_episodes(
        ["bank"], agent, out=out, tasks=["pay-rent"], k=2, workers=1,
        on_trial=lambda record, done, total: ran.append(record["run_id"]), sandbox="none",
    )  # fmt: skip
    assert ran == ["pay-rent.none.t2"]  # trial 1 was resumed, then its files forged by trial 2
    assert json.loads((out / "trials/bank/pay-rent/none/1/report.json").read_text())["passed"] is True
    assert [run.score.passed for run in second.result.runs] == [False, False]
    assert results(out)["summary"]["passed"] == 0
    # The next resume finds trial 1's files changed since the runner wrote them: it runs it again.
    (tmp_path / "FORGE").unlink()
    third = run_episodes(
        ["bank"], agent, out=out, tasks=["pay-rent"], k=2, workers=1,
        on_trial=lambda record, done, total: ran.append(record["run_id"]), sandbox="none",
    )  # fmt: skip
    assert ran == ["pay-rent.none.t2", "pay-rent.none.t1"]
    assert [run.score.passed for run in third.result.runs] == [False, False]
    assert results(out)["summary"]["passed"] == 0


def test_files_that_cannot_be_written_make_that_trial_an_infrastructure_error_not_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harn_mcp_mock.runner import folder, trial

    real = folder.write_trial
    failing = ["pay-rent.none.t1"]

    def write(out: Path, record: Any) -> Any:
        if record.run_id in failing:
            failing.remove(record.run_id)  # once: the infrastructure error's own record is written
            raise OSError(28, "No space left on device")
        return real(out, record)

    monkeypatch.setattr(trial, "write_trial", write)
    out = tmp_path / "out"
    outcome = run_episodes(["bank"], in_process("good"), out=out, tasks=["pay-rent"], k=2)
    assert [r.status for r in outcome.trials] == ["infra_error", "scored"]
    assert outcome.trials[0].infra_error == (
        "the runner could not write the trial's files: [Errno 28] No space left on device"
    )
    assert outcome.exit_code == 75 and [run.run_id for run in outcome.result.runs] == ["pay-rent.none.t2"]
    assert json.loads((out / "trials/bank/pay-rent/none/1/trial.json").read_text())["status"] == "infra_error"
