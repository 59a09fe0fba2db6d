"""Memory of `replay --http` after N sessions, against the idle server's RSS in the same run.

Each session is one `initialize` POST (a new `Mcp-Session-Id`, never deleted, as a client that
crashes or forgets DELETE leaves it). The server is `harn-mcp-mock replay --http` (a subprocess,
as a user runs it) serving a 100-interaction cassette; its RSS (VmRSS from /proc) is printed at
each checkpoint, with the growth per session since the idle baseline.

- bounded: the defaults (`--max-sessions 1000`, idle timeout 3600 s). Target: RSS after the last
  checkpoint within 32 MiB of the RSS after the first 1,000 sessions (memory stops growing).
- unbounded: `--max-sessions 0 --session-idle-timeout 0` (no limit; what every server did before
  the limits existed), printed for comparison.

Run: `.venv/bin/python benchmarks/bench_http_sessions.py [--checkpoints 1000,10000,30000] [--quick]`.
Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import orjson
from _cassettes import init_params  # benchmarks/ is on sys.path when run as scripts
from _http import start
from bench_http import HARN, build

TARGET_MIB = 32.0
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("no VmRSS in /proc: this benchmark needs Linux")


async def open_sessions(url: str, count: int, connections: int) -> int:
    """``count`` initialize POSTs over ``connections`` keep-alive connections; how many failed."""
    import httpx2

    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init_params("2025-06-18")}
    )
    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    failed = 0
    left = count
    async with httpx2.AsyncClient(limits=limits, timeout=30.0) as client:

        async def worker() -> None:
            nonlocal failed, left
            while left > 0:
                left -= 1
                response = await client.post(url, content=body, headers=HEADERS)
                if response.status_code != 200 or "mcp-session-id" not in response.headers:
                    failed += 1

        await asyncio.gather(*(worker() for _ in range(connections)))
    return failed


def run(argv: list[str], checkpoints: list[int], connections: int) -> list[tuple[int, int, int]]:
    """(sessions, RSS KiB, failures) at 0 and each checkpoint."""
    proc, url = start(argv)
    try:
        asyncio.run(open_sessions(url, 1, 1))  # warm: imports and first-request paths loaded
        rows = [(0, rss_kib(proc.pid), 0)]
        done = 0
        for checkpoint in checkpoints:
            failed = asyncio.run(open_sessions(url, checkpoint - done, connections))
            done = checkpoint
            rows.append((done, rss_kib(proc.pid), failed))
        return rows
    finally:  # the server folds every session's report into one on its way out: give it time
        proc.terminate()
        proc.wait(300)


def show(title: str, rows: list[tuple[int, int, int]]) -> None:
    base = rows[0][1]
    print(f"  {title}")
    for sessions, rss, failed in rows:
        per = f"{(rss - base) / sessions:7.1f} KiB/session" if sessions else "   (idle baseline)  "
        note = f", {failed} failed" if failed else ""
        print(
            f"    {sessions:>7,} sessions: RSS {rss / 1024:7.1f} MiB (+{(rss - base) / 1024:6.1f}) {per}{note}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default="1000,10000,30000")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--interactions", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="checkpoints 1000,5000")
    parser.add_argument("--no-unbounded", action="store_true", help="skip the run without limits")
    args = parser.parse_args()
    checkpoints = [1000, 5000] if args.quick else [int(c) for c in args.checkpoints.split(",")]
    if not Path("/proc/self/status").exists():
        print("bench_http_sessions: skipped (needs /proc)")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as scratch:
        cassette = build(Path(scratch) / "bench.cassette.json", args.interactions)
        argv = [*HARN, "replay", "--cassette", str(cassette), "--http", "--port", "0"]
        bounded = run(argv, checkpoints, args.connections)
        unbounded = (
            None
            if args.no_unbounded
            else run(
                [*argv, "--max-sessions", "0", "--session-idle-timeout", "0"], checkpoints, args.connections
            )
        )
    print(
        f"replay --http memory after N initialize calls ({args.interactions}-interaction cassette, "
        f"{args.connections} connections, sessions never deleted)"
    )
    show("bounded (defaults: --max-sessions 1000, --session-idle-timeout 3600)", bounded)
    if unbounded is not None:
        show("unbounded (--max-sessions 0 --session-idle-timeout 0)", unbounded)
    first = next((rss for sessions, rss, _ in bounded if sessions >= 1000), bounded[1][1])
    growth = (bounded[-1][1] - first) / 1024
    failures = sum(failed for _, _, failed in bounded)
    ok = growth <= TARGET_MIB and failures == 0
    print(
        f"  target: bounded RSS grows <= {TARGET_MIB:.0f} MiB after the first 1,000 sessions: "
        f"{'PASS' if ok else 'FAIL'} (+{growth:.1f} MiB, {failures} failed)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
