"""``score_runs`` over world state files, world reports and bare states: counts, pass^k, infra
exclusions, fault-profile deltas, several specs, errors naming the file, and the renderings."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
import pytest

from harn_mcp_mock.errors import HarnError, UsageError
from harn_mcp_mock.scoring import EvalError, render, score_runs
from harn_mcp_mock.scoring.eval import REPORT_FORMAT, STATE_FORMAT
from harn_mcp_mock.scoring.stats import group_rate_interval, trials_for_drop, wilson_interval

TICKETS: dict[str, Any] = {
    "format": "harn-mcp-mock/world",
    "version": 1,
    "name": "tickets",
    "state": {
        "users": {"u1": {"name": "Ada"}},
        "tickets": {
            "T-1": {"title": "Login fails", "status": "open", "assignee": None},
            "T-2": {"title": "Slow page", "status": "open", "assignee": None},
        },
    },
    "tasks": [
        {
            "id": "close-t1",
            "goal": [{"path": "/tickets/T-1/status", "equals": "closed"}],
            "may_change": ["/audit/**"],
            "forbidden": [{"missing": "/tickets/T-1"}],
        },
        {"id": "assign-t2", "goal": [{"path": "/tickets/T-2/assignee", "equals": "u1"}]},
    ],
    "fault_profiles": {"flaky": [], "slow": []},
}

SHOP: dict[str, Any] = {
    "name": "shop",
    "state": {"orders": [{"id": "o1", "status": "paid"}]},
    "tasks": [{"id": "refund", "goal": [{"path": "/orders", "any": {"id": "o1", "status": "refunded"}}]}],
}


def final(task: str, ok: bool, *, collateral: bool = False) -> dict[str, Any]:
    out = copy.deepcopy(TICKETS["state"])
    if ok and task == "close-t1":
        out["tickets"]["T-1"]["status"] = "closed"
    if ok and task == "assign-t2":
        out["tickets"]["T-2"]["assignee"] = "u1"
    if collateral:
        out["users"]["u1"]["name"] = "Eve"
    return out


class Runs:
    """Writes run files into a folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: list[Path] = []

    def state(
        self,
        task: str | None,
        ok: bool,
        *,
        faults: str | None = None,
        infra: str | None = None,
        world: str = "tickets",
        name: str | None = None,
        collateral: bool = False,
        body: Any = None,
        **extra: Any,
    ) -> Path:
        index = len(self.paths)
        doc = {
            "format": STATE_FORMAT,
            "version": 1,
            "world": world,
            "task": task,
            "seed": index,
            "run_id": f"r{index}",
            "faults": faults,
            "infra_error": infra,
            "state": body if body is not None else final(task or "close-t1", ok, collateral=collateral),
            **extra,
        }
        return self._write(name or f"run-{index}.state.json", doc)

    def report(self, task: str, ok: bool, *, hits: list[Any] | None = None, **extra: Any) -> Path:
        index = len(self.paths)
        doc = {
            "format": REPORT_FORMAT,
            "version": 1,
            "world": "tickets",
            "task": task,
            "seed": index,
            "run_id": f"r{index}",
            "faults": None,
            "infra_error": None,
            "initial_digest": "x",
            "final_state": final(task, ok),
            "forbidden_hits": hits if hits is not None else [],
            "faults_fired": [],
            **extra,
        }
        return self._write(f"run-{index}.report.json", doc)

    def raw(self, name: str, data: Any) -> Path:
        return self._write(name, data)

    def _write(self, name: str, doc: Any) -> Path:
        path = self.folder / name
        path.write_bytes(doc if isinstance(doc, bytes) else orjson.dumps(doc))
        self.paths.append(path)
        return path


@pytest.fixture
def runs(tmp_path: Path) -> Runs:
    return Runs(tmp_path)


def pass_k(result: Any, faults: str | None = None, world: str = "tickets") -> dict[int, Fraction]:
    group = next(g for g in result.groups if g.world == world and g.faults == faults)
    return dict(group.pass_power_k)


# --- counting ---------------------------------------------------------------------------------


