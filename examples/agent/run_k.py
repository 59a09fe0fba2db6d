"""Run every task of a world k times with each agent style, then score the runs with
`harn mcp mock eval` and print its table (one per style).

    python examples/agent/run_k.py --spec worlds/bank/bank.world.json --k 4 [--faults flaky]
        [--styles good,bad,flaky] [--seed 7] [--out DIR]

Runs use run ids r1..rk and one seed, so the ``flaky`` style's coin (BLAKE3 of seed and run id)
gives some good and some bad runs of the same task: those tasks show 0 < c < n. Episodes run
concurrently (each is its own world process); results are the same in any order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scripted_agent import HARN, STYLES, play

from harn_mcp_mock.shipped import resolve_spec

RUN_TIMEOUT_S = 300


def report_of(state: Path) -> Path:
    return state.with_name(state.name.replace(".state.json", ".report.json"))


def task_ids(spec: str | Path) -> list[str]:
    return [t["id"] for t in json.loads(resolve_spec(spec).read_text(encoding="utf-8"))["tasks"]]


async def run_k(
    spec: str | Path,
    k: int,
    *,
    styles: Sequence[str] = ("good", "bad", "flaky"),
    faults: str | None = None,
    seed: int = 7,
    out_dir: str | Path,
    concurrency: int | None = None,
) -> dict[str, list[Path]]:
    """Play every task ``k`` times per style; the state files by style, in a stable order."""
    tasks = task_ids(spec)
    jobs = [(style, task, f"r{i}") for style in styles for task in tasks for i in range(1, k + 1)]
    found: dict[tuple[str, str, str], Path] = {}
    limiter = anyio.CapacityLimiter(concurrency or min(8, os.cpu_count() or 2))

    async def one(style: str, task: str, run_id: str) -> None:
        async with limiter:
            found[(style, task, run_id)] = await play(
                spec, task, style=style, seed=seed, run_id=run_id, out_dir=out_dir, faults=faults
            )

    with anyio.fail_after(RUN_TIMEOUT_S):
        async with anyio.create_task_group() as group:
            for job in jobs:
                group.start_soon(one, *job)
    return {style: [found[job] for job in jobs if job[0] == style] for style in styles}


def eval_table(spec: str | Path, runs: Sequence[Path], *, fmt: str = "table") -> str:
    """`harn mcp mock eval` over the runs' reports (they also carry forbidden states reached
    mid-run, which a final state cannot show)."""
    args = [*HARN, "eval", "--spec", str(spec)]
    for state in runs:
        args += ["--state", str(report_of(state))]
    if fmt != "table":
        args += ["--format", fmt]
    done = subprocess.run(args, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    if done.returncode not in (0, 1):  # 1: a pass-rate threshold was missed, still a table
        raise RuntimeError(f"harn mcp mock eval failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True, help="world spec (worlds/NAME/NAME.world.json)")
    parser.add_argument("--k", type=int, default=4, help="runs per task and style")
    parser.add_argument("--faults", help="fault profile of the spec")
    parser.add_argument("--styles", default="good,bad,flaky", help=f"comma-separated, of {', '.join(STYLES)}")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", help="folder for states and reports (default: a temporary folder)")
    ns = parser.parse_args(argv)
    styles = [s for s in ns.styles.split(",") if s]
    unknown = sorted(set(styles) - set(STYLES))
    if unknown:
        parser.error(f"unknown style {unknown[0]!r} (styles: {', '.join(STYLES)})")
    with tempfile.TemporaryDirectory(prefix="harn-run-k-") as tmp:
        out = Path(ns.out or tmp)

        async def go() -> dict[str, list[Path]]:
            return await run_k(ns.spec, ns.k, styles=styles, faults=ns.faults, seed=ns.seed, out_dir=out)

        by_style = anyio.run(go)
        for style, runs in by_style.items():
            print(
                f"\n== {Path(ns.spec).name}: style {style}, k={ns.k}, faults {ns.faults or 'none'} ({len(runs)} runs)"
            )
            print(eval_table(ns.spec, runs), end="")
        if ns.out:
            print(f"\nstates and reports: {out}")


if __name__ == "__main__":
    main()
