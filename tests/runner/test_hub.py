"""The runner owns each trial's world: every session an agent opens (a bridge over stdio, an HTTP
session) reaches one world state, and only what the world saw is scored. Real processes: agents
on the official ``mcp`` SDK, the stdio bridge, the hub's HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.runner import build_matrix, run_episodes
from harn_mcp_mock.runner.hub import WorldHub
from harn_mcp_mock.shipped import resolve_spec

WAIT = 120

STATELESS = """
from pathlib import Path
import anyio
from mcp import Client, StdioServerParameters

transport, skip = sys.argv[1], sys.argv[2:]
config = json.loads(Path(os.environ["HARN_MCP_CONFIG"]).read_text())
((_, entry),) = config["mcpServers"].items()
if transport == "stdio":
    server = StdioServerParameters(command=entry["command"], args=entry["args"])
else:
    server = os.environ["HARN_WORLD_URL"]
spec = json.loads(Path(os.environ["HARN_SPEC"]).read_text())
task = next(t for t in spec["tasks"] if t["id"] == os.environ["HARN_TASK_ID"])

async def main():
    for step in task["reference"]:
        if step["tool"] in skip:
            continue
        with anyio.fail_after(30):
            async with Client(server, mode="legacy") as client:  # a fresh session for every call
                await client.call_tool(step["tool"], step["arguments"])