def test_state_files_are_counted_per_task_and_give_exact_pass_k(runs: Runs) -> None:
    for ok in (True, True, False, False):
        runs.state("close-t1", ok)
    for ok in (True, True, True, True):
        runs.state("assign-t2", ok)
    result = score_runs([TICKETS], runs.paths)
    (group,) = result.groups
    assert [(t.task, t.c, t.n, t.flaky) for t in group.tasks] == [
        ("assign-t2", 4, 4, False),
        ("close-t1", 2, 4, True),
    ]
    assert group.pass_rate == Fraction(3, 4)
    assert group.pass_power_k == {1: Fraction(3, 4), 2: Fraction(7, 12), 3: Fraction(1, 2), 4: Fraction(1, 2)}
    assert result.exit_code() == 0


def test_collateral_damage_fails_a_run_that_met_its_goal(runs: Runs) -> None:
    runs.state("close-t1", True, collateral=True)
    result = score_runs([TICKETS], runs.paths)
    (run,) = result.runs
    assert run.score.goal_match and not run.score.passed
    assert run.score.collateral == ["/users/u1/name"]


def test_reports_are_scored_from_their_final_state_and_forbidden_hits(runs: Runs) -> None:
    runs.report("close-t1", True)
    runs.report(
        "close-t1", True, hits=[{"call": 1, "forbidden": 0, "predicate": {"missing": "/tickets/T-1"}}]
    )
    result = score_runs([TICKETS], runs.paths)
    assert [r.source for r in result.runs] == ["report", "report"]
    assert [r.score.passed for r in result.runs] == [True, False]
    assert result.runs[1].score.forbidden_hit[0]["call"] == 1


def test_a_report_without_tracked_hits_is_checked_on_its_final_state(runs: Runs) -> None:
    runs.report("close-t1", True, forbidden_hits=None)
    assert score_runs([TICKETS], runs.paths).runs[0].score.passed


def test_a_state_file_and_the_report_of_the_same_run_count_once(runs: Runs, tmp_path: Path) -> None:
    report = runs.report("close-t1", True)
    doc = orjson.loads(report.read_bytes())
    state = runs.raw(
        "run-0.state.json",
        {k: doc[k] for k in ("world", "task", "seed", "run_id", "faults", "infra_error")}
        | {"format": STATE_FORMAT, "version": 1, "state": doc["final_state"]},
    )
    other = runs.state("close-t1", True)  # another run (its own seed and run id)
    result = score_runs([TICKETS], [state, report, other, report])
    assert result.merged == [(str(state), str(report))]
    assert sorted(r.file for r in result.runs) == sorted([str(report), str(other)])
    assert result.groups[0].tasks[0].n == 2


def test_same_run_id_but_different_final_states_are_different_runs(runs: Runs) -> None:
    report = runs.report("close-t1", True, seed=0, run_id="run")
    state = runs.state("close-t1", False, seed=0, run_id="run")
    result = score_runs([TICKETS], [report, state])
    assert result.merged == []
    assert (result.groups[0].tasks[0].c, result.groups[0].tasks[0].n) == (1, 2)


def test_runs_that_died_of_an_infrastructure_error_are_kept_out_of_n_and_listed(runs: Runs) -> None:
    runs.state("close-t1", True)
    runs.state("close-t1", False)
    crashed = runs.state("close-t1", False, infra="the world process was killed", state=None)
    result = score_runs([TICKETS], runs.paths)
    (task,) = result.groups[0].tasks
    assert (task.c, task.n, task.excluded) == (1, 2, 1)
    assert [(e.file, e.infra_error) for e in result.excluded] == [
        (str(crashed), "the world process was killed")
    ]
    assert any("1 run(s) excluded" in note for note in result.groups[0].notes)


def test_a_task_whose_every_run_was_excluded_is_left_out_of_the_averages(runs: Runs) -> None:
    runs.state("close-t1", True)
    runs.state("assign-t2", True, infra="harness crashed")
    group = score_runs([TICKETS], runs.paths).groups[0]
    assert group.pass_rate == 1
    assert [t.task for t in group.tasks if t.n == 0] == ["assign-t2"]
    assert any("no scored run" in note for note in group.notes)


