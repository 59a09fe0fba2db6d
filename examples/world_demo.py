"""The worlds demo: the episode runner plays the scripted agent against the tickets and bank
worlds k=4 times per task and scores the runs (pass_rate, pass^k), as a user would.

1. ``harn mcp mock run`` (the command line, the agent a separate process per trial, as any agent
   would be) on the bank world's retry-safety headline: under the ``flaky`` profile the first
   transfer commits and then times out (a ghost success). The ``good`` agent re-reads the
   ledger before retrying and keeps pass^4 at 1.0; the ``naive`` one retries blindly and pays
   twice. The naive run is compared with the good one (``--baseline``): the regressed tasks.
2. ``run_eval`` (the Python API, the agent an ``async def`` in this process, no subprocess) on
   the tickets world: a careful agent (``good``), a careless one (``bad``) and one careless in
   half its runs (``flaky``: a BLAKE3 coin on seed and run id), where pass^k drops below pass^1.

Everything runs on the worlds' virtual clock: no sleeps. Run it with ``make demo``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

from harn_mcp_mock import run_eval  # noqa: E402
from harn_mcp_mock.scoring.render import render  # noqa: E402

K = 4
AGENT = [sys.executable, str(ROOT / "examples" / "agent" / "scripted_agent.py"), "--harn-trial"]
BANK_TASKS = ["pay-rent", "refund-double-charge"]


def harn_run(args: list[str], cwd: Path) -> None:
    """``harn mcp mock run ARGS`` as typed, its output shown without the per-trial lines."""
    shown = " ".join(a if "/" not in a else Path(a).name for a in args)
    print(f"\n$ harn mcp mock run {shown}")
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    keep = [line for line in done.stdout.splitlines() if not line.startswith(("[", "  PASS"))]
    print("\n".join(keep).replace(f"{cwd}/", ""))
    if done.stderr.strip():
        print(done.stderr.strip())


def main() -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="harn-world-demo-") as tmp:
        here = Path(tmp)
        common = [
            "--spec",
            "bank",
            *(a for t in BANK_TASKS for a in ("--task", t)),
            "--k",
            str(K),
            "--faults",
            "flaky",
        ]
        harn_run([*common, "--out", "good", "--", *AGENT, "good"], here)
        harn_run([*common, "--out", "naive", "--baseline", "good", "--", *AGENT, "naive"], here)
        trials = 2 * len(BANK_TASKS) * 2 * K
        for style in ("good", "bad", "flaky"):
            print(f'\n>>> run_eval(in_process("{style}"), "tickets", k={K})')
            result = run_eval(in_process(style), "tickets", k=K)
            trials += len(result.runs)
            print(render(result, "text").split("\nruns\n")[0])  # the tables; not each run
    print(f"\n{trials} trials (each a fresh seeded world) in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
