"""``--baseline DIR``: this run against an earlier one, per task and per group.

Each task's two trial counts are compared with Fisher's exact test (two-sided, at ``alpha``):
a task is ``regressed`` (its pass rate fell) or ``fixed`` (it rose) only when the change is
significant. Otherwise it is ``within_noise`` when its rate moved, else ``still passing``
(every trial passed both times) or ``still failing``; ``new`` is not in the baseline and ``gone``
only in it. Each group (world x fault profile) gets its pass_rate and pass^k deltas for the k
both runs have.

Two-sided, because the comparison makes claims in both directions (regressed and fixed): each
task's chance of a false ``regressed`` or ``fixed`` is at most ``alpha`` together (Fisher's test
is conservative, so in practice less).

Beside the tasks, the run as a whole: the tasks both runs scored are compared together with the
stratified exact test (:func:`~harn_mcp_mock.scoring.stats.stratified_exact`, the exact
Cochran-Mantel-Haenszel test, each task a stratum), two-sided at the same ``alpha``. It sees a
fall spread over many tasks that no single task's few trials can show: at k=3 no task alone can
ever be significant, while three tasks each falling from 3/3 to 0/3 give p = 1/4000.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.scoring.eval import EvalResult
from harn_mcp_mock.scoring.stats import (
    DETECT_POWER,
    Detectable,
    detectable,
    fisher_exact,
    stratified_exact,
    stratified_power,
)

if TYPE_CHECKING:
    from harn_mcp_mock.runner.matrix import Trial

__all__ = [
    "DEFAULT_ALPHA",
    "DETECT_POWER",
    "RUN_STATUSES",
    "STATUSES",
    "Baseline",
    "Comparison",
    "Detectable",
    "RunChange",
    "TaskChange",
    "classify",
    "compare",
    "compare_run",
    "detectable",
    "load_baseline",
    "matrix_detectable",
    "power_note",
    "render_comparison",
]

STATUSES = ("regressed", "fixed", "within_noise", "still failing", "still passing", "new", "gone")
RUN_STATUSES = ("regressed", "fixed", "within_noise", "blind")
"""The run-level verdict: ``blind`` when no task compared both passed and failed in the two runs
(every table says nothing, whatever happened)."""
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class TaskChange:
    world: str
    faults: str | None
    task: str
    status: str
    before: tuple[int, int] | None
    """(c, n) in the baseline, or None."""
    after: tuple[int, int] | None
    p_value: float | None = None
    """Fisher's two-sided p-value of the two counts (None for new and gone tasks)."""

    @property
    def label(self) -> str:
        return f"{self.world}/{self.task} ({'faults ' + self.faults if self.faults else 'no faults'})"

    def to_dict(self) -> dict[str, Any]:
        def counts(cn: tuple[int, int] | None) -> dict[str, int] | None:
            return None if cn is None else {"c": cn[0], "n": cn[1]}

        return {
            "world": self.world,
            "faults": self.faults,
            "task": self.task,
            "status": self.status,
            "before": counts(self.before),
            "after": counts(self.after),
            "p_value": self.p_value,
            "pass_power_k": [
                {
                    "k": k,
                    "before": _float(_task_pass_k(self.before, k)),
                    "after": _float(_task_pass_k(self.after, k)),
                }
                for k in range(1, 1 + max(n for _, n in (self.before or (0, 0), self.after or (0, 0))))
            ],
        }


@dataclass(frozen=True, slots=True)
class GroupChange:
    world: str
    faults: str | None
    pass_rate: tuple[Fraction | None, Fraction | None]
    pass_power_k: dict[int, tuple[Fraction, Fraction]]
    """k -> (before, after) for the k both runs have."""

    @property
    def label(self) -> str:
        return f"{self.world} ({'faults ' + self.faults if self.faults else 'no faults'})"