def test_injected_faults_stay_in_n(runs: Runs) -> None:
    runs.state("close-t1", False, faults="flaky", faults_fired=[{"kind": "timeout"}])
    (task,) = score_runs([TICKETS], runs.paths).groups[0].tasks
    assert (task.c, task.n, task.excluded) == (0, 1, 0)


def test_k_stops_at_the_fewest_runs_of_any_task_with_a_note(runs: Runs) -> None:
    for _ in range(3):
        runs.state("close-t1", True)
    runs.state("assign-t2", True)
    runs.state("assign-t2", False)
    group = score_runs([TICKETS], runs.paths).groups[0]
    assert list(group.pass_power_k) == [1, 2]
    assert any("k stops at 2" in note and "assign-t2" in note for note in group.notes)


def test_asking_for_k_above_some_task_n_is_refused(runs: Runs) -> None:
    runs.state("close-t1", True)
    runs.state("close-t1", True)
    assert list(pass_k(score_runs([TICKETS], runs.paths, max_k=1))) == [1]
    with pytest.raises(
        EvalError, match=r"pass\^3 asked for, but task 'close-t1'.*only 2 scored runs"
    ) as caught:
        score_runs([TICKETS], runs.paths, max_k=3)
    assert caught.value.exit_code == 2


def test_k_below_one_is_refused_naming_the_option_once(runs: Runs) -> None:
    runs.state("close-t1", True)
    with pytest.raises(EvalError) as caught:
        score_runs([TICKETS], runs.paths, max_k=0)
    assert str(caught.value) == "--k: must be a positive integer, got 0"


# --- fault profiles and several specs ---------------------------------------------------------


def test_with_and_without_a_fault_profile_pass_k_and_the_delta_are_reported(runs: Runs) -> None:
    for ok in (True, True, True, True):
        runs.state("close-t1", ok)
    for ok in (True, True, False, False):
        runs.state("close-t1", ok, faults="flaky")
    for ok in (True, False, False, False):
        runs.state("assign-t2", ok, faults="flaky")  # no baseline for this task
    result = score_runs([TICKETS], runs.paths)
    assert [(g.faults, g.pass_rate) for g in result.groups] == [(None, 1), ("flaky", Fraction(3, 8))]
    (robust,) = result.robustness
    assert (robust.world, robust.faults, robust.tasks) == ("tickets", "flaky", ["close-t1"])
    assert robust.pass_power_k == {
        1: (Fraction(1), Fraction(1, 2)),
        2: (Fraction(1), Fraction(1, 6)),
        3: (Fraction(1), Fraction(0)),
        4: (Fraction(1), Fraction(0)),
    }
    assert robust.delta(2) == Fraction(-5, 6)
    rows = result.to_dict()["robustness"][0]["pass_power_k"]
    assert rows[1]["delta"] == {"exact": "-5/6", "value": -5 / 6}


def test_several_specs_are_scored_at_once_and_grouped_by_world(runs: Runs) -> None:
    runs.state("close-t1", True)
    shop_state = {"orders": [{"id": "o1", "status": "refunded"}]}
    runs.state("refund", True, world="shop", body=shop_state)
    runs.state("refund", False, world="shop", body=copy.deepcopy(SHOP["state"]))
    result = score_runs([TICKETS, SHOP], runs.paths)
    assert result.specs == ["tickets", "shop"]
    assert [(g.world, g.pass_rate) for g in result.groups] == [("shop", Fraction(1, 2)), ("tickets", 1)]


def test_a_loaded_world_spec_object_is_read_through_its_raw_spec(runs: Runs) -> None:
    class Loaded:
        raw = TICKETS

    runs.state("close-t1", True)
    assert score_runs([Loaded()], runs.paths).groups[0].pass_rate == 1


# --- bare states and the task to score --------------------------------------------------------


def test_a_bare_state_is_scored_against_the_task_given(runs: Runs) -> None:
    runs.raw("bare.json", final("assign-t2", True))
    result = score_runs([TICKETS], runs.paths, task="assign-t2", faults="slow")
    (run,) = result.runs
    assert (run.source, run.task, run.faults, run.seed, run.run_id) == (
        "bare",
        "assign-t2",
        "slow",
        None,
        None,
    )
    assert run.score.passed


