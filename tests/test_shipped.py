"""The shipped worlds (worlds/*/): every spec passes `world check`, the scripted agent's careful
play passes every task and its careless play fails each task the way the task expects, the bank
world is retry-safe only for an agent that re-reads before retrying, and a run is byte-for-byte
reproducible across processes.

Each episode is a real `harn mcp mock world` process driven by the official `mcp` client
(examples/agent/scripted_agent.py); episodes of a test run concurrently, so a world takes about
a second.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parent.parent
WORLDS = {path.parent.name: path for path in sorted((ROOT / "worlds").glob("*/*.world.json"))}
PROFILES = [
    (name, profile)
    for name, path in WORLDS.items()
    for profile in json.loads(path.read_text(encoding="utf-8"))["fault_profiles"]
]
BANK = WORLDS["bank"]
TIMEOUT_S = 60


def load_agent() -> ModuleType:
    path = ROOT / "examples" / "agent" / "scripted_agent.py"
    spec = importlib.util.spec_from_file_location("scripted_agent", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


agent = load_agent()


def tasks_of(world: str) -> list[str]:
    return [task["id"] for task in json.loads(WORLDS[world].read_text(encoding="utf-8"))["tasks"]]


def report_of(state: Path) -> dict[str, Any]:
    return json.loads(
        state.with_name(state.name.replace(".state.json", ".report.json")).read_text(encoding="utf-8")
    )


async def play_all(world: str, tasks: Sequence[str], out: Path, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Each task played once (concurrently, each in its own world process): its report by task."""
    reports: dict[str, dict[str, Any]] = {}

    async def one(task: str) -> None:
        state = await agent.play(WORLDS[world], task, out_dir=out, **kwargs)
        reports[task] = report_of(state)

    with anyio.fail_after(TIMEOUT_S):
        async with anyio.create_task_group() as group:
            for task in tasks:
                group.start_soon(one, task)
    return reports


def summary(report: dict[str, Any]) -> dict[str, Any]:
    score = report["score"]
    return {"passed": report["passed"], "goal": score["goal_match"], "collateral": score["collateral"],
            "forbidden": report["forbidden_hits"], "faults": [f["fault"] for f in report["faults_fired"]]}  # fmt: skip


def test_five_worlds_are_shipped_each_with_a_readme_and_listed_in_the_index() -> None:
    assert sorted(WORLDS) == ["bank", "notes", "retail", "support", "tickets"]
    index = (ROOT / "worlds" / "README.md").read_text(encoding="utf-8")
    for name, path in WORLDS.items():
        assert (path.parent / "README.md").is_file()
        assert f"{name}/{name}.world.json" in index
        readme = (path.parent / "README.md").read_text(encoding="utf-8")
        for task in tasks_of(name):
            assert f"`{task}`" in readme, f"{name}/README.md does not describe task {task}"


@pytest.mark.parametrize("world", sorted(WORLDS))
def test_world_check_passes_for_every_shipped_world(world: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "check", "--spec", str(WORLDS[world])],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout.splitlines()[-1:]) == (0, [f"{WORLDS[world]}: ok"]), (
        done.stdout + done.stderr
    )


@pytest.mark.parametrize("world", sorted(WORLDS))
def test_every_world_has_three_to_five_tasks_and_four_to_seven_strictly_typed_tools(world: str) -> None:
    spec = json.loads(WORLDS[world].read_text(encoding="utf-8"))
    assert 3 <= len(spec["tasks"]) <= 5
    assert 4 <= len(spec["tools"]) <= 7
    for tool in spec["tools"]:
        assert tool["inputSchema"].get("additionalProperties") is False, tool["name"]
        assert "outputSchema" in tool, tool["name"]
        assert tool["annotations"]["openWorldHint"] is False, tool["name"]
    for task in spec["tasks"]:
        assert task["goal"] and task["forbidden"] and task["reference"], task["id"]


@pytest.mark.parametrize("world", sorted(WORLDS))
async def test_the_good_agent_passes_every_task(world: str, tmp_path: Path) -> None:
    reports = await play_all(world, tasks_of(world), tmp_path, style="good", seed=1, run_id="good")
    assert {task: summary(r) for task, r in reports.items()} == {
        task: {"passed": True, "goal": True, "collateral": [], "forbidden": [], "faults": []}
        for task in tasks_of(world)
    }


