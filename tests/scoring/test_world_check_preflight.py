"""``world check`` finds every spec that would score agents wrongly (a Python effect that does not
load, an empty goal, a goal that holds at the start, a reference solution that fails or misses
its goal) as a problem line naming the task or field, exit 1, on the fast path and typer's alike,
and never exits 70; ``goal_holds_at_start`` says a goal holds at the start on purpose."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.scoring.world_check import check_before_run, check_world, preflight
from harn_mcp_mock.world.spec import load_spec
from tests.broken_worlds import CASES, Case, on_purpose
from tests.cli.test_main import both_paths


@pytest.fixture
def clean_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks import effect modules from the spec's folder: leave sys.path as it was."""
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.mark.usefixtures("clean_imports")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_preflight_finds_each_way_a_spec_scores_agents_wrongly(case: Case, tmp_path: Path) -> None:
    prefix = f"pf_{case.name.replace('-', '_')}_"
    spec = load_spec(case.write(tmp_path, prefix))
    found = preflight(spec)
    assert [(p.where, p.message) for p in found.problems] == [(case.where, case.what.replace("@", prefix))]
    with pytest.raises(UsageError) as refused:
        check_before_run(spec)
    line = str(refused.value)
    assert line == f"{spec.path}:{case.where}: {case.what.replace('@', prefix)}"
    assert refused.value.exit_code == 2 and "\n" not in line


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_world_check_reports_each_as_a_problem_line_exit_1_on_both_paths(case: Case, tmp_path: Path) -> None:
    """Before: a missing, raising or incomplete effect module crashed it (exit 70); an empty goal
    or one holding at the start went unreported (exit 0) when the task had no reference."""
    case.write(tmp_path)
    fast, slow = both_paths(["world", "check", "--spec", f"{case.name}.world.json"], tmp_path)
    assert fast == slow
    code, out, err = fast
    assert (code, err) == (1, "")
    assert f"problem: {case.where}: {case.what.replace('@', '')}\n" in out
    assert out.endswith(f"{case.name}.world.json: 1 problem(s)\n")


def test_world_check_json_lists_the_same_problems(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "missing-module")
    case.write(tmp_path)
    fast, slow = both_paths(["world", "check", "--spec", "missing-module.world.json", "--json"], tmp_path)
    assert fast == slow and fast[0] == 1
    doc = json.loads(fast[1])
    assert doc["ok"] is False and doc["problems"] == [f"{case.where}: {case.what.replace('@', '')}"]


@pytest.mark.usefixtures("clean_imports")
@pytest.mark.parametrize("goal", [[], [{"path": "/x", "equals": 0}]], ids=["empty", "holds"])
def test_a_goal_that_holds_at_the_start_on_purpose_is_no_problem(goal: list[object], tmp_path: Path) -> None:
    spec = on_purpose(goal).write(tmp_path)
    result = check_world(spec)
    assert result.ok, result.problems
    check_before_run(load_spec(spec))  # the run goes ahead


@pytest.mark.usefixtures("clean_imports")
def test_goal_holds_at_start_on_a_goal_that_does_not_is_reported_but_does_not_stop_a_run(
    tmp_path: Path,
) -> None:
    spec = on_purpose([{"path": "/x", "equals": 1}]).write(tmp_path)
    result = check_world(spec)
    assert result.problems == [
        "task 't': goal_holds_at_start is true but the goal does not hold in the initial state"
    ]
    check_before_run(load_spec(spec))  # it scores no agent wrongly


@pytest.mark.usefixtures("clean_imports")
def test_only_the_tasks_a_run_runs_must_pass_but_a_broken_effect_stops_every_run(tmp_path: Path) -> None:
    doc = json.loads(CASES[0].write(tmp_path).read_text())
    doc["tools"][0].pop("python")
    doc["tasks"].append({"id": "lazy", "goal": []})
    (tmp_path / "two.world.json").write_text(json.dumps(doc))
    spec = load_spec(tmp_path / "two.world.json")
    check_before_run(spec, ["t"])
    with pytest.raises(UsageError, match=r"two\.world\.json:task 'lazy': the goal is empty"):
        check_before_run(spec)
    with pytest.raises(UsageError, match="task 'lazy'"):
        check_before_run(spec, ["lazy", "t"])
    doc["tools"][0]["python"] = "pf_nowhere:bump"
    (tmp_path / "two.world.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=r"tools\[0\]\.python: tool 'bump': cannot import 'pf_nowhere'"):
        check_before_run(load_spec(tmp_path / "two.world.json"), ["t"])


def test_several_problems_are_one_line_saying_how_many_more(tmp_path: Path) -> None:
    doc = json.loads(CASES[0].write(tmp_path).read_text())
    doc["tools"][0].pop("python")
    doc["tasks"] = [{"id": name, "goal": []} for name in ("a", "b", "c")]
    (tmp_path / "three.world.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError) as refused:
        check_before_run(load_spec(tmp_path / "three.world.json"))
    line = str(refused.value)
    assert ":task 'a': the goal is empty" in line and line.endswith(
        "(+2 more: harn mcp mock world check --spec lists them)"
    )


ODD = ["a" * 300, "a/b", "a b", "café ☕", "..", ".", "日本語", "line\nbreak"]


def test_world_check_takes_ids_of_any_length_or_alphabet(tmp_path: Path) -> None:
    """Before: ids of other alphabets were refused by the schema (exit 2); now checked like any."""
    doc = json.loads(CASES[0].write(tmp_path).read_text())
    doc["tools"][0].pop("python")
    doc["name"] = "café ☕ / .."
    doc["tasks"] = [{**doc["tasks"][0], "id": name} for name in ODD]
    doc["fault_profiles"] = {name: [] for name in ODD}
    (tmp_path / "odd.world.json").write_text(json.dumps(doc))
    fast, slow = both_paths(["world", "check", "--spec", "odd.world.json"], tmp_path)
    assert fast == slow and fast == (0, "odd.world.json: ok\n", "")