def test_a_bare_state_for_a_spec_with_one_task_needs_no_task(runs: Runs) -> None:
    runs.raw("bare.json", {"orders": [{"id": "o1", "status": "refunded"}]})
    assert score_runs([SHOP], runs.paths).runs[0].score.passed


def test_a_state_file_that_names_no_task_takes_the_task_given(runs: Runs) -> None:
    runs.state(None, True)
    assert score_runs([TICKETS], runs.paths, task="close-t1").runs[0].task == "close-t1"


# --- errors name the file ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "where", "message"),
    [
        (b"{not json", "1:2", "not valid JSON"),
        ({"format": "harn-mcp-mock/cassette", "version": 1}, "format", "not a world state or report"),
        ({"format": STATE_FORMAT, "version": 2, "world": "tickets"}, "version", "newer harn-mcp-mock"),
        ({"format": STATE_FORMAT, "version": "1"}, "version", "positive integer"),
        (
            {"format": STATE_FORMAT, "version": 1, "world": "nope", "task": "close-t1"},
            "world",
            "names world 'nope'",
        ),
        ({"format": STATE_FORMAT, "version": 1, "world": "tickets", "task": "x"}, "task", "names task 'x'"),
        (
            {"format": STATE_FORMAT, "version": 1, "world": "tickets", "task": "close-t1", "faults": "chaos"},
            "faults",
            "fault profile 'chaos'",
        ),
        (
            {"format": STATE_FORMAT, "version": 1, "world": "tickets", "task": "close-t1", "seed": "7"},
            "seed",
            "integer or null",
        ),
        ({"format": STATE_FORMAT, "version": 1, "world": "tickets", "task": "close-t1"}, "state", "missing"),
        (
            {"format": REPORT_FORMAT, "version": 1, "world": "tickets", "task": "close-t1"},
            "final_state",
            "missing",
        ),
        (
            {
                "format": REPORT_FORMAT,
                "version": 1,
                "world": "tickets",
                "task": "close-t1",
                "final_state": {},
                "forbidden_hits": 3,
            },
            "forbidden_hits",
            "a list or null",
        ),
    ],
)
def test_an_unusable_input_is_an_error_naming_the_file_and_field(
    runs: Runs, content: Any, where: str, message: str
) -> None:
    path = runs.raw("bad.json", content)
    with pytest.raises(EvalError) as caught:
        score_runs([TICKETS], [path])
    assert caught.value.path == str(path) and caught.value.where == where
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{where}: ")
    assert caught.value.exit_code == 2 and isinstance(caught.value, HarnError)


def test_a_missing_file_or_a_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match=r"nope\.json: cannot read it"):
        score_runs([TICKETS], [tmp_path / "nope.json"])
    with pytest.raises(EvalError, match="is a directory"):
        score_runs([TICKETS], [tmp_path])


def test_a_bare_state_without_a_task_for_a_spec_with_several_is_an_error(runs: Runs) -> None:
    path = runs.raw("bare.json", {})
    with pytest.raises(
        EvalError, match=r"bare\.json: names no task .* \(tasks: close-t1, assign-t2\): give the task"
    ):
        score_runs([TICKETS], [path])
    with pytest.raises(EvalError, match=r"needs exactly one spec, got 2"):
        score_runs([TICKETS, SHOP], [path], task="close-t1")
    with pytest.raises(EvalError, match=r"no task 'x' in world 'tickets'"):
        score_runs([TICKETS], [path], task="x")


def test_a_file_of_another_task_than_the_one_asked_for_is_an_error(runs: Runs) -> None:
    path = runs.state("close-t1", True)
    with pytest.raises(EvalError, match="is a run of task 'close-t1', but task 'assign-t2' was asked for"):
        score_runs([TICKETS], [path], task="assign-t2")


