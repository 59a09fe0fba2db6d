"""Scoring of world runs: path diffs, goal / collateral / forbidden per run, exact pass^k, eval.

Pure Python over JSON values (no MCP import). ``docs/eval.md`` documents the rules, the inputs
and the output of ``harn mcp mock eval``.
"""

from __future__ import annotations

from harn_mcp_mock.scoring.diff import Differ, diff_paths, glob_match
from harn_mcp_mock.scoring.eval import (
    EvalError,
    EvalResult,
    Excluded,
    GroupSummary,
    Robustness,
    RunDocument,
    RunRecord,
    ScoredRun,
    Scorer,
    TaskCounts,
    score_runs,
)
from harn_mcp_mock.scoring.passk import aggregate, pass_hat_k
from harn_mcp_mock.scoring.render import FORMATS, render
from harn_mcp_mock.scoring.run import RunScore, TaskScorer, score_run

__all__ = [
    "FORMATS",
    "Differ",
    "EvalError",
    "EvalResult",
    "Excluded",
    "GroupSummary",
    "Robustness",
    "RunDocument",
    "RunRecord",
    "RunScore",
    "ScoredRun",
    "Scorer",
    "TaskCounts",
    "TaskScorer",
    "aggregate",
    "diff_paths",
    "glob_match",
    "pass_hat_k",
    "render",
    "score_run",
    "score_runs",
]