anyio.run(main)
"""


def agent_script(folder: Path, name: str, body: str) -> list[str]:
    path = folder / f"{name}.py"
    path.write_text("import json, os, shutil, sys\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


@pytest.mark.parametrize("transport", ["stdio", pytest.param("http", marks=pytest.mark.slow)])
def test_a_client_with_a_session_per_call_passes_exactly_when_the_task_is_done(
    tmp_path: Path, transport: str
) -> None:
    agent = agent_script(tmp_path, "stateless", STATELESS)
    done = run_episodes(["bank"], [*agent, transport], out=tmp_path / "done", tasks=["pay-rent"], workers=1)
    (record,) = done.trials
    assert record["status"] == "scored" and (record["sessions"], record["tool_calls"]) == (3, 3)
    assert [run.score.passed for run in done.result.runs] == [True]
    report = json.loads(
        (tmp_path / "done" / "trials" / "bank" / "pay-rent" / "none" / "1" / "report.json").read_text()
    )
    assert (report["sessions"], report["tool_calls"], len(report["calls"])) == (3, 3, 3)
    skipped = run_episodes(
        ["bank"], [*agent, transport, "transfer"], out=tmp_path / "skipped", tasks=["pay-rent"], workers=1
    )
    assert [run.score.passed for run in skipped.result.runs] == [False]
    assert skipped.trials[0]["sessions"] == 2


def test_a_forging_agent_that_copies_a_passing_state_never_passes(tmp_path: Path) -> None:
    good = run_episodes(
        ["bank"], [*agent_script(tmp_path, "stateless", STATELESS), "stdio"], out=tmp_path / "good",
        tasks=["pay-rent"], k=2,
    )  # fmt: skip
    assert [run.score.passed for run in good.result.runs] == [True, True]
    passing = tmp_path / "good" / "trials" / "bank" / "pay-rent" / "none"
    forger = agent_script(
        tmp_path,
        "forger",
        f"src = {str(passing)!r} + '/' + os.environ['HARN_RUN_ID'][-1]\n"
        "for name in ('state.json', 'report.json', 'trial.json'):\n"
        "    shutil.copy(os.path.join(src, name), os.path.join(os.environ['HARN_TRIAL_DIR'], name))\n"
        # and, for the second trial, the first trial's state: another run id and seed
        "if os.environ['HARN_RUN_ID'].endswith('2'):\n"
        "    shutil.copy(os.path.join(src[:-1] + '1', 'state.json'), os.environ['HARN_TRIAL_DIR'])\n",
    )
    forged = run_episodes(["bank"], forger, out=tmp_path / "forged", tasks=["pay-rent"], k=2)
    assert [r["status"] for r in forged.trials] == ["scored", "scored"]
    assert [r["sessions"] for r in forged.trials] == [0, 0]
    assert [run.score.passed for run in forged.result.runs] == [False, False]
    assert forged.result.groups[0].pass_rate == 0
    # A resume does not take the forged files either: the runner's own files are what it reads.
    again = run_episodes(["bank"], forger, out=tmp_path / "forged", tasks=["pay-rent"], k=2)
    assert again.result.groups[0].pass_rate == 0


def _exchange(command: list[str], lines: list[dict[str, object]]) -> list[dict[str, object]]:
    """Send ``lines`` through a fresh bridge process; the answers (the bridge ends at EOF)."""
    data = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(command, input=data, capture_output=True, text=True, timeout=WAIT, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_every_bridge_of_a_trial_reaches_one_world_and_an_ended_trial_takes_no_more_calls() -> None:
    spec = resolve_spec("bank")
    (trial,) = build_matrix([(spec, json.loads(spec.read_text()))], tasks=["pay-rent"])
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    pay = {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "transfer", "arguments": {"from_account": "A-101", "to_account": "A-201",
                                                     "amount_cents": 120000, "memo": "Rent January 2026"}},
    }  # fmt: skip
    read = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "get_account", "arguments": {"account_id": "A-101"}}}  # fmt: skip
    with WorldHub(http=False) as hub:
        world = hub.open(trial)
        other = hub.open(trial)
        _exchange(world.command, [init, pay])
        (_, seen) = _exchange(world.command, [init, read])
        (_, fresh) = _exchange(other.command, [init, read])
        assert "190000" in json.dumps(seen) and "310000" in json.dumps(fresh)
        assert (world.shared.sessions, world.shared.tool_calls) == (2, 2)
        assert world.shared.world.state["accounts"]["A-101"]["balance_cents"] == 190000
        hub.close(world)
        assert _exchange(world.command, [init]) == []  # an ended trial: the bridge is turned away
        hub.close(other)


def test_what_an_agent_leaves_under_the_runners_file_names_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("untouched")
    agent = agent_script(
        tmp_path,
        "squatter",
        "d = os.environ['HARN_TRIAL_DIR']\n"
        "os.mkdir(os.path.join(d, 'state.json')); os.mkdir(os.path.join(d, 'trial.json'))\n"
        "os.mkfifo(os.path.join(d, 'agent.stdout'))\n"
        f"os.symlink({str(outside)!r}, os.path.join(d, 'report.json'))\n",
    )
    outcome = run_episodes(["bank"], agent, out=tmp_path / "out", tasks=["pay-rent"])
    assert [r["status"] for r in outcome.trials] == ["scored"]
    folder = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"
    for name in ("state.json", "trial.json", "agent.stdout", "report.json"):
        assert (folder / name).is_file() and not (folder / name).is_symlink()
    assert outside.read_text() == "untouched"
    assert json.loads((folder / "state.json").read_text())["run_id"] == "pay-rent.none.t1"


LATE = """
mine = os.environ["HARN_MCP_CONFIG"]
first = os.path.join(sys.argv[1], "first")
if not os.path.exists(first):  # the first run: keep the path, as an agent importing slowly would
    with open(first, "w") as f:
        f.write(mine)
    sys.exit(0)
old = open(first).read()  # the rerun: the first agent, reading its config only now
found = json.loads(open(old).read()) if os.path.exists(old) else None
with open(os.path.join(sys.argv[1], "seen"), "w") as f:
    json.dump({"same_path": old == mine, "old": found, "mine": json.loads(open(mine).read())}, f)
"""


def test_an_agent_left_from_a_killed_run_never_finds_the_reruns_world_in_its_config(tmp_path: Path) -> None:
    # A runner killed with SIGKILL leaves its agent running; the rerun of its trial must not hand
    # that agent its own world through the config file the agent reads late (the rerun's world
    # would score both agents' calls).
    agent = [*agent_script(tmp_path, "late", LATE), str(tmp_path)]
    for _ in range(2):
        run_episodes(
            ["bank"], agent, out=tmp_path / "out", tasks=["pay-rent"], workers=1, force=True, sandbox="none"
        )
    seen = json.loads((tmp_path / "seen").read_text())
    assert seen["same_path"] is False
    assert seen["old"] is None  # removed when its trial ended
    ((_, entry),) = seen["mine"]["mcpServers"].items()
    copy = json.loads(
        (tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1" / "mcp.json").read_text()
    )
    assert copy == seen["mine"] and entry["command"] == sys.executable  # the trial folder keeps a copy