def test_bad_specs_are_refused(runs: Runs) -> None:
    path = runs.state("close-t1", True)
    with pytest.raises(EvalError, match="two specs named 'tickets'"):
        score_runs([TICKETS, TICKETS], [path])
    with pytest.raises(EvalError, match="no world spec"):
        score_runs([], [path])
    broken = {**TICKETS, "tasks": [{"id": "close-t1", "goal": [{"path": "/a", "gt": "x"}]}]}
    with pytest.raises(EvalError, match=r"goal\[0\]\.gt: expected a number"):
        score_runs([broken], [path])


# --- the result and its renderings ------------------------------------------------------------


@pytest.fixture
def mixed(runs: Runs) -> Any:
    for ok in (True, True, False, False):
        runs.state("close-t1", ok)
    runs.state("close-t1", True, collateral=True)
    for ok in (True, False):
        runs.state("close-t1", ok, faults="flaky")
    runs.state("assign-t2", True)
    runs.state("assign-t2", True, infra="connection reset by the harness")
    return score_runs([TICKETS], runs.paths)


def test_the_json_result_is_stable_and_has_exact_fractions(mixed: Any, runs: Runs) -> None:
    text = render(mixed, "json")
    data = json.loads(text)
    assert list(data) == [
        "format",
        "version",
        "specs",
        "confidence",
        "summary",
        "groups",
        "robustness",
        "excluded",
        "merged",
        "runs",
    ]
    assert data["summary"] == {"runs": 8, "passed": 4, "excluded": 1, "merged": 0}
    group = data["groups"][0]
    assert data["version"] == 2 and data["confidence"] == 0.95
    # pass_rate: Wilson on the pooled trials, with the harmonic n of (1, 5): 2 / (1 + 1/5) trials.
    assert group["pass_rate"] == {
        "exact": "7/10",
        "value": 0.7,
        "interval": list(group_rate_interval([(1, 1), (2, 5)])),
    }
    low, high = group["pass_rate"]["interval"]
    assert 0 < low < 0.7 < high < 1
    first = group["pass_power_k"][0]
    assert (
        first["k"] == 1 and first["exact"] == "7/10" and first["interval"][0] <= 0.7 <= first["interval"][1]
    )
    assert group["tasks"] == [
        {
            "task": "assign-t2",
            "c": 1,
            "n": 1,
            "excluded": 1,
            "flaky": False,
            "flip_rate": None,
            "interval": list(wilson_interval(1, 1)),
        },
        {
            "task": "close-t1",
            "c": 2,
            "n": 5,
            "excluded": 0,
            "flaky": True,
            "flip_rate": 0.25,  # r0..r4 passed, passed, failed, failed, failed: 1 flip in 4 pairs
            "interval": list(wilson_interval(2, 5)),
        },
    ]
    run = data["runs"][0]
    assert list(run)[:6] == ["file", "source", "world", "faults", "seed", "run_id"]
    assert score_runs([TICKETS], list(reversed(runs.paths))).to_dict() == mixed.to_dict()
    assert render(mixed, "json") == text


def test_the_table_shows_counts_flaky_tasks_pass_k_exclusions_and_collateral(mixed: Any) -> None:
    text = render(mixed, "text")
    assert text.startswith(
        "eval: 1 spec (tickets), 8 runs scored, 4 passed, 1 excluded (infrastructure errors)\n"
    )
    assert "  close-t1       2/5  flaky (flip rate 0.25)\n" in text
    assert "  assign-t2      1/1  1 excluded\n" in text
    low, high = group_rate_interval([(1, 1), (2, 5)])
    assert f"  pass_rate 0.7000 [{low:.4f}, {high:.4f}]\n  pass^1 0.7000 [" in text
    assert "tickets, faults: none (intervals: 95%)" in text
    assert "robustness: tickets, faults flaky vs none (1 tasks in common)" in text
    assert "connection reset by the harness" in text
    assert "collateral: /users/u1/name" in text
    assert text.count("PASS  ") == 4 and text.count("FAIL  ") == 4


def test_the_markdown_has_tables_for_tasks_metrics_and_runs(mixed: Any) -> None:
    text = render(mixed, "markdown")
    assert "### tickets, faults: none" in text
    assert "| `close-t1` | 2/5 | 0.25 | flaky |" in text
    low, high = group_rate_interval([(1, 1), (2, 5)])
    assert f"| pass_rate | 0.7000 | [{low:.4f}, {high:.4f}] | 7/10 |" in text
    assert "### Robustness: tickets, faults flaky vs none" in text
    assert "### Excluded (infrastructure errors, not counted in n)" in text


