"""The scripted agent: a deterministic stand-in for a model that runs a fixed list of tool calls.

A task's ``input`` names what to run::

    {"world": "worlds/tickets/tickets.world.json", "world_task": "close-login-bug"}

The agent loads the world (relative to the Harness's world root), plays ``input["steps"]`` if
given, else the world task's ``reference`` steps, each as an in-process MCP ``tools/call`` on a
:class:`~harn_mcp_mock.world.engine.WorldEngine`, and finally checks the world task's goal
predicates. A task without ``world`` is answered with one message (an echo) and completes.

The agent knows nothing about HTTP or storage: it reports through a :class:`Reporter`, whose
``checkpoint()`` returns False once the task was canceled (cancellation is cooperative: the
agent stops at the next step).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harn_mcp_mock.errors import HarnError

__all__ = ["AgentResult", "Reporter", "WorldNotAllowed", "run_scripted"]


class WorldNotAllowed(HarnError):
    exit_code = 2


class Reporter(Protocol):
    def checkpoint(self) -> bool:
        """False once the task must stop (it was canceled)."""
        ...

    def tool_use(self, tool_call_id: str, name: str, arguments: Mapping[str, Any], server: str) -> None: ...

    def tool_result(self, tool_call_id: str, status: str, output: Any) -> None: ...


@dataclass(slots=True)
class AgentResult:
    succeeded: bool
    summary: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    final_state: Any = None
    world: str | None = None
    world_task: str | None = None
    stopped: bool = False  # canceled mid-run


def _resolve_world(root: Path, name: str) -> Path:
    base = root.resolve()
    path = (base / name).resolve()
    if base != path and base not in path.parents:
        raise WorldNotAllowed(f"world {name!r} is outside the Harness's world root")
    return path


def run_scripted(task_input: Mapping[str, Any], reporter: Reporter, *, world_root: Path) -> AgentResult:
    world_name = task_input.get("world")
    if not isinstance(world_name, str):
        text = task_input.get("text")
        return AgentResult(True, f"echo: {text}" if isinstance(text, str) else "nothing to do")

    from harn_mcp_mock.world.engine import WorldEngine
    from harn_mcp_mock.world.predicates import holds
    from harn_mcp_mock.world.spec import load_spec

    spec = load_spec(_resolve_world(world_root, world_name))
    world_task = task_input.get("world_task")
    engine = WorldEngine(spec, task=world_task if isinstance(world_task, str) else None)
    steps = task_input.get("steps")
    if not isinstance(steps, list):
        steps = engine.task.reference if engine.task is not None else []
    result = AgentResult(
        False, "", world=world_name, world_task=engine.task.id if engine.task is not None else None
    )
    for index, step in enumerate(steps):
        if not reporter.checkpoint():
            result.stopped = True
            result.summary = f"stopped after {index} of {len(steps)} tool call(s)"
            return result
        name = str(step.get("tool")) if isinstance(step, Mapping) else "?"
        raw_args = step.get("arguments") if isinstance(step, Mapping) else None
        arguments: dict[str, Any] = dict(raw_args) if isinstance(raw_args, Mapping) else {}
        call_id = f"toolu_{index + 1:04d}"
        reporter.tool_use(call_id, name, arguments, spec.name)
        outcome = engine.call(name, arguments)
        response = outcome.response
        if "error" in response:
            status, output = "error", response["error"]
        else:
            output = response.get("result")
            status = "error" if isinstance(output, Mapping) and output.get("isError") else "ok"
        reporter.tool_result(call_id, status, output)
        result.tool_calls.append({"tool_call_id": call_id, "name": name, "status": status})
        if status == "error":
            result.summary = f"tool call {call_id} ({name}) failed"
            result.final_state = engine.state
            return result
    result.final_state = engine.state
    if not reporter.checkpoint():
        result.stopped = True
        result.summary = f"stopped after {len(steps)} tool call(s)"
        return result
    goals = engine.task.goal if engine.task is not None else []
    unmet = [i for i, goal in enumerate(goals) if not holds(goal, engine.state)]
    if unmet:
        result.summary = f"{len(unmet)} of {len(goals)} goal(s) unmet after {len(steps)} tool call(s)"
        return result
    result.succeeded = True
    result.summary = f"{len(steps)} tool call(s); {len(goals)} goal(s) met"
    return result
