"""Proxy overhead of `harn mcp mock record`, measured against a direct connection in the same run.

- latency: median round trip of one `tools/call` at a time (N sequential calls), direct vs
  through `record`; the figure is the added median per round trip (target < 0.3 ms);
- throughput: 10,000 pipelined `tools/call` requests written at once, all responses read;
  messages relayed per second through the proxy (both directions; target >= 20,000/s) and
  the ratio to the direct run.

Run: `.venv/bin/python benchmarks/bench_record.py [--calls N] [--pipelined N]`.
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


def start(command: list[str]) -> tuple[subprocess.Popen[bytes], io.BufferedReader]:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    proc.stdin.write(orjson.dumps(INIT) + b"\n")
    reader.readline()
    return proc, reader


def stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin
    proc.stdin.close()
    proc.wait(timeout=30)


def latency(command: list[str], calls: int) -> list[float]:
    proc, reader = start(command)
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


def throughput(command: list[str], n: int) -> float:
    proc, reader = start(command)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--pipelined", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cassette = os.path.join(tmp, "bench.cassette.json")
        proxied = [
            sys.executable,
            "-m",
            "harn_mcp_mock",
            "record",
            "--quiet",
            "--cassette",
            cassette,
            "--",
            *SERVER,
        ]
        direct_lat = statistics.median(latency(SERVER, args.calls))
        proxy_lat = statistics.median(latency(proxied, args.calls))
        direct_t = throughput(SERVER, args.pipelined)
        os.unlink(cassette)
        proxy_t = throughput(proxied, args.pipelined)
        recorded = len(orjson.loads(Path(cassette).read_bytes())["messages"])
    added = proxy_lat - direct_lat
    msgs = 2 * args.pipelined
    print("record proxy overhead (same run, same echo server)")
    print(
        f"  round trip median   direct {direct_lat:.3f} ms   through record {proxy_lat:.3f} ms   "
        f"added {added:.3f} ms  (target < 0.3 ms: {'ok' if added < 0.3 else 'MISSED'})"
    )
    print(
        f"  {args.pipelined} pipelined   direct {direct_t:.3f} s ({msgs / direct_t:,.0f} msg/s)   "
        f"through record {proxy_t:.3f} s ({msgs / proxy_t:,.0f} msg/s relayed, "
        f"{'ok' if msgs / proxy_t >= 20_000 else 'MISSED'} vs target 20,000/s)   ratio {proxy_t / direct_t:.2f}x"
    )
    print(f"  cassette holds {recorded} messages (expected {msgs + 2})")


if __name__ == "__main__":
    main()
