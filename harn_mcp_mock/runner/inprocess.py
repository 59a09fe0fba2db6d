"""One trial of an in-process agent: ``async def agent(session, trial)`` against a fresh world in
memory (no subprocess), with the same files and record as a command agent's trial.

The agent gets an initialized ``mcp.ClientSession`` over a :class:`~harn_mcp_mock.api.WorldTransport`
and the :class:`~harn_mcp_mock.runner.matrix.Trial` (``trial.task``, ``trial.prompt``, seed, run
id). When it returns, or raises (the code of a command agent that exits non-zero), the trial is
scored from the world's final state; past ``timeout`` it is cancelled and scored as it stands.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.runner._files import Folder, open_folder
from harn_mcp_mock.runner.budget import USAGE_FILE, read_usage, trial_usage, usage_file
from harn_mcp_mock.runner.matrix import Trial
from harn_mcp_mock.runner.trial import TRIAL_FILES, trial_record, write_world_files

if TYPE_CHECKING:
    from mcp import ClientSession

    from harn_mcp_mock.options import ClientCallbacks

__all__ = ["AgentFunction", "agent_name", "run_trial_inprocess"]

AgentFunction = Callable[["ClientSession", Trial], Awaitable[None]]
"""``async def agent(session: ClientSession, trial: Trial) -> None``."""


def agent_name(agent: AgentFunction) -> str:
    """How ``run.json`` names an in-process agent (its module and qualified name)."""
    module = getattr(agent, "__module__", None) or "?"
    return f"python:{module}.{getattr(agent, '__qualname__', type(agent).__name__)}"


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=2).encode() + b"\n"


def _fresh_folder(trial: Trial, out: Path) -> Folder:
    where = open_folder(out.resolve(), trial.parts)
    where.clear((*TRIAL_FILES, "trial.json"))
    return where


async def run_trial_inprocess(
    trial: Trial,
    agent: AgentFunction,
    out: Path,
    *,
    timeout: float | None = None,  # noqa: ASYNC109 (the agent's budget, enforced here)
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
) -> dict[str, Any]:
    """Run ``trial`` with ``agent`` in this event loop; write its files and ``trial.json``.
    ``callbacks``: what the client session answers the world with (a message handler for
    ``notifications/tools/list_changed``, ...), or a function of the trial that makes them."""
    import anyio

    from harn_mcp_mock.api import WorldTransport, session_over
    from harn_mcp_mock.world.run import SharedWorld

    where = _fresh_folder(trial, out)
    folder = where.path
    transport = WorldTransport(
        trial.spec,
        task=trial.task,
        seed=trial.seed,
        run_id=trial.run_id,
        faults=None if trial.profile == "none" else trial.profile,
        tape=folder / "tape.ndjson",
    )
    shared = SharedWorld(transport.world, transport.engine)  # counts the session and its calls
    transport.engine = shared.session()
    started = time.monotonic()
    status, error = "scored", None
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
            where.write("agent.stderr", "".join(traceback.format_exception(exc)).encode())
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
    record["agent_error"] = error
    record["sessions"], record["tool_calls"] = shared.sessions, shared.tool_calls
    record.update(trial_usage(read_usage(folder / USAGE_FILE)))  # the same strict rules as a channel's
    with where:
        write_world_files(where, shared, timed_out=status == "timeout")
        where.write("trial.json", _dump(record), atomic=True)
    return record
