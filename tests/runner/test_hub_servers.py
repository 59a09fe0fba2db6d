"""A world of several servers under the runner: the agent's one MCP config names every server,
each its own bridge (and URL), and every session of any server reaches the trial's one world:
one state, one report, one tape. Real processes: the stdio bridge, the scripted agent on the
official ``mcp`` SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harn_mcp_mock.runner import build_matrix, run_episodes
from harn_mcp_mock.runner.hub import WorldHub
from harn_mcp_mock.runner.trial import mcp_config, world_servers
from harn_mcp_mock.shipped import resolve_spec

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]
WAIT = 120
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}


def _exchange(command: list[str], lines: list[dict[str, object]]) -> list[dict[str, object]]:
    """Send ``lines`` through a fresh bridge process; the answers (the bridge ends at EOF)."""
    data = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(command, input=data, capture_output=True, text=True, timeout=WAIT, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def _call(tool: str, arguments: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def test_each_server_of_a_trial_has_its_own_bridge_and_all_reach_one_world() -> None:
    spec = resolve_spec("support")
    (trial,) = build_matrix([(spec, json.loads(spec.read_text()))], tasks=["refund-double-charge"])
    with WorldHub(http=False) as hub:
        world = hub.open(trial)
        config = json.loads(mcp_config(trial, world))["mcpServers"]
        assert list(config) == ["desk", "bank"]
        desk = [config["desk"]["command"], *config["desk"]["args"]]
        bank = [config["bank"]["command"], *config["bank"]["args"]]
        assert desk != bank and list(json.loads(world_servers(world) or "{}")) == ["desk", "bank"]
        refund = _call("refund", {"to_account": "A-103", "amount_cents": 4500, "memo": "Refund T-1"})
        (init, paid) = _exchange(bank, [INIT, refund])
        assert init["result"]["serverInfo"]["name"] == "bank"  # type: ignore[index]
        assert "TX-4" in json.dumps(paid)
        (init, unknown, listed) = _exchange(desk, [INIT, refund, _call("get_ticket", {"ticket_id": "T-1"})])
        assert init["result"]["serverInfo"]["name"] == "desk"  # type: ignore[index]
        assert unknown["error"]["message"] == "Unknown tool: refund"  # type: ignore[index]
        assert '"status":"open"' in json.dumps(listed, separators=(",", ":")).replace("\\", "")
        engine = world.shared.world
        assert engine.state["accounts"]["A-103"]["balance_cents"] == 16500
        assert [(c["tool"], c["server"]) for c in engine.calls] == [
            ("refund", "bank"),
            ("get_ticket", "desk"),
        ]
        assert (world.shared.sessions, world.shared.tool_calls) == (2, 3)
        hub.close(world)
        assert _exchange(bank, [INIT]) == [] and _exchange(desk, [INIT]) == []  # the trial ended


async def test_each_server_of_a_trial_has_its_own_url_over_streamable_http() -> None:
    import anyio
    from mcp import Client

    spec = resolve_spec("support")
    (trial,) = build_matrix([(spec, json.loads(spec.read_text()))], tasks=["refund-double-charge"])
    with WorldHub() as hub:
        world = hub.open(trial)
        urls = {name: entry["url"] for name, entry in json.loads(world_servers(world) or "{}").items()}
        assert list(urls) == ["desk", "bank"] and len(set(urls.values())) == 2
        with anyio.fail_after(WAIT):
            async with Client(urls["bank"], mode="legacy") as bank:
                assert bank.server_info.name == "bank"
                paid = await bank.call_tool(
                    "refund", {"to_account": "A-103", "amount_cents": 4500, "memo": "Refund T-1"}
                )
                assert not paid.is_error
            async with Client(urls["desk"], mode="legacy") as desk:
                assert desk.server_info.name == "desk"
                assert [t.name for t in (await desk.list_tools()).tools] == [
                    "list_tickets", "get_ticket", "add_comment", "close_ticket",
                ]  # fmt: skip
        assert [(c["tool"], c["server"]) for c in world.shared.world.calls] == [("refund", "bank")]
        assert world.shared.sessions == 2


def test_a_world_of_one_server_keeps_its_one_entry_config_and_no_servers_variable() -> None:
    spec = resolve_spec("bank")
    (trial,) = build_matrix([(spec, json.loads(spec.read_text()))], tasks=["pay-rent"])
    with WorldHub(http=False) as hub:
        world = hub.open(trial)
        assert list(json.loads(mcp_config(trial, world))["mcpServers"]) == ["bank"]
        assert world_servers(world) is None and world.tokens == [world.token]


def test_the_cross_server_world_runs_scored_as_one_trial_under_faults_on_each_server(tmp_path: Path) -> None:
    done = run_episodes(
        ["support"], [*SCRIPTED, "good"], out=tmp_path / "run", faults=["flaky"], k=1, seed=3,
        workers=2, timeout=WAIT,
    )  # fmt: skip
    assert sorted({r["task"] for r in done.trials}) == [
        "close-already-refunded", "decline-late-refund", "refund-cancelled-subscription", "refund-double-charge",
    ]  # fmt: skip
    assert [r["status"] for r in done.trials] == ["scored"] * 8
    assert [run.score.passed for run in done.result.runs] == [True] * 8
    folder = tmp_path / "run" / "trials" / "support" / "refund-double-charge" / "flaky" / "1"
    assert list(json.loads((folder / "mcp.json").read_text())["mcpServers"]) == ["desk", "bank"]
    report = json.loads((folder / "report.json").read_text())
    assert report["sessions"] == 2 and {c["server"] for c in report["calls"]} == {"desk", "bank"}
    assert {(f["fault"], f["server"]) for f in report["faults_fired"]} >= {
        ("refund-ghost-success", "bank"), ("desk-rate-limit", "desk"),
    }  # fmt: skip
    assert report["final_state"]["transfers"]["TX-4"]["memo"] == "Refund T-1"
    assert "TX-5" not in report["final_state"]["transfers"]  # the ghost success was not paid twice
    records = [json.loads(line) for line in (folder / "tape.ndjson").read_text().splitlines()]
    assert {r.get("server") for r in records if r.get("kind") == "mcp_json_rpc"} == {"desk", "bank"}
