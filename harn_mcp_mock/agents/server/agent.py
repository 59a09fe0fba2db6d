"""The scripted agent: a deterministic stand-in for a model that runs a fixed list of tool calls.

A task's ``input`` names what to run, against one of two tool backends::

    {"world": "worlds/tickets/tickets.world.json", "world_task": "close-login-bug"}
    {"cassette": "cassettes/time.json", "steps": [{"tool": "get_current_time", "arguments": {...}}]}

With ``world`` the agent loads the world (relative to the Harness's world root), plays
``input["steps"]`` if given, else the world task's ``reference`` steps, each as an in-process MCP
``tools/call`` on a :class:`~harn_mcp_mock.world.engine.WorldEngine`, and finally checks the
world task's goal predicates. With ``cassette`` the calls are answered by an MCP cassette replay
(:class:`~harn_mcp_mock.replay.engine.ReplayEngine`, in process); without ``steps`` the cassette's
own recorded ``tools/call`` requests are played, and the task succeeds when every call was
answered without an error. A task with neither is answered with one message (an echo) and
completes.

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
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR, METHOD_NOT_FOUND

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


def _resolve(root: Path, name: str, what: str) -> Path:
    base = root.resolve()
    path = (base / name).resolve()
    if base != path and base not in path.parents:
        raise WorldNotAllowed(f"{what} {name!r} is outside the Harness's world root")
    return path


def _tool_status(response: Mapping[str, Any]) -> tuple[str, Any]:
    """``("ok" | "error", output)`` for one JSON-RPC ``tools/call`` response."""
    if "error" in response:
        return "error", response["error"]
    output = response.get("result")
    return ("error" if isinstance(output, Mapping) and output.get("isError") else "ok"), output


class _Backend(Protocol):
    name: str

    def call(self, tool: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        """The JSON-RPC response (``result`` or ``error``) to one ``tools/call``."""
        ...


class _CassetteBackend:
    """Tool calls answered by an MCP cassette replay, in process (no server, no network).

    A call the cassette does not hold gets the replay's JSON-RPC miss error (-32050) naming the
    nearest recorded calls, so the task fails with a reason a user can act on. A recorded call
    that made the server ask the client something (sampling, elicitation, roots) cannot be
    answered by a scripted agent; it fails that tool call."""

    def __init__(self, path: Path) -> None:
        from harn_mcp_mock.replay.session import open_engine

        self.name = path.name
        self.engine = open_engine(path, env={})
        self._next_id = 0

    def recorded_steps(self) -> list[dict[str, Any]]:
        """The cassette's own ``tools/call`` requests, in recorded order."""
        steps = []
        for inter in self.engine.interactions:
            if inter.method == "tools/call":
                params = inter.request.get("params") or {}
                arguments = params.get("arguments")
                steps.append({"tool": params.get("name"), "arguments": arguments or {}})
        return steps

    def call(self, tool: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        self._next_id += 1
        request_id = f"harness-{self._next_id}"
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        for out in self.engine.receive(request):
            message = out.message
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return message
            if isinstance(message, dict) and "method" in message and "id" in message:
                return {
                    "error": {
                        "code": METHOD_NOT_FOUND,
                        "message": f"the recorded server asked the client for {message['method']}, "
                        "which a scripted agent cannot answer",
                    }
                }
        return {
            "error": {"code": INTERNAL_ERROR, "message": "the cassette recorded no response to this call"}
        }


class _WorldBackend:
    def __init__(self, engine: Any, name: str) -> None:
        self.engine = engine
        self.name = name

    def call(self, tool: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        response: Mapping[str, Any] = self.engine.call(tool, arguments).response
        return response


def run_scripted(task_input: Mapping[str, Any], reporter: Reporter, *, world_root: Path) -> AgentResult:
    world_name = task_input.get("world")
    cassette_name = task_input.get("cassette")
    if isinstance(cassette_name, str):
        if world_name is not None:
            raise WorldNotAllowed("a task input names either a world or a cassette, not both")
        backend = _CassetteBackend(_resolve(world_root, cassette_name, "cassette"))
        steps = task_input.get("steps")
        if not isinstance(steps, list):
            steps = backend.recorded_steps()
        result = AgentResult(False, "")
        if not _play(backend, steps, reporter, result):
            return result
        result.succeeded = True
        result.summary = f"{len(steps)} tool call(s) answered by cassette {backend.name}"
        return result
    if not isinstance(world_name, str):
        text = task_input.get("text")
        return AgentResult(True, f"echo: {text}" if isinstance(text, str) else "nothing to do")

    from harn_mcp_mock.world.engine import WorldEngine
    from harn_mcp_mock.world.predicates import holds
    from harn_mcp_mock.world.spec import load_spec

    spec = load_spec(_resolve(world_root, world_name, "world"))
    world_task = task_input.get("world_task")
    engine = WorldEngine(spec, task=world_task if isinstance(world_task, str) else None)
    steps = task_input.get("steps")
    if not isinstance(steps, list):
        steps = engine.task.reference if engine.task is not None else []
    result = AgentResult(
        False, "", world=world_name, world_task=engine.task.id if engine.task is not None else None
    )
    played = _play(_WorldBackend(engine, spec.name), steps, reporter, result)
    result.final_state = engine.state
    if not played:
        return result
    goals = engine.task.goal if engine.task is not None else []
    unmet = [i for i, goal in enumerate(goals) if not holds(goal, engine.state)]
    if unmet:
        result.summary = f"{len(unmet)} of {len(goals)} goal(s) unmet after {len(steps)} tool call(s)"
        return result
    result.succeeded = True
    result.summary = f"{len(steps)} tool call(s); {len(goals)} goal(s) met"
    return result


def _play(backend: _Backend, steps: list[Any], reporter: Reporter, result: AgentResult) -> bool:
    """Run ``steps`` as tool calls; False when the run must stop (canceled or a failed call),
    with ``result.summary`` saying why."""
    for index, step in enumerate(steps):
        if not reporter.checkpoint():
            result.stopped = True
            result.summary = f"stopped after {index} of {len(steps)} tool call(s)"
            return False
        name = str(step.get("tool")) if isinstance(step, Mapping) else "?"
        raw_args = step.get("arguments") if isinstance(step, Mapping) else None
        arguments: dict[str, Any] = dict(raw_args) if isinstance(raw_args, Mapping) else {}
        call_id = f"toolu_{index + 1:04d}"
        reporter.tool_use(call_id, name, arguments, backend.name)
        status, output = _tool_status(backend.call(name, arguments))
        reporter.tool_result(call_id, status, output)
        result.tool_calls.append({"tool_call_id": call_id, "name": name, "status": status})
        if status == "error":
            result.summary = f"tool call {call_id} ({name}) failed"
            return False
    if not reporter.checkpoint():
        result.stopped = True
        result.summary = f"stopped after {len(steps)} tool call(s)"
        return False
    return True
