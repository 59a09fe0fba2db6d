"""World names, task ids and fault profile names of any length or alphabet run: each becomes a
folder name of the run folder that is the id itself when it is path-safe and short (as before,
so existing runs resume) and otherwise ``<slug>~<digest>``: safe, deterministic, collision-free.
The ids come from each ``trial.json``; resume, the loader and the report find every trial.

Before: a 300-character task id ended the run with exit 70 (ENAMETOOLONG), and ids with ``/``,
spaces, other alphabets or ``..`` were refused when the spec was loaded."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession

from harn_mcp_mock.report.run import run_report_data
from harn_mcp_mock.runner import Trial, run_episodes
from harn_mcp_mock.runner.folder import load_run_folder
from harn_mcp_mock.runner.matrix import NO_FAULTS, folder_name
from tests.broken_worlds import base_spec
from tests.runner.test_run import _run_cli

SAFE = set(string.ascii_letters + string.digits + "._-~")
ODD = [
    "a" * 300,
    "x" * 256,
    "a/b",
    "a b",
    "a?b",
    "café ☕",
    "日本語",
    "..",
    ".",
    "a..b",
    "../../etc/passwd",
    "line\nbreak",
    "nul\x00byte",
    " ",
]


@pytest.mark.parametrize("name", ["pay-rent", "none", "bank", "A.b_c-1", ".hidden", "-rf", "x" * 255])
def test_a_path_safe_short_id_is_its_own_folder_name_as_before(name: str) -> None:
    assert folder_name(name) == name


@pytest.mark.parametrize("name", ODD)
def test_any_other_id_gets_a_safe_short_name_with_a_digest(name: str) -> None:
    made = folder_name(name)
    assert set(made) <= SAFE and made not in ("", ".", "..") and ".." not in made
    assert "~" in made and len(made.encode()) <= 81
    assert folder_name(name) == made  # deterministic


def test_the_names_are_the_same_on_every_machine() -> None:
    """Pinned: a resumed run (on any machine) finds the folders an earlier run made."""
    assert folder_name("café ☕") == "cafe~86a84ccbc64dcc2c1ae3a82e34bc69eb"
    assert folder_name("a" * 300) == "a" * 48 + "~c9bd36ec7c6c45e1ef67d38ad298fceb"
    assert folder_name("..") == "id~ee7fc3886dda7d9af8dd50700eb0e958"


def test_ids_that_slug_alike_get_different_names() -> None:
    names = [folder_name(n) for n in ("a/b", "a b", "a?b", "a..b", "a-b~0da3cfa5f8b7fae9def4d324da969d3a")]
    assert names[0].startswith("a-b~") and names[1].startswith("a-b~") and names[2].startswith("a-b~")
    assert len(set(names)) == len(names)
    # an id spelling out another's folder name is not path-safe (it holds "~"): it is hashed too
    assert names[-1] != names[0]


@given(st.lists(st.text(min_size=1, max_size=400), min_size=2, max_size=8, unique=True))
def test_distinct_ids_never_share_a_folder_name(ids: list[str]) -> None:
    names = [folder_name(i) for i in ids]
    assert len(set(names)) == len(names)
    assert all(set(n) <= SAFE and n not in (".", "..") and len(n.encode()) <= 255 for n in names)


def odd_world(folder: Path, tasks: list[str], profile: str) -> Path:
    doc = base_spec()
    doc["name"] = "wörld / ☕"
    doc["tasks"] = [{**doc["tasks"][0], "id": task} for task in tasks]
    doc["fault_profiles"] = {profile: []}
    path = folder / "odd.world.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_run_with_odd_ids_scores_resumes_and_reports_every_trial(tmp_path: Path) -> None:
    tasks = ["a" * 300, "a/b", "a b", "café ☕", "..", "line\nbreak"]
    profile = "x y/.."
    spec = odd_world(tmp_path, tasks, profile)
    played: list[tuple[str, str]] = []

    async def agent(session: ClientSession, trial: Trial) -> None:
        played.append((trial.task, trial.profile))
        await session.call_tool("bump", {})

    out = tmp_path / "out"
    outcome = run_episodes([spec], agent, out=out, faults=[profile])
    assert sorted(played) == sorted((t, p) for t in tasks for p in (NO_FAULTS, profile))
    assert [g.pass_rate for g in outcome.result.groups] == [1, 1]
    # every trial's folder is named for its ids, and its trial.json holds the ids themselves
    for task in tasks:
        for p in (NO_FAULTS, profile):
            record = json.loads(
                (out / "trials" / folder_name("wörld / ☕") / folder_name(task) / folder_name(p) / "1" / "trial.json")
                .read_text()
            )  # fmt: skip
            assert (record["world"], record["task"], record["profile"]) == ("wörld / ☕", task, p)
    assert [p.name for p in (out / "trials").iterdir()] == ["world~9122b212555b4eed9fc0eff39ba4cb06"]
    # the loader and the report take the ids from trial.json
    loaded = {(r.world, r.task, r.profile) for _, r in load_run_folder(out).trials()}
    assert loaded == {("wörld / ☕", t, p) for t in tasks for p in (NO_FAULTS, profile)}
    report = run_report_data(out)
    assert {t["task"] for t in report["trials"]} == set(tasks)
    # the same run again finds every trial finished
    played.clear()
    again = run_episodes([spec], agent, out=out, faults=[profile])
    assert played == [] and len(again.trials) == 2 * len(tasks)


def test_the_cli_runs_a_300_character_task_id(tmp_path: Path) -> None:
    """Before: exit 70 (File name too long) after the first trial started."""
    task = "t" * 300
    odd_world(tmp_path, [task], "p")
    done = _run_cli(["--spec", "odd.world.json", "--out", "out", "--verbose", "--", "true"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"[1/1] wörld / ☕/{task}/no faults/1: scored" in done.stdout
    (trial_json,) = (tmp_path / "out" / "trials").glob("*/*/none/1/trial.json")
    assert json.loads(trial_json.read_text())["task"] == task
    assert trial_json.parts[-4] == "t" * 48 + "~" + folder_name(task).split("~")[1]
