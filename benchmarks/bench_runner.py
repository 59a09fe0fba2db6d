"""Overhead and scaling of `harn mcp mock run`, with baselines measured in the same run.

A trivial agent (stdlib only: it starts the world from HARN_WORLD_COMMAND, does the handshake
and one tool call over raw JSON-RPC, and closes it) is timed three ways:

- alone: the agent run directly N times in a row, each with a fresh world writing its state,
  report and tape (what a trial costs with no runner at all);
- runner, 1 worker: `run_episodes` over N trials. The runner's overhead per trial (matrix,
  folders, mcp.json, trial.json, scoring, results.json) is (runner - alone) / N. Target: <= 50 ms;
- runner, 2 workers: trials/s against 1 worker. Target: near-linear on 2 cores (>= 1.6x).

It also prints in-process trials/s (an `async def` agent over a memory stream), and the per-trial
costs docs/runner.md uses to estimate a 100,000-trial sweep.

Run: `.venv/bin/python benchmarks/bench_runner.py [--trials N] [--quick]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harn_mcp_mock.runner import Trial, run_episodes
from harn_mcp_mock.runner.matrix import NO_FAULTS, build_matrix
from harn_mcp_mock.shipped import resolve_spec

OVERHEAD_TARGET_MS = 50.0
SCALING_TARGET = 1.6

AGENT = r"""
import json, os, subprocess
world = subprocess.Popen(json.loads(os.environ["HARN_WORLD_COMMAND"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def ask(msg):
    world.stdin.write((json.dumps(msg) + "\n").encode()); world.stdin.flush()
    if "id" in msg:
        return json.loads(world.stdout.readline())
ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
world.stdin.close(); world.wait()
"""


def world_command(trial: Trial, folder: Path) -> list[str]:
    """The seed's stdio world (`harn mcp mock world`) for ``trial``, writing its files."""
    command = [sys.executable, "-m", "harn_mcp_mock", "world", "--spec", str(trial.spec), "--task", trial.task,
               "--seed", str(trial.seed), "--run-id", trial.run_id,
               "--state-out", str(folder / "state.json"), "--report", str(folder / "report.json"),
               "--emit-tape", str(folder / "tape.ndjson")]  # fmt: skip
    return command if trial.profile == NO_FAULTS else [*command, "--faults", trial.profile]


def alone(agent: list[str], trials: list[Trial], folder: Path) -> float:
    """The agent run directly, one trial after another, each starting the seed's stdio world
    (a process of its own) that writes its files: a trial with no runner at all."""
    started = time.perf_counter()
    for trial in trials:
        where = trial.folder(folder)
        where.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HARN_WORLD_COMMAND": json.dumps(world_command(trial, where))}
        subprocess.run(agent, env=env, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def runner(agent: list[str], spec: str, k: int, workers: int, folder: Path, backend: str = "local") -> float:
    started = time.perf_counter()
    outcome = run_episodes(
        [spec], agent, out=folder, k=k, workers=workers, tasks=["pay-rent"], force=True, backend=backend
    )
    elapsed = time.perf_counter() - started
    bad = [r for r in outcome.trials if r["status"] != "scored"]
    if bad:
        raise SystemExit(f"a benchmark trial did not score: {bad[0]}")
    return elapsed


def in_process(spec: str, k: int, folder: Path) -> float:
    async def agent(session: Any, trial: Trial) -> None:
        await session.list_tools()

    started = time.perf_counter()
    run_episodes([spec], agent, out=folder, k=k, tasks=["pay-rent"], force=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="12 trials (a smoke run)")
    parser.add_argument(
        "--ray", action="store_true", help="also the ray backend on a local Ray (needs the [ray] extra)"
    )
    ns = parser.parse_args()
    n = 12 if ns.quick else ns.trials
    spec = "bank"
    with tempfile.TemporaryDirectory(prefix="bench-runner-") as tmp:
        root = Path(tmp)
        script = root / "agent.py"
        script.write_text(AGENT, encoding="utf-8")
        agent = [sys.executable, str(script)]
        path = resolve_spec(spec)
        trials = build_matrix([(path.resolve(), json.loads(path.read_text()))], tasks=["pay-rent"], k=n)
        # warm the page cache and the bytecode (the first start of anything is slower)
        alone(agent, trials[:2], root / "warm")
        base, one, two = [], [], []
        for rnd in range(2):  # alternate, keep the better of two rounds each
            base.append(alone(agent, trials, root / f"alone{rnd}"))
            one.append(runner(agent, spec, n, 1, root / f"one{rnd}"))
            two.append(runner(agent, spec, n, 2, root / f"two{rnd}"))
        memory = in_process(spec, n, root / "mem")
        on_ray = None
        if ns.ray:
            import ray  # started here, once: Ray's own start-up is not a per-trial cost

            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            on_ray = runner(agent, spec, n, 2, root / "ray", backend="ray")
            ray.shutdown()
    base_s, one_s, two_s = min(base), min(one), min(two)
    overhead_ms = (one_s - base_s) / n * 1000
    scaling = one_s / two_s
    print(f"trials: {n} (bank/pay-rent, a trivial stdlib agent: handshake, tools/list, close)")
    print(f"  agent + world alone       {base_s / n * 1000:7.1f} ms/trial")
    print(f"  runner, 1 worker          {one_s / n * 1000:7.1f} ms/trial  ({n / one_s:6.1f} trials/s)")
    print(f"  runner, 2 workers         {two_s / n * 1000:7.1f} ms/trial  ({n / two_s:6.1f} trials/s)")
    print(f"  in-process agent          {memory / n * 1000:7.1f} ms/trial  ({n / memory:6.1f} trials/s)")
    if on_ray is not None:
        print(f"  ray backend, 2 workers    {on_ray / n * 1000:7.1f} ms/trial  ({n / on_ray:6.1f} trials/s)")
    ok_overhead = overhead_ms <= OVERHEAD_TARGET_MS
    ok_scaling = scaling >= SCALING_TARGET
    print(
        f"runner overhead per trial: {overhead_ms:.1f} ms (target <= {OVERHEAD_TARGET_MS:.0f} ms) "
        f"{'OK' if ok_overhead else 'MISSED'}"
    )
    print(
        f"1 -> 2 workers: {scaling:.2f}x trials/s on {os.cpu_count()} cores (target >= {SCALING_TARGET}x) "
        f"{'OK' if ok_scaling else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
