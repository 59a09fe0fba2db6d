"""Small world specs that would score agents wrongly, one per way, for the pre-flight tests of
``world check`` (tests/scoring/test_world_check_preflight.py) and ``run`` (tests/runner/test_run_preflight.py).

Each case writes ``<case>.world.json`` (and the Python effect modules it names) into a folder and
says what the one line naming it holds: the task or field (``where``) and what is wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EFFECT = (
    "def bump(state, args, ctx):\n"
    "    state['x'] = 1\n"
    "    return {'result': {'x': 1}, 'error': None}\n"
    "\n"
    "def explode(state, args, ctx):\n"
    "    raise ValueError('the effect broke')\n"
)


def base_spec() -> dict[str, Any]:
    """One tool that sets /x to 1 and one task whose goal is /x == 1: a sound world."""
    return {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "probe",
        "state": {"x": 0, "y": 0},
        "tools": [
            {
                "name": "bump",
                "inputSchema": {"type": "object", "additionalProperties": False},
                "effects": [{"op": "set", "path": "/x", "value": 1}],
                "result": {"x": 1},
            },
            {
                "name": "touch_y",
                "inputSchema": {"type": "object", "additionalProperties": False},
                "effects": [{"op": "set", "path": "/y", "value": 1}],
                "result": {"y": 1},
            },
        ],
        "tasks": [
            {
                "id": "t",
                "description": "Set x to 1.",
                "goal": [{"path": "/x", "equals": 1}],
                "reference": [{"tool": "bump"}],
            }
        ],
    }


@dataclass(frozen=True)
class Case:
    name: str
    mutate: Callable[[dict[str, Any]], None]
    where: str
    what: str
    modules: tuple[tuple[str, str], ...] = ()

    def write(self, folder: Path, prefix: str = "") -> Path:
        """Write the spec (module names get ``prefix``, so cases in one process never share a
        cached module) and its modules; return the spec's path."""
        spec = base_spec()
        self.mutate(spec)
        text = json.dumps(spec).replace("@", prefix)
        for module, body in self.modules:
            (folder / f"{module.replace('@', prefix)}.py").write_text(body, encoding="utf-8")
        path = folder / f"{self.name}.world.json"
        path.write_text(text, encoding="utf-8")
        return path


def _tool(index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda spec: spec["tools"][index].update(fields)


def _task(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda spec: spec["tasks"][0].update(fields)


def _swap_tool(spec: dict[str, Any]) -> None:
    spec["fault_profiles"] = {
        "swap": [
            {
                "id": "swap",
                "tool": "touch_y",
                "kind": "tools_changed",
                "on_calls": [1],
                "replace_with": {"name": "touch_y", "python": "@gone_effects:touch"},
            }
        ]
    }


CASES = [
    Case(
        "missing-module",
        _tool(0, python="@missing_effects:bump"),
        "tools[0].python",
        "tool 'bump': cannot import '@missing_effects' from the spec's folder or the Python path "
        "(ModuleNotFoundError: No module named '@missing_effects')",
    ),
    Case(
        "raises-at-import",
        _tool(0, python="@exploding_effects:bump"),
        "tools[0].python",
        "tool 'bump': importing '@exploding_effects' raised RuntimeError: boom at import",
        (("@exploding_effects", "raise RuntimeError('boom at import')\n"),),
    ),
    Case(
        "missing-function",
        _tool(0, python="@good_effects:nope"),
        "tools[0].python",
        "tool 'bump': module '@good_effects' has no function 'nope'",
        (("@good_effects", EFFECT),),
    ),
    Case(
        "replacement-module",
        _swap_tool,
        "fault_profiles.swap[0].replace_with.python",
        "tool 'touch_y': cannot import '@gone_effects' from the spec's folder or the Python path "
        "(ModuleNotFoundError: No module named '@gone_effects')",
    ),
    Case(
        "effect-raises",
        _tool(0, python="@raising_effects:explode"),
        "task 't'",
        "reference step 1 (bump) raised ValueError: the effect broke",
        (("@raising_effects", EFFECT),),
    ),
    Case(
        "empty-goal",
        _task(goal=[], reference=[]),
        "task 't'",
        "the goal is empty: an agent that does nothing passes it "
        '(set "goal_holds_at_start": true if that is the point)',
    ),
    Case(
        "goal-at-start",
        _task(goal=[{"path": "/x", "equals": 0}], reference=[]),
        "task 't'",
        "the goal already holds in the initial state: an agent that does nothing passes it "
        '(set "goal_holds_at_start": true if that is the point)',
    ),
    Case(
        "reference-misses",
        _task(reference=[{"tool": "touch_y"}], may_change=["/y"]),
        "task 't'",
        "the reference solution does not reach the goal (1 goal predicate(s) fail)",
    ),
]
"""Every way, with the one line's ``where`` and message (``@``: the module name prefix)."""


def on_purpose(goal: list[Any]) -> Case:
    """A task whose goal holds at the start and says so: a sound spec."""
    return Case("on-purpose", _task(goal=goal, reference=[], goal_holds_at_start=True), "", "")
