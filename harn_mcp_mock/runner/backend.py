"""Where trials run: one :class:`Backend` protocol, backends looked up by name (:data:`BACKENDS`),
their options one value (:class:`BackendOptions`).

A backend runs the plan's trials left (``plan.todo``), at most ``options.workers`` at a time, each
with :func:`~harn_mcp_mock.runner.trial.run_trial` (wherever it runs), and reports each finished
trial with ``plan.finished(trial, record)`` on the calling thread. It stops scheduling once
``control.stopping``; the trials it stopped are not reported (they run again on resume).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.folder import TrialRecord
from harn_mcp_mock.runner.matrix import Trial
from harn_mcp_mock.runner.process import Control
from harn_mcp_mock.runner.trial import TrialSettings, run_trial

if TYPE_CHECKING:
    from harn_mcp_mock.runner.run import Plan

__all__ = ["BACKENDS", "Backend", "BackendOptions", "LocalBackend", "get_backend"]

WAKE_S = 0.25
"""How often a backend's scheduling loop looks at a stop asked through a ``threading.Event``."""


@dataclass(frozen=True, slots=True)
class BackendOptions:
    """A backend's options, one value: ``workers`` (trials at a time; default: the cores, or the
    cluster's CPUs) and, for Ray, ``address`` (a cluster; default: a local Ray for the run)."""

    workers: int | None = None
    address: str | None = None


class Backend(Protocol):
    name: str

    def run(self, plan: Plan, agent: Sequence[str], settings: TrialSettings, control: Control) -> None:
        """Run ``plan.todo`` (see the module docstring)."""
        ...


class LocalBackend:
    """Trials on a pool of threads of this process, each waiting on its agent process; their
    worlds on one :class:`~harn_mcp_mock.runner.hub.WorldHub` of this process."""

    name = "local"

    def __init__(self, options: BackendOptions) -> None:
        if options.address is not None:
            raise UsageError("--ray-address is for --backend ray", where="--ray-address")
        self.workers = max(1, options.workers or os.cpu_count() or 2)

    def run(self, plan: Plan, agent: Sequence[str], settings: TrialSettings, control: Control) -> None:
        from harn_mcp_mock.runner.hub import WorldHub

        with WorldHub() as hub, ThreadPoolExecutor(max_workers=self.workers) as pool:
            running: dict[Future[TrialRecord], Trial] = {}
            queue = list(reversed(plan.todo))
            while queue or running:
                while queue and len(running) < self.workers and not control.stopping:
                    trial = queue.pop()
                    future = pool.submit(
                        run_trial, trial, agent, plan.out, settings=settings, hub=hub,
                        spec=plan.compiled.get(trial.spec), control=control,
                    )  # fmt: skip
                    running[future] = trial
                control.running = len(running)
                if control.stopping:
                    queue = []
                if not running:
                    break
                finished, _ = wait(list(running), timeout=WAKE_S, return_when=FIRST_COMPLETED)
                for future in finished:
                    plan.finished(running.pop(future), future.result())
            control.running = 0


BACKENDS: dict[str, str] = {
    "local": "harn_mcp_mock.runner.backend:LocalBackend",
    "ray": "harn_mcp_mock.runner.ray_backend:RayBackend",
}
"""Backends by name: ``module:class`` (a backend's module is imported only when it is used)."""


def get_backend(name: str, options: BackendOptions) -> Backend:
    """The backend called ``name``, made with ``options`` (UsageError for an unknown name)."""
    import importlib

    where = BACKENDS.get(name)
    if where is None:
        raise UsageError(f"unknown backend {name!r} (backends: {', '.join(BACKENDS)})", where="--backend")
    module, _, attr = where.partition(":")
    make: Callable[[BackendOptions], Backend] = getattr(importlib.import_module(module), attr)
    return make(options)
