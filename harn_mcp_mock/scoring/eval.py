"""``harn mcp mock eval``: score many final states of world runs into pass_rate and pass^k.

Scoring looks only at final states (never at traces): each run is scored with
:class:`~harn_mcp_mock.scoring.run.TaskScorer`, runs are counted per (world, task, fault
profile) as ``(c, n)``, and each (world, fault profile) group gets ``pass_rate`` and exact
``pass^k`` for ``k = 1 .. min n``. Runs that died of an infrastructure error (``infra_error`` in
the state file: the world or the harness failed, not an injected fault) are kept out of ``n``
and listed. The inputs and the result are documented in ``docs/eval.md``.
"""

from __future__ import annotations

import gc
import os
import re
import stat
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Final, Protocol

import orjson

from harn_mcp_mock.errors import EvalError
from harn_mcp_mock.scoring.diff import Differ
from harn_mcp_mock.scoring.passk import aggregate
from harn_mcp_mock.scoring.run import RunScore, TaskScorer
from harn_mcp_mock.scoring.stats import (
    DEFAULT_CONFIDENCE,
    Detectable,
    bootstrap_pass_k,
    flip_rate,
    group_rate_interval,
    trials_for_drop,
    wilson_interval,
)

__all__ = [
    "EVAL_FORMAT",
    "REPORT_FORMAT",
    "STATE_FORMAT",
    "EvalError",
    "EvalResult",
    "Excluded",
    "GroupSummary",
    "Power",
    "Robustness",
    "RunDocument",
    "RunRecord",
    "ScoredRun",
    "Scorer",
    "Spend",
    "TaskCounts",
    "score_runs",
]

STATE_FORMAT: Final = "harn-mcp-mock/world-state"
REPORT_FORMAT: Final = "harn-mcp-mock/world-report"
EVAL_FORMAT: Final = "harn-mcp-mock/eval"
INPUT_VERSION: Final = 1
"""The newest state/report ``version`` this code reads."""
EVAL_VERSION: Final = 2
"""``version`` of the JSON eval result; bumped on any change to its shape (2: intervals,
``flip_rate``, ``confidence``, ``power``)."""


class _SpecLike(Protocol):
    """A loaded ``WorldSpec`` (its ``raw`` spec object is what eval reads)."""

    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunDocument:
    """A run's world state or report document held in memory (the runner's own, made from the
    world it served), scored as a file with that content would be and listed as ``file``."""

    file: str
    document: Any


# --- result records --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One scored run."""

    file: str
    source: str
    """``"state"`` (a ``--state-out`` file), ``"report"`` (a ``--report`` file) or ``"bare"``."""
    world: str
    faults: str | None
    seed: int | None
    run_id: str | None
    score: RunScore
    usage: dict[str, Any] | None = None
    """Tokens and cost the agent reported (``input_tokens``, ``output_tokens``, ``cost_usd``)."""
    isolation: str | None = None
    """What the runner's sandbox gave the agent (``bwrap`` or ``none``; None: not a runner's trial)."""

    @property
    def task(self) -> str:
        return self.score.task

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "source": self.source,
            "world": self.world,
            "faults": self.faults,
            "seed": self.seed,
            "run_id": self.run_id,
            **self.score.to_dict(),
            **({"usage": self.usage} if self.usage is not None else {}),
            **({"isolation": self.isolation} if self.isolation is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class Excluded:
    """A run left out of ``n`` because it died of an infrastructure error."""

    file: str
    source: str
    """``"state"`` or ``"report"``."""
    world: str
    task: str
    faults: str | None
    seed: int | None
    run_id: str | None
    infra_error: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "source": self.source,
            "world": self.world,
            "task": self.task,
            "faults": self.faults,
            "seed": self.seed,
            "run_id": self.run_id,
            "infra_error": self.infra_error,
        }


@dataclass(frozen=True, slots=True)
class TaskCounts:
    world: str
    faults: str | None
    task: str
    c: int
    """Runs that passed."""
    n: int
    """Runs scored (infrastructure failures not counted)."""
    excluded: int = 0
    """Runs left out for infrastructure errors."""
    outcomes: tuple[bool, ...] = ()
    """The scored runs' outcomes in trial order (run id, then file, numbers compared as numbers)."""
    usage: Spend | None = None
    """What the scored runs that reported usage spent (None when none did)."""

    @property
    def flip_rate(self) -> float | None:
        """How often consecutive trials disagree (None with fewer than 2 outcomes)."""
        return flip_rate(self.outcomes)

    @property
    def flaky(self) -> bool:
        """Passed sometimes but not always: its flip rate is above 0 (0 < c < n)."""
        flips = self.flip_rate
        return flips > 0 if flips is not None else 0 < self.c < self.n

    def interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
        """The Wilson interval of c / n (None without a scored run)."""
        return wilson_interval(self.c, self.n, confidence) if self.n else None

    def to_dict(self, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Any]:
        interval = self.interval(confidence)
        return {
            "task": self.task,
            "c": self.c,
            "n": self.n,
            "excluded": self.excluded,
            "flaky": self.flaky,
            "flip_rate": self.flip_rate,
            "interval": None if interval is None else list(interval),
            **({"usage": self.usage.to_dict(self.c)} if self.usage is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens and cost summed over runs (those that reported usage)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    runs: int = 0
    """Runs that reported usage."""

    def add(self, usage: Mapping[str, Any]) -> Spend:
        return Spend(
            self.input_tokens + int(usage["input_tokens"]),
            self.output_tokens + int(usage["output_tokens"]),
            self.cost_usd + float(usage["cost_usd"]),
            self.runs + 1,
        )

    def pass_per_dollar(self, passes: int) -> float | None:
        """Passes per US dollar spent (None when nothing was spent)."""
        return passes / self.cost_usd if self.cost_usd > 0 else None

    def to_dict(self, passes: int) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 10),
            "runs": self.runs,
            "pass_per_dollar": self.pass_per_dollar(passes),
        }


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """The runs of one world under one fault profile (``faults=None``: no faults injected)."""

    world: str
    faults: str | None
    tasks: list[TaskCounts]
    """Every task with at least one run (scored or excluded), by task id."""
    pass_rate: Fraction | None
    """Mean c/n over the tasks with scored runs; None when there are none."""
    pass_power_k: dict[int, Fraction]
    """pass^k for k = 1 .. ``max_k`` (the smallest n, unless asked for fewer)."""
    min_n: int
    """The fewest scored runs of any task with scored runs (0 when none)."""
    notes: list[str] = field(default_factory=list)
    pass_rate_interval: tuple[float, float] | None = None
    """Wilson interval of ``pass_rate`` at the result's confidence (None without scored runs)."""
    pass_power_k_interval: dict[int, tuple[float, float]] = field(default_factory=dict)
    """k -> the bootstrap interval of pass^k."""
    power: Power | None = None
    """Trials per task to detect a drop in pass rate (``--power``), when asked."""

    @property
    def usage(self) -> Spend | None:
        """What the group's tasks spent (None when no run reported usage)."""
        spends = [t.usage for t in self.tasks if t.usage is not None]
        if not spends:
            return None
        total = Spend()
        for spend in spends:
            total = Spend(
                total.input_tokens + spend.input_tokens,
                total.output_tokens + spend.output_tokens,
                total.cost_usd + spend.cost_usd,
                total.runs + spend.runs,
            )
        return total

    @property
    def passes(self) -> int:
        return sum(t.c for t in self.tasks)


