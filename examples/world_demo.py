"""The worlds demo: the scripted agent plays the tickets and bank worlds k=4 times per task,
and `harn mcp mock eval` turns the runs into pass_rate and pass^k tables.

- tickets: a careful agent (``good``), a careless one (``bad``: collateral changes, skipped
  steps) and one that is careless in half its runs (``flaky``: a BLAKE3 coin on seed and run
  id), which is where pass^k drops below pass^1;
- bank, the retry-safety headline: each agent plays with no faults and under the ``flaky``
  profile, where the first transfer commits and then times out (a ghost success). The ``good``
  agent re-reads the ledger before retrying and stays at 1.0; the ``naive`` one retries blindly,
  pays twice, and eval's robustness table shows the drop.

Everything runs on the world's virtual clock: no sleeps, a few seconds in all. Passing runs are
left out of the run lists below.
"""

from __future__ import annotations

import functools
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from run_k import eval_table, run_k  # noqa: E402

K = 4
PLAYS = [
    # (world, agent styles, fault profiles played and scored together)
    ("tickets", ("good", "bad", "flaky"), (None,)),
    ("bank", ("good", "naive"), (None, "flaky")),
]


def main() -> None:
    started = time.perf_counter()
    episodes = 0
    with tempfile.TemporaryDirectory(prefix="harn-world-demo-") as tmp:
        for world, styles, profiles in PLAYS:
            spec = ROOT / "worlds" / world / f"{world}.world.json"
            runs: dict[str, list[Path]] = {style: [] for style in styles}
            for faults in profiles:
                out = Path(tmp) / f"{world}-{faults or 'none'}"
                play = functools.partial(run_k, spec, K, styles=styles, faults=faults, out_dir=out)
                for style, paths in anyio.run(play).items():
                    runs[style] += paths
            for style, paths in runs.items():
                episodes += len(paths)
                shown = " and ".join(p or "no faults" for p in profiles)
                print(f"\n== {world}: agent {style!r}, k={K}, {shown}")
                print(
                    f"$ harn mcp mock eval --spec {spec.relative_to(ROOT)} --state ... ({len(paths)} reports)"
                )
                table = eval_table(spec, paths)
                failing = [line for line in table.splitlines(keepends=True) if not line.startswith("  PASS")]
                print("".join(failing).replace(f"{tmp}/", ""), end="")
    print(
        f"\n{episodes} episodes (each a world process and an mcp client) in {time.perf_counter() - started:.1f}s"
    )


if __name__ == "__main__":
    main()
