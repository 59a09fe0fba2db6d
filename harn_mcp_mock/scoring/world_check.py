"""`harn mcp mock world check`: a spec is valid and its tasks and annotations tell the truth.

- the spec validates against the published JSON Schema and compiles;
- :func:`preflight`, which ``run`` also calls before any agent starts (:func:`check_before_run`):
  every Python effect module imports and names a function; for every task, the goal is not
  empty and does not already hold in the initial state (unless the task says
  ``goal_holds_at_start``), and the reference solution, run on a fresh world without faults,
  succeeds call by call and passes (goal met, no collateral change, no forbidden state);
- ``goal_holds_at_start`` is true only where the goal does hold at the start;
- annotations are checked against what the reference calls really do: a ``readOnlyHint`` tool
  changes nothing; an ``idempotentHint`` tool changes nothing when called again with the same
  arguments; a tool that is not destructive (``destructiveHint: false``) only adds, never
  removes or overwrites.

Whatever a spec's own code raises (an effect module at import or in a call) is a problem in the
report, never a crash of the check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import UsageError, WorldSpecError
from harn_mcp_mock.scoring.diff import diff_paths
from harn_mcp_mock.scoring.run import score_run
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.world.engine import WorldEngine, effect_module
from harn_mcp_mock.world.predicates import holds
from harn_mcp_mock.world.spec import TaskSpec, ToolSpec, WorldSpec, compile_spec, read_spec_json
from harn_mcp_mock.world.state import copy_state

HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}


@dataclass(slots=True)
class CheckResult:
    spec: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def schema_errors(doc: Any) -> list[str]:
    import jsonschema

    schema = orjson.loads((Path(__file__).parents[1] / "world" / "schema.json").read_bytes())
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = (
            "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
            or "$"
        )
        out.append(f"{where}: {clip(error.message, 160)}")
    return out


def _check_tool_schemas(spec: Any, path: Path) -> None:
    """Each tool's inputSchema/outputSchema must itself be a valid JSON Schema."""
    import jsonschema

    for index, tool in enumerate(spec.tools.values()):
        for key in ("inputSchema", "outputSchema"):
            schema = tool.definition.get(key)
            if schema is None:
                continue
            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.exceptions.SchemaError as exc:
                raise WorldSpecError(
                    f"not a valid JSON Schema: {clip(exc.message, 160)}",
                    path=path,
                    where=f"tools[{index}].{key}",
                ) from None


