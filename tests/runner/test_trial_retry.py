"""Retries only for untouched worlds (issue 35, item 3): exit 75 is an infrastructure error
(retried, kept out of n) only while no call changed the world's state; after a change the trial is
scored as it stands. A non-zero exit is an infrastructure error only with no session, no tool call
and no state change: a ``tools/call`` without ``initialize`` counts. Real agent processes that
speak JSON-RPC to the trial's bridge themselves, without a sandbox (each attempt leaves a marker
file in the test's folder for the next one)."""

from __future__ import annotations

import sys
from pathlib import Path

from harn_mcp_mock.runner import run_episodes

WAIT = 120
RAW = """
import json, os, subprocess, sys

world = subprocess.Popen(json.loads(os.environ["HARN_WORLD_COMMAND"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def ask(n, method, params):
    world.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode() + b"\\n")
    world.stdin.flush()
    return json.loads(world.stdout.readline())

def call(n, name, arguments):
    return ask(n, "tools/call", {"name": name, "arguments": arguments})

def initialize():
    info = {"name": "raw", "version": "1"}
    ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info})
"""
RENT = {"from_account": "A-101", "to_account": "A-201", "amount_cents": 120000, "memo": "Rent January 2026"}


def agent(folder: Path, name: str, body: str) -> list[str]:
    path = folder / f"{name}.py"
    path.write_text(RAW + body)
    return [sys.executable, str(path)]


def test_damage_then_exit_75_is_scored_as_it_stands_not_retried(tmp_path: Path) -> None:
    marker = tmp_path / "attempted"
    body = f"""
first = not os.path.exists({str(marker)!r})
open({str(marker)!r}, "a").close()
initialize()
if first:  # damage: the rent to the wrong account, then "try again later"
    call(1, "transfer", {{**{RENT!r}, "to_account": "A-102"}})
    world.stdin.close(); world.wait()
    sys.exit(75)
call(1, "transfer", {RENT!r})  # a clean second attempt would pass
"""
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "damage", body), out=tmp_path / "out", tasks=["pay-rent"],
        max_retries=2, workers=1, timeout=WAIT, sandbox="none",
    )  # fmt: skip
    (record,) = outcome.trials
    assert (record["status"], record["attempts"], record["exit_code"]) == ("scored", 1, 75)
    assert record["message"] == (
        "the agent exited 75 (EX_TEMPFAIL) after 1 call(s) changed the world's state: "
        "scored as it stands, not retried"
    )
    (run,) = outcome.result.runs
    assert not run.score.passed and outcome.result.excluded == []
    assert outcome.exit_code == 0  # scored: no infrastructure error to retry the run for


def test_exit_75_with_only_reads_is_still_retried(tmp_path: Path) -> None:
    body = """
initialize()
call(1, "get_account", {"account_id": "A-101"})
world.stdin.close(); world.wait()
sys.exit(75)
"""
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "reads", body), out=tmp_path / "out", tasks=["pay-rent"],
        max_retries=1, workers=1, timeout=WAIT, sandbox="none",
    )  # fmt: skip
    (record,) = outcome.trials
    assert (record["status"], record["attempts"]) == ("infra_error", 2)
    assert record["infra_error"] == "the agent exited 75 (EX_TEMPFAIL)"


def test_a_tools_call_without_initialize_that_changed_state_then_exit_1_is_scored(tmp_path: Path) -> None:
    body = f"""
answer = call(1, "transfer", {RENT!r})  # no initialize: the world still applies it
assert "result" in answer, answer
world.stdin.close(); world.wait()
sys.exit(1)
"""
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "uninitialized", body), out=tmp_path / "out", tasks=["pay-rent"],
        max_retries=1, workers=1, timeout=WAIT, sandbox="none",
    )  # fmt: skip
    (record,) = outcome.trials
    assert (record["status"], record["attempts"], record["exit_code"]) == ("scored", 1, 1)
    assert (record["sessions"], record["tool_calls"]) == (0, 1)
    (run,) = outcome.result.runs  # in n, scored on what it did (here: the whole task)
    assert run.score.passed and outcome.result.excluded == []