@pytest.mark.parametrize("world", sorted(WORLDS))
async def test_the_bad_agent_fails_every_task_with_the_expected_collateral_or_goal_failure(
    world: str, tmp_path: Path
) -> None:
    reports = await play_all(world, tasks_of(world), tmp_path, style="bad", seed=1, run_id="bad")
    for task, report in reports.items():
        mistake = agent.MISTAKES[(world, task)]
        got = summary(report)
        assert got["passed"] is False, (task, mistake.what)
        assert set(mistake.collateral) <= set(got["collateral"]), (task, got["collateral"])
        assert got["goal"] is not mistake.goal_fails, (task, mistake.what)
        assert bool(got["forbidden"]) is mistake.forbidden, (task, got["forbidden"])


@pytest.mark.parametrize(("world", "profile"), PROFILES, ids=[f"{w}-{p}" for w, p in PROFILES])
async def test_the_good_agent_passes_every_task_under_every_fault_profile(
    world: str, profile: str, tmp_path: Path
) -> None:
    reports = await play_all(
        world, tasks_of(world), tmp_path, style="good", seed=3, run_id="faulty", faults=profile
    )
    failed = {task: summary(r) for task, r in reports.items() if not r["passed"]}
    assert failed == {}
    assert any(r["faults_fired"] for r in reports.values()), f"profile {profile} never fired"


async def test_under_bank_flaky_faults_a_careful_agent_pays_once_and_a_blind_retrier_pays_twice(
    tmp_path: Path,
) -> None:
    runs = {}
    for style in ("good", "naive"):
        state = await agent.play(
            BANK, "pay-rent", style=style, seed=7, run_id="r1", out_dir=tmp_path, faults="flaky"
        )
        runs[style] = report_of(state)
    good, naive = runs["good"], runs["naive"]

    def transfers(report: dict[str, Any]) -> list[str]:
        return [c["outcome"] for c in report["calls"] if c["tool"] == "transfer"]

    # Both met the same ghost success: the first transfer committed (TX-7), then timed out.
    for report in (good, naive):
        ghosts = [f for f in report["faults_fired"] if f["kind"] == "ghost_success"]
        assert [(f["tool"], f["ordinal"]) for f in ghosts] == [("transfer", 1)]
        assert report["final_state"]["transfers"]["TX-7"]["memo"] == "Rent January 2026"
    # The careful agent re-read the ledger, saw TX-7 and stopped: paid once, passed.
    assert transfers(good) == ["timeout"]
    assert (good["passed"], good["score"]["collateral"], good["forbidden_hits"]) == (True, [], [])
    # The blind retrier sent the transfer again: the rent left A-101 twice.
    assert transfers(naive) == ["timeout", "ok"]
    assert naive["final_state"]["accounts"]["A-101"]["balance_cents"] == 310000 - 2 * 120000
    assert naive["passed"] is False and naive["score"]["goal_match"] is False
    assert naive["forbidden_hits"][0]["predicate"] == {"exists": "/transfers/TX-8"}
    assert "/transfers/TX-8/amount_cents" in naive["score"]["collateral"]


async def test_under_bank_flaky_faults_a_half_applied_freeze_is_completed_only_by_an_agent_that_repeats_it(
    tmp_path: Path,
) -> None:
    runs = {}
    for style in ("good", "naive"):
        state = await agent.play(
            BANK, "freeze-stolen-card", style=style, seed=7, run_id="r1", out_dir=tmp_path, faults="flaky"
        )
        runs[style] = report_of(state)
    assert [c["outcome"] for c in runs["good"]["calls"] if c["tool"] == "freeze_account"] == [
        "tool_error",
        "ok",
    ]
    assert runs["good"]["passed"] is True
    # The naive agent took the error at its word: the account is frozen but no reason was recorded.
    a106 = runs["naive"]["final_state"]["accounts"]["A-106"]
    assert (a106["status"], a106["frozen_reason"]) == ("frozen", None)
    assert runs["naive"]["passed"] is False


async def test_under_notes_rug_pull_only_an_agent_that_lists_tools_again_finishes_the_archive(
    tmp_path: Path,
) -> None:
    runs = {}
    for style in ("good", "naive"):
        state = await agent.play(
            WORLDS["notes"],
            "archive-old-standups",
            style=style,
            seed=7,
            run_id="r1",
            out_dir=tmp_path,
            faults="rug_pull",
        )
        runs[style] = report_of(state)
    assert [f["kind"] for f in runs["good"]["faults_fired"]] == ["tools_changed"]
    assert runs["good"]["passed"] is True
    assert runs["naive"]["passed"] is False
    assert runs["naive"]["score"]["goal_match"] is False
    assert runs["naive"]["forbidden_hits"] == []  # it gave up; it destroyed nothing