def check_world(path: str | Path) -> CheckResult:
    path = Path(path)
    doc = read_spec_json(path)
    result = CheckResult(str(path))
    errors = schema_errors(doc)
    if errors:
        raise WorldSpecError(
            f"violates the world schema: {errors[0]}"
            + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""),
            path=path,
        )
    spec = compile_spec(doc, path)
    _check_tool_schemas(spec, path)
    if not spec.tasks:
        result.notes.append("no tasks: nothing to check beyond the schema")
    for index, tool in enumerate(spec.tools.values()):
        if tool.todo is not None or (tool.recorded is not None and not tool.modelled):
            how = "answers only its recorded answers" if not tool.modelled else "modelled in part"
            result.notes.append(
                f"tools[{index}]: unmodelled tool '{tool.name}' ({how}): {tool.todo or 'write its effects'}"
            )
    for kind, key, served in (("resources", "uri", spec.resources), ("prompts", "name", spec.prompts)):
        for index, entry in enumerate(served):
            if "todo" in entry:
                result.notes.append(
                    f"{kind}[{index}]: unmodelled {kind[:-1]} '{entry[key]}': {entry['todo']}"
                )
    found = preflight(spec, observe=True)
    result.problems += [str(p) for p in [*found.problems, *found.untrue]]
    result.notes += found.notes
    result.problems += annotation_problems(spec, found.observed)
    return result


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """A spec that would score agents wrongly: ``where`` names the task (``task 'pay-rent'``) or
    the field (``tools[2].python``)."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


Observed = tuple[dict[str, Any], list[tuple[str, str]], list[tuple[str, str]] | None]
"""A reference call: its arguments, what it changed, what calling it again would change."""


@dataclass(slots=True)
class Preflight:
    """What :func:`preflight` found: the problems, notes, and the reference calls it observed."""

    problems: list[SpecProblem] = field(default_factory=list)
    """What would score agents wrongly: ``run`` refuses the spec, ``world check`` reports them."""
    untrue: list[SpecProblem] = field(default_factory=list)
    """What the spec says that is not so but scores no agent wrongly (``goal_holds_at_start`` on a
    goal that does not hold at the start): ``world check`` reports them, ``run`` goes ahead."""
    notes: list[str] = field(default_factory=list)
    observed: dict[str, list[Observed]] = field(default_factory=dict)


def preflight(spec: WorldSpec, tasks: Iterable[str] | None = None, *, observe: bool = False) -> Preflight:
    """Check a compiled spec before any agent is scored on it, without serving it.

    - every Python effect (``"python": "module:function"``, on a tool or a ``tools_changed``
      replacement) imports from the spec's folder or the Python path and names a function;
    - for each task (``tasks``: those ids only; default every task): its goal is not empty and
      does not already hold in the initial state, unless the task says ``goal_holds_at_start``;
      its reference solution, run call by call on a fresh world without faults, succeeds and
      passes (goal met, no collateral change, no forbidden state).

    Any of these would score an agent for the spec's fault: an agent doing nothing passes, or
    every agent fails. Never raises for a spec that compiled: whatever its code raises is a problem.
    ``observe``: also keep what each reference call changed, and what calling it again would
    change, in :attr:`Preflight.observed` (``world check`` judges the annotations on them).
    """
    found = Preflight()
    broken = _effect_problems(spec, found.problems)
    wanted = None if tasks is None else set(tasks)
    for task in spec.tasks.values():
        if wanted is not None and task.id not in wanted:
            continue
        try:
            _check_task(spec, task, broken, found, observe)
        except Exception as exc:  # the spec's own code, a predicate on an odd state: never a crash
            found.problems.append(SpecProblem(f"task {task.id!r}", f"checking it raised {_raised(exc)}"))
    return found


def check_before_run(spec: WorldSpec, tasks: Sequence[str] = ()) -> None:
    """What the runner calls on each spec before any agent starts: raise :class:`UsageError`
    (exit 2) naming the spec file and the task or field of the first :func:`preflight` problem
    among the tasks the run will run (``tasks``: the ``--task`` selection; empty: every task)."""
    found = preflight(spec, [t for t in spec.tasks if not tasks or t in tasks])
    if found.problems:
        first = found.problems[0]
        more = len(found.problems) - 1
        tail = f" (+{more} more: harn mcp mock world check --spec lists them)" if more else ""
        raise UsageError(f"{first.message}{tail}", path=spec.path, where=first.where)


def _effect_problems(spec: WorldSpec, problems: list[SpecProblem]) -> set[str]:
    """Append a problem for each Python effect that cannot be loaded; return those tools' names."""
    named: list[tuple[str, ToolSpec]] = [
        (f"tools[{i}].python", tool) for i, tool in enumerate(spec.tools.values())
    ]
    for profile, rules in spec.fault_profiles.items():
        for j, rule in enumerate(rules):
            if isinstance(rule.replace_with, ToolSpec):
                named.append((f"fault_profiles.{profile}[{j}].replace_with.python", rule.replace_with))
    broken: set[str] = set()
    for where, tool in named:
        if tool.python is None:
            continue
        module, _, name = tool.python.partition(":")
        try:
            loaded = effect_module(spec, module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and f"{module}.".startswith(f"{exc.name}."):  # not one it imports
                why = f"cannot import {module!r} from the spec's folder or the Python path ({_raised(exc)})"
            else:
                why = f"importing {module!r} raised {_raised(exc)}"
        except (Exception, SystemExit) as exc:
            why = f"importing {module!r} raised {_raised(exc)}"
        else:
            func = getattr(loaded, name, None)
            if callable(func):
                continue
            why = f"module {module!r} has no function {name!r}"
        broken.add(tool.name)
        problems.append(SpecProblem(where, f"tool {tool.name!r}: {why}"))
    return broken


def _holds_at_start(spec: WorldSpec, task: TaskSpec) -> bool:
    """Whether the task's goal holds on the world's initial state for it, before any call."""
    initial = WorldEngine(spec, task=task.id).state
    return all(holds(p, initial) for p in task.goal)


def _check_task(spec: WorldSpec, task: TaskSpec, broken: set[str], found: Preflight, observe: bool) -> None:
    where = f"task {task.id!r}"
    problems = found.problems
    at_start = _holds_at_start(spec, task)
    if task.goal_holds_at_start and not at_start:
        found.untrue.append(
            SpecProblem(where, "goal_holds_at_start is true but the goal does not hold in the initial state")
        )
    elif at_start and not task.goal_holds_at_start:
        why = "the goal is empty" if not task.goal else "the goal already holds in the initial state"
        problems.append(
            SpecProblem(
                where,
                f"{why}: an agent that does nothing passes it "
                '(set "goal_holds_at_start": true if that is the point)',
            )
        )
    if not task.reference:
        found.notes.append(f"{where}: no reference solution to run")
        return
    unusable = sorted({s["tool"] for s in task.reference} & broken)
    if unusable:
        found.notes.append(f"{where}: reference solution not run: tool {unusable[0]!r} cannot be loaded")
        return
    engine = WorldEngine(spec, task=task.id)
    for i, step in enumerate(task.reference):
        before = engine.state
        try:
            response = engine.call(step["tool"], step.get("arguments", {})).response
        except Exception as exc:
            problems.append(
                SpecProblem(where, f"reference step {i + 1} ({step['tool']}) raised {_raised(exc)}")
            )
            return
        if "error" in response or (response.get("result") or {}).get("isError"):
            text = response.get("error", {}).get("message") or _text(response.get("result"))
            problems.append(SpecProblem(where, f"reference step {i + 1} ({step['tool']}) failed: {text}"))
            return
        if observe:
            changes = diff_paths(before, engine.state)
            again = _repeat_changes(spec, engine, step)
            found.observed.setdefault(step["tool"], []).append((step.get("arguments", {}), changes, again))
    score = score_run(task.raw, spec.state, engine.state, forbidden_hits=engine.forbidden_hits)
    if not score.goal_match:
        problems.append(
            SpecProblem(
                where,
                f"the reference solution does not reach the goal ({len(score.failed_goals)} goal predicate(s) fail)",
            )
        )
    if score.collateral:
        problems.append(
            SpecProblem(
                where,
                "the reference solution changes paths outside the goal and may_change: "
                + ", ".join(score.collateral[:5]),
            )
        )
    if score.forbidden_hit:
        problems.append(SpecProblem(where, "the reference solution reaches a forbidden state"))


def _raised(exc: BaseException) -> str:
    text = clip(str(exc), 160)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _repeat_changes(
    spec: WorldSpec, engine: WorldEngine, step: dict[str, Any]
) -> list[tuple[str, str]] | None:
    """What calling the same step again would change (on a throwaway copy of the world)."""
    twin = WorldEngine(spec, task=None)
    twin.state = copy_state(engine.state)
    twin.ordinals = dict(engine.ordinals)
    twin.now_ms = engine.now_ms
    before = twin.state
    try:
        response = twin.call(step["tool"], step.get("arguments", {})).response
    except Exception:
        return None  # the spec's own code failing on a repeat: nothing to say about its hints
    if "error" in response or (response.get("result") or {}).get("isError"):
        return None  # a repeat that is refused changes nothing
    return diff_paths(before, twin.state)


def annotation_problems(spec: WorldSpec, observed: dict[str, list[Observed]]) -> list[str]:
    problems = []
    for name, runs in sorted(observed.items()):
        annotations = spec.tools[name].definition.get("annotations") or {}
        hints = {k: annotations.get(k, v) for k, v in HINT_DEFAULTS.items()}
        for args, changes, again in runs:
            call = f"tool {name!r} called with {clip(deepjson.dumps(args).decode(), 80)}"
            if hints["readOnlyHint"] and changes:
                problems.append(f"{call}: readOnlyHint is true but it changed {changes[0][0]}")
            if hints["idempotentHint"] and again:
                problems.append(f"{call}: idempotentHint is true but calling it again changed {again[0][0]}")
            if not hints["destructiveHint"] and not hints["readOnlyHint"]:
                bad = [p for p, kind in changes if kind != "added"]
                if bad:
                    problems.append(f"{call}: destructiveHint is false but it removed or overwrote {bad[0]}")
    return problems


def _text(result: Any) -> str:
    if isinstance(result, dict):
        return " ".join(str(c.get("text")) for c in result.get("content") or [] if isinstance(c, dict))
    return str(result)