def test_long_collateral_lists_are_cut_in_the_table_but_kept_in_json(runs: Runs) -> None:
    body = final("close-t1", True)
    body["users"].update({f"u{i}": {"name": str(i)} for i in range(2, 8)})
    runs.state("close-t1", True, body=body)
    result = score_runs([TICKETS], runs.paths)
    assert "(+3 more)" in render(result, "text")
    assert len(json.loads(render(result, "json"))["runs"][0]["collateral"]) == 6


def test_many_runs_per_task_show_a_selection_of_k_in_the_table(runs: Runs) -> None:
    for i in range(40):
        runs.state("close-t1", i % 10 != 0)
    result = score_runs([TICKETS], runs.paths)
    text = render(result, "text")
    assert "pass^12 " in text and "pass^13 " not in text and "pass^32 " in text and "pass^40 " in text
    assert "(pass^k for every k up to 40 in --format json)" in text
    assert len(json.loads(render(result, "json"))["groups"][0]["pass_power_k"]) == 40


def test_an_unknown_format_is_a_usage_error(mixed: Any) -> None:
    with pytest.raises(UsageError, match="unknown format 'xml'"):
        render(mixed, "xml")


def test_the_exit_code_is_zero_unless_a_pass_rate_threshold_is_missed(mixed: Any) -> None:
    assert [g.pass_rate for g in mixed.groups] == [Fraction(7, 10), Fraction(1, 2)]
    assert mixed.exit_code() == 0
    assert mixed.exit_code(min_pass_rate=0.5) == 0  # at the threshold is not below it
    assert mixed.exit_code(min_pass_rate=0.51) == 1  # every group must reach it, the faulted one too


