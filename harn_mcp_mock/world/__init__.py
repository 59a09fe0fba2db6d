"""Seeded simulated worlds: spec, templates, effects, faults and the engine."""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.faults.rules import FaultRule
    from harn_mcp_mock.world.engine import CallOutcome, WorldEngine
    from harn_mcp_mock.world.run import serve_world
    from harn_mcp_mock.world.spec import (
        TaskSpec,
        ToolSpec,
        WorldSpec,
        compile_spec,
        load_spec,
        read_spec_json,
    )
    from harn_mcp_mock.world.state import EffectError, apply_effects, changed_paths, copy_state

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "CallOutcome": "engine",
    "EffectError": "state",
    "FaultRule": "harn_mcp_mock.faults.rules",
    "TaskSpec": "spec",
    "ToolSpec": "spec",
    "WorldEngine": "engine",
    "WorldSpec": "spec",
    "apply_effects": "state",
    "changed_paths": "state",
    "compile_spec": "spec",
    "copy_state": "state",
    "load_spec": "spec",
    "read_spec_json": "spec",
    "serve_world": "run",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "CallOutcome",
    "EffectError",
    "FaultRule",
    "TaskSpec",
    "ToolSpec",
    "WorldEngine",
    "WorldSpec",
    "apply_effects",
    "changed_paths",
    "compile_spec",
    "copy_state",
    "load_spec",
    "read_spec_json",
    "serve_world",
]