@dataclass(frozen=True, slots=True)
class Power:
    """Trials per task that detect a drop of ``drop`` in pass rate (two-sided Fisher at
    ``alpha``, 80% power), per task from its current pass rate; the group needs the most."""

    drop: float
    alpha: float
    power: float
    per_task: dict[str, int | None]
    """task -> trials per run (None: its pass rate is below the drop, it cannot fall that far)."""

    @property
    def trials(self) -> int | None:
        """The most any task needs (None when no task can fall that far)."""
        needed = [n for n in self.per_task.values() if n is not None]
        return max(needed) if needed else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "drop": self.drop,
            "alpha": self.alpha,
            "power": self.power,
            "trials": self.trials,
            "tasks": [{"task": task, "trials": n} for task, n in self.per_task.items()],
        }


@dataclass(frozen=True, slots=True)
class Robustness:
    """pass^k of the same tasks with and without a fault profile (world-level)."""

    world: str
    faults: str
    tasks: list[str]
    """The tasks both groups have scored runs for (the averages are over these only)."""
    pass_power_k: dict[int, tuple[Fraction, Fraction]]
    """k -> (without faults, with the profile)."""

    def delta(self, k: int) -> Fraction:
        """pass^k with the faults minus without (negative: the faults cost that much)."""
        base, faulted = self.pass_power_k[k]
        return faulted - base


@dataclass(frozen=True, slots=True)
class EvalResult:
    specs: list[str]
    runs: list[RunRecord]
    """Scored runs, ordered by world, fault profile, task, file."""
    excluded: list[Excluded]
    groups: list[GroupSummary]
    """By world, then fault profile (none first)."""
    robustness: list[Robustness]
    merged: list[tuple[str, str]] = field(default_factory=list)
    """(state file, report file) pairs of the same run, counted once (the report's hits win)."""
    confidence: float = DEFAULT_CONFIDENCE
    """The level of every interval."""
    detectable: Detectable | None = None
    """What a comparison of this run with an earlier one can detect (``detectable_drop`` in
    ``results.json``; set by the runner, None in ``eval``'s results)."""

    def exit_code(self, min_pass_rate: float | None = None) -> int:
        """0, or 1 when ``min_pass_rate`` is given and some group's pass_rate is below it (a
        group with no scored run counts as below)."""
        if min_pass_rate is None:
            return 0
        for group in self.groups:
            if group.pass_rate is None or group.pass_rate < Fraction(min_pass_rate):
                return 1
        return 0

    @classmethod
    def from_json(cls, doc: Any, path: str | Path | None = None) -> EvalResult:
        """The result a :meth:`to_dict` document holds (a run's ``results.json``, ``eval --format
        json``), typed: ``from_json(r.to_dict()).to_dict() == r.to_dict()``. What eval derives
        (``summary``, ``passed``, ``flip_rate``, the tasks' intervals, usage totals) is derived
        again, not read. Version 1 results (no intervals) read too. Raises :class:`EvalError`
        naming ``path`` and the field for a document that is not one."""
        return _result_from_json(doc, None if path is None else str(path))

    def to_dict(self) -> dict[str, Any]:
        """The JSON result (``docs/eval.md``), keys in a fixed order."""
        return {
            "format": EVAL_FORMAT,
            "version": EVAL_VERSION,
            "specs": self.specs,
            "confidence": self.confidence,
            "summary": {
                "runs": len(self.runs),
                "passed": sum(1 for r in self.runs if r.score.passed),
                "excluded": len(self.excluded),
                "merged": len(self.merged),
            },
            "groups": [
                {
                    "world": g.world,
                    "faults": g.faults,
                    "tasks": [t.to_dict(self.confidence) for t in g.tasks],
                    "min_n": g.min_n,
                    "pass_rate": {**fraction_dict(g.pass_rate), "interval": _interval(g.pass_rate_interval)},
                    "pass_power_k": [
                        {"k": k, **fraction_dict(v), "interval": _interval(g.pass_power_k_interval.get(k))}
                        for k, v in g.pass_power_k.items()
                    ],
                    **({"power": g.power.to_dict()} if g.power is not None else {}),
                    **({"usage": g.usage.to_dict(g.passes)} if g.usage is not None else {}),
                    "notes": g.notes,
                }
                for g in self.groups
            ],
            "robustness": [
                {
                    "world": r.world,
                    "faults": r.faults,
                    "baseline": None,
                    "tasks": r.tasks,
                    "pass_power_k": [
                        {
                            "k": k,
                            "baseline": fraction_dict(base),
                            "faults": fraction_dict(faulted),
                            "delta": fraction_dict(faulted - base),
                        }
                        for k, (base, faulted) in r.pass_power_k.items()
                    ],
                }
                for r in self.robustness
            ],
            "excluded": [e.to_dict() for e in self.excluded],
            "merged": [{"state": state, "report": report} for state, report in self.merged],
            **({"detectable_drop": self.detectable.to_dict()} if self.detectable is not None else {}),
            "runs": [r.to_dict() for r in self.runs],
        }


