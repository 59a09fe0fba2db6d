"""Noise-aware statistics for eval results: intervals, flakiness, significance and power.

Pure standard library (``math``, ``random``, ``statistics.NormalDist``); every function is
deterministic (the bootstrap for a given seed). ``docs/eval.md`` explains when to use which:

- :func:`wilson_interval`: the Wilson score interval of a rate ``c / n`` (Wilson 1927), with
  Yates' continuity correction by default, which keeps its coverage at or above the nominal
  level for small ``n`` and rates near 0 or 1, where the textbook ``p +- z sqrt(p q / n)``
  interval collapses to a point;
- :func:`group_rate_interval`: the interval of a group's ``pass_rate`` (the mean of per-task
  rates), Wilson on the pooled trials;
- :func:`bootstrap_pass_k`: a seeded two-stage bootstrap (tasks, then trials) of pass^k for
  every k;
- :func:`flip_rate`: how often consecutive trials of a task disagree;
- :func:`fisher_exact`: Fisher's exact test on two trial counts, computed with exact integers;
- :func:`trials_for_drop`: trials per task that detect a drop in pass rate with given power;
- :func:`stratified_exact`: the exact conditional test of one change across many tasks (the
  exact form of the Cochran-Mantel-Haenszel test), computed with exact integers;
- :func:`stratified_power` and :func:`stratified_detectable_drop`: its power, computed exactly,
  when every task of a run falls from passing every trial.
"""

from __future__ import annotations

import functools
import math
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate, pairwise, repeat, zip_longest
from math import comb
from statistics import NormalDist
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DETECT_POWER",
    "Detectable",
    "StratifiedTest",
    "bootstrap_pass_k",
    "detectable",
    "detectable_drop",
    "fisher_exact",
    "flip_rate",
    "group_rate_interval",
    "stratified_detectable_drop",
    "stratified_exact",
    "stratified_power",
    "trials_for_drop",
    "wilson_interval",
    "z_value",
]

DEFAULT_CONFIDENCE: Final = 0.95
DEFAULT_RESAMPLES: Final = 1000
"""Bootstrap resamples: enough for a 95% percentile interval to be stable to about 0.01."""
NEGLIGIBLE: Final = 1e-12
"""A resampled task's p^k below this is taken as 0 (the mean moves by less than this)."""
_LOG_NEGLIGIBLE: Final = math.log(NEGLIGIBLE)

Alternative = Literal["two-sided", "less", "greater"]


def _check_confidence(confidence: float) -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")


