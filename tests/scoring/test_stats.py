"""The statistics of eval results, against published values and independent computations."""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import pytest

from harn_mcp_mock.scoring.passk import aggregate
from harn_mcp_mock.scoring.stats import (
    bootstrap_pass_k,
    detectable_drop,
    fisher_exact,
    flip_rate,
    group_rate_interval,
    trials_for_drop,
    wilson_interval,
    z_value,
)


def test_z_values_are_the_normal_quantiles() -> None:
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_value(0.99) == pytest.approx(2.575829, abs=1e-6)
    assert z_value(0.90) == pytest.approx(1.644854, abs=1e-6)
    with pytest.raises(ValueError, match="confidence"):
        z_value(1.0)


@pytest.mark.parametrize(
    ("c", "n", "plain", "corrected"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I,
        # methods 3 (score) and 4 (score with continuity correction).
        (81, 263, (0.2553, 0.3662), (0.2535, 0.3682)),
        (15, 148, (0.0624, 0.1605), (0.0598, 0.1644)),
        (0, 20, (0.0, 0.1611), (0.0, 0.2005)),
        (1, 29, (0.0061, 0.1718), (0.0018, 0.1963)),
        # by hand: p = 1/2, n = 4, z^2 = 3.8415: centre 1/2, half 0.3500
        (2, 4, (0.1500, 0.8500), (0.0919, 0.9081)),
    ],
)
def test_wilson_matches_published_intervals(
    c: int, n: int, plain: tuple[float, float], corrected: tuple[float, float]
) -> None:
    assert wilson_interval(c, n, continuity=False) == pytest.approx(plain, abs=5e-5)
    assert wilson_interval(c, n) == pytest.approx(corrected, abs=5e-5)


def _exact_coverage(p: float, n: int, continuity: bool) -> float:
    held = 0.0
    for c in range(n + 1):
        low, high = wilson_interval(c, n, continuity=continuity)
        if low <= p <= high:
            held += comb(n, c) * p**c * (1 - p) ** (n - c)
    return held


def test_the_corrected_interval_keeps_its_coverage_where_the_plain_one_dips() -> None:
    rates = [i / 50 for i in range(1, 50)]
    for n in (2, 4, 10, 30):
        assert min(_exact_coverage(p, n, True) for p in rates) >= 0.95
    assert _exact_coverage(0.5, 4, False) == pytest.approx(0.875)
    assert _exact_coverage(0.7, 10, False) < 0.93


def test_wilson_edges_and_levels() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(10, 10, continuity=False)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=5e-5)
    assert wilson_interval(3, 4) == pytest.approx((0.2194, 0.9868), abs=5e-5)
    narrow, wide = wilson_interval(5, 10, 0.8), wilson_interval(5, 10, 0.99)
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]
    with pytest.raises(ValueError, match="between 0 and the trials"):
        wilson_interval(5, 4)


def test_the_group_interval_is_wilson_on_the_pooled_trials() -> None:
    # Same n everywhere: the mean rate and the pooled trials (12 passes of 16).
    assert group_rate_interval([(4, 4), (2, 4), (3, 4), (3, 4)]) == pytest.approx(wilson_interval(12, 16))
    assert group_rate_interval([(4, 4), (8, 8)])[1] == 1.0
    assert group_rate_interval([]) == (0.0, 1.0)
    # Different n: effective trials 2 / (1/2 + 1/8) = 3.2, fewer than the 10 pooled.
    low, high = group_rate_interval([(1, 2), (4, 8)])
    assert high - low > wilson_interval(5, 10)[1] - wilson_interval(5, 10)[0]


def test_flip_rate_counts_disagreeing_neighbours() -> None:
    assert flip_rate([]) is None and flip_rate([True]) is None
    assert flip_rate([True, True, True]) == 0
    assert flip_rate([False, False]) == 0
    assert flip_rate([True, False, True, False]) == 1
    assert flip_rate([True, True, False, False, False]) == 0.25


def _fisher_by_enumeration(c1: int, n1: int, c2: int, n2: int) -> Fraction:
    """Two-sided Fisher by listing every table with the same margins (independent of the code)."""
    s = c1 + c2
    tables = {}
    for x in range(n1 + 1):
        y = s - x
        if 0 <= y <= n2:
            tables[x] = Fraction(comb(n1, x) * comb(n2, y), comb(n1 + n2, s))
    return sum((p for p in tables.values() if p <= tables[c1]), Fraction(0))


