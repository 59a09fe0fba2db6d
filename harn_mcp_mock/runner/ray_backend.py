"""``--backend ray``: every trial a Ray task, on an existing cluster (``--ray-address``) or on a
local Ray started for the run (``pip install 'harn-mcp-mock[ray]'``).

A task runs the trial exactly as the local backend does (:func:`~harn_mcp_mock.runner.trial.run_trial`)
in a temporary folder of the node it lands on, with the spec and the Python effect modules
beside it shipped by value (:func:`spec_bundle`); its files come back with its record and are written under ``--out`` on the
machine that started the run. The node needs harn-mcp-mock and the agent command installed (see
docs/runner.md). At most ``workers`` trials are in flight (default: the cluster's CPUs).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.matrix import Trial
from harn_mcp_mock.runner.trial import run_trial, trial_record, write_infra_state
from harn_mcp_mock.store.cas import atomic_write

if TYPE_CHECKING:
    from harn_mcp_mock.runner.run import Plan

__all__ = ["remote_trial", "run_on_ray", "spec_bundle"]

POLL_S = 0.5
"""How often the driver looks at the stop event while waiting for Ray."""


def spec_bundle(path: Path) -> dict[str, bytes]:
    """The spec file and the Python effect modules beside it (``"python": "module:function"``
    tools import from the spec's folder): what a node needs to run the world."""
    bundle = {path.name: path.read_bytes()}
    for module in sorted(path.parent.glob("*.py")):
        bundle[module.name] = module.read_bytes()
    return bundle


def remote_trial(
    trial: Trial,
    spec: dict[str, bytes],
    agent: Sequence[str],
    timeout: float | None,
    max_retries: int,
    cwd: str,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Run one trial in a fresh temporary folder; its record and its files (name -> bytes).
    ``spec``: :func:`spec_bundle` of the trial's spec."""
    with tempfile.TemporaryDirectory(prefix="harn-trial-") as tmp:
        root = Path(tmp)
        (root / "spec").mkdir()
        for name, data in spec.items():
            (root / "spec" / name).write_bytes(data)
        local = replace(trial, spec=root / "spec" / trial.spec.name)
        env = dict(os.environ)
        record = run_trial(
            local, agent, root / "out", timeout=timeout, max_retries=max_retries, env=env,
            cwd=cwd if os.path.isdir(cwd) else tmp,
        )  # fmt: skip
        folder = local.folder((root / "out").resolve())
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        return record, files


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "the ray backend needs Ray: pip install 'harn-mcp-mock[ray]'", where="--backend"
        ) from None
    return ray


def run_on_ray(
    plan: Plan,
    agent: Sequence[str],
    *,
    workers: int | None,
    timeout: float | None,
    max_retries: int,
    address: str | None,
    stop: threading.Event | None,
) -> bool:
    """Run the plan's trials on Ray; True when a stop ended scheduling early."""
    ray = _import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray for this run only
        init: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        if address:
            init["address"] = address
        try:
            ray.init(**init)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UsageError(f"could not start or reach Ray ({exc})", where="--ray-address") from None
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(remote_trial)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        limit = max(1, workers or cpus)
        specs = {str(path): ray.put(spec_bundle(path)) for path, _ in plan.loaded}
        cwd = os.getcwd()
        queue = list(reversed(plan.todo))
        running: dict[Any, Trial] = {}
        stopped = False
        while queue or running:
            while queue and len(running) < limit and not (stop is not None and stop.is_set()):
                trial = queue.pop()
                ref = task.remote(trial, specs[str(trial.spec)], list(agent), timeout, max_retries, cwd)
                running[ref] = trial
            if stop is not None and stop.is_set() and queue:
                stopped, queue = True, []
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            for ref in done:
                trial = running.pop(ref)
                folder = trial.folder(plan.out)
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir(parents=True)
                try:
                    record, files = ray.get(ref)
                except Exception as exc:  # the task itself failed on its node: an infrastructure error
                    why = f"the Ray task failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"
                    write_infra_state(trial, folder, why)
                    record = trial_record(
                        trial,
                        status="infra_error",
                        exit_code=None,
                        infra_error=why,
                        attempts=1,
                        duration_ms=None,
                    )
                    files = {"trial.json": json.dumps(record, indent=2).encode() + b"\n"}
                for name, data in files.items():
                    if name != "trial.json":
                        atomic_write(folder / name, data)
                atomic_write(folder / "trial.json", files["trial.json"])  # last: marks the trial finished
                plan.finished(trial, record)
        return stopped
    finally:
        if started_here:
            ray.shutdown()