def _check_counts(c: int, n: int) -> None:
    for name, value in (("c", c), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n < 0 or not 0 <= c <= n:
        raise ValueError(f"successes c={c} must be between 0 and the trials n={n}")


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided standard normal quantile: 1.959964 for 0.95, 2.575829 for 0.99."""
    _check_confidence(confidence)
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _wilson(p: float, n: float, z: float, continuity: bool) -> tuple[float, float]:
    z2 = z * z
    if continuity:  # Newcombe (1998), method 4: the score interval with Yates' correction
        q = 1 - p
        low = (2 * n * p + z2 - 1 - z * math.sqrt(max(0.0, z2 - 2 - 1 / n + 4 * p * (n * q + 1)))) / (
            2 * (n + z2)
        )
        high = (2 * n * p + z2 + 1 + z * math.sqrt(max(0.0, z2 + 2 - 1 / n + 4 * p * (n * q - 1)))) / (
            2 * (n + z2)
        )
    else:
        denominator = 1 + z2 / n
        centre = (p + z2 / (2 * n)) / denominator
        half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
        low, high = centre - half, centre + half
    # At p = 0 or 1 one end is exactly 0 or 1.
    low = 0.0 if p == 0 else min(p, max(0.0, low))
    high = 1.0 if p == 1 else max(p, min(1.0, high))
    return low, high


def wilson_interval(
    c: int, n: int, confidence: float = DEFAULT_CONFIDENCE, *, continuity: bool = True
) -> tuple[float, float]:
    """The Wilson score interval for a rate of ``c`` successes in ``n`` trials.

    With ``continuity`` (the default) it is the continuity-corrected score interval (Newcombe
    1998, method 4): its coverage stays at or above the nominal level for every n and rate
    (at 95%: at least 95.1% for n from 2 to 100), where the plain interval dips to 87.5%
    (n = 4, rate 0.5) and 92.4% (n = 10, rate 0.7). ``(0.0, 1.0)`` when ``n == 0``. Examples
    at 95%: 3 of 4 is (0.2194, 0.9868), 0 of 20 is (0.0, 0.2005); without the correction
    (0.3006, 0.9544) and (0.0, 0.1611).
    """
    _check_counts(c, n)
    _check_confidence(confidence)
    if n == 0:
        return 0.0, 1.0
    return _wilson(c / n, n, z_value(confidence), continuity)


def group_rate_interval(
    counts: Sequence[tuple[int, int]], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """The interval of a group's pass_rate, the mean over tasks of ``c / n``.

    The continuity-corrected Wilson interval with the mean rate and an effective number of trials ``T / mean(1 / n_i)`` (the
    pooled trials when every task has the same n). For a fixed set of tasks the variance of the
    mean rate is ``sum p_i (1 - p_i) / n_i / T^2``, at most the pooled binomial variance, so the
    interval is conservative when tasks differ in difficulty.
    """
    _check_confidence(confidence)
    scored = [(c, n) for c, n in counts if n > 0]
    for c, n in scored:
        _check_counts(c, n)
    if not scored:
        return 0.0, 1.0
    tasks = len(scored)
    rate = sum(c / n for c, n in scored) / tasks
    effective = tasks / (sum(1 / n for _c, n in scored) / tasks)
    if all(c == n for c, n in scored):
        rate = 1.0
    elif all(c == 0 for c, _n in scored):
        rate = 0.0
    return _wilson(rate, effective, z_value(confidence), True)


def flip_rate(outcomes: Sequence[bool]) -> float | None:
    """The share of consecutive trial pairs whose outcomes differ (None with fewer than 2).

    0 for a task that always or never passes; 1 for one that alternates. A task is flaky when
    it is above 0, that is when it both passed and failed.
    """
    if len(outcomes) < 2:
        return None
    flips = sum(1 for a, b in pairwise(outcomes) if bool(a) != bool(b))
    return flips / (len(outcomes) - 1)


def fisher_exact(c1: int, n1: int, c2: int, n2: int, alternative: Alternative = "two-sided") -> float:
    """Fisher's exact test p-value for ``c1/n1`` against ``c2/n2`` successes.

    Conditional on the total successes, the successes of the first sample are hypergeometric.
    ``"two-sided"`` sums the probabilities of every table at most as likely as the observed one
    (the convention of R's ``fisher.test`` and SciPy; computed with exact integers, so ties are
    exact, with no tolerance); ``"less"`` is ``P(X <= c1)`` (the first rate is lower),
    ``"greater"`` is ``P(X >= c1)``. Example: 4/4 against 0/4 gives 2/70 = 0.0286 two-sided.
    """
    _check_counts(c1, n1)
    _check_counts(c2, n2)
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be two-sided, less or greater, got {alternative!r}")
    total, successes = n1 + n2, c1 + c2
    if n1 == 0 or n2 == 0 or successes in (0, total):
        return 1.0
    low, high = max(0, successes - n2), min(successes, n1)
    weights = {x: comb(successes, x) * comb(total - successes, n1 - x) for x in range(low, high + 1)}
    denominator = comb(total, n1)
    if alternative == "less":
        numerator = sum(w for x, w in weights.items() if x <= c1)
    elif alternative == "greater":
        numerator = sum(w for x, w in weights.items() if x >= c1)
    else:
        observed = weights[c1]
        numerator = sum(w for w in weights.values() if w <= observed)
    return min(1.0, float(Fraction(numerator, denominator)))


def bootstrap_pass_k(
    counts: Sequence[tuple[int, int]],
    max_k: int,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int | str = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict[int, tuple[float, float]]:
    """Percentile intervals of pass^k (the mean over tasks of ``p_i^k``) for k = 1..max_k.

    Two stages per resample: draw the tasks with replacement (what other tasks of the same kind
    would give), then for each drawn task redraw its trials. The trial stage draws the task's
    success chance from ``Beta(c + 1/2, n - c + 1/2)`` (Jeffreys' smoothing of the trial
    resample: a plain resample of 4 passes out of 4 is 4 out of 4 every time, claiming a
    certainty four trials cannot give). Each k's interval is the percentiles
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` of the resampled means, widened if
    needed to hold the point estimate ``C(c, k) / C(n, k)``. The same ``seed`` gives the same
    intervals.
    """
    _check_confidence(confidence)
    scored = [(c, n) for c, n in counts if n > 0]
    for c, n in scored:
        _check_counts(c, n)
    if max_k < 1 or not scored:
        return {}
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    rng = random.Random(f"harn-bootstrap:{seed}")
    tasks = len(scored)
    rows: list[list[float]] = []
    for _ in range(resamples):
        sums = [0.0] * max_k
        longest = 0
        for _task in range(tasks):
            c, n = scored[rng.randrange(tasks)]
            p = rng.betavariate(c + 0.5, n - c + 0.5)
            # p^1..p^L, stopping where p^k is negligible: L = log(NEGLIGIBLE) / log(p).
            length = max_k if p >= 1 else min(max_k, int(_LOG_NEGLIGIBLE / math.log(p)) if p > 0 else 0)
            if length:
                sums[:length] = map(operator.add, sums[:length], accumulate(repeat(p, length), operator.mul))
                longest = max(longest, length)
        rows.append([total / tasks for total in sums[:longest]])
    point = _mean_pass_k(scored, max_k)
    lower_q, upper_q = (1 - confidence) / 2, (1 + confidence) / 2
    out: dict[int, tuple[float, float]] = {}
    # One column per k (a resample whose values were all negligible there counts as 0).
    # Past the longest row every resample is 0 there: the interval is the point estimate's.
    columns = zip_longest(*rows, fillvalue=0.0)
    for k in range(max_k):
        column = sorted(next(columns, ()))
        if not column:
            out[k + 1] = (0.0, point[k])
            continue
        if len(column) < resamples:
            column = [0.0] * (resamples - len(column)) + column
        low, high = _quantile(column, lower_q), _quantile(column, upper_q)
        out[k + 1] = (min(low, point[k]), max(high, point[k]))
    return out


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between order statistics (type 7, NumPy's default)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _mean_pass_k(scored: Sequence[tuple[int, int]], max_k: int) -> list[float]:
    """Mean over tasks of ``C(c, k) / C(n, k)`` for k = 1..max_k, as floats (0 beyond n)."""
    sums = [0.0] * max_k
    for c, n in scored:
        value = 1.0
        for k in range(min(max_k, n)):
            value *= (c - k) / (n - k)
            if value <= 0:
                break
            sums[k] += value
    return [s / len(scored) for s in sums]


def trials_for_drop(rate: float, drop: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Trials per run that detect a fall of ``drop`` from ``rate`` with the given power.

    Both runs (the baseline and the new one) are assumed to have this many trials, and the test
    is two-sided Fisher at ``alpha``. The figure is Fleiss' approximation with Casagrande, Pike
    and Smith's continuity correction (Fleiss, Levin and Paik, *Statistical Methods for Rates and
    Proportions*, 3rd ed., eq. 4.14 and 4.15), the usual sample size for Fisher's exact test; a
    test checks it against simulated Fisher tests. It errs on the safe side: from a rate of 1 the
    simulated power at the figure is about 0.94 rather than 0.80. None when the rate cannot fall that far
    (``drop > rate``). Example: from 0.9, a drop of 0.3 needs 38 trials; from 1.0, a drop of
    0.5 needs 15.
    """
    for name, value in (("rate", rate), ("drop", drop)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    if drop <= 0:
        raise ValueError(f"drop must be above 0, got {drop!r}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be between 0 and 1, got {alpha!r} and {power!r}")
    p1, p2 = float(rate), float(rate) - float(drop)
    if p2 < -1e-12:
        return None
    p2 = max(p2, 0.0)
    normal = NormalDist()
    z_alpha, z_beta = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    mean = (p1 + p2) / 2
    delta = p1 - p2
    base = (
        z_alpha * math.sqrt(2 * mean * (1 - mean)) + z_beta * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    ) ** 2 / delta**2
    corrected = base / 4 * (1 + math.sqrt(1 + 4 / (base * delta))) ** 2
    return max(2, math.ceil(corrected - 1e-9))


def detectable_drop(rate: float, trials: int, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest fall from ``rate`` that ``trials`` trials per run detect with the given
    power (the inverse of :func:`trials_for_drop`, to 0.001); None when even a fall to 0 needs
    more trials. Example: with 4 trials, from 1.0 only a fall of 0.989 or more; with 28, 0.294."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    if rate <= 0:
        return None
    needed = trials_for_drop(rate, rate, alpha=alpha, power=power)
    if needed is None or needed > trials:
        return None
    low, high = 0.0, float(rate)  # trials_for_drop(rate, high) <= trials < trials_for_drop(rate, low)
    while high - low > 0.0005:
        middle = (low + high) / 2
        found = trials_for_drop(rate, middle, alpha=alpha, power=power)
        if found is not None and found <= trials:
            high = middle
        else:
            low = middle
    return math.ceil(high * 1000) / 1000


@dataclass(frozen=True, slots=True)
class StratifiedTest:
    """:func:`stratified_exact`'s answer."""

    p_value: float
    """Two-sided: twice the smaller tail, at most 1."""
    p_lower: float
    """P(S <= s): the chance of as few passes after, or fewer, with nothing changed."""
    p_upper: float
    """P(S >= s)."""
    passes: int
    """S: the passes after, summed over the informative tasks."""
    expected: float
    """S's mean with nothing changed."""
    informative: int
    """Tasks whose two runs neither all passed nor all failed (the others say nothing)."""
    exact: bool = True
    """False for a run too large to convolve quickly (:data:`EXACT_WORK`): the normal
    approximation of the same statistic, accurate there."""


def stratified_exact(tables: Sequence[tuple[int, int, int, int]]) -> StratifiedTest:
    """The exact conditional test of "no change in any task" over tasks ``(c1, n1, c2, n2)``
    (``c1`` of ``n1`` trials passed before, ``c2`` of ``n2`` after).

    Each task is a 2x2 table (run x outcome); conditional on each table's margins, the passes
    after in a task are hypergeometric when before and after have the same pass chance (which
    may differ from task to task), and the statistic ``S``, the passes after summed over the
    tasks, has the convolution of those distributions (Mantel and Haenszel's statistic; its
    exact distribution, as in Gart 1970 and R's ``mantelhaen.test(exact=TRUE)``). ``p_lower`` is
    ``P(S <= s)``, ``p_upper`` ``P(S >= s)``, computed with exact integers; the two-sided
    p-value is twice the smaller (at most 1). A task whose two runs all passed, all failed, or
    that has no trial in one run, has a single possible table and adds nothing. Example: three
    tasks each 3/3 before and 0/3 after give ``p_lower = (1/20)^3`` and a p-value of 1/4000.
    """
    informative_tables = []
    for c1, n1, c2, n2 in tables:
        _check_counts(c1, n1)
        _check_counts(c2, n2)
        if n1 and n2 and 0 < c1 + c2 < n1 + n2:
            informative_tables.append((c1, n1, c2, n2))
    if not informative_tables:
        return StratifiedTest(1.0, 1.0, 1.0, 0, 0.0, 0)
    passes = sum(t[2] for t in informative_tables)
    expected = sum((Fraction(n2 * (c1 + c2), n1 + n2) for c1, n1, c2, n2 in informative_tables), Fraction(0))
    spans = [min(c1 + c2, n2) - max(0, c1 + c2 - n1) + 1 for c1, n1, c2, n2 in informative_tables]
    if sum(spans) * (sum(spans) - len(spans)) > 2 * EXACT_WORK:
        return _stratified_normal(informative_tables, passes, expected)
    pmf = [1]  # integer weights of S - low, over one common denominator
    denominator, low = 1, 0
    for c1, n1, c2, n2 in informative_tables:
        total, margin = n1 + n2, c1 + c2
        first = max(0, margin - n1)
        weights = [comb(n2, x) * comb(n1, margin - x) for x in range(first, min(margin, n2) + 1)]
        pmf = [
            sum(
                pmf[j] * weights[i - j] for j in range(max(0, i - len(weights) + 1), min(i, len(pmf) - 1) + 1)
            )
            for i in range(len(pmf) + len(weights) - 1)
        ]
        denominator *= comb(total, margin)
        low += first
    at = passes - low
    lower = Fraction(sum(pmf[: at + 1]), denominator)
    upper = Fraction(sum(pmf[at:]), denominator)
    p_value = min(Fraction(1), 2 * min(lower, upper))
    return StratifiedTest(
        float(p_value), float(lower), float(upper), passes, float(expected), len(informative_tables)
    )


def _stratified_normal(
    tables: list[tuple[int, int, int, int]], passes: int, expected: Fraction
) -> StratifiedTest:
    """The same test, large: S's null mean and variance (the sum of the tasks' hypergeometric
    ones) and the normal distribution with a continuity correction of 1/2."""
    variance = sum(
        Fraction(n1 * n2 * (c1 + c2) * (n1 + n2 - c1 - c2), (n1 + n2) ** 2 * (n1 + n2 - 1))
        for c1, n1, c2, n2 in tables
    )
    spread = math.sqrt(variance)
    normal = NormalDist()
    lower = normal.cdf((passes + 0.5 - float(expected)) / spread)
    upper = 1 - normal.cdf((passes - 0.5 - float(expected)) / spread)
    p_value = min(1.0, 2 * min(lower, upper))
    return StratifiedTest(p_value, lower, upper, passes, float(expected), len(tables), exact=False)


def _fall_factor(k: int, a: int) -> Fraction:
    """P(a task's passes after <= a | its margins) for a task that passed k of k before and a of
    k after: the observed table is its margins' least, so the tail is that table's chance."""
    return Fraction(comb(k, a), comb(2 * k, k + a))


_PRUNE: Final = 1e-15
EXACT_WORK: Final = 400_000
"""Above about this many products of the convolution (some 250 informative tasks of 3 trials a
run, 85 of 10; a fifth of a second), :func:`stratified_exact` uses the normal approximation."""


@functools.lru_cache(maxsize=4096)
def stratified_power(tasks: int, k: int, drop: float, *, alpha: float = 0.05) -> float:
    """The chance that :func:`stratified_exact` at ``alpha`` (two-sided) finds a regression when
    ``tasks`` tasks, each of which passed all ``k`` trials before, each pass with chance
    ``1 - drop`` after (``k`` trials, independent).

    Computed exactly: from k of k, each task's observed table is the least its margins allow,
    so ``p_lower`` is the product over tasks of ``C(k, a) / C(2k, k + a)`` (``a`` its passes
    after); a task that passes ``a < k`` times halves it at least, so few distinct products stay
    above ``alpha / 2`` and the distribution of the product is enumerated over them, over the
    tasks by repeated squaring (milliseconds for 100,000 tasks).
    """
    _check_power_args(tasks, k, alpha)
    if not 0 <= drop <= 1:
        raise ValueError(f"drop must be between 0 and 1, got {drop!r}")
    rate = 1.0 - float(drop)
    chances = [comb(k, a) * rate**a * (1 - rate) ** (k - a) for a in range(k + 1)]
    factors = [_fall_factor(k, a) for a in range(k + 1)]
    threshold = Fraction(alpha) / 2  # a quick exact bound; the float comparison decides

    def rejects(value: Fraction) -> bool:
        return value < threshold and float(min(Fraction(1), 2 * value)) < alpha

    one: dict[Fraction, float] = {}
    found_one = 0.0
    for a in range(k + 1):
        if rejects(factors[a]):
            found_one += chances[a]
        elif chances[a] >= _PRUNE:
            one[factors[a]] = one.get(factors[a], 0.0) + chances[a]
    # The distribution over T tasks by squaring: a product once below alpha / 2 stays there.
    result: tuple[dict[Fraction, float], float] = ({Fraction(1): 1.0}, 0.0)
    base = (one, found_one)
    left = tasks
    while left:
        if left & 1:
            result = _combine(result, base, rejects)
        left >>= 1
        if left:
            base = _combine(base, base, rejects)
    found = result[1]
    return min(1.0, found)


def _combine(
    first: tuple[dict[Fraction, float], float],
    second: tuple[dict[Fraction, float], float],
    rejects: Callable[[Fraction], bool],
) -> tuple[dict[Fraction, float], float]:
    """Two independent sets of tasks as one: (products still above alpha / 2 with their chances,
    the chance of being below already). Products below stay below, whatever is multiplied in."""
    states_a, found_a = first
    states_b, found_b = second
    ordered = sorted(states_b.items(), reverse=True)
    mass_b = sum(chance for _, chance in ordered)
    found = found_a * (found_b + mass_b) + sum(states_a.values()) * found_b
    out: dict[Fraction, float] = {}
    for product, chance in states_a.items():
        kept = 0.0
        for other, weight in ordered:  # largest first: once one rejects, all after it do
            value = product * other
            if rejects(value):
                break
            kept += weight
            if chance * weight >= _PRUNE:  # a path this unlikely is dropped (power errs low)
                out[value] = out.get(value, 0.0) + chance * weight
        found += chance * (mass_b - kept)
    return out, found


@functools.lru_cache(maxsize=256)
def stratified_detectable_drop(
    tasks: int, k: int, *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest fall in every task's pass rate, from 1, that :func:`stratified_exact` over
    ``tasks`` tasks with ``k`` trials each in both runs detects with the given ``power`` (to
    0.001, rounded up); None when even a fall to 0 is detected less often. Example: 4 tasks
    with 3 trials detect a fall of 0.536 or more, where no single task can detect any."""
    _check_power_args(tasks, k, alpha)
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1, got {power!r}")
    if stratified_power(tasks, k, 1.0, alpha=alpha) < power:
        return None
    low, high = 0.0, 1.0
    while high - low > 0.0002:
        middle = (low + high) / 2
        if stratified_power(tasks, k, middle, alpha=alpha) >= power:
            high = middle
        else:
            low = middle
    return math.ceil(high * 1000) / 1000


def _check_power_args(tasks: int, k: int, alpha: float) -> None:
    for name, value in (("tasks", tasks), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")


DETECT_POWER = 0.8
"""The power the stated detectable drops are computed at."""


@dataclass(frozen=True, slots=True)
class Detectable:
    """The smallest fall in pass rate, from 1 (every trial of every task passed before), each
    test detects with :data:`DETECT_POWER` at ``alpha``, with ``k`` trials per task in both runs
    and ``tasks`` tasks compared; None where it cannot detect even a fall to 0."""

    k: int
    tasks: int
    alpha: float
    per_task: float | None
    """Fisher's two-sided test of one task (:func:`~harn_mcp_mock.scoring.stats.detectable_drop`)."""
    run_level: float | None
    """The stratified exact test when every task falls by this much."""
    power: float = DETECT_POWER
    from_rate: float = 1.0

    @property
    def blind(self) -> bool:
        """No regression, however large, can be detected (80% of the time) by either test."""
        return self.per_task is None and self.run_level is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "power": self.power,
            "alpha": self.alpha,
            "k": self.k,
            "tasks": self.tasks,
            "from_rate": self.from_rate,
            "per_task": self.per_task,
            "run_level": self.run_level,
        }

    def render(self) -> str:
        """One line: what this run's comparison can detect."""

        def show(value: float | None) -> str:
            return "no fall at all" if value is None else f"a fall of {value:.3f} or more"

        return (
            f"with k={self.k} and {self.tasks} task(s), at alpha {self.alpha:g} the comparison detects "
            f"({self.power:.0%} of the time, from a pass rate of {self.from_rate:.2f}) in one task "
            f"{show(self.per_task)} (Fisher), in every task at once {show(self.run_level)} "
            "(run-level, stratified exact)"
        )


def detectable(tasks: int, k: int, alpha: float = 0.05) -> Detectable:
    """What a comparison of ``tasks`` tasks with ``k`` trials each can detect (:class:`Detectable`)."""
    if tasks < 1 or k < 1:
        return Detectable(k, tasks, alpha, None, None)
    return Detectable(
        k,
        tasks,
        alpha,
        detectable_drop(1.0, k, alpha=alpha, power=DETECT_POWER),
        stratified_detectable_drop(tasks, k, alpha=alpha, power=DETECT_POWER),
    )
