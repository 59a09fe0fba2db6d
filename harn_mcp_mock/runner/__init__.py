"""The episode runner (``harn mcp mock run``): an agent k times per task against fresh seeded
worlds, in parallel, resumable, scored by eval and gated for CI (docs/runner.md).

The agent is a command (the agent contract: ``HARN_MCP_CONFIG`` and friends) or, from Python, an
``async def agent(session, trial)`` run in-process over a memory stream (:func:`run_eval`).
"""

from __future__ import annotations

from harn_mcp_mock.runner.api import run_eval, run_eval_async
from harn_mcp_mock.runner.baseline import Comparison, compare, load_baseline
from harn_mcp_mock.runner.budget import Budget, report_usage
from harn_mcp_mock.runner.folder import TrialRecord, WorldReport
from harn_mcp_mock.runner.inprocess import AgentFunction, run_trial_inprocess
from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial, build_matrix, derive_seed
from harn_mcp_mock.runner.run import (
    BACKENDS,
    Gate,
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
