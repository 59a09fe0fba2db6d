"""``--backend ray`` on a local Ray runtime: the same trials, files and results.json as the local
backend for the same seed, for worlds of one server and of several (the shipped ``support``: a desk
and a bank over one state, each trial's servers served by the Ray worker's hub); skipped only where
the ``ray`` extra is not installed (CI installs it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import run_episodes

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(
    not HAVE_RAY and not os.environ.get("CI"),
    reason="the ray extra is not installed (pip install 'harn-mcp-mock[ray]'); CI installs it",
)


def _portable(results: Path, out: Path) -> Any:
    """results.json with the run's own folder taken out of its file paths."""
    return json.loads(results.read_text().replace(str(out.resolve()), "OUT"))


@needs_ray
@pytest.mark.ray
def test_the_ray_backend_gives_the_same_results_as_the_local_one_for_the_same_seed(tmp_path: Path) -> None:
    common: dict[str, Any] = {"tasks": ["pay-rent", "top-up-and-pay"], "k": 2, "seed": 5, "faults": ["flaky"]}
    agent = [*SCRIPTED, "flaky"]
    local = run_episodes(["bank"], agent, out=tmp_path / "local", workers=2, timeout=120, **common)
    seen: list[int] = []
    remote = run_episodes(
        ["bank"], agent, out=tmp_path / "ray", backend="ray", workers=2, timeout=120,
        on_trial=lambda record, done, total: seen.append(done), **common,
    )  # fmt: skip
    assert sorted(seen) == list(range(1, 9))
    assert [r["status"] for r in remote.trials] == [r["status"] for r in local.trials]
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    folder = Path("trials/bank/top-up-and-pay/flaky/2")
    for name in ("report.json", "state.json"):
        assert (tmp_path / "ray" / folder / name).read_bytes() == (
            tmp_path / "local" / folder / name
        ).read_bytes()
    assert (tmp_path / "ray" / folder / "tape.ndjson").exists() and (
        tmp_path / "ray" / folder / "agent.stderr"
    ).exists()
    # and a resume on the local backend accepts what Ray wrote
    again = run_episodes(["bank"], agent, out=tmp_path / "ray", on_trial=lambda *a: seen.append(-1), **common)
    assert -1 not in seen and len(again.trials) == 8


def test_an_unknown_backend_and_an_in_process_agent_on_ray_are_refused(tmp_path: Path) -> None:
    async def agent(session: Any, trial: Any) -> None:
        return None

    with pytest.raises(UsageError, match="unknown backend 'k8s'"):
        run_episodes(["bank"], ["true"], out=tmp_path, backend="k8s")
    with pytest.raises(UsageError, match="in-process agent runs on the local backend only"):
        run_episodes(["bank"], agent, out=tmp_path, backend="ray")


HOSTILE = """
import json, os, runpy, shutil, sys
from pathlib import Path

passing, scripted = Path(sys.argv[1]), sys.argv[2]
run_id, seed = os.environ["HARN_RUN_ID"], int(os.environ["HARN_SEED"])
mine = Path(os.environ["HARN_TRIAL_DIR"])
index = int(run_id.rsplit(".t", 1)[1])
if index == 4:  # an honest agent: it does the task
    sys.argv = [scripted, "--harn-trial", "good"]
    runpy.run_path(scripted, run_name="__main__")
    sys.exit(0)
if index == 3:  # its folder deleted, nothing left to read
    shutil.rmtree(mine)
    sys.exit(0)
mine.rename(mine.with_name(mine.name + ".away"))  # 1 and 2: forged files where the folder was
mine.mkdir()
for name in ("state.json", "report.json") + (("trial.json",) if index == 1 else ()):
    doc = json.loads((passing / name).read_text())
    doc.update(run_id=run_id, seed=seed)
    (mine / name).write_text(json.dumps(doc))
"""


@needs_ray
@pytest.mark.ray
def test_on_ray_an_agent_that_forges_or_deletes_its_trial_files_is_scored_from_the_world(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(ROOT / "examples" / "agent"))
    from scripted_agent import in_process

    reference = run_episodes(["bank"], in_process("good"), out=tmp_path / "passing", tasks=["pay-rent"])
    assert reference.result.runs[0].score.passed
    passing = tmp_path / "passing" / "trials" / "bank" / "pay-rent" / "none" / "1"
    (tmp_path / "hostile.py").write_text(HOSTILE)
    agent = [sys.executable, str(tmp_path / "hostile.py"), str(passing), SCRIPTED[1]]
    out = tmp_path / "ray"
    outcome = run_episodes(
        ["bank"], agent, out=out, backend="ray", workers=2, timeout=120, tasks=["pay-rent"], k=4
    )  # the run ends normally: no trial's files can fail it (exit 70 lost every result)
    assert [(r.trial, r.status) for r in outcome.trials] == [(i, "scored") for i in (1, 2, 3, 4)]
    assert [run.score.passed for run in outcome.result.runs] == [False, False, False, True]
    results = json.loads((out / "results.json").read_text())
    assert results["summary"] == {"runs": 4, "passed": 1, "excluded": 0, "merged": 0}
    for index in (1, 2, 3, 4):  # the files under --out are the runner's, from the world it held
        folder = out / "trials" / "bank" / "pay-rent" / "none" / str(index)
        report = json.loads((folder / "report.json").read_text())
        assert report["passed"] is (index == 4) and report["run_id"] == f"pay-rent.none.t{index}"
        assert json.loads((folder / "trial.json").read_text())["ray_node"]
        assert (folder / "tape.ndjson").exists() and (folder / "mcp.json").exists()
    again = run_episodes(["bank"], agent, out=out, tasks=["pay-rent"], k=4)  # resumed as written
    assert [run.score.passed for run in again.result.runs] == [False, False, False, True]


@needs_ray
@pytest.mark.ray
def test_a_world_of_several_servers_gives_the_same_results_on_ray_as_locally(tmp_path: Path) -> None:
    common: dict[str, Any] = {
        "tasks": ["refund-double-charge", "close-already-refunded"], "k": 2, "seed": 5, "faults": ["flaky"],
    }  # fmt: skip
    agent = [*SCRIPTED, "flaky"]
    local = run_episodes(["support"], agent, out=tmp_path / "local", workers=2, timeout=120, **common)
    remote = run_episodes(
        ["support"], agent, out=tmp_path / "ray", backend="ray", workers=2, timeout=120, **common
    )
    assert [r["status"] for r in remote.trials] == [r["status"] for r in local.trials] == ["scored"] * 8
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    # the flaky coin made both a careful and a careless agent: not every trial passes, nor fails
    assert {run.score.passed for run in remote.result.runs} == {True, False}
    for trial in remote.trials:
        folder = Path("trials/support") / trial["task"] / trial["profile"] / str(trial["trial"])
        for name in ("report.json", "state.json"):
            assert (tmp_path / "ray" / folder / name).read_bytes() == (
                tmp_path / "local" / folder / name
            ).read_bytes()
        config = json.loads((tmp_path / "ray" / folder / "mcp.json").read_text())
        assert list(config["mcpServers"]) == ["desk", "bank"]
        report = json.loads((tmp_path / "ray" / folder / "report.json").read_text())
        assert report["sessions"] == 2 and {c["server"] for c in report["calls"]} == {"desk", "bank"}
