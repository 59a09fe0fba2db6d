"""``--backend ray`` on a world of several servers (the shipped ``support``: a desk and a bank over
one state): the same trials, files and results.json as the local backend for the same seed, each
trial's servers served by the Ray worker's hub (skipped only where the ``ray`` extra is not
installed; CI installs it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.runner import run_episodes

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(
    not HAVE_RAY and not os.environ.get("CI"),
    reason="the ray extra is not installed (pip install 'harn-mcp-mock[ray]'); CI installs it",
)


def _portable(results: Path, out: Path) -> Any:
    """results.json with the run's own folder taken out of its file paths."""
    return json.loads(results.read_text().replace(str(out.resolve()), "OUT"))


@needs_ray
@pytest.mark.ray
def test_a_world_of_several_servers_gives_the_same_results_on_ray_as_locally(tmp_path: Path) -> None:
    common: dict[str, Any] = {
        "tasks": ["refund-double-charge", "close-already-refunded"], "k": 2, "seed": 5, "faults": ["flaky"],
    }  # fmt: skip
    agent = [*SCRIPTED, "flaky"]
    local = run_episodes(["support"], agent, out=tmp_path / "local", workers=2, timeout=120, **common)
    remote = run_episodes(
        ["support"], agent, out=tmp_path / "ray", backend="ray", workers=2, timeout=120, **common
    )
    assert [r["status"] for r in remote.trials] == [r["status"] for r in local.trials] == ["scored"] * 8
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    # the flaky coin made both a careful and a careless agent: not every trial passes, nor fails
    assert {run.score.passed for run in remote.result.runs} == {True, False}
    for trial in remote.trials:
        folder = Path("trials/support") / trial["task"] / trial["profile"] / str(trial["trial"])
        for name in ("report.json", "state.json"):
            assert (tmp_path / "ray" / folder / name).read_bytes() == (
                tmp_path / "local" / folder / name
            ).read_bytes()
        config = json.loads((tmp_path / "ray" / folder / "mcp.json").read_text())
        assert list(config["mcpServers"]) == ["desk", "bank"]
        report = json.loads((tmp_path / "ray" / folder / "report.json").read_text())
        assert report["sessions"] == 2 and {c["server"] for c in report["calls"]} == {"desk", "bank"}