@dataclass(frozen=True, slots=True)
class RunChange:
    """The run-level comparison: the stratified exact test over the tasks both runs scored."""

    status: str
    """One of :data:`RUN_STATUSES`."""
    p_value: float
    tasks: int
    """Tasks compared (scored in both runs)."""
    informative: int
    """Of those, the ones that both passed and failed over the two runs."""
    before: tuple[int, int]
    """(passes, trials) summed over the tasks compared."""
    after: tuple[int, int]
    exact: bool = True
    """False when the run was too large for the exact distribution (its normal approximation)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "stratified exact (exact Cochran-Mantel-Haenszel), two-sided",
            "exact": self.exact,
            "status": self.status,
            "p_value": self.p_value,
            "tasks": self.tasks,
            "informative": self.informative,
            "before": {"c": self.before[0], "n": self.before[1]},
            "after": {"c": self.after[0], "n": self.after[1]},
        }


def compare_run(changes: list[TaskChange], alpha: float = DEFAULT_ALPHA) -> RunChange:
    """The run-level verdict over the tasks of ``changes`` scored in both runs."""
    tables = [
        (t.before[0], t.before[1], t.after[0], t.after[1])
        for t in changes
        if t.before is not None and t.after is not None
    ]
    test = stratified_exact(tables)
    if not test.informative:
        status = "blind"
    elif test.p_value < alpha:
        status = "regressed" if test.passes < test.expected else "fixed"
    else:
        status = "within_noise"
    return RunChange(
        status,
        test.p_value,
        len(tables),
        test.informative,
        (sum(t[0] for t in tables), sum(t[1] for t in tables)),
        (sum(t[2] for t in tables), sum(t[3] for t in tables)),
        test.exact,
    )


@dataclass(slots=True)
class Comparison:
    baseline: str
    alpha: float = DEFAULT_ALPHA
    """The significance level of the per-task and the run-level test."""
    tasks: list[TaskChange] = field(default_factory=list)
    groups: list[GroupChange] = field(default_factory=list)
    run: RunChange | None = None
    """The run-level test (set by :func:`compare`)."""

    def count(self, status: str) -> int:
        return sum(1 for t in self.tasks if t.status == status)

    @property
    def regressed(self) -> list[TaskChange]:
        """The tasks whose pass rate fell significantly."""
        return [t for t in self.tasks if t.status == "regressed"]

    @property
    def run_regressed(self) -> bool:
        """The run-level test found a significant fall over the tasks together."""
        return self.run is not None and self.run.status == "regressed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "harn-mcp-mock/run-comparison",
            "version": 2,
            "baseline": self.baseline,
            "test": "fisher-exact, two-sided",
            "alpha": self.alpha,
            "summary": {status: self.count(status) for status in STATUSES},
            "run_level": None if self.run is None else self.run.to_dict(),
            "tasks": [t.to_dict() for t in self.tasks],
            "groups": [
                {
                    "world": g.world,
                    "faults": g.faults,
                    "pass_rate": {"before": _float(g.pass_rate[0]), "after": _float(g.pass_rate[1])},
                    "pass_power_k": [
                        {"k": k, "before": float(b), "after": float(a), "delta": float(a - b)}
                        for k, (b, a) in g.pass_power_k.items()
                    ],
                }
                for g in self.groups
            ],
        }


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


def _task_pass_k(cn: tuple[int, int] | None, k: int) -> Fraction | None:
    """pass^k of one task with c passes in n trials: C(c, k) / C(n, k); None when k > n."""
    if cn is None or k > cn[1] or cn[1] == 0:
        return None
    c, n = cn
    return Fraction(comb(c, k), comb(n, k))


@dataclass(frozen=True, slots=True)
class Baseline:
    """An earlier run's result, and where it was read from."""

    path: str
    result: EvalResult


def load_baseline(path: str | Path) -> Baseline:
    """``DIR/results.json`` of an earlier run (or an eval ``--format json`` file), read typed by
    the run folder's one loader (:func:`harn_mcp_mock.runner.folder.load_results`)."""
    from harn_mcp_mock.runner.folder import load_results

    where = Path(path)
    file = where / "results.json" if where.is_dir() else where
    if not file.exists():
        raise UsageError(f"{file}: no such file (give an earlier run's --out folder)", where="--baseline")
    return Baseline(str(file), load_results(file))


def _result(value: Baseline | EvalResult | Mapping[str, Any]) -> EvalResult:
    if isinstance(value, Baseline):
        return value.result
    if isinstance(value, EvalResult):
        return value
    return EvalResult.from_json(value)


def _tasks(result: EvalResult) -> dict[tuple[str, str | None, str], tuple[int, int]]:
    return {
        (group.world, group.faults, task.task): (task.c, task.n)
        for group in result.groups
        for task in group.tasks
    }


def matrix_detectable(matrix: Sequence[Trial], alpha: float = DEFAULT_ALPHA) -> Detectable:
    """What comparing a run of ``matrix`` with an earlier one can detect: its tasks are the
    (world, task, fault profile) cells, its k the most trials a cell has."""
    per_cell = Counter((t.world, t.task, t.profile) for t in matrix)
    return detectable(len(per_cell), max(per_cell.values(), default=0), alpha)


