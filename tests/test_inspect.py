"""harn_mcp_mock.inspect: a world as an Inspect AI task, run offline with Inspect's own
``mockllm/model`` whose outputs (a callable of the conversation) play each task's reference
plan as tool calls; its pass^k reducers agree with `harn mcp mock eval` on the trials' files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.llm import Conversation, ToolCall, ToolResult, next_move
from harn_mcp_mock.llm.server import load_world
from harn_mcp_mock.scoring.eval import score_runs

# Inspect's own dependencies warn about their deprecated parameters (tenacity's `initial`), and
# one anyio memory stream per sample is collected unclosed after Inspect's run (not yet traced).
pytestmark = [
    pytest.mark.frameworks,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

BANK = load_world("bank")


@pytest.fixture(autouse=True)
def _inspect_installed() -> None:
    """Inspect is imported by the tests that run, not at collection: every xdist worker collects
    this module, and importing Inspect costs seconds."""
    pytest.importorskip("inspect_ai")


def world_task(*args: Any, **kwargs: Any) -> Any:
    from harn_mcp_mock.inspect import world_task as task

    return task(*args, **kwargs)


def scripted(policy_of: Any) -> Any:
    """mockllm's custom outputs: a function of the conversation that plays the plan
    (harn_mcp_mock.llm.next_move). ``policy_of(n)``: the policy of a sample's n-th start (epochs
    may run at once: which epoch gets which policy may vary, how many of each does not)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ModelOutput, ModelUsage

    usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # else mockllm fetches a tokenizer
    starts: Counter[str] = Counter()

    def output(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        conv = Conversation(tools=[t.name for t in tools])
        index: dict[str, int] = {}
        for m in messages:
            if isinstance(m, ChatMessageTool):
                i = index.get(str(m.tool_call_id))
                if i is not None:
                    text = m.error.message if m.error is not None else m.text
                    conv.calls[i] = (conv.calls[i][0], ToolResult(text, m.error is not None))
                continue
            conv.texts.append(m.text)
            if isinstance(m, ChatMessageAssistant):
                for tc in m.tool_calls or []:
                    index[tc.id] = len(conv.calls)
                    conv.calls.append((ToolCall(tc.function, dict(tc.arguments)), None))
        if not conv.calls:  # a sample's first turn picks the policy; its call ids carry it on
            key = conv.texts[-1] if conv.texts else ""
            starts[key] += 1
            policy = policy_of(starts[key])
        else:
            policy = next(iter(index)).split("-", 1)[0]
        move = next_move(BANK, policy, conv)
        if move.calls:
            (call,) = move.calls
            out = ModelOutput.for_tool_call(
                "mockllm", call.name, call.arguments, tool_call_id=f"{policy}-{len(conv.calls)}"
            )
        else:
            out = ModelOutput.from_content("mockllm", move.text)
        out.usage = usage
        return out

    return output


def run(task: Any, policy_of: Any, tmp_path: Path, **options: Any) -> Any:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model("mockllm/model", custom_outputs=scripted(policy_of))
    logs = str(tmp_path / "logs")
    (log,) = inspect_eval(task, model=model, display="none", log_dir=logs, max_samples=1, **options)
    assert log.status == "success", log.error
    return log


def test_the_bank_task_has_its_four_tasks_as_samples_and_the_reference_passes_all_four(
    tmp_path: Path,
) -> None:
    task = world_task("bank", out=tmp_path / "trials")
    assert [s.id for s in task.dataset] == [
        "pay-rent",
        "top-up-and-pay",
        "refund-double-charge",
        "freeze-stolen-card",
    ]
    assert task.dataset[0].input == BANK.tasks["pay-rent"].description
    log = run(task, lambda _: "reference", tmp_path)
    assert [s.scores["world_scorer"].value for s in log.samples] == ["C", "C", "C", "C"]
    scores = {s.reducer: s.metrics["accuracy"].value for s in log.results.scores}
    assert scores == {"pass_k_1": 1.0}
    (sample,) = (s for s in log.samples if s.id == "pay-rent")
    assert sample.scores["world_scorer"].metadata["collateral"] == []
    trial = Path(sample.scores["world_scorer"].metadata["trial_dir"])
    assert trial == tmp_path / "trials" / "trials" / "bank" / "pay-rent" / "none" / "1"
    report = json.loads((trial / "report.json").read_text())
    assert report["passed"] and report["final_state"]["transfers"]["TX-7"]["memo"] == "Rent January 2026"
    assert (trial / "state.json").exists() and (trial / "tape.ndjson").exists()


def test_the_evals_epochs_give_pass_k_up_to_them_and_the_trials_sit_beside_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eval(epochs=3) overrides the task's 1 (as --epochs does): pass^1..pass^3, not pass^1
    alone; with no ``out`` the trials go beside the eval's log, never to a temporary folder that
    stays behind."""
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    task = world_task("bank", task_ids=["pay-rent"])
    log = run(task, lambda started: "naive" if started == 1 else "reference", tmp_path, epochs=3)
    assert [s.reducer for s in log.results.scores] == ["pass_k_1", "pass_k_2", "pass_k_3"]
    assert list((tmp_path / "tmp").iterdir()) == []
    beside = Path(log.location).with_suffix("")
    assert sorted(p.parent.name for p in beside.glob("trials/bank/pay-rent/none/*/state.json")) == [
        "1",
        "2",
        "3",
    ]
    assert {Path(s.scores["world_scorer"].metadata["trial_dir"]).parent for s in log.samples} == {
        beside / "trials" / "bank" / "pay-rent" / "none"
    }


@pytest.mark.slow
def test_its_pass_k_is_harn_evals_on_the_same_trials(tmp_path: Path) -> None:
    # Under flaky, the naive policy pays twice or gives up on 3 tasks of 4: two epochs of each
    # task play the reference, one the naive policy, so c/n is 2/3 (3/3 for refund-double-charge).
    out = tmp_path / "trials"
    task = world_task("bank", faults="flaky", epochs=3, out=out)
    log = run(task, lambda started: "naive" if started % 2 == 0 else "reference", tmp_path)
    inspect_k = {s.reducer: s.metrics["accuracy"].value for s in log.results.scores}
    states = sorted(str(p) for p in out.glob("trials/bank/*/flaky/*/state.json"))
    assert len(states) == 12
    (group,) = score_runs([BANK], states).groups
    assert group.faults == "flaky"
    harn_k = {f"pass_k_{k}": float(v) for k, v in group.pass_power_k.items()}
    assert inspect_k == pytest.approx(harn_k)
    third = 1 / 3
    assert harn_k == pytest.approx(
        {"pass_k_1": (3 * 2 * third + 1) / 4, "pass_k_2": (3 * third + 1) / 4, "pass_k_3": 0.25}
    )


def test_a_custom_solver_gets_the_worlds_tools_and_bad_names_are_refused(tmp_path: Path) -> None:
    from inspect_ai.solver import generate

    task = world_task(
        "bank", task_ids=["freeze-stolen-card"], solver=generate(tool_calls="loop"), out=tmp_path
    )
    log = run(task, lambda _: "reference", tmp_path)
    assert [s.scores["world_scorer"].value for s in log.samples] == ["C"]
    with pytest.raises(WorldSpecError, match="no task 'nope'"):
        world_task("bank", task_ids=["nope"])
    with pytest.raises(WorldSpecError, match="no fault profile 'meteor'"):
        world_task("bank", faults="meteor")


@pytest.mark.e2e
def test_inspect_eval_finds_the_world_by_name_from_any_folder_with_every_pass_k(tmp_path: Path) -> None:
    """`inspect eval harn_mcp_mock/world` in a folder that is not the repository (the package's
    ``inspect_ai`` entry point registers the task): --epochs 2 reports pass^1 and pass^2, each
    trial's files sit beside the log, and nothing is left in the temporary folder."""
    pytest.importorskip("openai")
    from harn_mcp_mock.llm import serve_llm

    inspect_cli = Path(sys.executable).with_name("inspect")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "OPENAI_API_KEY": "offline", "TMPDIR": str(tmp_path / "tmp")}
    with serve_llm("bank") as url:
        done = subprocess.run(
            [
                str(inspect_cli),
                "eval",
                "harn_mcp_mock/world",
                "-T",
                "spec=bank",
                "--epochs",
                "2",
                "--model",
                "openai/scripted",
                "--model-base-url",
                url,
                "--log-dir",
                "logs",
                "--display",
                "none",
                "--log-format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (log_file,) = (tmp_path / "logs").glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["status"] == "success"
    assert [s["scores"]["world_scorer"]["value"] for s in log["samples"]] == ["C"] * 8
    assert {s["reducer"]: s["metrics"]["accuracy"]["value"] for s in log["results"]["scores"]} == {
        "pass_k_1": 1.0,
        "pass_k_2": 1.0,
    }
    trials = sorted(log_file.with_suffix("").glob("trials/bank/*/none/*/state.json"))
    assert len(trials) == 8
    (group,) = score_runs([BANK], [str(p) for p in trials]).groups
    assert {k: float(v) for k, v in group.pass_power_k.items()} == {1: 1.0, 2: 1.0}
    assert [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("harn-inspect-")] == []
