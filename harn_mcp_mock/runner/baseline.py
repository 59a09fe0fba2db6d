"""``--baseline DIR``: this run against an earlier one, per task and per group.

A task *passes* in a run when every scored trial of it passed (c = n > 0, so pass^k = 1 for
every k it has). Against the baseline each task is ``regressed`` (passed, now fails), ``fixed``
(failed, now passes), ``still failing``, ``still passing`` or ``new`` (not in the baseline); a
task only the baseline has is ``gone``. Each group (world x fault profile) gets its pass_rate and
pass^k deltas for the k both runs have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError

__all__ = ["STATUSES", "Comparison", "TaskChange", "compare", "load_baseline", "render_comparison"]

STATUSES = ("regressed", "fixed", "still failing", "still passing", "new", "gone")


@dataclass(frozen=True, slots=True)
class TaskChange:
    world: str
    faults: str | None
    task: str
    status: str
    before: tuple[int, int] | None
    """(c, n) in the baseline, or None."""
    after: tuple[int, int] | None

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


@dataclass(slots=True)
class Comparison:
    baseline: str
    tasks: list[TaskChange] = field(default_factory=list)
    groups: list[GroupChange] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for t in self.tasks if t.status == status)

    @property
    def regressed(self) -> list[TaskChange]:
        return [t for t in self.tasks if t.status == "regressed"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "harn-mcp-mock/run-comparison",
            "version": 1,
            "baseline": self.baseline,
            "summary": {status: self.count(status) for status in STATUSES},
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


def load_baseline(path: str | Path) -> dict[str, Any]:
    """``DIR/results.json`` of an earlier run (or an eval ``--format json`` file), read by the run
    folder's one loader (:func:`harn_mcp_mock.runner.folder.load_results`)."""
    from harn_mcp_mock.runner.folder import load_results

    where = Path(path)
    file = where / "results.json" if where.is_dir() else where
    if not file.exists():
        raise UsageError(f"{file}: no such file (give an earlier run's --out folder)", where="--baseline")
    doc = load_results(file)
    doc["_path"] = str(file)
    return doc


def _tasks(doc: dict[str, Any]) -> dict[tuple[str, str | None, str], tuple[int, int]]:
    found = {}
    for group in doc.get("groups", []):
        for task in group.get("tasks", []):
            found[(group["world"], group.get("faults"), task["task"])] = (int(task["c"]), int(task["n"]))
    return found


def _exact(value: dict[str, Any] | None) -> Fraction | None:
    if not value or value.get("exact") is None:
        return None
    return Fraction(value["exact"])


def compare(baseline: dict[str, Any], now: dict[str, Any]) -> Comparison:
    """Compare two eval results (``results.json`` documents)."""
    comparison = Comparison(str(baseline.get("_path", "baseline")))
    before, after = _tasks(baseline), _tasks(now)
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1] or "", k[2])):
        was, is_ = before.get(key), after.get(key)
        if is_ is None or is_[1] == 0:
            if was is None:
                continue
            status = "gone"
        elif was is None or was[1] == 0:
            status = "new"
        else:
            passed_before, passes_now = was[0] == was[1], is_[0] == is_[1]
            status = {
                (True, False): "regressed",
                (False, True): "fixed",
                (False, False): "still failing",
                (True, True): "still passing",
            }[(passed_before, passes_now)]
        comparison.tasks.append(TaskChange(key[0], key[1], key[2], status, was, is_))
    groups_before = {(g["world"], g.get("faults")): g for g in baseline.get("groups", [])}
    for group in now.get("groups", []):
        old = groups_before.get((group["world"], group.get("faults")))
        if old is None:
            continue
        ks_before = {p["k"]: _exact(p) for p in old.get("pass_power_k", [])}
        deltas = {}
        for point in group.get("pass_power_k", []):
            b, a = ks_before.get(point["k"]), _exact(point)
            if b is not None and a is not None:
                deltas[point["k"]] = (b, a)
        comparison.groups.append(
            GroupChange(
                group["world"],
                group.get("faults"),
                (_exact(old.get("pass_rate")), _exact(group.get("pass_rate"))),
                deltas,
            )
        )
    return comparison


def render_comparison(comparison: Comparison) -> str:
    """The text block ``harn mcp mock run --baseline`` prints."""
    counts = ", ".join(f"{comparison.count(s)} {s}" for s in STATUSES if comparison.count(s))
    lines = [f"against the baseline {comparison.baseline}: {counts or 'no tasks'}"]
    for change in comparison.tasks:
        if change.status == "still passing":
            continue
        was = f"{change.before[0]}/{change.before[1]}" if change.before else "-"
        now = f"{change.after[0]}/{change.after[1]}" if change.after else "-"
        lines.append(f"  {change.status:<14} {change.label}: {was} -> {now} passed")
    for group in comparison.groups:
        parts = [
            f"pass^{k} {float(b):.3f} -> {float(a):.3f} ({float(a - b):+.3f})"
            for k, (b, a) in group.pass_power_k.items()
        ]
        if parts:
            lines.append(f"  {group.label}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"