def power_note(found: Detectable) -> tuple[str, str | None]:
    """The line a run with ``--baseline`` starts with, and the one-line warning (None when some
    regression can be detected) of a run whose comparison is blind."""
    if not found.blind:
        return found.render(), None
    needed = next(
        (
            k
            for k in range(found.k + 1, 101)
            if stratified_power(found.tasks, k, 1.0, alpha=found.alpha) >= DETECT_POWER
        ),
        None,
    )
    advice = f": --k {needed} at least" if needed is not None else ""
    return found.render(), (
        f"with k={found.k} and {found.tasks} task(s) no regression can be detected at alpha "
        f"{found.alpha:g}, in one task or in the run as a whole{advice}"
    )


def classify(
    before: tuple[int, int], after: tuple[int, int], alpha: float = DEFAULT_ALPHA
) -> tuple[str, float]:
    """The status of a task with ``(c, n)`` before and after, and Fisher's two-sided p-value."""
    p_value = fisher_exact(before[0], before[1], after[0], after[1])
    rate_before, rate_after = Fraction(before[0], before[1]), Fraction(after[0], after[1])
    if p_value < alpha and rate_after != rate_before:
        return ("regressed" if rate_after < rate_before else "fixed"), p_value
    if rate_after != rate_before:
        return "within_noise", p_value
    return ("still passing" if after[0] == after[1] else "still failing"), p_value


def compare(
    baseline: Baseline | EvalResult | Mapping[str, Any],
    now: EvalResult | Mapping[str, Any],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
    """Compare two eval results (:func:`load_baseline`'s, an :class:`EvalResult`, or a
    ``results.json`` document), each task's counts with Fisher's exact test at ``alpha``."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise UsageError(f"alpha must be between 0 and 1, got {alpha!r}", where="--alpha")
    label = baseline.path if isinstance(baseline, Baseline) else "baseline"
    old_result, new_result = _result(baseline), _result(now)
    comparison = Comparison(label, float(alpha))
    before, after = _tasks(old_result), _tasks(new_result)
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1] or "", k[2])):
        was, is_ = before.get(key), after.get(key)
        p_value = None
        if is_ is None or is_[1] == 0:
            if was is None or was[1] == 0:
                continue  # scored in neither run: nothing to compare
            status = "gone"
        elif was is None or was[1] == 0:
            status = "new"
        else:
            status, p_value = classify(was, is_, alpha)
        comparison.tasks.append(TaskChange(key[0], key[1], key[2], status, was, is_, p_value))
    comparison.run = compare_run(comparison.tasks, float(alpha))
    groups_before = {(g.world, g.faults): g for g in old_result.groups}
    for group in new_result.groups:
        old = groups_before.get((group.world, group.faults))
        if old is None:
            continue
        deltas = {k: (old.pass_power_k[k], a) for k, a in group.pass_power_k.items() if k in old.pass_power_k}
        comparison.groups.append(
            GroupChange(group.world, group.faults, (old.pass_rate, group.pass_rate), deltas)
        )
    return comparison


def render_comparison(comparison: Comparison) -> str:
    """The text block ``harn mcp mock run --baseline`` prints."""
    counts = ", ".join(f"{comparison.count(s)} {s}" for s in STATUSES if comparison.count(s))
    lines = [
        f"against the baseline {comparison.baseline}: {counts or 'no tasks'} "
        f"(Fisher's exact test, alpha {comparison.alpha:g})"
    ]
    if comparison.run is not None:
        run = comparison.run
        lines.append(
            f"  run-level: {run.status} over {run.tasks} task(s) compared ({run.informative} informative): "
            f"{run.before[0]}/{run.before[1]} -> {run.after[0]}/{run.after[1]} passed "
            f"(p = {run.p_value:.3g}, stratified exact test{'' if run.exact else ', normal approximation'})"
        )
    for change in comparison.tasks:
        if change.status == "still passing":
            continue
        was = f"{change.before[0]}/{change.before[1]}" if change.before else "-"
        now = f"{change.after[0]}/{change.after[1]}" if change.after else "-"
        p_value = "" if change.p_value is None else f" (p = {change.p_value:.3g})"
        lines.append(f"  {change.status:<14} {change.label}: {was} -> {now} passed{p_value}")
    for group in comparison.groups:
        parts = [
            f"pass^{k} {float(b):.3f} -> {float(a):.3f} ({float(a - b):+.3f})"
            for k, (b, a) in group.pass_power_k.items()
        ]
        if parts:
            lines.append(f"  {group.label}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"