def test_the_flaky_style_is_good_or_bad_by_a_deterministic_coin_on_seed_and_run_id() -> None:
    picks = [agent.effective_style("flaky", 7, f"r{i}") for i in range(1, 41)]
    assert picks == [agent.effective_style("flaky", 7, f"r{i}") for i in range(1, 41)]
    assert set(picks) == {"good", "bad"}
    assert 10 <= picks.count("good") <= 30


async def test_the_same_seed_and_run_id_give_byte_identical_state_and_report_files_across_processes(
    tmp_path: Path,
) -> None:
    files = []
    for attempt in ("first", "second"):
        state = await agent.play(
            BANK,
            "top-up-and-pay",
            style="good",
            seed=11,
            run_id="same",
            out_dir=tmp_path / attempt,
            faults="flaky",
        )
        report = state.with_name(state.name.replace(".state.json", ".report.json"))
        files.append((state.read_bytes(), report.read_bytes()))
    assert files[0] == files[1]
    assert json.loads(files[0][1])["faults_fired"]  # the faults fired, and fired the same way


async def test_the_runner_plays_every_task_k_times_and_eval_scores_the_flaky_style_between_good_and_bad() -> (
    None
):
    from harn_mcp_mock import run_eval_async
    from harn_mcp_mock.runner import build_matrix

    results = {
        style: await run_eval_async(agent.in_process(style), WORLDS["tickets"], k=2, seed=7)
        for style in ("good", "flaky")
    }
    counts = {style: {t.task: (t.c, t.n) for t in r.groups[0].tasks} for style, r in results.items()}
    assert counts["good"] == dict.fromkeys(tasks_of("tickets"), (2, 2))
    # the flaky agent is good exactly when its coin (the trial's seed and run id) says so
    spec = WORLDS["tickets"]
    trials = build_matrix([(spec, json.loads(spec.read_text()))], k=2, seed=7)
    expected: dict[str, tuple[int, int]] = {}
    for trial in trials:
        c, n = expected.get(trial.task, (0, 0))
        expected[trial.task] = (c + agent.coin(trial.seed, trial.run_id), n + 1)
    assert counts["flaky"] == expected
    assert 0 < sum(c for c, _ in expected.values()) < 10  # some of each


def test_the_agent_examples_help_says_what_each_option_does(capsys: pytest.CaptureFixture[str]) -> None:
    """`python scripted_agent.py --help`: `world list` points users at it."""
    agent = load_agent()
    with pytest.raises(SystemExit):
        agent.main(["--help"])
    text = capsys.readouterr().out
    blocks = re.split(r"\n(?=  -)", text.split("options:", 1)[1])
    options = {block.split()[0].rstrip(","): block for block in blocks if block.strip()}
    assert set(options) >= {"--spec", "--task", "--style", "--seed", "--run-id", "--faults", "--out"}
    for name, block in options.items():
        words = block.split()
        said = [w for w in words[1:] if not w.isupper() and not w.startswith(("{", "--", "-"))]
        assert said, f"{name} says nothing: {block!r}"
    assert "--harn-trial" in text


def test_the_notes_example_answers_every_request_read_before_it_exits_at_end_of_input() -> None:
    """Piped straight in, no recorder in between: the SDK's own stdio loop would stop at the end of
    input and drop the tools/call still being handled (examples/servers/notes_server.py)."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "list_notes", "arguments": {}},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
    ]
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "servers" / "notes_server.py")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The SDK handles requests concurrently: the two tools/call answers may come in either order.
    assert sorted(json.loads(line)["id"] for line in done.stdout.splitlines()) == [1, 2, 3, 4]


def test_world_list_json_shows_each_worlds_servers() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "list", "--json"],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    servers = {w["name"]: w["servers"] for w in json.loads(done.stdout)["worlds"]}
    assert servers["support"] == [
        {"name": "desk", "tools": ["list_tickets", "get_ticket", "add_comment", "close_ticket"]},
        {"name": "bank", "tools": ["get_account", "list_transfers", "refund"]},
    ]
    bank_tools = [t["name"] for t in json.loads(BANK.read_text(encoding="utf-8"))["tools"]]
    assert servers["bank"] == [{"name": "bank-world", "tools": bank_tools}]
