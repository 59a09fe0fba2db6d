"""The episode runner (``harn mcp mock run``): an agent command k times per task against fresh
seeded worlds, in parallel, resumable, scored by eval and gated for CI (docs/runner.md)."""

from __future__ import annotations

from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial, build_matrix, derive_seed
from harn_mcp_mock.runner.run import Gate, RunOutcome, parse_gates, run_episodes
from harn_mcp_mock.runner.trial import EX_TEMPFAIL, run_trial

__all__ = [
    "EX_TEMPFAIL",
    "NO_FAULTS",
    "Gate",
    "RunOutcome",
    "Trial",
    "build_matrix",
    "derive_seed",
    "parse_gates",
    "run_episodes",
    "run_trial",
]