def test_fisher_matches_published_values() -> None:
    # R: fisher.test(matrix(c(3, 1, 1, 3), 2)), Fisher's tea tasting.
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(0.4857142857)
    assert fisher_exact(3, 4, 1, 4, "greater") == pytest.approx(0.2428571429)
    # SciPy's documented example: fisher_exact([[1, 9], [11, 3]]).
    assert fisher_exact(1, 10, 11, 14) == pytest.approx(0.0027594561852200836, rel=1e-12)
    assert fisher_exact(1, 10, 11, 14, "less") == pytest.approx(0.0013797280926100418, rel=1e-12)
    # 4 of 4 against 0 of 4: the two extreme tables of C(8, 4) = 70.
    assert fisher_exact(4, 4, 0, 4) == pytest.approx(2 / 70)
    assert fisher_exact(3, 3, 0, 3) == pytest.approx(2 / 20)
    assert fisher_exact(0, 0, 3, 5) == 1.0 and fisher_exact(5, 5, 5, 5) == 1.0


def test_fisher_agrees_with_enumeration_on_every_small_table() -> None:
    for n1 in range(1, 7):
        for n2 in range(1, 7):
            for c1 in range(n1 + 1):
                for c2 in range(n2 + 1):
                    expected = float(min(Fraction(1), _fisher_by_enumeration(c1, n1, c2, n2)))
                    assert fisher_exact(c1, n1, c2, n2) == pytest.approx(expected, rel=1e-12)
                    less, greater = (
                        fisher_exact(c1, n1, c2, n2, "less"),
                        fisher_exact(c1, n1, c2, n2, "greater"),
                    )
                    # the two one-sided tails overlap in the observed table only
                    assert less + greater >= 1 - 1e-12


def test_bootstrap_is_deterministic_for_a_seed_and_holds_the_estimate() -> None:
    counts = [(4, 4), (2, 4), (0, 4)]
    first = bootstrap_pass_k(counts, 4, seed=7)
    assert first == bootstrap_pass_k(counts, 4, seed=7)
    assert first != bootstrap_pass_k(counts, 4, seed=8)
    point = aggregate({str(i): cn for i, cn in enumerate(counts)})["pass_power_k"]
    for k, (low, high) in first.items():
        assert 0 <= low <= float(point[k]) <= high <= 1
        if k > 1:
            assert high <= first[k - 1][1] + 1e-12  # pass^k only falls with k
    # 4 of 4 does not claim certainty: the interval of an always-passing task reaches below 1.
    assert bootstrap_pass_k([(4, 4)], 4)[1][0] < 0.9


def test_bootstrap_intervals_narrow_with_more_trials() -> None:
    few = bootstrap_pass_k([(3, 4), (1, 4)], 1)[1]
    many = bootstrap_pass_k([(75, 100), (25, 100)], 1)[1]
    assert many[1] - many[0] < few[1] - few[0]


def test_trials_for_drop_matches_fleiss_table() -> None:
    # Fleiss, Levin & Paik, table A.4 (alpha 0.05 two-sided, power 0.80): 0.05 vs 0.15 needs 160.
    assert trials_for_drop(0.15, 0.10) == 160
    assert trials_for_drop(0.9, 0.3) == 38
    assert trials_for_drop(0.2, 0.3) is None
    smaller_drop = trials_for_drop(0.9, 0.2)
    assert smaller_drop is not None and smaller_drop > 38
    with pytest.raises(ValueError, match="drop"):
        trials_for_drop(0.5, 0)


def _simulated_power(rate: float, drop: float, trials: int, repetitions: int, seed: int) -> float:
    rng = random.Random(seed)
    detected = 0
    for _ in range(repetitions):
        before = sum(rng.random() < rate for _ in range(trials))
        after = sum(rng.random() < rate - drop for _ in range(trials))
        detected += fisher_exact(before, trials, after, trials) < 0.05
    return detected / repetitions


@pytest.mark.parametrize(("rate", "drop"), [(0.9, 0.3), (1.0, 0.5), (0.6, 0.4)])
def test_the_trials_for_a_drop_reach_80_percent_power_in_simulation(rate: float, drop: float) -> None:
    trials = trials_for_drop(rate, drop)
    assert trials is not None
    # 600 seeded repetitions: the standard error of a power near 0.8 is 0.016. The approximation
    # errs on the safe side (more trials than needed), most where a rate is 0 or 1.
    power = _simulated_power(rate, drop, trials, 600, seed=1)
    assert 0.76 <= power <= 0.95, (trials, power)
    # and half as many trials fall clearly short
    assert _simulated_power(rate, drop, max(2, trials // 2), 600, seed=2) < 0.7


def test_the_detectable_drop_inverts_the_trials_for_a_drop() -> None:
    for rate in (1.0, 0.9, 0.75):
        for trials in (8, 16, 28, 50):
            drop = detectable_drop(rate, trials)
            assert drop is not None and 0 < drop <= rate
            needed = trials_for_drop(rate, drop)
            assert needed is not None and needed <= trials  # that drop is detected...
            smaller = trials_for_drop(rate, drop - 0.002)
            assert smaller is None or smaller > trials  # ...and a visibly smaller one is not
    assert detectable_drop(1.0, 4) == pytest.approx(0.989)  # only a collapse, at 4 trials
    assert detectable_drop(0.5, 8) is None and detectable_drop(0.0, 100) is None
