"""Proxy overhead of `harn mcp mock record`, measured against a direct connection in the same run.

- latency: median round trip of one `tools/call` at a time (N sequential calls), direct vs
  through `record`; the figure is the added median per round trip (target < 0.3 ms);
- throughput: 10,000 pipelined `tools/call` requests written at once, all responses read;
  messages relayed per second through the proxy (both directions; target >= 20,000/s) and
  the ratio to the direct run.

Give several source trees (a checkout's root, or a folder with an older ``harn_mcp_mock``) to
compare them in the same run: each tree's `record` is measured in turn, round after round
(`--rounds`, best round kept), so load on a shared machine hits them alike; the ratios to the
first tree are printed.

Run: `.venv/bin/python benchmarks/bench_record.py [--calls N] [--pipelined N] [--rounds R] [TREE ...]`
(default: this checkout).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER = [sys.executable, str(HERE / "echo_server.py")]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def call(i: int) -> bytes:
    return (
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": f"hello {i}"}},
            }
        )
        + b"\n"
    )


def start(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], io.BufferedReader]:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    proc.stdin.write(orjson.dumps(INIT) + b"\n")
    reader.readline()
    return proc, reader


def stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin
    proc.stdin.close()
    proc.wait(timeout=30)


def latency(command: list[str], calls: int, env: dict[str, str] | None = None) -> list[float]:
    proc, reader = start(command, env)
    assert proc.stdin and proc.stdout
    samples = []
    for i in range(1, calls + 1):
        data = call(i)
        t0 = time.perf_counter_ns()
        proc.stdin.write(data)
        reader.readline()
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    stop(proc)
    return samples[calls // 10 :]  # drop warm-up


def throughput(command: list[str], n: int, env: dict[str, str] | None = None) -> float:
    proc, reader = start(command, env)
    assert proc.stdin and proc.stdout
    payload = b"".join(call(i) for i in range(1, n + 1))
    t0 = time.perf_counter()
    writer = threading.Thread(target=proc.stdin.write, args=(payload,))
    writer.start()
    for _ in range(n):
        reader.readline()
    elapsed = time.perf_counter() - t0
    writer.join()
    stop(proc)
    return elapsed


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that runs ``harn_mcp_mock`` from ``tree`` (with ``python -P``)."""
    return {**os.environ, "PYTHONPATH": str(tree)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--pipelined", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("trees", nargs="*", type=Path, default=[ROOT])
    args = parser.parse_args()
    lat: dict[Path, list[float]] = {t: [] for t in args.trees}
    thr: dict[Path, list[float]] = {t: [] for t in args.trees}
    direct_lats: list[float] = []
    direct_ts: list[float] = []
    recorded: dict[Path, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cassette = os.path.join(tmp, "bench.cassette.json")
        proxied = [sys.executable, "-P", "-m", "harn_mcp_mock", "record", "--quiet", "--cassette", cassette]
        proxied += ["--", *SERVER]
        for _ in range(args.rounds):
            direct_lats.append(statistics.median(latency(SERVER, args.calls)))
            direct_ts.append(throughput(SERVER, args.pipelined))
            for tree in args.trees:
                env = tree_env(tree)
                lat[tree].append(statistics.median(latency(proxied, args.calls, env)))
                os.unlink(cassette)
                thr[tree].append(throughput(proxied, args.pipelined, env))
                recorded[tree] = len(orjson.loads(Path(cassette).read_bytes())["messages"])
                os.unlink(cassette)
    direct_lat, direct_t = min(direct_lats), min(direct_ts)
    msgs = 2 * args.pipelined
    print(f"record proxy overhead (same run, same echo server; best of {args.rounds} round(s))")
    first = args.trees[0]
    for tree in args.trees:
        proxy_lat, proxy_t = min(lat[tree]), min(thr[tree])
        added = proxy_lat - direct_lat
        print(f"  {tree}")
        print(
            f"    round trip median   direct {direct_lat:.3f} ms   through record {proxy_lat:.3f} ms   "
            f"added {added:.3f} ms  (target < 0.3 ms: {'ok' if added < 0.3 else 'MISSED'})"
        )
        print(
            f"    {args.pipelined} pipelined   direct {direct_t:.3f} s ({msgs / direct_t:,.0f} msg/s)   "
            f"through record {proxy_t:.3f} s ({msgs / proxy_t:,.0f} msg/s relayed, "
            f"{'ok' if msgs / proxy_t >= 20_000 else 'MISSED'} vs target 20,000/s)   "
            f"ratio {proxy_t / direct_t:.2f}x"
        )
        print(f"    cassette holds {recorded[tree]} messages (expected {msgs + 2})")
        if tree != first:
            print(
                f"    vs {first}: round trip {proxy_lat / min(lat[first]):.2f}x, "
                f"pipelined {proxy_t / min(thr[first]):.2f}x"
            )


if __name__ == "__main__":
    main()
