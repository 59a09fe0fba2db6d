"""In-process agents: ``async def agent(session, trial)`` over a memory stream to a fresh world,
scored exactly as the same agent run as a command (the scripted SDK agent both ways)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from harn_mcp_mock import run_eval
from harn_mcp_mock.api import WorldTransport, session_over
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import Trial, run_episodes, run_eval_async

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]


def _outcomes(results: Path) -> list[tuple[str, str | None, bool, list[Any]]]:
    doc = json.loads(results.read_text())
    return [(r["run_id"], r["faults"], r["passed"], r["collateral"]) for r in doc["runs"]]


@pytest.mark.slow
def test_an_in_process_agent_scores_as_the_same_agent_run_as_a_command(tmp_path: Path) -> None:
    common: dict[str, Any] = {
        "tasks": ["pay-rent", "top-up-and-pay"],
        "k": 2,
        "seed": 11,
        "faults": ["flaky"],
    }
    run_episodes(["bank"], [*SCRIPTED, "flaky"], out=tmp_path / "cmd", workers=2, timeout=120, **common)
    inproc = run_episodes(["bank"], in_process("flaky"), out=tmp_path / "mem", **common)
    assert len(inproc.trials) == 8 and {r["status"] for r in inproc.trials} == {"scored"}
    assert _outcomes(tmp_path / "mem" / "results.json") == _outcomes(tmp_path / "cmd" / "results.json")
    assert {p.name for p in (tmp_path / "mem" / "trials" / "bank" / "pay-rent" / "flaky" / "1").iterdir()} >= {
        "state.json", "report.json", "tape.ndjson", "trial.json",
    }  # fmt: skip
    # the same world, seed and calls: the same report, byte for byte, whichever way it ran
    one = Path("trials/bank/pay-rent/flaky/2/report.json")
    assert (tmp_path / "mem" / one).read_bytes() == (tmp_path / "cmd" / one).read_bytes()
    run = json.loads((tmp_path / "mem" / "run.json").read_text())
    assert run["agent"] == ["python:scripted_agent.in_process('flaky')"]


def test_run_eval_returns_the_eval_result_and_keeps_nothing_without_out() -> None:
    result = run_eval(in_process("good"), "bank", tasks=["pay-rent"], k=3)
    (group,) = result.groups
    assert (group.world, group.pass_rate, group.pass_power_k[3]) == ("bank", 1, 1)
    assert all(not Path(run.file).exists() for run in result.runs)  # the temporary folder is gone


def test_an_agent_that_raises_is_scored_as_it_stands_with_its_error_kept(tmp_path: Path) -> None:
    async def clumsy(session: ClientSession, trial: Trial) -> None:
        await session.call_tool(
            "transfer", {"from_account": "A-101", "to_account": "A-999", "amount_cents": 1}
        )
        raise RuntimeError(f"gave up on {trial.task}")

    outcome = run_episodes(["bank"], clumsy, out=tmp_path, tasks=["pay-rent"])
    (record,) = outcome.trials
    assert record["status"] == "scored" and record["exit_code"] == 1
    assert record["agent_error"] == "RuntimeError: gave up on pay-rent"
    folder = tmp_path / "trials" / "bank" / "pay-rent" / "none" / "1"
    assert "Traceback" in (folder / "agent.stderr").read_text()
    (run,) = outcome.result.runs
    assert not run.score.passed


def test_an_agent_past_its_timeout_is_cancelled_and_scored_as_it_stands(tmp_path: Path) -> None:
    async def stuck(session: ClientSession, trial: Trial) -> None:
        await session.list_tools()
        await anyio.sleep_forever()

    outcome = run_episodes(["bank"], stuck, out=tmp_path, tasks=["pay-rent"], timeout=0.2)
    (record,) = outcome.trials
    assert (record["status"], record["exit_code"]) == ("timeout", None)
    assert not outcome.result.runs[0].score.goal_match


async def test_inside_an_event_loop_run_eval_async_runs_the_trials_in_that_loop() -> None:
    seen: list[str] = []

    async def reader(session: ClientSession, trial: Trial) -> None:
        prompt = await session.get_prompt("task")
        seen.append(prompt.messages[0].content.text)  # type: ignore[union-attr]

    result = await run_eval_async(reader, "bank", tasks=["pay-rent"], k=2, workers=2)
    assert result.groups[0].tasks[0].n == 2
    assert len(seen) == 2 and seen[0].startswith("Pay")
    # run_eval works here too (its trials get their own loop in a worker thread), blocking this one
    assert run_eval(reader, "bank", tasks=["pay-rent"]).groups[0].tasks[0].n == 1


async def test_world_transport_serves_a_world_in_memory_and_keeps_its_final_state(tmp_path: Path) -> None:
    transport = WorldTransport("bank", task="pay-rent", seed=3, run_id="r", tape=tmp_path / "tape.ndjson")
    with anyio.fail_after(30):
        async with session_over(transport) as opened:
            tools = await opened.session.list_tools()
            assert "transfer" in {t.name for t in tools.tools}
    state = transport.state_document()
    assert (state["world"], state["task"], state["seed"], state["run_id"]) == ("bank", "pay-rent", 3, "r")
    assert transport.report_document()["passed"] is False
    assert (tmp_path / "tape.ndjson").read_text().count("\n") >= 3


@pytest.mark.slow
def test_with_its_callbacks_an_in_process_agent_hears_list_changed_as_a_command_does(tmp_path: Path) -> None:
    """notes under rug_pull: delete_note's contract changes mid-run and the server says so."""
    common: dict[str, Any] = {"tasks": ["archive-old-standups"], "k": 2, "seed": 3, "faults": ["rug_pull"]}
    run_episodes(["notes"], [*SCRIPTED, "good"], out=tmp_path / "cmd", workers=2, timeout=120, **common)
    agent = in_process("good")
    heard = run_episodes(["notes"], agent, out=tmp_path / "mem", callbacks=agent.callbacks, **common)
    assert _outcomes(tmp_path / "mem" / "results.json") == _outcomes(tmp_path / "cmd" / "results.json")
    assert all(run.score.passed for run in heard.result.runs)

    def lists(out: Path) -> int:  # tools/list requests of the faulted trial: one more after list_changed
        return (
            (out / "trials/notes/archive-old-standups/rug_pull/1/tape.ndjson")
            .read_text()
            .count('"method":"tools/list"')
        )

    deaf = in_process("good")
    run_episodes(["notes"], deaf, out=tmp_path / "deaf", **common)
    assert lists(tmp_path / "mem") == lists(tmp_path / "cmd") == 2 and lists(tmp_path / "deaf") == 1
    with pytest.raises(UsageError, match="callbacks are for an in-process agent"):
        run_episodes(["notes"], [*SCRIPTED, "good"], out=tmp_path / "x", callbacks=agent.callbacks)
