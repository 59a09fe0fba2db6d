"""The framework recipes of examples/frameworks/ run as a user runs them: `harn mcp mock run
--spec bank --faults flaky -- python examples/frameworks/<name>/agent.py`, every task once
without faults and once under ``flaky``; docs/frameworks.md's table of pass rates is this."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.recipes import HARN, RECIPES, ROOT

pytestmark = pytest.mark.frameworks


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_passes_every_bank_task_and_scores_its_documented_rate_under_flaky(
    name: str, tmp_path: Path
) -> None:
    modules, clean, flaky = RECIPES[name]
    for module in modules:
        pytest.importorskip(module)
    agent = ROOT / "examples" / "frameworks" / name / "agent.py"
    done = subprocess.run(
        [
            *HARN,
            "run",
            "--spec",
            "bank",
            "--faults",
            "flaky",
            "--workers",
            "2",
            "--timeout",
            "120",
            "--out",
            str(tmp_path / "run"),
            "--",
            sys.executable,
            str(agent),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    rates = {g["faults"]: g["pass_rate"]["value"] for g in results["groups"]}
    assert rates == {None: clean, "flaky": flaky}, done.stdout[-3000:]
    trial = tmp_path / "run" / "trials" / "bank" / "pay-rent" / "none" / "1"
    if (trial / "llm.ndjson").exists():  # recipes whose model is the scripted endpoint log there
        last = json.loads((trial / "llm.ndjson").read_text().splitlines()[-1])
        assert last["text"] == "Done: pay-rent (get_account, list_transfers, transfer)."
        assert [c["name"].rsplit("_", 1)[-1] for c in last["calls"]] == ["account", "transfers", "transfer"]
