"""Coverage of eval's intervals: how often they hold the true rate of a simulated agent.

A simulated agent passes each trial of a task with a known chance (a Bernoulli agent). For each
setting the benchmark draws 1,000 seeded repetitions of a run (every task ``n`` times), computes
the interval eval would print, and counts how often it holds the truth:

- ``pass_rate``: the Wilson interval of the group (``group_rate_interval``, continuity
  corrected), against the mean of the tasks' chances; for one task the exact coverage (summed
  over the binomial distribution) is printed too, with that of the plain Wilson interval;
- ``pass^k``: the bootstrap interval (``bootstrap_pass_k``), against the mean of ``p_i^k``
  (with fewer repetitions, since each one runs a bootstrap of 1,000 resamples).

The headline setting is one task with chance 0.7 and 10 trials at 95%: its coverage must be at
least 93% (exit 1 otherwise). The other rows show where the intervals stand elsewhere.

Run: ``.venv/bin/python benchmarks/bench_stats.py [--repetitions N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from math import comb

from harn_mcp_mock.scoring.stats import bootstrap_pass_k, group_rate_interval, wilson_interval

REQUIRED = 0.93
RATE_SETTINGS = [
    # (chances of the tasks, trials per task)
    ((0.7,), 10),  # the headline
    ((0.5,), 4),
    ((0.9,), 4),
    ((0.95,), 20),
    ((0.5,), 30),
    ((0.2, 0.6, 0.9), 8),
    ((0.99, 0.8, 0.5, 0.3), 16),
]
PASS_K_SETTINGS = [
    ((0.7,), 10, 2),
    ((0.9, 0.6, 0.8), 8, 4),
    ((0.95, 0.5, 0.75, 0.85), 16, 8),
]


def simulate(chances: tuple[float, ...], trials: int, rng: random.Random) -> list[tuple[int, int]]:
    return [(sum(rng.random() < p for _ in range(trials)), trials) for p in chances]


def exact_coverage(p: float, n: int, continuity: bool) -> float:
    held = 0.0
    for c in range(n + 1):
        low, high = wilson_interval(c, n, continuity=continuity)
        held += comb(n, c) * p**c * (1 - p) ** (n - c) if low <= p <= high else 0.0
    return held


def rate_coverage(chances: tuple[float, ...], trials: int, repetitions: int, seed: int) -> float:
    rng = random.Random(seed)
    truth = sum(chances) / len(chances)
    held = 0
    for _ in range(repetitions):
        low, high = group_rate_interval(simulate(chances, trials, rng))
        held += low <= truth <= high
    return held / repetitions


def pass_k_coverage(chances: tuple[float, ...], trials: int, k: int, repetitions: int, seed: int) -> float:
    rng = random.Random(seed)
    truth = sum(p**k for p in chances) / len(chances)
    held = 0
    for i in range(repetitions):
        low, high = bootstrap_pass_k(simulate(chances, trials, rng), k, seed=i)[k]
        held += low <= truth <= high
    return held / repetitions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--pass-k-repetitions", type=int, default=200)
    args = parser.parse_args()
    print(f"95% intervals, {args.repetitions} seeded repetitions per row (pass^k: {args.pass_k_repetitions})")
    print(f"{'metric':<10} {'task chances':<28} {'n':>3} {'coverage':>9} {'exact':>7} {'plain':>7}")
    headline = 0.0
    started = time.perf_counter()
    for index, (chances, trials) in enumerate(RATE_SETTINGS):
        coverage = rate_coverage(chances, trials, args.repetitions, seed=index)
        headline = coverage if index == 0 else headline
        label = ", ".join(f"{p:g}" for p in chances)
        exact = ""
        if len(chances) == 1:
            exact = f" {exact_coverage(chances[0], trials, True):>7.3f} {exact_coverage(chances[0], trials, False):>7.3f}"
        print(f"{'pass_rate':<10} {label:<28} {trials:>3} {coverage:>9.3f}{exact}")
    for index, (chances, trials, k) in enumerate(PASS_K_SETTINGS):
        coverage = pass_k_coverage(chances, trials, k, args.pass_k_repetitions, seed=100 + index)
        label = ", ".join(f"{p:g}" for p in chances)
        print(f"{f'pass^{k}':<10} {label:<28} {trials:>3} {coverage:>9.3f}")
    print(f"({time.perf_counter() - started:.1f} s)")
    verdict = "ok" if headline >= REQUIRED else "MISSED"
    print(
        f"headline (one task, chance 0.7, 10 trials): coverage {headline:.3f}, required >= {REQUIRED}: {verdict}"
    )
    return 0 if headline >= REQUIRED else 1


if __name__ == "__main__":
    sys.exit(main())
