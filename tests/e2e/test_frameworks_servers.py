"""A framework recipe over a world of several servers: the openai-agents recipe takes every
server of its trial's HARN_MCP_CONFIG (the shipped ``support``: a ticket desk and a bank over one
state), its model the scripted endpoint (`harn mcp mock llm`'s, in-process), under `harn mcp mock
run`. The careful policy passes every task, also under ``flaky`` (a ghost success on the bank's
refund, rate limits on both servers); the naive one pays a refund twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.recipes import HARN, ROOT, preload_args

pytestmark = [pytest.mark.frameworks, pytest.mark.e2e, pytest.mark.slow]
AGENT = ROOT / "examples" / "frameworks" / "openai_agents" / "agent.py"


def harn_run(out: Path, *options: str, policy: str = "reference") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HARN, "run", "--spec", "support", "--workers", "2", "--timeout", "120", "--out", str(out), *options,
         "--", sys.executable, str(AGENT)],
        capture_output=True, text=True, timeout=900, cwd=ROOT, env={**os.environ, "HARN_LLM_POLICY": policy},
    )  # fmt: skip


def test_the_openai_agents_recipe_takes_both_servers_and_passes_every_support_task(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    done = harn_run(tmp_path / "run", "--faults", "flaky", *preload_args("openai_agents"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert {g["faults"]: g["pass_rate"]["value"] for g in results["groups"]} == {None: 1.0, "flaky": 1.0}
    trial = tmp_path / "run" / "trials" / "support" / "refund-double-charge" / "flaky" / "1"
    report = json.loads((trial / "report.json").read_text())
    assert report["sessions"] == 2  # one session with each server, one world
    served = [(c["tool"], c["server"]) for c in report["calls"] if c["outcome"] == "ok"]
    assert [tool for tool, _ in served] == ["get_ticket", "list_transfers", "list_transfers", "add_comment",
                                            "close_ticket"]  # fmt: skip
    assert {server for _, server in served} == {"desk", "bank"}
    assert [f["fault"] for f in report["faults_fired"] if f["server"] == "bank"] == [
        "bank-reads-rate-limit", "refund-ghost-success",
    ]  # fmt: skip
    last = json.loads((trial / "agent" / "llm.ndjson").read_text().splitlines()[-1])
    assert last["text"].startswith("Done: refund-double-charge")


def test_the_naive_policy_pays_a_refund_twice_after_the_banks_ghost_success(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    done = harn_run(tmp_path / "run", "--faults", "flaky", "--task", "refund-double-charge", policy="naive")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]  # a failed trial is no failed run
    trial = tmp_path / "run" / "trials" / "support" / "refund-double-charge" / "flaky" / "1"
    report = json.loads((trial / "report.json").read_text())
    assert (
        report["passed"] is False and report["forbidden_hits"][0]["predicate"]["exists"] == "/transfers/TX-5"
    )
    assert report["final_state"]["accounts"]["A-103"]["balance_cents"] == 12000 + 2 * 4500
