"""Start-up cost of the commands the tests and users spawn most: the CLI's fast path (a plain
flag table, no typer) against the typer path for the same command line, measured in the same run.

For each command, after one warm-up run of each, N processes on each path, alternated (so both see the same load): the CPU
each process used (user + system, from ``wait4``) and its wall time, from spawn to exit. The
typer path is the same entry point with the fast path switched off (``main._fast`` replaced),
which is what every command paid before it moved to the fast path. Each command line ends in a
way that does real work but no waiting: ``record`` runs a server that exits at once (exit 5,
nothing recorded), ``show`` and ``lint`` read the shipped cassette, ``verify`` compares it with
itself, ``world check`` checks a shipped world, ``run --plan`` plans trials of it (no agent
runs), ``eval`` scores a state of it.

Run: `.venv/bin/python benchmarks/bench_cli.py [--runs N] [--only COMMAND ...]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = str(ROOT / "cassettes" / "time.cassette.json")
FAST = [sys.executable, "-m", "harn_mcp_mock"]
TYPER = [
    sys.executable,
    "-c",
    "from harn_mcp_mock.cli import main\nmain._fast = lambda args: None\nmain.mock_main()",
]


def command_lines(tmp: Path) -> dict[str, list[str]]:
    state = tmp / "state.json"
    state.write_text('{"notes": {}}')
    return {
        "record": ["record", "-q", "--cassette", str(tmp / "r.cassette.json"), "--", "true"],
        "show": ["show", "--cassette", CASSETTE],
        "verify": ["verify", "--cassette", CASSETTE, "--candidate", CASSETTE],
        "lint": ["lint", CASSETTE],
        "world check": ["world", "check", "--spec", "notes"],
        "run --plan": ["run", "--spec", "notes", "--k", "5", "--plan"],
        "eval": ["eval", "--spec", "notes", "--task", "save-new-todo", "--state", str(state)],
    }


def one(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached, not compiled per start
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stderr.close()
    if proc.returncode not in (0, 1, 5):  # 5: record's "nothing recorded"; 1: findings, problems
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {err.decode()}")
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9, help="processes per command and path")
    parser.add_argument("--only", nargs="*", help="commands to measure (default: all)")
    args = parser.parse_args()
    print(f"CLI start-up: fast path vs typer path, same command line, {args.runs} alternated runs each")
    print(
        f"{'command':<12} {'fast CPU':>9} {'typer CPU':>10} {'ratio':>6} {'fast wall':>10} {'typer wall':>11}"
    )
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        lines = command_lines(Path(tmp))
        for name, argv in lines.items():
            if args.only and name not in args.only:
                continue
            runs: dict[str, list[tuple[float, float, int]]] = {"fast": [], "typer": []}
            one([*FAST, *argv], Path(tmp))  # warm-up: bytecode written, files in the page cache
            one([*TYPER, *argv], Path(tmp))
            for _ in range(args.runs):
                runs["fast"].append(one([*FAST, *argv], Path(tmp)))
                runs["typer"].append(one([*TYPER, *argv], Path(tmp)))
            codes = {path: {code for _cpu, _wall, code in done} for path, done in runs.items()}
            if codes["fast"] != codes["typer"]:
                raise SystemExit(f"{name}: exit codes differ: {codes}")
            cpu = {path: statistics.median(c for c, _w, _e in done) for path, done in runs.items()}
            wall = {path: statistics.median(w for _c, w, _e in done) for path, done in runs.items()}
            totals[0] += cpu["fast"]
            totals[1] += cpu["typer"]
            print(
                f"{name:<12} {cpu['fast'] * 1000:7.0f}ms {cpu['typer'] * 1000:8.0f}ms "
                f"{cpu['typer'] / cpu['fast']:5.2f}x {wall['fast'] * 1000:8.0f}ms {wall['typer'] * 1000:9.0f}ms"
            )
    if totals[0]:
        print(f"all measured: typer path / fast path CPU per start = {totals[1] / totals[0]:.2f}x (medians)")


if __name__ == "__main__":
    main()
