"""Where trials run: one :class:`Backend` protocol, backends looked up by name (:data:`BACKENDS`),
their options one value (:class:`BackendOptions`).

Each backend declares itself once, as a :class:`BackendInfo`: its name, a line of help, the
options it takes (with their flags) and what it can run. The CLI's ``--backend`` help, the
checks of a run's options against its backend and :func:`get_backend` all read these
declarations, so a new backend is one declaration and one class. This module imports nothing
heavy (the CLI reads it to build its help); a backend's own module is imported only when it is used.

A backend runs the plan's trials left (``plan.todo``), at most ``options.workers`` at a time, each
with :func:`~harn_mcp_mock.runner.trial.run_trial` (wherever it runs), and reports each finished
trial with ``plan.finished(trial, record)`` on the calling thread. It stops scheduling once
``control.stopping``; the trials it stopped are not reported (they run again on resume).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Protocol

from harn_mcp_mock.errors import UsageError

if TYPE_CHECKING:
    from harn_mcp_mock.runner.process import Control
    from harn_mcp_mock.runner.run import Plan
    from harn_mcp_mock.runner.trial import TrialSettings

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendInfo",
    "BackendOption",
    "BackendOptions",
    "LocalBackend",
    "backend_help",
    "backend_info",
    "get_backend",
]

WAKE_S = 0.25
"""How often a backend's scheduling loop looks at a stop asked through a ``threading.Event``."""


@dataclass(frozen=True, slots=True)
class BackendOptions:
    """A backend's options, one value: ``workers`` (trials at a time; default: the cores, or the
    cluster's CPUs) and, for Ray, ``address`` (a cluster; default: a local Ray for the run)."""

    workers: int | None = None
    address: str | None = None


@dataclass(frozen=True, slots=True)
class BackendOption:
    """One option a backend takes: its :class:`BackendOptions` field, its CLI flag, its help."""

    field: str
    flag: str
    help: str


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """A backend's declaration: what the CLI shows and what a run checks its options against."""

    name: str
    summary: str
    """A few words for ``--backend``'s help: ``local (this machine)``."""
    target: str
    """``module:class`` of the backend (imported only when it is used)."""
    options: tuple[BackendOption, ...] = ()
    """The options of :class:`BackendOptions` it takes besides ``workers`` (which every one does)."""
    preload: bool = False
    """It runs ``--preload`` agents (forked from a fork server of this machine)."""
    in_process: bool = False
    """It runs an in-process agent (an ``async def agent(session, trial)``)."""
    isolation_here: bool = False
    """Its trials run on this machine: their sandbox is probed here, before any trial (else each
    node probes its own)."""

    def option(self, field: str) -> BackendOption | None:
        return next((option for option in self.options if option.field == field), None)


LOCAL = BackendInfo(
    "local",
    "this machine",
    "harn_mcp_mock.runner.backend:LocalBackend",
    preload=True,
    in_process=True,
    isolation_here=True,
)
RAY_ADDRESS = BackendOption("address", "--ray-address", "Ray cluster to use (default: a local Ray).")
RAY = BackendInfo(
    "ray", "Ray tasks; needs [ray]", "harn_mcp_mock.runner.ray_backend:RayBackend", options=(RAY_ADDRESS,)
)

BACKENDS: dict[str, BackendInfo] = {info.name: info for info in (LOCAL, RAY)}
"""Backends by name, each declared once (see the module docstring)."""


def backend_help() -> str:
    """``--backend``'s help, made from the declarations: ``local (this machine) or ray (...).``"""
    named = [f"{info.name} ({info.summary})" for info in BACKENDS.values()]
    return (", ".join(named[:-1]) + " or " + named[-1] if len(named) > 1 else named[0]) + "."


def backend_info(name: str) -> BackendInfo:
    """The declaration of the backend called ``name`` (UsageError for an unknown name)."""
    info = BACKENDS.get(name)
    if info is None:
        raise UsageError(f"unknown backend {name!r} (backends: {', '.join(BACKENDS)})", where="--backend")
    return info


def backends_with(capability: str) -> str:
    """The backends that can do ``capability`` (a :class:`BackendInfo` flag), for a message:
    ``the local backend``."""
    names = [info.name for info in BACKENDS.values() if getattr(info, capability)]
    return f"the {' or '.join(names)} backend{'s' if len(names) > 1 else ''}"


def check_backend_options(info: BackendInfo, options: BackendOptions) -> None:
    """An option given for another backend than the chosen one is a UsageError naming its flag."""
    for each in fields(options):
        if each.name == "workers" or getattr(options, each.name) is None or info.option(each.name):
            continue
        owners = [other for other in BACKENDS.values() if other.option(each.name) is not None]
        flag = owners[0].option(each.name).flag if owners else each.name  # type: ignore[union-attr]
        named = " or ".join(f"--backend {other.name}" for other in owners)
        raise UsageError(f"{flag} is for {named}", where=flag)


class Backend(Protocol):
    name: str

    def run(self, plan: Plan, agent: Sequence[str], settings: TrialSettings, control: Control) -> None:
        """Run ``plan.todo`` (see the module docstring)."""
        ...


class LocalBackend:
    """Trials on a pool of threads of this process, each waiting on its agent process; their
    worlds on one :class:`~harn_mcp_mock.runner.hub.WorldHub` of this process."""

    name = LOCAL.name

    def __init__(self, options: BackendOptions) -> None:
        check_backend_options(LOCAL, options)
        self.workers = max(1, options.workers or os.cpu_count() or 2)

    def run(self, plan: Plan, agent: Sequence[str], settings: TrialSettings, control: Control) -> None:
        from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

        from harn_mcp_mock.runner.folder import TrialRecord
        from harn_mcp_mock.runner.hub import WorldHub
        from harn_mcp_mock.runner.matrix import Trial
        from harn_mcp_mock.runner.trial import run_trial

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


def get_backend(name: str, options: BackendOptions) -> Backend:
    """The backend called ``name``, made with ``options`` (UsageError for an unknown name, or for
    an option of another backend)."""
    import importlib

    info = backend_info(name)
    check_backend_options(info, options)
    module, _, attr = info.target.partition(":")
    make: Callable[[BackendOptions], Backend] = getattr(importlib.import_module(module), attr)
    return make(options)
