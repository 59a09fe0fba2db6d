"""``run_eval``: run an agent k times per task against fresh seeded worlds and score it, from
Python (a test, a notebook, a sweep script)::

    from harn_mcp_mock import run_eval

    async def agent(session, trial):          # an mcp.ClientSession, the trial (task, prompt, seed)
        await session.call_tool("pay", {"to": "landlord", "amount": 1200})

    result = run_eval(agent, ["bank"], k=4)
    assert result.groups[0].pass_power_k[4] >= 0.75

``agent`` may also be a command (argv), run as ``harn mcp mock run`` runs it (docs/runner.md).
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.runner.run import RunOptions, run_episodes, run_episodes_async

if TYPE_CHECKING:
    from harn_mcp_mock.options import ClientCallbacks
    from harn_mcp_mock.runner.folder import TrialRecord
    from harn_mcp_mock.runner.inprocess import AgentFunction
    from harn_mcp_mock.runner.matrix import Trial
    from harn_mcp_mock.scoring.eval import EvalResult

__all__ = ["run_eval", "run_eval_async"]


@contextmanager
def _folder(out: str | Path | None) -> Iterator[Path]:
    if out is not None:
        yield Path(out)
        return
    with tempfile.TemporaryDirectory(prefix="harn-run-") as tmp:
        yield Path(tmp)


def run_eval(
    agent: Sequence[str] | AgentFunction,
    specs: str | Path | Sequence[str | Path],
    *,
    options: RunOptions | None = None,
    out: str | Path | None = None,
    on_trial: Callable[[TrialRecord, int, int], None] | None = None,
    stop: threading.Event | None = None,
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
    **keywords: Any,
) -> EvalResult:
    """Run ``agent`` on every task of ``specs`` (paths or shipped world names), ``k`` times per
    task and fault profile, and return eval's result (pass_rate, pass^k per world and profile).

    ``options``: a :class:`~harn_mcp_mock.runner.run.RunOptions`; or its fields as keywords
    (``k``, ``tasks``, ``seed``, ``faults``, ``workers``, ``timeout``, ``max_retries``, ``force``,
    ``backend``, ``ray_address`` ...), laid over it. ``timeout``: each trial's limit in seconds
    (default 600; None: no limit). ``out`` keeps the trial files and makes the run resumable
    (default: a temporary folder, removed afterwards). ``callbacks``: the in-process agent's
    session callbacks (:class:`~harn_mcp_mock.options.ClientCallbacks`, or a function of the
    trial that makes them: a message handler for ``notifications/tools/list_changed``...).
    Raises :class:`~harn_mcp_mock.errors.UsageError` for bad arguments.
    """
    with _folder(out) as folder:
        return run_episodes(
            _spec_list(specs),
            agent,
            out=folder,
            options=_options(options, keywords, out),
            on_trial=on_trial,
            stop=stop,
            callbacks=callbacks,
        ).result


async def run_eval_async(
    agent: Sequence[str] | AgentFunction,
    specs: str | Path | Sequence[str | Path],
    *,
    options: RunOptions | None = None,
    out: str | Path | None = None,
    on_trial: Callable[[TrialRecord, int, int], None] | None = None,
    stop: threading.Event | None = None,
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
    **keywords: Any,
) -> EvalResult:
    """:func:`run_eval` from inside an event loop (an async test): the in-process agent's trials
    run in this loop."""
    with _folder(out) as folder:
        outcome = await run_episodes_async(
            _spec_list(specs),
            agent,
            out=folder,
            options=_options(options, keywords, out),
            on_trial=on_trial,
            stop=stop,
            callbacks=callbacks,
        )
        return outcome.result


def _spec_list(specs: str | Path | Sequence[str | Path]) -> Sequence[str | Path]:
    return [specs] if isinstance(specs, str | Path) else specs


def _options(options: RunOptions | None, keywords: dict[str, Any], out: str | Path | None) -> RunOptions:
    """The run's options; without ``out`` the temporary folder is new, so every trial runs."""
    built = RunOptions.build(options, **keywords)
    return built if out is not None or built.force else replace(built, force=True)
