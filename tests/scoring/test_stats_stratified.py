"""The run-level test of ``--baseline`` (scoring/stats.py): the stratified exact test over tasks,
its exact p-values, its false-alarm rate under no change and its power against the drop it says
it can detect, each over many seeded simulated runs (counts drawn with ``random.Random``, no agent)."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product
from math import comb

import pytest

from harn_mcp_mock.scoring.stats import (
    _stratified_normal,
    detectable,
    detectable_drop,
    fisher_exact,
    stratified_detectable_drop,
    stratified_exact,
    stratified_power,
)

ALPHA = 0.05


def _binomial(rng: random.Random, n: int, rate: float) -> int:
    return sum(1 for _ in range(n) if rng.random() < rate)


def _brute_force(tables: list[tuple[int, int, int, int]]) -> tuple[Fraction, Fraction]:
    """P(S <= s) and P(S >= s) by listing every set of tables with the same margins."""
    supports = []
    for c1, n1, c2, n2 in tables:
        margin = c1 + c2
        supports.append(
            [
                (x, Fraction(comb(n2, x) * comb(n1, margin - x), comb(n1 + n2, margin)))
                for x in range(max(0, margin - n1), min(margin, n2) + 1)
            ]
        )
    observed = sum(t[2] for t in tables)
    lower = upper = Fraction(0)
    for combo in product(*supports):
        total = sum(x for x, _ in combo)
        chance = Fraction(1)
        for _, p in combo:
            chance *= p
        lower += chance if total <= observed else 0
        upper += chance if total >= observed else 0
    return lower, upper


def test_three_tasks_falling_from_3_of_3_to_0_of_3_are_significant_together_not_alone() -> None:
    broken = [(3, 3, 0, 3)] * 3 + [(3, 3, 3, 3)]  # the fourth still passes: it says nothing
    assert fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)  # each alone: never below 0.05 at k=3
    test = stratified_exact(broken)
    assert test.p_lower == pytest.approx(1 / 8000) and test.p_value == pytest.approx(1 / 4000)
    assert test.informative == 3 and test.passes == 0 and test.expected == pytest.approx(4.5)
    # One task alone: the same p-value as Fisher's two-sided test.
    assert stratified_exact([(3, 3, 0, 3)]).p_value == pytest.approx(0.1)
    # Nothing informative (every task all-pass or all-fail in both runs, or absent in one).
    assert stratified_exact([(3, 3, 3, 3), (0, 2, 0, 4), (2, 2, 0, 0)]).informative == 0
    assert stratified_exact([]).p_value == 1.0


def test_its_tails_are_the_exact_conditional_distribution_of_the_passes_after() -> None:
    rng = random.Random("stratified-brute-force")
    for _ in range(60):
        tables = []
        for _task in range(rng.randint(1, 4)):
            n1, n2 = rng.randint(1, 4), rng.randint(1, 4)
            tables.append((rng.randint(0, n1), n1, rng.randint(0, n2), n2))
        test = stratified_exact(tables)
        informative = [t for t in tables if 0 < t[0] + t[2] < t[1] + t[3]]
        lower, upper = _brute_force(informative) if informative else (Fraction(1), Fraction(1))
        assert test.p_lower == float(lower) and test.p_upper == float(upper), tables
        assert test.p_value == float(min(Fraction(1), 2 * min(lower, upper)))


@pytest.mark.parametrize(("tasks", "k"), [(4, 3), (8, 2), (6, 4), (12, 5)])
def test_with_no_change_it_false_alarms_at_most_alpha_of_the_time(tasks: int, k: int) -> None:
    # 400 null runs: each task has its own pass chance, the same in both runs.
    rng = random.Random(f"stratified-null:{tasks}:{k}")
    alarms = 0
    runs = 400
    for _ in range(runs):
        tables = []
        for _task in range(tasks):
            rate = rng.choice([rng.random(), 1.0, 0.0, 0.9])  # easy, hard and flaky tasks
            tables.append((_binomial(rng, k, rate), k, _binomial(rng, k, rate), k))
        alarms += stratified_exact(tables).p_value < ALPHA
    assert alarms / runs <= ALPHA


@pytest.mark.parametrize(("tasks", "k"), [(4, 3), (10, 3), (6, 5), (3, 8)])
def test_its_power_at_the_drop_it_states_is_the_stated_80_percent(tasks: int, k: int) -> None:
    drop = stratified_detectable_drop(tasks, k, alpha=ALPHA)
    assert drop is not None and detectable(tasks, k, ALPHA).run_level == drop
    assert stratified_power(tasks, k, drop, alpha=ALPHA) == pytest.approx(0.8, abs=0.005)
    rng = random.Random(f"stratified-power:{tasks}:{k}")
    runs = 2000
    found = 0
    for _ in range(runs):
        tables = [(k, k, _binomial(rng, k, 1 - drop), k) for _task in range(tasks)]
        test = stratified_exact(tables)
        found += test.p_value < ALPHA and test.passes < test.expected
    assert abs(found / runs - 0.8) <= 0.05


def test_the_stated_drops_of_a_k_3_run_of_four_tasks() -> None:
    stated = detectable(4, 3, ALPHA)
    assert stated.per_task is None and detectable_drop(1.0, 3) is None  # no task alone, ever
    assert stated.run_level == pytest.approx(0.536) and not stated.blind
    assert detectable(1, 3, ALPHA).blind  # one task, 3 trials: nothing can be detected
    assert stratified_detectable_drop(1, 3) is None
    assert stated.to_dict() == {
        "power": 0.8, "alpha": 0.05, "k": 3, "tasks": 4, "from_rate": 1.0, "per_task": None, "run_level": 0.536,
    }  # fmt: skip


def test_a_run_too_large_to_convolve_quickly_gets_the_normal_approximation_which_agrees_near_alpha() -> None:
    rng = random.Random("stratified-large")
    alarms = 0
    for _ in range(200):  # 1,000 tasks of 3 trials: past EXACT_WORK
        tables = []
        for _task in range(1000):
            rate = rng.random()
            tables.append((_binomial(rng, 3, rate), 3, _binomial(rng, 3, rate), 3))
        test = stratified_exact(tables)
        assert not test.exact
        alarms += test.p_value < ALPHA
    # An approximation, so not "at most alpha" by construction: not detectably above it (its rate
    # over 1,500 such runs is 0.043; two standard errors of 200 runs allowed).
    assert alarms / 200 <= ALPHA + 2 * (ALPHA * (1 - ALPHA) / 200) ** 0.5
    # Where both are computed, the approximation is within 0.005 of the exact p-value near alpha.
    compared = 0
    for _ in range(300):
        tables = []
        for _task in range(80):  # tasks of every difficulty, each a little worse after
            rate = rng.uniform(0.3, 1.0)
            tables.append((_binomial(rng, 3, rate), 3, _binomial(rng, 3, rate - 0.05), 3))
        exact = stratified_exact(tables)
        informative = [t for t in tables if 0 < t[0] + t[2] < t[1] + t[3]]
        approximate = _stratified_normal(informative, exact.passes, Fraction(exact.expected))
        if exact.exact and 0.01 <= exact.p_value <= 0.2:
            compared += 1
            assert approximate.p_value == pytest.approx(exact.p_value, abs=0.005)
    assert compared >= 50
