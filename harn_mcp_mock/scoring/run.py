"""Score one run of a task: goal match, changed paths (required / allowed / collateral), forbidden.

Every changed leaf (see :mod:`harn_mcp_mock.scoring.diff`) is

- **required** when a goal predicate's path (see ``predicate_paths``) is the changed path, one
  of its ancestors, or lies below it (the last case only arises for a value that changed type,
  e.g. ``null`` became an object the goal speaks about, or was added/removed whole as a leaf);
- else **allowed** when it matches one of the task's ``may_change`` globs;
- else **collateral**.

A run passes when every goal predicate holds on the final state, nothing is collateral, and no
forbidden predicate was hit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from harn_mcp_mock.scoring.diff import Differ, glob_match
from harn_mcp_mock.world.predicates import holds, predicate_paths, split_pointer, validate_predicate

__all__ = ["RunScore", "TaskScorer", "score_run"]


@dataclass(frozen=True, slots=True)
class RunScore:
    task: str
    goal_match: bool
    failed_goals: list[dict[str, Any]]
    """``{"goal": index, "predicate": predicate}`` for every goal predicate that does not hold."""
    changed: list[tuple[str, str]]
    """Every changed leaf as ``(pointer, kind)``, sorted."""
    required: list[str]
    allowed: list[str]
    collateral: list[str]
    forbidden_hit: list[Any] = field(default_factory=list)
    """The forbidden hits: the world's own (``{"call", "forbidden", "predicate"}``) when the run's
    report was scored, else ``{"forbidden": index, "predicate": p}`` for each forbidden predicate
    that holds on the final state. Empty when none was hit."""
    timed_out: bool = False
    """The agent ran out of time (the runner's ``--timeout``): scored as it stood, never a pass."""
    over_budget: str | None = None
    """Why the agent spent more than ``--max-tokens``/``--max-cost`` allow: never a pass."""
    usage_invalid: str | None = None
    """Why the usage the agent reported cannot be trusted (a malformed line): never a pass."""
    usage_unknown: str | None = None
    """Why the agent's spending cannot be judged (a budget was set and it reported no usage at
    all): never a pass."""
    exit_failed: str | None = None
    """The agent exited non-zero and the run asked for a clean exit (``run --strict-exit``):
    never a pass."""

    @property
    def passed(self) -> bool:
        return (
            self.goal_match
            and not self.collateral
            and not self.forbidden_hit
            and not self.timed_out
            and self.over_budget is None
            and self.usage_invalid is None
            and self.usage_unknown is None
            and self.exit_failed is None
        )

    def spending_verdicts(self) -> list[str]:
        """The runner's verdicts on the agent's spending, each as ``name: why`` (the field's
        name: ``over_budget: 104 tokens > --max-tokens 10``), for a person to read."""
        verdicts = (
            ("over_budget", self.over_budget),
            ("usage_invalid", self.usage_invalid),
            ("usage_unknown", self.usage_unknown),
        )
        return [f"{name}: {why}" for name, why in verdicts if why is not None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, keys in a fixed order."""
        return {
            "task": self.task,
            "goal_match": self.goal_match,
            "failed_goals": self.failed_goals,
            "changed": [{"path": path, "kind": kind} for path, kind in self.changed],
            "required": self.required,
            "allowed": self.allowed,
            "collateral": self.collateral,
            "forbidden_hit": self.forbidden_hit,
            **({"timed_out": True} if self.timed_out else {}),
            **({"over_budget": self.over_budget} if self.over_budget is not None else {}),
            **({"usage_invalid": self.usage_invalid} if self.usage_invalid is not None else {}),
            **({"usage_unknown": self.usage_unknown} if self.usage_unknown is not None else {}),
            **({"exit_failed": self.exit_failed} if self.exit_failed is not None else {}),
            "passed": self.passed,
        }


class TaskScorer:
    """Scores many final states of one task against one initial state (set up once).

    ``task`` is the spec's task object (``id``, ``goal``, ``may_change``, ``forbidden``);
    its predicates and globs are validated here (``ValueError`` naming the field). Pass a shared
    ``differ`` to reuse the initial state's index across the tasks of a spec.
    """

    __slots__ = ("_classes", "_differ", "_forbidden", "_goal", "_goal_paths", "_may_change", "task_id")

    def __init__(self, task: Mapping[str, Any], initial: Any, *, differ: Differ | None = None) -> None:
        task_id = task.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("tasks[].id: expected a non-empty string")
        self.task_id = task_id
        where = f"task {task_id!r}"
        self._goal = _predicates(task.get("goal", []), f"{where}: goal")
        self._forbidden = _predicates(task.get("forbidden", []), f"{where}: forbidden")
        may_change = task.get("may_change", [])
        if not isinstance(may_change, list) or not all(isinstance(g, str) for g in may_change):
            raise ValueError(f"{where}: may_change: expected a list of JSON pointer globs")
        for i, glob in enumerate(may_change):
            try:
                split_pointer(glob)
            except ValueError as exc:
                raise ValueError(f"{where}: may_change[{i}]: {exc}") from None
        self._may_change: list[str] = list(may_change)
        self._goal_paths = [
            tuple(split_pointer(p)) for pred in self._goal for p in predicate_paths(pred) if _pointer_ok(p)
        ]
        self._differ = differ if differ is not None else Differ(initial)
        self._classes: dict[str, int] = {}
        """Path -> 0 required, 1 allowed, 2 collateral (the same paths recur across runs)."""

    def score(self, final: Any, *, forbidden_hits: Sequence[Any] | None = None) -> RunScore:
        """Score one final state (see :func:`score_run`)."""
        return self.score_fingerprint(final, forbidden_hits=forbidden_hits)[0]

    def score_fingerprint(
        self, final: Any, *, forbidden_hits: Sequence[Any] | None = None
    ) -> tuple[RunScore, bytes]:
        """The score and bytes that identify ``final`` (equal exactly when two final states are
        equal JSON, given the initial state): the changed leaves with their values."""
        failed = [{"goal": i, "predicate": p} for i, p in enumerate(self._goal) if not holds(p, final)]
        entries = self._differ.diff_values(final)
        changed = [(path, kind) for path, kind, _value in entries]
        buckets: tuple[list[str], list[str], list[str]] = ([], [], [])
        classes = self._classes
        for path, _kind in changed:
            cls = classes.get(path)
            if cls is None:
                cls = self._classify(path)
                if len(classes) < 1_000_000:
                    classes[path] = cls
            buckets[cls].append(path)
        required, allowed, collateral = buckets
        try:
            fingerprint = orjson.dumps(entries)
        except TypeError:
            fingerprint = repr(entries).encode()
        if forbidden_hits is None:
            hits: list[Any] = [
                {"forbidden": i, "predicate": p} for i, p in enumerate(self._forbidden) if holds(p, final)
            ]
        else:
            hits = list(forbidden_hits)
        score = RunScore(self.task_id, not failed, failed, changed, required, allowed, collateral, hits)
        return score, fingerprint

    def _classify(self, path: str) -> int:
        if self._is_required(path):
            return 0
        if any(glob_match(path, glob) for glob in self._may_change):
            return 1
        return 2

    def _is_required(self, path: str) -> bool:
        if not self._goal_paths:
            return False
        segs = tuple(split_pointer(path))
        n = len(segs)
        for goal in self._goal_paths:
            m = len(goal)
            if (m <= n and segs[:m] == goal) or (n < m and goal[:n] == segs):
                return True
        return False


def _pointer_ok(path: str) -> bool:
    try:
        split_pointer(path)
    except ValueError:
        return False
    return True


def _predicates(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list of predicates")
    for i, predicate in enumerate(value):
        try:
            validate_predicate(predicate, f"[{i}]")
        except ValueError as exc:
            field_path = getattr(exc, "where", f"[{i}]")
            raise ValueError(f"{where}{field_path}: {exc}") from None
    return value


def score_run(
    task: Mapping[str, Any], initial: Any, final: Any, *, forbidden_hits: Sequence[Any] | None = None
) -> RunScore:
    """Score one run: ``final`` against ``initial`` for ``task`` (the spec's task object).

    ``forbidden_hits`` are the hits the world tracked after every call (from its report); when
    None, the task's ``forbidden`` predicates are evaluated on the final state instead.
    """
    return TaskScorer(task, initial).score(final, forbidden_hits=forbidden_hits)