def _interval(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [value[0], value[1]]


def fraction_dict(value: Fraction | None) -> dict[str, Any]:
    """``{"exact": "1/6", "value": 0.1666...}`` (``"exact": "1"`` for whole numbers; both None for None)."""
    if value is None:
        return {"exact": None, "value": None}
    return {"exact": str(value), "value": float(value)}


# --- the eval --------------------------------------------------------------------------------


class _World:
    __slots__ = ("differ", "fault_profiles", "name", "scorers", "tasks")

    def __init__(self, spec: Mapping[str, Any], index: int) -> None:
        where = f"specs[{index}]"
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise EvalError("a world spec needs a non-empty name", where=f"{where}.name")
        self.name = name
        if "state" not in spec:
            raise EvalError("missing initial state", where=f"spec {name!r}: state")
        tasks = spec.get("tasks")
        if not isinstance(tasks, list):
            raise EvalError("expected a list of tasks", where=f"spec {name!r}: tasks")
        profiles = spec.get("fault_profiles") or {}
        self.fault_profiles: set[str] = set(profiles) if isinstance(profiles, dict) else set()
        self.differ = Differ(spec["state"])
        self.tasks: dict[str, Mapping[str, Any]] = {}
        for i, task in enumerate(tasks):
            task_id = task.get("id") if isinstance(task, Mapping) else None
            if not isinstance(task_id, str) or not task_id:
                raise EvalError(
                    "expected a task object with a non-empty id", where=f"spec {name!r}: tasks[{i}]"
                )
            if task_id in self.tasks:
                raise EvalError(f"duplicate task id {task_id!r}", where=f"spec {name!r}: tasks[{i}].id")
            self.tasks[task_id] = task
        self.scorers: dict[str, TaskScorer] = {}

    def scorer(self, task_id: str) -> TaskScorer:
        scorer = self.scorers.get(task_id)
        if scorer is None:
            try:
                scorer = TaskScorer(self.tasks[task_id], None, differ=self.differ)
            except ValueError as exc:
                raise EvalError(str(exc), where=f"spec {self.name!r}") from None
            self.scorers[task_id] = scorer
        return scorer


@dataclass(slots=True)
class _Loaded:
    source: str
    world: _World
    task: str
    faults: str | None
    seed: int | None
    run_id: str | None
    infra_error: str | None
    final: Any
    forbidden_hits: list[Any] | None
    timed_out: bool = False
    usage: dict[str, Any] | None = None
    over_budget: str | None = None
    usage_invalid: str | None = None
    usage_unknown: str | None = None
    exit_failed: str | None = None


_VERDICTS: Final = ("over_budget", "usage_invalid", "usage_unknown", "exit_failed")
"""The runner's verdicts a run document may carry (a string why, or absent): never a pass."""


def score_runs(
    specs: Sequence[Mapping[str, Any] | _SpecLike],
    inputs: Sequence[str | Path | RunDocument],
    *,
    task: str | None = None,
    faults: str | None = None,
    max_k: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    power_drop: float | None = None,
    alpha: float = 0.05,
) -> EvalResult:
    """Score world runs and aggregate them.

    ``specs``: world spec objects as loaded from JSON (``name``, ``state``, ``tasks``, optional
    ``fault_profiles`` are read), or loaded ``WorldSpec`` objects (their ``raw``). ``inputs``:
    world state files (``--state-out``), world reports (``--report``) or bare JSON states, matched
    to specs by their ``world`` name, as paths or as documents in memory (:class:`RunDocument`:
    the runner scores the worlds it held, never a file read back). ``task`` is the task of bare
    states and of state files that name none (default: the spec's only task); a file naming
    another task is an error. ``faults`` labels bare states with a fault profile. ``max_k`` asks
    for pass^1..pass^max_k in every group (default: up to each group's smallest n) and is refused
    above it. ``confidence`` is the level of the intervals (Wilson for rates, a bootstrap seeded
    with ``seed`` for pass^k). ``power_drop`` asks, per group, for the trials per task that
    detect that drop in pass rate at 80% power with a two-sided Fisher test at ``alpha``.

    Raises :class:`EvalError` (exit 2) naming the file and field for unusable input.
    """
    scorer = Scorer(specs, task=task, faults=faults)
    options = _options(max_k, confidence, seed, power_drop, alpha)
    # Parsing thousands of states allocates millions of containers, none of them in a cycle:
    # the cyclic collector would only rescan them (a fifth of the run time), so it pauses here.
    collecting = gc.isenabled()
    gc.disable()
    try:
        scored: list[ScoredRun] = []
        seen: set[str] = set()
        for item in inputs:
            if isinstance(item, RunDocument):
                key = item.file
            else:  # one file named two ways is read once (no syscalls, unlike Path.resolve())
                key = os.path.normpath(os.path.abspath(os.fspath(item)))
            if key not in seen:
                seen.add(key)
                scored.append(scorer.score(item))
        return scorer._result(scored, max_k, options)
    finally:
        if collecting:
            gc.enable()


@dataclass(frozen=True, slots=True)
class ScoredRun:
    """One run scored by :meth:`Scorer.score`: its record, or its exclusion (an infrastructure
    error), kept instead of its document."""

    run: RunRecord | None = None
    excluded: Excluded | None = None
    fingerprint: bytes = b""
    """What identifies its final state (a state file and a report of the same run count once)."""

    def judged(self, over_budget: str | None, usage_unknown: str | None = None) -> ScoredRun:
        """The same run with another budget's verdicts (``over_budget``; ``usage_unknown``: a
        budget and no usage reported; None: within it): never a pass when set."""
        run = self.run
        if run is None or (run.score.over_budget, run.score.usage_unknown) == (over_budget, usage_unknown):
            return self
        score = replace(run.score, over_budget=over_budget, usage_unknown=usage_unknown)
        return replace(self, run=replace(run, score=score))

    def exited(self, exit_failed: str | None) -> ScoredRun:
        """The same run with ``run --strict-exit``'s verdict on its agent's exit (None: no
        verdict): never a pass when set."""
        if self.run is None or self.run.score.exit_failed == exit_failed:
            return self
        return replace(self, run=replace(self.run, score=replace(self.run.score, exit_failed=exit_failed)))

    def isolated(self, isolation: str | None) -> ScoredRun:
        """The same run with the isolation its agent had (the runner's ``--sandbox``)."""
        if self.run is None or self.run.isolation == isolation:
            return self
        return replace(self, run=replace(self.run, isolation=isolation))


class Scorer:
    """Scores run documents one at a time against the specs (:meth:`score`: what is kept is the
    score, not the document) and aggregates the scores (:meth:`result`). :func:`score_runs` does
    both in one call; the runner scores each trial's world as the trial finishes."""

    def __init__(
        self,
        specs: Sequence[Mapping[str, Any] | _SpecLike],
        *,
        task: str | None = None,
        faults: str | None = None,
    ) -> None:
        worlds: dict[str, _World] = {}
        for i, spec in enumerate(specs):
            raw = spec if isinstance(spec, Mapping) else spec.raw
            world = _World(raw, i)
            if world.name in worlds:
                raise EvalError(f"two specs named {world.name!r}", where=f"specs[{i}].name")
            worlds[world.name] = world
        if not worlds:
            raise EvalError("no world spec given")
        self._worlds = worlds
        self._task = task
        self._faults = faults

    def score(self, item: str | Path | RunDocument) -> ScoredRun:
        """Score one run: a file, or a document held in memory."""
        if isinstance(item, RunDocument):
            path = item.file
            loaded = _parse(path, item.document, self._worlds, self._task, self._faults)
        else:
            path = os.fspath(item)
            loaded = _load(path, self._worlds, self._task, self._faults)
        if loaded.infra_error is not None:
            return ScoredRun(
                excluded=Excluded(
                    path, loaded.source, loaded.world.name, loaded.task, loaded.faults, loaded.seed,
                    loaded.run_id, loaded.infra_error,
                )
            )  # fmt: skip
        scorer = loaded.world.scorer(loaded.task)
        score, fingerprint = scorer.score_fingerprint(loaded.final, forbidden_hits=loaded.forbidden_hits)
        if loaded.timed_out:
            score = replace(score, timed_out=True)
            fingerprint += b"timed out"
        for verdict in _VERDICTS:  # the runner's: each makes the run a failure whatever its state
            value = getattr(loaded, verdict)
            if value is not None:
                score = replace(score, **{verdict: value})
                fingerprint += verdict.encode()
        record = RunRecord(
            path,
            loaded.source,
            loaded.world.name,
            loaded.faults,
            loaded.seed,
            loaded.run_id,
            score,
            loaded.usage,
        )
        return ScoredRun(run=record, fingerprint=fingerprint)

    def result(
        self,
        scored: Sequence[ScoredRun],
        *,
        max_k: int | None = None,
        confidence: float = DEFAULT_CONFIDENCE,
        seed: int = 0,
        power_drop: float | None = None,
        alpha: float = 0.05,
    ) -> EvalResult:
        """Eval's result of these scored runs (the options as :func:`score_runs` takes them)."""
        return self._result(scored, max_k, _options(max_k, confidence, seed, power_drop, alpha))

    def _result(self, scored: Sequence[ScoredRun], max_k: int | None, options: _Options) -> EvalResult:
        runs = [(s.run, s.fingerprint) for s in scored if s.run is not None]
        excluded = [s.excluded for s in scored if s.excluded is not None]
        kept, kept_excluded, merged = _merge_pairs(runs, excluded)
        kept.sort(key=lambda r: (r.world, _faults_key(r.faults), r.task, r.file))
        kept_excluded.sort(key=lambda e: (e.world, _faults_key(e.faults), e.task, e.file))
        groups = _groups(kept, kept_excluded, max_k, options)
        return EvalResult(
            specs=list(self._worlds),
            runs=kept,
            excluded=kept_excluded,
            groups=groups,
            robustness=_robustness(groups, max_k),
            merged=sorted(merged),
            confidence=options.confidence,
        )


def _options(
    max_k: int | None, confidence: float, seed: int, power_drop: float | None, alpha: float
) -> _Options:
    if max_k is not None and (isinstance(max_k, bool) or not isinstance(max_k, int) or max_k < 1):
        raise EvalError(f"must be a positive integer, got {max_k!r}", where="--k")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise EvalError(f"confidence must be between 0 and 1, got {confidence!r}", where="--confidence")
    if power_drop is not None and (
        isinstance(power_drop, bool) or not isinstance(power_drop, (int, float)) or not 0 < power_drop <= 1
    ):
        raise EvalError(f"the drop must be above 0 and at most 1, got {power_drop!r}", where="--power")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise EvalError(f"alpha must be between 0 and 1, got {alpha!r}", where="--alpha")
    return _Options(float(confidence), seed, power_drop, float(alpha))


def _faults_key(faults: str | None) -> tuple[int, str]:
    return (0, "") if faults is None else (1, faults)


def _load(path: str, worlds: Mapping[str, _World], task: str | None, faults: str | None) -> _Loaded:
    try:
        data = _read(path)
    except IsADirectoryError:
        raise EvalError("is a directory, not a state or report file", path=path) from None
    except OSError as exc:
        raise EvalError(f"cannot read it: {exc.strerror or exc}", path=path) from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise EvalError(f"not valid JSON: {exc.msg}", path=path, where=f"{exc.lineno}:{exc.colno}") from None
    return _parse(path, doc, worlds, task, faults)


def _parse(
    path: str, doc: Any, worlds: Mapping[str, _World], task: str | None, faults: str | None
) -> _Loaded:
    """A run's document (read from ``path``, or held in memory and listed as ``path``), checked."""
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if not (isinstance(fmt, str) and fmt.startswith("harn-mcp-mock/")):
        return _bare(path, doc, worlds, task, faults)
    if fmt not in (STATE_FORMAT, REPORT_FORMAT):
        raise EvalError(f"a {fmt!r} file, not a world state or report", path=path, where="format")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise EvalError("expected a positive integer version", path=path, where="version")
    if version > INPUT_VERSION:
        raise EvalError(
            f"written by a newer harn-mcp-mock (version {version}; this one reads {INPUT_VERSION})",
            path=path,
            where="version",
        )
    source = "state" if fmt == STATE_FORMAT else "report"
    world_name = _field(doc, "world", path)
    world = worlds.get(world_name)
    if world is None:
        known = ", ".join(sorted(worlds))
        raise EvalError(
            f"names world {world_name!r}, not one of the specs ({known})", path=path, where="world"
        )
    task_id = _field(doc, "task", path)
    if task_id is None:
        task_id = _default_task(world, task, path)
    elif task is not None and task_id != task:
        raise EvalError(
            f"is a run of task {task_id!r}, but task {task!r} was asked for", path=path, where="task"
        )
    elif task_id not in world.tasks:
        raise EvalError(
            f"names task {task_id!r}, not a task of world {world.name!r}{_tasks_hint(world)}",
            path=path,
            where="task",
        )
    profile = _field(doc, "faults", path)
    _check_profile(world, profile, path, "faults")
    seed = _field(doc, "seed", path)
    run_id = _field(doc, "run_id", path)
    infra_error = _field(doc, "infra_error", path)
    final_key = "state" if source == "state" else "final_state"
    hits: list[Any] | None = None
    if source == "report":
        hits = _field(doc, "forbidden_hits", path)
    if infra_error is None and final_key not in doc:
        raise EvalError("missing (needed to score a run without infra_error)", path=path, where=final_key)
    timed_out = doc.get("timed_out") is True  # the runner's --timeout: never a pass
    usage = _usage(doc, path)
    over_budget = _field(doc, "over_budget", path)  # the runner's --max-tokens/--max-cost: never a pass
    usage_invalid = _field(doc, "usage_invalid", path)  # a malformed usage line: never a pass
    usage_unknown = _field(doc, "usage_unknown", path)  # a budget and no usage reported: never a pass
    exit_failed = _field(doc, "exit_failed", path)  # run --strict-exit and a non-zero exit: never a pass
    return _Loaded(
        source,
        world,
        task_id,
        profile,
        seed,
        run_id,
        infra_error,
        doc.get(final_key),
        hits,
        timed_out,
        usage,
        over_budget,
        usage_invalid,
        usage_unknown,
        exit_failed,
    )


def _usage(doc: Mapping[str, Any], path: str) -> dict[str, Any] | None:
    """The run's ``usage`` (tokens and cost the runner summed), checked; None when absent."""
    usage = _field(doc, "usage", path)
    if usage is None:
        return None
    for key in ("input_tokens", "output_tokens", "cost_usd"):
        value = usage.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise EvalError("expected a number of at least 0", path=path, where=f"usage.{key}")
    return {
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "cost_usd": float(usage.get("cost_usd", 0)),
    }


def _read(path: str) -> bytes:
    """The file's bytes (os.read: a third cheaper than open().read() for thousands of files)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        data = os.read(fd, info.st_size + 1)
        if len(data) <= info.st_size:  # a regular file reads whole: this was all of it
            return data
        chunks = [data]
        while chunk := os.read(fd, 1 << 20):  # it grew meanwhile, or is not a regular file
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _bare(path: str, doc: Any, worlds: Mapping[str, _World], task: str | None, faults: str | None) -> _Loaded:
    if len(worlds) != 1:
        raise EvalError(
            f'a bare state (no "format"): scoring it needs exactly one spec, got {len(worlds)}', path=path
        )
    world = next(iter(worlds.values()))
    task_id = _default_task(world, task, path)
    _check_profile(world, faults, path, None)
    return _Loaded("bare", world, task_id, faults, None, None, None, doc, None)


def _default_task(world: _World, task: str | None, path: str) -> str:
    if task is not None:
        if task not in world.tasks:
            raise EvalError(f"no task {task!r} in world {world.name!r}{_tasks_hint(world)}", path=path)
        return task
    if len(world.tasks) == 1:
        return next(iter(world.tasks))
    raise EvalError(
        f"names no task and world {world.name!r} has {len(world.tasks)}{_tasks_hint(world)}: "
        "give the task to score it against (--task)",
        path=path,
    )


def _tasks_hint(world: _World) -> str:
    return f" (tasks: {', '.join(world.tasks) or 'none'})"


def _check_profile(world: _World, profile: str | None, path: str, where: str | None) -> None:
    if profile is not None and profile not in world.fault_profiles:
        known = ", ".join(sorted(world.fault_profiles)) or "none"
        raise EvalError(
            f"fault profile {profile!r} is not in world {world.name!r} (profiles: {known})",
            path=path,
            where=where,
        )


_EXPECTED: Final = {
    "world": ((str,), "a string"),
    "task": ((str, type(None)), "a string or null"),
    "faults": ((str, type(None)), "a string or null"),
    "seed": ((int, type(None)), "an integer or null"),
    "run_id": ((str, type(None)), "a string or null"),
    "infra_error": ((str, type(None)), "a string or null"),
    "forbidden_hits": ((list, type(None)), "a list or null"),
    "usage": ((dict, type(None)), "an object or null"),
    "over_budget": ((str, type(None)), "a string or null"),
    "usage_invalid": ((str, type(None)), "a string or null"),
    "usage_unknown": ((str, type(None)), "a string or null"),
    "exit_failed": ((str, type(None)), "a string or null"),
}


def _field(doc: Mapping[str, Any], key: str, path: str) -> Any:
    """``doc[key]`` (None when absent) if it has the type ``_EXPECTED`` gives, else an EvalError."""
    value = doc.get(key)
    types, expected = _EXPECTED[key]
    if isinstance(value, bool) or not isinstance(value, types):
        raise EvalError(f"expected {expected}", path=path, where=key)
    return value


def _merge_pairs(
    runs: list[tuple[RunRecord, bytes]], excluded: list[Excluded]
) -> tuple[list[RunRecord], list[Excluded], list[tuple[str, str]]]:
    """Count a state file and a report of the same run once: same world, task, faults, seed and
    run id, and the same final state (or the same infra error). The report is kept."""
    merged: list[tuple[str, str]] = []
    reports: dict[tuple[Any, ...], list[tuple[bytes, str]]] = defaultdict(list)
    for record, fingerprint in runs:
        if record.source == "report":
            reports[(record.world, record.task, record.faults, record.seed, record.run_id)].append(
                (fingerprint, record.file)
            )
    kept: list[RunRecord] = []
    for record, fingerprint in runs:
        if record.source == "state" and record.run_id is not None:
            candidates = reports.get((record.world, record.task, record.faults, record.seed, record.run_id))
            match = next((i for i, (fp, _file) in enumerate(candidates or ()) if fp == fingerprint), None)
            if candidates and match is not None:
                merged.append((record.file, candidates.pop(match)[1]))
                continue
        kept.append(record)
    # Excluded runs: a state file and a report with the same identity and error.
    ex_reports: dict[tuple[Any, ...], list[Excluded]] = defaultdict(list)
    for ex in excluded:
        if ex.source == "report":
            ex_reports[(ex.world, ex.task, ex.faults, ex.seed, ex.run_id, ex.infra_error)].append(ex)
    kept_ex: list[Excluded] = []
    for ex in excluded:
        ex_key = (ex.world, ex.task, ex.faults, ex.seed, ex.run_id, ex.infra_error)
        if ex.source == "state" and ex.run_id is not None and ex_reports.get(ex_key):
            merged.append((ex.file, ex_reports[ex_key].pop(0).file))
            continue
        kept_ex.append(ex)
    return kept, kept_ex, merged


@dataclass(frozen=True, slots=True)
class _Options:
    confidence: float
    seed: int
    power_drop: float | None
    alpha: float


_DIGITS: Final = re.compile(r"(\d+)")


def _spend(runs: Sequence[RunRecord]) -> Spend | None:
    total = None
    for run in runs:
        if run.usage is not None:
            total = (total or Spend()).add(run.usage)
    return total


def _trial_order(run: RunRecord) -> tuple[Any, ...]:
    """Runs of a task in trial order: by run id, then file, with numbers compared as numbers
    (``t2`` before ``t10``)."""
    return tuple(
        tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(text))
        for text in (run.run_id or "", run.file)
    )


def _groups(
    runs: list[RunRecord], excluded: list[Excluded], max_k: int | None, options: _Options
) -> list[GroupSummary]:
    counts: dict[tuple[str, str | None], dict[str, list[int]]] = defaultdict(dict)
    outcomes: dict[tuple[str, str | None, str], list[RunRecord]] = defaultdict(list)
    for run in runs:
        tally = counts[(run.world, run.faults)].setdefault(run.task, [0, 0, 0])
        tally[0] += run.score.passed
        tally[1] += 1
        outcomes[(run.world, run.faults, run.task)].append(run)
    for ex in excluded:
        counts[(ex.world, ex.faults)].setdefault(ex.task, [0, 0, 0])[2] += 1
    groups: list[GroupSummary] = []
    for world, profile in sorted(counts, key=lambda g: (g[0], _faults_key(g[1]))):
        tasks = [
            TaskCounts(
                world,
                profile,
                t,
                c,
                n,
                x,
                tuple(
                    r.score.passed for r in sorted(outcomes.get((world, profile, t), ()), key=_trial_order)
                ),
                _spend(outcomes.get((world, profile, t), ())),
            )
            for t, (c, n, x) in sorted(counts[(world, profile)].items())
        ]
        scored = {t.task: (t.c, t.n) for t in tasks if t.n > 0}
        notes: list[str] = []
        for t in tasks:
            if t.n == 0:
                notes.append(
                    f"task {t.task}: no scored run (all {t.excluded} excluded), left out of the averages"
                )
        excluded_runs = sum(t.excluded for t in tasks)
        if excluded_runs:
            notes.append(f"{excluded_runs} run(s) excluded for infrastructure errors (not counted in n)")
        if not scored:
            groups.append(GroupSummary(world, profile, tasks, None, {}, 0, notes))
            continue
        min_n = min(n for _c, n in scored.values())
        max_n = max(n for _c, n in scored.values())
        if min_n < max_n:
            fewest = min(scored, key=lambda t: (scored[t][1], t))
            notes.append(f"k stops at {min_n}: task {fewest} has {min_n} scored runs (others up to {max_n})")
        try:
            agg = aggregate(scored, max_k=max_k)
        except ValueError:
            fewest = min(scored, key=lambda t: (scored[t][1], t))
            label = "none" if profile is None else profile
            raise EvalError(
                f"pass^{max_k} asked for, but task {fewest!r} of world {world!r} (faults: {label}) "
                f"has only {min_n} scored runs: k > n is refused"
            ) from None
        power = None
        if options.power_drop is not None:
            per_task = {
                t: trials_for_drop(c / n, options.power_drop, alpha=options.alpha)
                for t, (c, n) in scored.items()
            }
            power = Power(options.power_drop, options.alpha, 0.8, per_task)
        groups.append(
            GroupSummary(
                world,
                profile,
                tasks,
                agg["pass_rate"],
                agg["pass_power_k"],
                min_n,
                notes,
                group_rate_interval(list(scored.values()), options.confidence),
                bootstrap_pass_k(
                    [scored[t] for t in sorted(scored)],
                    max(agg["pass_power_k"]),
                    confidence=options.confidence,
                    seed=f"{options.seed}:{world}:{profile}",
                ),
                power,
            )
        )
    return groups


def _robustness(groups: list[GroupSummary], max_k: int | None) -> list[Robustness]:
    baselines = {g.world: g for g in groups if g.faults is None}
    out: list[Robustness] = []
    for group in groups:
        base = baselines.get(group.world)
        if group.faults is None or base is None:
            continue
        base_counts = {t.task: (t.c, t.n) for t in base.tasks if t.n > 0}
        fault_counts = {t.task: (t.c, t.n) for t in group.tasks if t.n > 0}
        common = sorted(base_counts.keys() & fault_counts.keys())
        if not common:
            continue
        top = max_k or min(min(base_counts[t][1], fault_counts[t][1]) for t in common)
        base_agg = aggregate({t: base_counts[t] for t in common}, max_k=top)
        fault_agg = aggregate({t: fault_counts[t] for t in common}, max_k=top)
        out.append(
            Robustness(
                group.world,
                group.faults,
                common,
                {k: (base_agg["pass_power_k"][k], fault_agg["pass_power_k"][k]) for k in range(1, top + 1)},
            )
        )
    return out


# --- reading a result back -------------------------------------------------------------------


class _Fields:
    """Typed reads of a result document, each error naming the file and the field."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def fail(self, where: str, expected: str) -> EvalError:
        return EvalError(f"expected {expected}", path=self.path, where=where)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "an object")
        return value

    def items(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "a list")
        return value

    def text(self, value: Any, where: str, *, null: bool = False) -> Any:
        if not (isinstance(value, str) or (null and value is None)):
            raise self.fail(where, "a string or null" if null else "a string")
        return value

    def integer(self, value: Any, where: str, *, null: bool = False) -> Any:
        if (null and value is None) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise self.fail(where, "an integer or null" if null else "an integer")

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(where, "a number")
        return float(value)

    def fraction(self, value: Any, where: str) -> Fraction | None:
        exact = self.obj(value, where).get("exact")
        if exact is None:
            return None
        try:
            return Fraction(self.text(exact, f"{where}.exact"))
        except (ValueError, ZeroDivisionError):
            raise self.fail(f"{where}.exact", 'a fraction ("3/4")') from None

    def interval(self, value: Any, where: str) -> tuple[float, float] | None:
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 2:
            raise self.fail(where, "[low, high] or null")
        return (self.number(value[0], f"{where}[0]"), self.number(value[1], f"{where}[1]"))

    def strings(self, value: Any, where: str) -> list[str]:
        return [self.text(v, f"{where}[{i}]") for i, v in enumerate(self.items(value, where))]


