"""The framework recipes of examples/frameworks/ run as a user runs them: `harn mcp mock run
--spec bank --faults flaky -- python examples/frameworks/<name>/agent.py`, every task once
without faults and once under ``flaky``; docs/frameworks.md's table of pass rates is this.

The whole table runs as a warm start (`--preload` of the modules each recipe imports, PRELOAD in
recipes.py: the same agent code, half the CPU), and one trial of each recipe runs plain (a fresh
interpreter per trial, the command docs/frameworks.md shows first), so both ways are proven with
every real framework."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.recipes import HARN, PRELOAD_ENV, RECIPES, ROOT, preload_args

pytestmark = pytest.mark.frameworks


def harn_run(name: str, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    agent = ROOT / "examples" / "frameworks" / name / "agent.py"
    return subprocess.run(
        [*HARN, "run", "--spec", "bank", "--workers", "2", "--timeout", "120", "--out", str(out), *options,
         "--", sys.executable, str(agent)],
        capture_output=True, text=True, timeout=900, cwd=ROOT, env={**os.environ, **PRELOAD_ENV.get(name, {})},
    )  # fmt: skip


def assert_pay_rent_played_as_scripted(run: Path) -> None:
    trial = run / "trials" / "bank" / "pay-rent" / "none" / "1"
    log = trial / "agent" / "llm.ndjson"  # HARN_TRIAL_DIR's files, copied back when the trial ended
    if log.exists():  # recipes whose model is the scripted endpoint log there
        last = json.loads(log.read_text().splitlines()[-1])
        assert last["text"] == "Done: pay-rent (get_account, list_transfers, transfer)."
        assert [c["name"].rsplit("_", 1)[-1] for c in last["calls"]] == ["account", "transfers", "transfer"]


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_passes_every_bank_task_and_scores_its_documented_rate_under_flaky(
    name: str, tmp_path: Path
) -> None:
    modules, clean, flaky = RECIPES[name]
    for module in modules:
        pytest.importorskip(module)
    done = harn_run(name, tmp_path / "run", "--faults", "flaky", *preload_args(name))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    rates = {g["faults"]: g["pass_rate"]["value"] for g in results["groups"]}
    assert rates == {None: clean, "flaky": flaky}, done.stdout[-3000:]
    assert_pay_rent_played_as_scripted(tmp_path / "run")
    plain = harn_run(name, tmp_path / "plain", "--task", "pay-rent")
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    (group,) = json.loads((tmp_path / "plain" / "results.json").read_text())["groups"]
    assert group["pass_rate"]["value"] == 1.0, plain.stdout[-3000:]
    assert_pay_rent_played_as_scripted(tmp_path / "plain")
