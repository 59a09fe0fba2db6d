"""Worlds as Inspect AI tasks (extra ``[inspect]``): ``world_task("bank")`` is an
``inspect_ai.Task`` whose dataset is the world's tasks (each task's description as the input),
whose tools come from a fresh, seeded trial world per sample and epoch, and whose scorer reads
that world's report (goal, collateral, forbidden as the score's metadata). Epochs are trials:
``k`` epochs (the task's, or ``eval(epochs=k)``/``--epochs k``, which override it) reduce each
task's scores with Inspect's ``pass_k(1)`` ... ``pass_k(k)``, the same pass^k as ``harn mcp mock
eval`` on the same trials (each sample's state, report and tape are written in the runner's
folder layout under ``out``; by default beside the eval's log: ``<log dir>/<log name>/``).

From the command line, in any folder once the package is installed (the ``inspect_ai`` entry
point registers the task as ``harn_mcp_mock/world``; ``-T`` takes the same arguments)::

    inspect eval harn_mcp_mock/world -T spec=bank -T faults=flaky --epochs 4 \\
        --model openai/scripted --model-base-url http://127.0.0.1:P/v1

docs/frameworks.md has more.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, pass_k, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolError, ToolParams

from harn_mcp_mock.runner.matrix import derive_seed, trial_parts
from harn_mcp_mock.shipped import resolve_spec
from harn_mcp_mock.world.spec import load_spec

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = ["trials_folder", "world", "world_task"]

REPORT_KEY = "harn_world_report"


def world_task(
    spec: str | Path,
    *,
    faults: str | None = None,
    epochs: int = 1,
    solver: Solver | None = None,
    task_ids: Sequence[str] | None = None,
    seed: int = 0,
    out: str | Path | None = None,
) -> Task:
    """An Inspect task of a world (a spec file or a shipped world's name).

    ``faults``: a fault profile of the spec; ``epochs``: trials per task (pass^1..pass^epochs
    reducers); ``solver``: what plays each sample, given the world's tools in ``state.tools``
    (default: ``react(submit=False)`` with them); ``task_ids``: a subset of the tasks; ``seed``:
    as ``run --seed`` (trial seeds derive from it as the runner's do); ``out``: where the
    trials' files go (default: :func:`trials_folder`, a folder named as the eval's log, beside
    it)."""
    path = resolve_spec(spec)
    world_spec = load_spec(path)
    chosen = list(task_ids) if task_ids else list(world_spec.tasks)
    for task_id in chosen:
        world_spec.task(task_id)  # an unknown id is a WorldSpecError naming it
    world_spec.faults(faults)  # so is an unknown profile
    samples = [
        Sample(
            id=task_id,
            input=world_spec.tasks[task_id].description,
            metadata={"world": world_spec.name, "task": task_id, "faults": faults},
        )
        for task_id in chosen
    ]
    folder = Path(out) if out is not None else None
    return _PassKTask(
        dataset=MemoryDataset(samples, name=world_spec.name),
        solver=_world_solver(str(path), faults, seed, folder, solver),
        scorer=world_scorer(),
        epochs=Epochs(epochs),
        name=f"{world_spec.name}" + (f"-{faults}" if faults else ""),
    )


class _PassKTask(Task):  # type: ignore[misc,unused-ignore]  # Task is Any when the extra is not installed
    """A task whose epoch reducers follow its epochs: ``pass_k(1)`` ... ``pass_k(epochs)`` for
    however many epochs the eval runs (Inspect sets ``epochs`` from ``--epochs`` after the task
    is made, and keeps the task's reducers), unless reducers are set (``--epochs-reducer``)."""

    _reducers: Any = None

    @property
    def epochs_reducer(self) -> Any:
        if self._reducers is not None:
            return self._reducers
        epochs = self.epochs or 1
        if self._made_for != epochs:
            self._made = [pass_k(k) for k in range(1, epochs + 1)]
            self._made_for = epochs
        return self._made

    @epochs_reducer.setter
    def epochs_reducer(self, value: Any) -> None:
        self._reducers = value

    _made: Any = None
    _made_for: int | None = None


@task
def world(
    spec: str = "bank",
    faults: str | None = None,
    task_ids: str | None = None,
    seed: int = 0,
    out: str | None = None,
) -> Task:
    """``inspect eval harn_mcp_mock/world -T spec=bank``: :func:`world_task` for the command
    line (``task_ids`` comma-separated; epochs from ``--epochs``; ``out``: the trials' folder)."""
    ids = [t for t in (task_ids or "").split(",") if t] or None
    return world_task(spec, faults=faults, task_ids=ids, seed=seed, out=out)


FALLBACK_FOLDER = "harn-inspect-trials"
"""Where trials go, under the working folder, when the eval's log is not a local file (a
remote log dir such as ``s3://...``): ``harn-inspect-trials/<log name>/``."""


def trials_folder() -> Path:
    """The default ``out`` of the sample running now: the eval's log file's path without its
    extension (``logs/2026-...-bank_X.eval`` -> ``logs/2026-...-bank_X/``), so each eval's trials
    sit beside its log and nothing is left in a temporary folder. A log that is not a local file
    (``s3://...``): ``./harn-inspect-trials/<log name>/``."""
    location = ""
    try:
        from inspect_ai.log._samples import sample_active  # no public way to ask yet (0.3.285)

        active = sample_active()
        location = str(getattr(active, "log_location", "") or "")
    except ImportError:  # pragma: no cover - a later Inspect moved it
        pass
    if location.startswith("file://"):
        location = location[len("file://") :]
    name = Path(location.rsplit("/", 1)[-1]).stem if location else "untitled"
    if location and "://" not in location:
        return Path(location).with_name(name)
    return Path(FALLBACK_FOLDER) / name


def _trial_dir(out: Path, world_name: str, task_id: str, profile: str, epoch: int) -> Path:
    return out.joinpath(*trial_parts(world_name, task_id, profile, epoch))


@solver
def _world_solver(spec: str, faults: str | None, seed: int, out: Path | None, inner: Solver | None) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from harn_mcp_mock.api import WorldTransport, session_over

        task_id = str(state.metadata["task"])
        world_name = str(state.metadata["world"])
        profile = faults or "none"
        epoch = state.epoch
        folder = _trial_dir(out if out is not None else trials_folder(), world_name, task_id, profile, epoch)
        folder.mkdir(parents=True, exist_ok=True)
        transport = WorldTransport(
            spec,
            task=task_id,
            seed=derive_seed(seed, world_name, task_id, profile, epoch),
            run_id=f"{task_id}.{profile}.t{epoch}",
            faults=faults,
            tape=folder / "tape.ndjson",
        )
        async with session_over(transport) as opened:
            tools = await world_tools(opened.session)
            if inner is None:
                from inspect_ai.agent import as_solver, react

                state = await as_solver(react(tools=tools, submit=False))(state, generate)
            else:
                state.tools = list(tools)
                state = await inner(state, generate)
        report = transport.report_document()
        (folder / "state.json").write_text(json.dumps(transport.state_document(), indent=2) + "\n")
        (folder / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        state.store.set(
            REPORT_KEY, {k: report[k] for k in ("passed", "score", "forbidden_hits", "faults_fired")}
        )
        state.metadata["trial_dir"] = str(folder)
        return state

    return solve


async def world_tools(session: ClientSession) -> list[ToolDef]:
    """The world's tools as Inspect tools over ``session``: an ``isError`` result or a JSON-RPC
    error (a fault) reaches the model as a tool error with the error's message."""
    from mcp.shared.exceptions import MCPError

    def make(name: str) -> Any:
        async def call(**arguments: Any) -> str:
            try:
                result = await session.call_tool(name, arguments)
            except MCPError as exc:
                raise ToolError(exc.error.message) from None
            text = "\n".join(str(getattr(c, "text", "")) for c in result.content)
            if result.is_error:
                raise ToolError(text)
            return text

        return call

    listed = await session.list_tools()
    return [
        ToolDef(
            make(t.name),
            name=t.name,
            description=t.description or t.name,
            parameters=ToolParams.model_validate(
                {
                    "type": "object",
                    "properties": _described(t.input_schema.get("properties") or {}),
                    "required": t.input_schema.get("required") or [],
                }
            ),
        )
        for t in listed.tools
    ]


def _described(properties: dict[str, Any]) -> dict[str, Any]:
    """Inspect refuses a parameter without a description: the name stands in for a missing one."""
    return {k: {"description": k.replace("_", " "), **v} for k, v in properties.items()}


@scorer(metrics=[accuracy()])
def world_scorer() -> Any:
    """C when the world's report says the run passed (goal met, no collateral, nothing
    forbidden), else I; the report's findings as metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        report = state.store.get(REPORT_KEY)
        if report is None:
            return Score(value=INCORRECT, explanation="the world wrote no report")
        found = report.get("score") or {}
        return Score(
            value=CORRECT if report["passed"] else INCORRECT,
            explanation="passed" if report["passed"] else "failed",
            metadata={
                "goal_failed": found.get("goal_failed"),
                "collateral": found.get("collateral"),
                "forbidden": report.get("forbidden_hits"),
                "faults_fired": report.get("faults_fired"),
                "trial_dir": state.metadata.get("trial_dir"),
            },
        )

    return score