def _result_from_json(doc: Any, path: str | None) -> EvalResult:
    f = _Fields(path)
    doc = f.obj(doc, "format")
    if doc.get("format") != EVAL_FORMAT:
        raise EvalError(f"expected {EVAL_FORMAT!r}, found {doc.get('format')!r}", path=path, where="format")
    version = f.integer(doc.get("version"), "version")
    if version < 1:
        raise f.fail("version", "a positive integer")
    if version > EVAL_VERSION:
        raise EvalError(
            f"version {version}: this harn-mcp-mock reads eval results up to version {EVAL_VERSION}",
            path=path,
            where="version",
        )
    confidence = doc.get("confidence", DEFAULT_CONFIDENCE)
    if not 0 < f.number(confidence, "confidence") < 1:
        raise f.fail("confidence", "a number between 0 and 1")
    runs = [_run_from_json(f, run, f"runs[{i}]") for i, run in enumerate(f.items(doc.get("runs"), "runs"))]
    outcomes: dict[tuple[str, str | None, str], list[RunRecord]] = defaultdict(list)
    for run in runs:
        outcomes[(run.world, run.faults, run.task)].append(run)
    groups = [
        _group_from_json(f, group, f"groups[{i}]", outcomes)
        for i, group in enumerate(f.items(doc.get("groups"), "groups"))
    ]
    robustness = []
    for i, entry in enumerate(f.items(doc.get("robustness"), "robustness")):
        where = f"robustness[{i}]"
        entry = f.obj(entry, where)
        points: dict[int, tuple[Fraction, Fraction]] = {}
        for j, point in enumerate(f.items(entry.get("pass_power_k"), f"{where}.pass_power_k")):
            at = f"{where}.pass_power_k[{j}]"
            point = f.obj(point, at)
            base = f.fraction(point.get("baseline"), f"{at}.baseline")
            faulted = f.fraction(point.get("faults"), f"{at}.faults")
            if base is None or faulted is None:
                raise f.fail(at, "both figures")
            points[f.integer(point.get("k"), f"{at}.k")] = (base, faulted)
        robustness.append(
            Robustness(
                f.text(entry.get("world"), f"{where}.world"),
                f.text(entry.get("faults"), f"{where}.faults"),
                f.strings(entry.get("tasks"), f"{where}.tasks"),
                points,
            )
        )
    excluded = []
    for i, entry in enumerate(f.items(doc.get("excluded"), "excluded")):
        where = f"excluded[{i}]"
        entry = f.obj(entry, where)
        excluded.append(
            Excluded(
                f.text(entry.get("file"), f"{where}.file"),
                f.text(entry.get("source"), f"{where}.source"),
                f.text(entry.get("world"), f"{where}.world"),
                f.text(entry.get("task"), f"{where}.task"),
                f.text(entry.get("faults"), f"{where}.faults", null=True),
                f.integer(entry.get("seed"), f"{where}.seed", null=True),
                f.text(entry.get("run_id"), f"{where}.run_id", null=True),
                f.text(entry.get("infra_error"), f"{where}.infra_error"),
            )
        )
    merged = []
    for i, pair in enumerate(f.items(doc.get("merged"), "merged")):
        pair = f.obj(pair, f"merged[{i}]")
        merged.append(
            (
                f.text(pair.get("state"), f"merged[{i}].state"),
                f.text(pair.get("report"), f"merged[{i}].report"),
            )
        )
    return EvalResult(
        specs=f.strings(doc.get("specs"), "specs"),
        runs=runs,
        excluded=excluded,
        groups=groups,
        robustness=robustness,
        merged=merged,
        confidence=float(confidence),
        detectable=_detectable_from_json(f, doc.get("detectable_drop")),
    )


