"""One trial of an in-process agent: ``async def agent(session, trial)`` against a fresh world in
memory (no subprocess), with the same files and record as a command agent's trial.

The agent gets an initialized ``mcp.ClientSession`` over a :class:`~harn_mcp_mock.api.WorldTransport`
and the :class:`~harn_mcp_mock.runner.matrix.Trial` (``trial.task``, ``trial.prompt``, seed, run
id). When it returns, or raises (the code of a command agent that exits non-zero), the trial is
scored from the world's final state; past ``timeout`` it is cancelled and scored as it stands.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harn_mcp_mock.runner._files import Folder, open_folder
from harn_mcp_mock.runner.budget import USAGE_FILE, usage_file
from harn_mcp_mock.runner.folder import WRITTEN_FILES
from harn_mcp_mock.runner.matrix import Trial
from harn_mcp_mock.runner.trial import (
    private_path,
    record_trial,
    take,
    trial_record,
    trial_usage,
    world_report,
)

if TYPE_CHECKING:
    from mcp import ClientSession

    from harn_mcp_mock.options import ClientCallbacks
    from harn_mcp_mock.runner.budget import Budget
    from harn_mcp_mock.runner.folder import TrialRecord

__all__ = ["AgentFunction", "agent_name", "run_trial_inprocess"]

AgentFunction = Callable[["ClientSession", Trial], Awaitable[None]]
"""``async def agent(session: ClientSession, trial: Trial) -> None``."""


def agent_name(agent: AgentFunction) -> str:
    """How ``run.json`` names an in-process agent (its module and qualified name)."""
    module = getattr(agent, "__module__", None) or "?"
    return f"python:{module}.{getattr(agent, '__qualname__', type(agent).__name__)}"


def _fresh_folder(trial: Trial, out: Path) -> Folder:
    where = open_folder(out.resolve(), trial.parts)
    where.clear((*WRITTEN_FILES, USAGE_FILE))  # report_usage() appends to it: never a run's before
    return where


async def run_trial_inprocess(
    trial: Trial,
    agent: AgentFunction,
    out: Path,
    *,
    timeout: float | None = None,  # noqa: ASYNC109 (the agent's budget, enforced here)
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
    budget: Budget | None = None,
) -> TrialRecord:
    """Run ``trial`` with ``agent`` in this event loop; returns its record (the world as the
    runner held it) and writes its files, ``trial.json`` last. ``callbacks``: what the client
    session answers the world with (a message handler for ``notifications/tools/list_changed``,
    ...), or a function of the trial that makes them. ``budget``: judges ``over_budget``."""
    import anyio

    from harn_mcp_mock.api import WorldTransport, session_over
    from harn_mcp_mock.world.run import SharedWorld

    where = _fresh_folder(trial, out)
    folder = where.path
    tape = private_path("tape.ndjson")  # the runner's own file, taken into the record
    transport = WorldTransport(
        trial.spec,
        task=trial.task,
        seed=trial.seed,
        run_id=trial.run_id,
        faults=None if trial.profile == "none" else trial.profile,
        tape=tape,
    )
    shared = SharedWorld(transport.world, transport.engine)  # counts the session and its calls
    transport.engine = shared.session()
    started = time.monotonic()
    status, error, stderr = "scored", None, b""
    with anyio.CancelScope() as scope:
        if timeout is not None:
            scope.deadline = anyio.current_time() + timeout
        try:
            given = callbacks(trial) if callable(callbacks) else callbacks
            async with session_over(transport, given) as opened:
                with usage_file(folder / USAGE_FILE):  # report_usage() lands in this trial's folder
                    await agent(opened.session, trial)
        except Exception as exc:  # the agent failed: scored as it stands, like a non-zero exit
            error = "".join(traceback.format_exception_only(exc)).strip()
            stderr = "".join(traceback.format_exception(exc)).encode()
    if scope.cancelled_caught:
        status = "timeout"
    record = trial_record(
        trial,
        status=status,
        exit_code=None if status == "timeout" else int(error is not None),
        infra_error=None,
        attempts=1,
        duration_ms=round((time.monotonic() - started) * 1000),
    )
    record.agent_error = error
    record.isolation = "none"  # code in the runner's own process: trusted (docs/runner.md)
    record.sessions, record.tool_calls = shared.sessions, shared.tool_calls
    record.world_report = world_report(shared, timed_out=status == "timeout")
    record.outputs = {"agent.stderr": stderr} if stderr else {}
    with where:
        return _finish(trial, record, out, where, tape, budget)


def _finish(
    trial: Trial, record: TrialRecord, out: Path, where: Folder, tape: Path, budget: Budget | None
) -> TrialRecord:
    """The trial has ended: its tape and usage into its record, its budget judged, its files written."""
    tape_bytes = take(tape)
    if tape_bytes is not None:
        record.outputs["tape.ndjson"] = tape_bytes
    record.usage = trial_usage(where)
    record.judge(budget)
    return record_trial(out.resolve(), trial, record)
