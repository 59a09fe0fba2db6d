"""Exact pass^k, as tau-bench and tau2-bench compute it.

For a task with ``n`` trials of which ``c`` succeeded, ``pass^k = C(c, k) / C(n, k)``: the chance
that ``k`` trials drawn without replacement from the ``n`` are all successes, an unbiased estimate
of the chance that ``k`` fresh attempts all succeed. Over several tasks it is the mean of the
per-task values (sierra-research/tau2-bench ``src/tau2/metrics/agent_metrics.py``). Worked
example: n=4, c=2 gives 1/2, 1/6, 0, 0 for k = 1..4.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import comb
from typing import Any

__all__ = ["aggregate", "pass_hat_k"]


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """``C(c, k) / C(n, k)`` exactly (0 when ``c < k``).

    Raises ``ValueError`` for ``k > n`` (there are not ``k`` trials to draw), ``k < 1``, or a
    count outside ``0 <= c <= n``.
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 0 <= c <= n:
        raise ValueError(f"successes c={c} must be between 0 and the trials n={n}")
    if k < 1:
        raise ValueError(f"k={k}: pass^k needs k >= 1")
    if k > n:
        raise ValueError(f"k={k} > n={n}: pass^k needs at least k trials")
    return Fraction(comb(c, k), comb(n, k))


def aggregate(per_task: Mapping[str, tuple[int, int]], *, max_k: int | None = None) -> dict[str, Any]:
    """Mean pass^k over tasks from per-task ``(c, n)`` counts.

    Returns ``{"pass_rate": Fraction, "pass_power_k": {k: Fraction}}`` for ``k = 1 .. max_k``,
    where ``max_k`` defaults to the smallest ``n`` of any task (tau2 caps it the same way).
    ``pass_rate`` is the mean of ``c / n`` (= pass^1). Raises ``ValueError`` with no tasks, a
    task with no trials, or ``max_k`` above the smallest ``n``.
    """
    if not per_task:
        raise ValueError("no tasks to aggregate")
    for task, (c, n) in per_task.items():
        if n < 1:
            raise ValueError(f"task {task!r} has no trials")
        if not 0 <= c <= n:
            raise ValueError(f"task {task!r}: successes c={c} must be between 0 and n={n}")
    min_n = min(n for _c, n in per_task.values())
    top = min_n if max_k is None else max_k
    if top > min_n:
        smallest = min(per_task, key=lambda t: (per_task[t][1], t))
        raise ValueError(f"k={top} > n={min_n} (task {smallest!r} has {min_n} trials)")
    tasks = len(per_task)
    pass_rate = sum((Fraction(c, n) for c, n in per_task.values()), Fraction(0)) / tasks
    # Mean over tasks of C(c,k)/C(n,k), computed for k = 1, 2, ... by updating C(v,k) from
    # C(v,k-1) for every distinct count v, and adding the tasks that share an n as one fraction
    # (same value as summing pass_hat_k per task, much faster when n is in the hundreds).
    by_n: dict[int, list[int]] = {}
    for c, n in per_task.values():
        by_n.setdefault(n, []).append(c)
    combs = {v: 1 for pair in per_task.values() for v in pair}
    power: dict[int, Fraction] = {}
    for k in range(1, top + 1):
        for v in combs:
            combs[v] = combs[v] * (v - k + 1) // k if v >= k else 0
        total = sum((Fraction(sum(combs[c] for c in cs), combs[n]) for n, cs in by_n.items()), Fraction(0))
        power[k] = total / tasks
    return {"pass_rate": pass_rate, "pass_power_k": power}