def _detectable_from_json(f: _Fields, value: Any) -> Detectable | None:
    """``detectable_drop`` of a run's ``results.json`` (absent before it existed: None)."""
    if value is None:
        return None
    where = "detectable_drop"
    doc = f.obj(value, where)

    def drop(name: str) -> float | None:
        found = doc.get(name)
        return None if found is None else f.number(found, f"{where}.{name}")

    return Detectable(
        k=f.integer(doc.get("k"), f"{where}.k"),
        tasks=f.integer(doc.get("tasks"), f"{where}.tasks"),
        alpha=f.number(doc.get("alpha"), f"{where}.alpha"),
        per_task=drop("per_task"),
        run_level=drop("run_level"),
        power=f.number(doc.get("power"), f"{where}.power"),
        from_rate=f.number(doc.get("from_rate"), f"{where}.from_rate"),
    )


def _run_from_json(f: _Fields, run: Any, where: str) -> RunRecord:
    run = f.obj(run, where)
    changed = []
    for i, entry in enumerate(f.items(run.get("changed"), f"{where}.changed")):
        entry = f.obj(entry, f"{where}.changed[{i}]")
        changed.append(
            (
                f.text(entry.get("path"), f"{where}.changed[{i}].path"),
                f.text(entry.get("kind"), f"{where}.changed[{i}].kind"),
            )
        )
    goal_match = run.get("goal_match")
    if not isinstance(goal_match, bool):
        raise f.fail(f"{where}.goal_match", "true or false")
    usage = run.get("usage")
    if usage is not None:
        usage = f.obj(usage, f"{where}.usage")
        usage = {
            "input_tokens": f.integer(usage.get("input_tokens", 0), f"{where}.usage.input_tokens"),
            "output_tokens": f.integer(usage.get("output_tokens", 0), f"{where}.usage.output_tokens"),
            "cost_usd": f.number(usage.get("cost_usd", 0), f"{where}.usage.cost_usd"),
        }
    score = RunScore(
        f.text(run.get("task"), f"{where}.task"),
        goal_match,
        f.items(run.get("failed_goals"), f"{where}.failed_goals"),
        changed,
        f.strings(run.get("required"), f"{where}.required"),
        f.strings(run.get("allowed"), f"{where}.allowed"),
        f.strings(run.get("collateral"), f"{where}.collateral"),
        f.items(run.get("forbidden_hit"), f"{where}.forbidden_hit"),
        run.get("timed_out") is True,
        f.text(run.get("over_budget"), f"{where}.over_budget", null=True),
        f.text(run.get("usage_invalid"), f"{where}.usage_invalid", null=True),
        f.text(run.get("usage_unknown"), f"{where}.usage_unknown", null=True),
        f.text(run.get("exit_failed"), f"{where}.exit_failed", null=True),
    )
    return RunRecord(
        f.text(run.get("file"), f"{where}.file"),
        f.text(run.get("source"), f"{where}.source"),
        f.text(run.get("world"), f"{where}.world"),
        f.text(run.get("faults"), f"{where}.faults", null=True),
        f.integer(run.get("seed"), f"{where}.seed", null=True),
        f.text(run.get("run_id"), f"{where}.run_id", null=True),
        score,
        usage,
        f.text(run.get("isolation"), f"{where}.isolation", null=True),
    )


