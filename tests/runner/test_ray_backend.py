"""``--backend ray`` on a local Ray runtime: the same trials, files and results.json as the local
backend for the same seed (skipped only where the ``ray`` extra is not installed; CI installs it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import UsageError
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
def test_the_ray_backend_gives_the_same_results_as_the_local_one_for_the_same_seed(tmp_path: Path) -> None:
    common: dict[str, Any] = {"tasks": ["pay-rent", "top-up-and-pay"], "k": 2, "seed": 5, "faults": ["flaky"]}
    agent = [*SCRIPTED, "flaky"]
    local = run_episodes(["bank"], agent, out=tmp_path / "local", workers=2, timeout=120, **common)
    seen: list[int] = []
    remote = run_episodes(
        ["bank"], agent, out=tmp_path / "ray", backend="ray", workers=2, timeout=120,
        on_trial=lambda record, done, total: seen.append(done), **common,
    )  # fmt: skip
    assert sorted(seen) == list(range(1, 9))
    assert [r["status"] for r in remote.trials] == [r["status"] for r in local.trials]
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    folder = Path("trials/bank/top-up-and-pay/flaky/2")
    for name in ("report.json", "state.json"):
        assert (tmp_path / "ray" / folder / name).read_bytes() == (
            tmp_path / "local" / folder / name
        ).read_bytes()
    assert (tmp_path / "ray" / folder / "tape.ndjson").exists() and (
        tmp_path / "ray" / folder / "agent.stderr"
    ).exists()
    # and a resume on the local backend accepts what Ray wrote
    again = run_episodes(["bank"], agent, out=tmp_path / "ray", on_trial=lambda *a: seen.append(-1), **common)
    assert -1 not in seen and len(again.trials) == 8


def test_an_unknown_backend_and_an_in_process_agent_on_ray_are_refused(tmp_path: Path) -> None:
    async def agent(session: Any, trial: Any) -> None:
        return None

    with pytest.raises(UsageError, match="unknown backend 'k8s'"):
        run_episodes(["bank"], ["true"], out=tmp_path, backend="k8s")
    with pytest.raises(UsageError, match="in-process agent runs on the local backend only"):
        run_episodes(["bank"], agent, out=tmp_path, backend="ray")
