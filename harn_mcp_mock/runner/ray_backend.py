"""``--backend ray``: every trial a Ray task, on an existing cluster (``--ray-address``) or on a
local Ray started for the run (``pip install 'harn-mcp-mock[ray]'``).

A task runs the trial exactly as the local backend does (:func:`~harn_mcp_mock.runner.trial.run_trial`)
in a temporary folder of the node it lands on, with the spec and the Python effect modules
beside it shipped by value (:func:`spec_bundle`), and returns the trial's
:class:`~harn_mcp_mock.runner.folder.TrialRecord`: the world's state and report as the worker
held it, the usage, and the agent's output, the config and the tape as bytes; nothing is read back
from the node's trial folder (the agent could write there). The driver writes the files under
``--out`` from the record. A record that does not come back (the task's own code failed, the
node was lost too often) is that trial's infrastructure error, never the run's. The node needs harn-mcp-mock and the agent command installed (see
docs/runner.md). At most ``workers`` trials are in flight (default: the cluster's CPUs).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.backend import BackendOptions
from harn_mcp_mock.runner.folder import TRIAL_STATUSES, TrialRecord
from harn_mcp_mock.runner.matrix import Trial
from harn_mcp_mock.runner.process import Control
from harn_mcp_mock.runner.trial import TrialSettings, record_trial, run_trial, trial_record

if TYPE_CHECKING:
    from harn_mcp_mock.runner.run import Plan

__all__ = ["RayBackend", "remote_trial", "run_on_ray", "spec_bundle"]

POLL_S = 0.25
"""How often the driver looks at the stop state while waiting for Ray."""
MAX_LOST = 3
"""How often a trial whose node or worker died is run again elsewhere (it never finished, so it
is not doubled) before it is recorded as an infrastructure error."""


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
    settings: TrialSettings,
    cwd: str,
) -> TrialRecord:
    """Run one trial in a fresh temporary folder; its record, with its world and its files'
    bytes (:attr:`~harn_mcp_mock.runner.folder.TrialRecord.outputs`), nothing read back from
    the folder. ``spec``: :func:`spec_bundle` of the trial's spec. The world is served by the
    worker process's hub; the worker is a child subreaper, so the trial's processes end with it
    (a cancelled task ends its agent too)."""
    from harn_mcp_mock.runner.process import become_subreaper

    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="harn-trial-") as tmp:
        root = Path(tmp)
        (root / "spec").mkdir()
        for name, data in spec.items():
            (root / "spec" / name).write_bytes(data)
        local = replace(trial, spec=root / "spec" / trial.spec.name)
        env = dict(os.environ)
        record = run_trial(
            local, agent, root / "out", settings=settings, env=env, cwd=cwd if os.path.isdir(cwd) else tmp,
            write=False,
        )  # fmt: skip
        record.ray_node = _node_id()  # where it ran: trial.json's ray_node
        return record


def _node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # not in a Ray worker (a direct call, a test)
        return None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "the ray backend needs Ray: pip install 'harn-mcp-mock[ray]'", where="--backend"
        ) from None
    return ray


class RayBackend:
    """``--backend ray`` (see the module docstring)."""

    name = "ray"

    def __init__(self, options: BackendOptions) -> None:
        _import_ray()
        self.options = options

    def run(self, plan: Plan, agent: Sequence[str], settings: TrialSettings, control: Control) -> None:
        run_on_ray(plan, agent, settings=settings, control=control, workers=self.options.workers,
                   address=self.options.address)  # fmt: skip


def run_on_ray(
    plan: Plan,
    agent: Sequence[str],
    *,
    settings: TrialSettings,
    control: Control,
    workers: int | None,
    address: str | None,
) -> None:
    """Run the plan's trials on Ray, until done or ``control`` stops (running tasks are then
    cancelled: each ends its agent; they are not recorded)."""
    ray = _import_ray()
    # No agent reads the driver's files on a node that has them (a local Ray): its --out, its
    # specs and their effect modules (each trial's own copies are hidden where they run).
    from harn_mcp_mock.runner.sandbox import effect_modules

    driver = [str(plan.out)]
    for path, doc in plan.loaded:
        driver += [str(path), *(str(m) for m in effect_modules(path, doc))]
    settings = replace(settings, hide=(*settings.hide, *driver))
    started_here = not ray.is_initialized()
    if started_here:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray for this run only
        init: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        # No --ray-address and no RAY_ADDRESS: a Ray of our own, even if another one runs on
        # this machine (a bare ray.init() would join that one, and die with it).
        init["address"] = address or os.environ.get("RAY_ADDRESS") or "local"
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
        lost: dict[str, int] = {}
        while queue or running:
            while queue and len(running) < limit and not control.stopping:
                trial = queue.pop()
                ref = task.remote(trial, specs[str(trial.spec)], list(agent), settings, cwd)
                running[ref] = trial
            control.running = len(running)
            if control.stopping:
                queue = []
                for ref in running:
                    ray.cancel(ref, force=control.killing)
                running = {}
                break
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            for ref in done:
                trial = running.pop(ref)
                try:
                    record = _checked(trial, ray.get(ref))
                except ray.exceptions.RayTaskError as exc:  # our code failed on its node
                    record = _failed(trial, f"the Ray task failed: {_last(exc)}")
                except ray.exceptions.RayError as exc:  # the node or worker died: run it elsewhere
                    lost[trial.key] = lost.get(trial.key, 0) + 1
                    if lost[trial.key] <= MAX_LOST:
                        queue.append(trial)
                        continue
                    record = _failed(
                        trial, f"the trial's Ray node was lost {MAX_LOST + 1} times: {_last(exc)}"
                    )
                except Exception as exc:  # a record that cannot be used: this trial's error, not the run's
                    record = _failed(trial, f"the Ray task's record could not be used: {_last(exc)}")
                if record.status == "stopped":
                    continue
                plan.finished(trial, record_trial(plan.out, trial, record))
        control.running = 0
    finally:
        if started_here:
            ray.shutdown()


def _last(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__


def _failed(trial: Trial, why: str) -> TrialRecord:
    """The record of a trial that could not run on Ray (an infrastructure error)."""
    return trial_record(
        trial, status="infra_error", exit_code=None, infra_error=why, attempts=1, duration_ms=None
    )


def _checked(trial: Trial, got: Any) -> TrialRecord:
    """The record a task returned, if it is ``trial``'s (else a ValueError)."""
    if not isinstance(got, TrialRecord):
        raise ValueError(f"a {type(got).__name__}, not a trial record")
    if (got.world, got.task, got.profile, got.trial, got.run_id, got.seed) != (
        trial.world, trial.task, trial.profile, trial.index, trial.run_id, trial.seed,
    ):  # fmt: skip
        raise ValueError(f"the record of {got.run_id}, not of {trial.run_id}")
    if got.status != "stopped" and (got.world_report is None or got.status not in TRIAL_STATUSES):
        raise ValueError(f"a record without its world (status {got.status!r})")
    return got