def _group_from_json(
    f: _Fields, group: Any, where: str, outcomes: Mapping[tuple[str, str | None, str], list[RunRecord]]
) -> GroupSummary:
    group = f.obj(group, where)
    world = f.text(group.get("world"), f"{where}.world")
    profile = f.text(group.get("faults"), f"{where}.faults", null=True)
    tasks = []
    for i, entry in enumerate(f.items(group.get("tasks"), f"{where}.tasks")):
        at = f"{where}.tasks[{i}]"
        entry = f.obj(entry, at)
        task = f.text(entry.get("task"), f"{at}.task")
        spend = None
        if entry.get("usage") is not None:
            usage = f.obj(entry["usage"], f"{at}.usage")
            spend = Spend(
                f.integer(usage.get("input_tokens", 0), f"{at}.usage.input_tokens"),
                f.integer(usage.get("output_tokens", 0), f"{at}.usage.output_tokens"),
                f.number(usage.get("cost_usd", 0), f"{at}.usage.cost_usd"),
                f.integer(usage.get("runs", 0), f"{at}.usage.runs"),
            )
        tasks.append(
            TaskCounts(
                world,
                profile,
                task,
                f.integer(entry.get("c"), f"{at}.c"),
                f.integer(entry.get("n"), f"{at}.n"),
                f.integer(entry.get("excluded", 0), f"{at}.excluded"),
                tuple(
                    r.score.passed for r in sorted(outcomes.get((world, profile, task), ()), key=_trial_order)
                ),
                spend,
            )
        )
    pass_rate = group.get("pass_rate")
    rate = f.fraction(pass_rate, f"{where}.pass_rate") if pass_rate is not None else None
    rate_interval = (
        f.interval(pass_rate.get("interval"), f"{where}.pass_rate.interval") if pass_rate else None
    )
    points: dict[int, Fraction] = {}
    intervals: dict[int, tuple[float, float]] = {}
    for i, point in enumerate(f.items(group.get("pass_power_k"), f"{where}.pass_power_k")):
        at = f"{where}.pass_power_k[{i}]"
        k = f.integer(f.obj(point, at).get("k"), f"{at}.k")
        value = f.fraction(point, at)
        if value is None:
            raise f.fail(f"{at}.exact", "a fraction")
        points[k] = value
        interval = f.interval(point.get("interval"), f"{at}.interval")
        if interval is not None:
            intervals[k] = interval
    power = None
    if group.get("power") is not None:
        at = f"{where}.power"
        entry = f.obj(group["power"], at)
        per_task = {}
        for i, row in enumerate(f.items(entry.get("tasks"), f"{at}.tasks")):
            row = f.obj(row, f"{at}.tasks[{i}]")
            per_task[f.text(row.get("task"), f"{at}.tasks[{i}].task")] = f.integer(
                row.get("trials"), f"{at}.tasks[{i}].trials", null=True
            )
        power = Power(
            f.number(entry.get("drop"), f"{at}.drop"),
            f.number(entry.get("alpha"), f"{at}.alpha"),
            f.number(entry.get("power"), f"{at}.power"),
            per_task,
        )
    scored = [t.n for t in tasks if t.n > 0]
    min_n = group.get("min_n", min(scored) if scored else 0)
    return GroupSummary(
        world,
        profile,
        tasks,
        rate,
        points,
        f.integer(min_n, f"{where}.min_n"),
        f.strings(group.get("notes"), f"{where}.notes"),
        rate_interval,
        intervals,
        power,
    )
