"""The episode runner (``harn mcp mock run``): an agent k times per task against fresh seeded
worlds, in parallel, resumable, scored by eval and gated for CI (docs/runner.md).

The agent is a command (the agent contract: ``HARN_MCP_CONFIG`` and friends) or, from Python, an
``async def agent(session, trial)`` run in-process over a memory stream (:func:`run_eval`).
"""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from harn_mcp_mock.runner.api import run_eval, run_eval_async
    from harn_mcp_mock.runner.backend import BACKENDS
    from harn_mcp_mock.runner.baseline import Comparison, compare, load_baseline
    from harn_mcp_mock.runner.budget import Budget, report_usage
    from harn_mcp_mock.runner.folder import TrialRecord, WorldReport
    from harn_mcp_mock.runner.inprocess import AgentFunction, run_trial_inprocess
    from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial, build_matrix, derive_seed
    from harn_mcp_mock.runner.run import (
        Gate,
        RunOptions,
        RunOutcome,
        parse_gates,
        run_episodes,
        run_episodes_async,
    )
    from harn_mcp_mock.runner.trial import EX_TEMPFAIL, run_trial

__all__ = [
    "BACKENDS",
    "EX_TEMPFAIL",
    "NO_FAULTS",
    "AgentFunction",
    "Budget",
    "Comparison",
    "Gate",
    "RunOptions",
    "RunOutcome",
    "Trial",
    "TrialRecord",
    "WorldReport",
    "build_matrix",
    "compare",
    "derive_seed",
    "load_baseline",
    "parse_gates",
    "report_usage",
    "run_episodes",
    "run_episodes_async",
    "run_eval",
    "run_eval_async",
    "run_trial",
    "run_trial_inprocess",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "run_eval": "api",
        "run_eval_async": "api",
        "Comparison": "baseline",
        "compare": "baseline",
        "load_baseline": "baseline",
        "Budget": "budget",
        "report_usage": "budget",
        "TrialRecord": "folder",
        "WorldReport": "folder",
        "AgentFunction": "inprocess",
        "run_trial_inprocess": "inprocess",
        "NO_FAULTS": "matrix",
        "Trial": "matrix",
        "build_matrix": "matrix",
        "derive_seed": "matrix",
        "BACKENDS": "backend",
        "Gate": "run",
        "RunOptions": "run",
        "RunOutcome": "run",
        "parse_gates": "run",
        "run_episodes": "run",
        "run_episodes_async": "run",
        "EX_TEMPFAIL": "trial",
        "run_trial": "trial",
    },
)
