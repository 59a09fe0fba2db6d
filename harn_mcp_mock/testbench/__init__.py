"""Testbench mode: run Python code hermetically (virtual time, LLM fixtures, a copy-on-write
filesystem overlay, recorded subprocesses, deny-by-default network) and get an audit trail.

::

    bench = (
        Testbench.builder()
        .paused_clock_at_ms(1_767_225_600_000)
        .replay_llm("fixtures/llm.jsonl")
        .fs_overlay("./worktree")
        .replay_subprocesses("fixtures/process.tape")
        .deny_network()
        .build()
    )
    with bench:
        ...  # run code
    result = bench.finalize()

See ``docs/testbench.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harn_mcp_mock.errors import (
        LlmFixtureError,
        NetworkDeniedError,
        ProcessTapeDivergenceError,
        TestbenchError,
    )
    from harn_mcp_mock.testbench.core import (
        DEFAULT_START_MS,
        Testbench,
        TestbenchBuilder,
        TestbenchResult,
        current,
        is_active,
    )
    from harn_mcp_mock.testbench.llm import LlmFixtures, llm_call, request_digest
    from harn_mcp_mock.testbench.overlay import FsChange, render_unified_diff
    from harn_mcp_mock.testbench.process import ProcessEntry

# Lazy (PEP 562): the pytest plugin lives in this package and loads with every pytest run.
_HOME = {
    "DEFAULT_START_MS": "core",
    "Testbench": "core",
    "TestbenchBuilder": "core",
    "TestbenchResult": "core",
    "current": "core",
    "is_active": "core",
    "LlmFixtureError": "errors",
    "NetworkDeniedError": "errors",
    "ProcessTapeDivergenceError": "errors",
    "TestbenchError": "errors",
    "LlmFixtures": "llm",
    "llm_call": "llm",
    "request_digest": "llm",
    "FsChange": "overlay",
    "render_unified_diff": "overlay",
    "ProcessEntry": "process",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = "harn_mcp_mock.errors" if home == "errors" else f"{__name__}.{home}"  # the one exception tree
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_START_MS",
    "FsChange",
    "LlmFixtureError",
    "LlmFixtures",
    "NetworkDeniedError",
    "ProcessEntry",
    "ProcessTapeDivergenceError",
    "Testbench",
    "TestbenchBuilder",
    "TestbenchError",
    "TestbenchResult",
    "current",
    "is_active",
    "llm_call",
    "render_unified_diff",
    "request_digest",
]
