"""`harn mcp mock world check`: a spec is valid and its tasks and annotations tell the truth.

- the spec validates against the published JSON Schema and compiles;
- for every task: the initial state does not already satisfy the goal (no vacuous task), and the
  reference solution, run on a fresh world without faults, succeeds call by call and passes
  (goal met, no collateral change, no forbidden state);
- annotations are checked against what the reference calls really do: a ``readOnlyHint`` tool
  changes nothing; an ``idempotentHint`` tool changes nothing when called again with the same
  arguments; a tool that is not destructive (``destructiveHint: false``) only adds, never
  removes or overwrites.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.scoring.diff import diff_paths
from harn_mcp_mock.scoring.run import score_run
from harn_mcp_mock.textclip import clip
from harn_mcp_mock.world.engine import WorldEngine
from harn_mcp_mock.world.predicates import holds
from harn_mcp_mock.world.spec import WorldSpec, compile_spec, read_spec_json
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
    observed: dict[str, list[tuple[dict[str, Any], list[tuple[str, str]], list[tuple[str, str]] | None]]] = {}
    for task in spec.tasks.values():
        where = f"task {task.id!r}"
        if task.goal and all(holds(p, spec.state) for p in task.goal):
            result.problems.append(f"{where}: the initial state already satisfies the goal (a vacuous task)")
        engine = WorldEngine(spec, task=task.id)
        for i, step in enumerate(task.reference):
            before = engine.state
            outcome = engine.call(step["tool"], step.get("arguments", {}))
            response = outcome.response
            if "error" in response or (response.get("result") or {}).get("isError"):
                text = response.get("error", {}).get("message") or _text(response.get("result"))
                result.problems.append(f"{where}: reference step {i + 1} ({step['tool']}) failed: {text}")
                break
            changes = diff_paths(before, engine.state)
            again = _repeat_changes(spec, engine, step)
            observed.setdefault(step["tool"], []).append((step.get("arguments", {}), changes, again))
        else:
            if not task.reference:
                result.notes.append(f"{where}: no reference solution to run")
                continue
            score = score_run(task.raw, spec.state, engine.state, forbidden_hits=engine.forbidden_hits)
            if not score.goal_match:
                result.problems.append(
                    f"{where}: the reference solution does not reach the goal "
                    f"({len(score.failed_goals)} goal predicate(s) fail)"
                )
            if score.collateral:
                result.problems.append(
                    f"{where}: the reference solution changes paths outside the goal and may_change: "
                    f"{', '.join(score.collateral[:5])}"
                )
            if score.forbidden_hit:
                result.problems.append(f"{where}: the reference solution reaches a forbidden state")
    result.problems += annotation_problems(spec, observed)
    return result


def _repeat_changes(
    spec: WorldSpec, engine: WorldEngine, step: dict[str, Any]
) -> list[tuple[str, str]] | None:
    """What calling the same step again would change (on a throwaway copy of the world)."""
    twin = WorldEngine(spec, task=None)
    twin.state = copy_state(engine.state)
    twin.ordinals = dict(engine.ordinals)
    twin.now_ms = engine.now_ms
    before = twin.state
    response = twin.call(step["tool"], step.get("arguments", {})).response
    if "error" in response or (response.get("result") or {}).get("isError"):
        return None  # a repeat that is refused changes nothing
    return diff_paths(before, twin.state)


def annotation_problems(spec: WorldSpec, observed: dict[str, list[Any]]) -> list[str]:
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