def test_the_cli_prints_intervals_flip_rates_and_the_trials_a_drop_needs(runs: Runs, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harn_mcp_mock.cli import apps

    spec = tmp_path / "tickets.world.json"
    spec.write_text(json.dumps({**TICKETS, "tools": []}))
    for ok in (True, True, False, True):
        runs.state("close-t1", ok)
    args = ["eval", "--spec", str(spec), *[f"--state={p}" for p in runs.paths]]
    result = CliRunner().invoke(apps.mock.app, [*args, "--confidence", "0.9", "--power", "0.3"])
    assert result.exit_code == 0, result.output
    low, high = wilson_interval(3, 4, 0.9)
    assert "tickets, faults: none (intervals: 90%)" in result.output
    assert f"  pass_rate 0.7500 [{low:.4f}, {high:.4f}]" in result.output
    assert "  close-t1      3/4  flaky (flip rate 0.67)\n" in result.output
    needed = trials_for_drop(0.75, 0.3)
    assert (
        "trials per task to detect a drop of 0.3 in pass rate (power 80%, alpha 0.05): "
        f"{needed} (task close-t1)" in result.output
    )
    as_json = json.loads(
        CliRunner().invoke(apps.mock.app, [*args, "--format", "json", "--power", "0.3"]).output
    )
    assert as_json["groups"][0]["power"] == {
        "drop": 0.3,
        "alpha": 0.05,
        "power": 0.8,
        "trials": needed,
        "tasks": [{"task": "close-t1", "trials": needed}],
    }
    bad = CliRunner().invoke(apps.mock.app, [*args, "--confidence", "1.5"])
    assert bad.exit_code == 2
    assert "--confidence: confidence must be between 0 and 1, got 1.5" in bad.output
    assert "Traceback" not in bad.output


# --- documents in memory, and a result read back ----------------------------------------------


def test_documents_held_in_memory_score_as_the_same_files_would(runs: Runs) -> None:
    from harn_mcp_mock.scoring.eval import RunDocument

    runs.state("close-t1", True)
    runs.report("close-t1", False)
    runs.state("assign-t2", True, faults="flaky")
    runs.state("assign-t2", False, infra="world died")
    documents = [RunDocument(str(p), orjson.loads(p.read_bytes())) for p in runs.paths]
    from_files = score_runs([TICKETS], runs.paths).to_dict()
    assert score_runs([TICKETS], documents).to_dict() == from_files
    assert score_runs([TICKETS], [*documents, documents[0]]).to_dict() == from_files  # listed once
    with pytest.raises(EvalError, match=r"^memory:world: names world 'nope'"):
        score_runs([TICKETS], [RunDocument("memory", {**documents[0].document, "world": "nope"})])


def test_a_result_reads_back_typed_and_writes_the_same_document(runs: Runs) -> None:
    from harn_mcp_mock.scoring import EvalResult

    for ok in (True, False, True, True):
        runs.state("close-t1", ok, usage={"input_tokens": 5, "output_tokens": 2, "cost_usd": 0.25})
    runs.state("close-t1", True, over_budget="9 tokens > --max-tokens 1")
    runs.state("close-t1", True, usage_invalid='line 1: "input_tokens" is "5"')  # never a pass, read back too
    for ok in (True, False):
        runs.state("assign-t2", ok, faults="flaky")
        runs.state("close-t1", not ok, faults="flaky")
    runs.state("assign-t2", True, infra="the agent exited 75")
    runs.report("assign-t2", True, hits=[{"call": 1, "forbidden": 0, "predicate": {"exists": "/x"}}])
    runs.state("assign-t2", True, timed_out=True)
    state = runs.state("close-t1", True, faults="slow", name="pair.state.json")
    report = runs.report("close-t1", True, faults="slow")
    data = orjson.loads(report.read_bytes())
    data.update(
        seed=orjson.loads(state.read_bytes())["seed"], run_id=orjson.loads(state.read_bytes())["run_id"]
    )
    report.write_bytes(orjson.dumps(data))
    result = score_runs([TICKETS], runs.paths, power_drop=0.3, confidence=0.9)
    doc = json.loads(json.dumps(result.to_dict()))  # as results.json holds it
    again = EvalResult.from_json(doc, "results.json")
    assert again.to_dict() == result.to_dict()
    assert [r.score.passed for r in again.runs] == [r.score.passed for r in result.runs]
    assert again.merged and again.excluded and again.robustness and again.groups[0].power is not None
    assert [t.flip_rate for t in again.groups[0].tasks] == [t.flip_rate for t in result.groups[0].tasks]
    assert again.groups[0].usage == result.groups[0].usage
    version_1 = {key: value for key, value in doc.items() if key != "confidence"}
    version_1["version"] = 1
    assert EvalResult.from_json(version_1).groups[0].pass_rate == result.groups[0].pass_rate
    with pytest.raises(EvalError, match=r"^results.json:groups\[0\].tasks\[0\].c: expected an integer"):
        EvalResult.from_json(
            {**doc, "groups": [{**doc["groups"][0], "tasks": [{"task": "t", "c": "4", "n": 4}]}]},
            "results.json",
        )
    with pytest.raises(EvalError, match=r"^results.json:version: .*reads eval results up to version 2"):
        EvalResult.from_json({**doc, "version": 3}, "results.json")
    with pytest.raises(EvalError, match=r"^results.json:format: expected 'harn-mcp-mock/eval'"):
        EvalResult.from_json({**doc, "format": "x"}, "results.json")


def test_a_scorer_keeps_scores_not_documents_and_a_later_budget_judges_them_again(runs: Runs) -> None:
    from harn_mcp_mock.scoring import Scorer

    runs.state("close-t1", True)
    runs.state("close-t1", False)
    runs.state("close-t1", True, infra="world died")
    scorer = Scorer([TICKETS])
    scored = [scorer.score(path) for path in runs.paths]
    assert scorer.result(scored).to_dict() == score_runs([TICKETS], runs.paths).to_dict()
    judged = [s.judged("9 tokens > --max-tokens 1") for s in scored]
    assert [r.score.passed for r in scorer.result(judged).runs] == [False, False]
    assert scorer.result([s.judged(None) for s in judged]).groups[0].tasks[0].c == 1
    with pytest.raises(EvalError, match="confidence must be between 0 and 1"):
        scorer.result(scored, confidence=2)
