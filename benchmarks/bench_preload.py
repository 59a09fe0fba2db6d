"""Warm starts (`harn mcp mock run --preload`): the CPU a trial costs when its Python agent imports
a heavy module, started fresh (the baseline, measured in the same run) and forked from a server
that imported the module once (docs/runner.md, "Warm starts: --preload").

The agent imports the official `mcp` SDK's client and exits (what an SDK agent pays before its
first call); each batch runs k trials with 1 worker through `run_episodes`, rounds interleaved
(plain, preload, plain, ...). The CPU is this process's and its children's (``getrusage``): the
agents, their supervisors and fork servers, the preloading server's one import included, spread
over the batch's trials. Target: a warm trial costs <= 1/3 of a fresh one's CPU.

Run: `.venv/bin/python benchmarks/bench_preload.py [--k K] [--rounds R] [--quick]`.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harn_mcp_mock.runner import process, run_episodes

TARGET = 3.0
MODULES = ("mcp", "mcp.client.stdio", "pydantic")
AGENT = "import mcp, mcp.client.stdio, pydantic\n"


def _cpu() -> float:
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _close_servers() -> None:
    """Reap every fork server: the CPU of the trials they forked reaches RUSAGE_CHILDREN then."""
    process._SERVER.close()
    for server in process._PRELOADED.values():
        server.close()


def batch(agent: list[str], k: int, folder: Path, preload: tuple[str, ...]) -> tuple[float, float]:
    """CPU seconds and wall seconds per trial of ``k`` trials."""
    _close_servers()
    cpu, started = _cpu(), time.perf_counter()
    outcome = run_episodes(
        ["bank"], agent, out=folder, k=k, workers=1, tasks=["pay-rent"], force=True, preload=preload
    )
    _close_servers()
    wall = time.perf_counter() - started
    bad = [r for r in outcome.trials if r["status"] != "scored"]
    if bad:
        raise SystemExit(f"a benchmark trial did not score: {bad[0]}")
    return (_cpu() - cpu) / k, wall / k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10, help="trials per batch")
    parser.add_argument("--rounds", type=int, default=3, help="batches of each kind, interleaved")
    parser.add_argument("--quick", action="store_true", help="k=4, 1 round (a smoke run)")
    ns = parser.parse_args()
    k, rounds = (4, 1) if ns.quick else (ns.k, ns.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "agent.py"
        script.write_text(AGENT, encoding="utf-8")
        agent = [sys.executable, str(script)]
        results: dict[str, list[tuple[float, float]]] = {"plain": [], "preload": []}
        for _ in range(rounds):
            results["plain"].append(batch(agent, k, folder / "plain", ()))
            results["preload"].append(batch(agent, k, folder / "warm", MODULES))
    cpu = {name: statistics.median(c for c, _ in runs) for name, runs in results.items()}
    wall = {name: statistics.median(w for _, w in runs) for name, runs in results.items()}
    print(f"an agent importing {', '.join(MODULES)}: {k} trials x {rounds} round(s), 1 worker")
    for name in ("plain", "preload"):
        print(f"  {name:8} CPU {cpu[name] * 1000:7.1f} ms/trial   wall {wall[name] * 1000:7.1f} ms/trial")
    ratio = cpu["plain"] / cpu["preload"]
    verdict = "ok" if ratio >= TARGET else f"BELOW the {TARGET:g}x target"
    print(f"  CPU ratio plain/preload: {ratio:.2f}x ({verdict})")
    print(
        f"  wall ratio plain/preload: {wall['plain'] / wall['preload']:.2f}x (shared machine: CPU says more)"
    )


if __name__ == "__main__":
    main()
