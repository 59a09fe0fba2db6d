"""Speed of `harn mcp mock world`, with baselines measured in the same run.

- start-up: spawn `harn-mcp-mock world --spec worlds/tickets/...` and time until the first
  `initialize` response (median), against `python -c pass` (target < 150 ms);
- throughput: 10,000 pipelined, schema-validated `tools/call` over stdio (a mix of reads, list
  filters and writes on the tickets world; the writes keep the state's size steady, since a
  `$list` read costs time linear in its collection), against the same messages answered by `benchmarks/echo_server.py`
  (raw JSON-RPC, no validation or state) as the baseline (target >= 5,000 calls/s).

Run: `.venv/bin/python benchmarks/bench_world.py`.
"""

from __future__ import annotations

import io
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "worlds" / "tickets" / "tickets.world.json"
BIN = Path(sys.executable).parent
WORLD = [str(BIN / "harn-mcp-mock"), "world", "--spec", str(SPEC)]
ECHO = [sys.executable, str(ROOT / "benchmarks" / "echo_server.py")]
INIT = (
    orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    + b"\n"
)


def first_answer(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    proc.stdin.write(INIT)
    reader.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed


def bare() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def calls(n: int, echo: bool) -> bytes:
    out = []
    for i in range(n):
        if echo:
            params = {"name": "echo", "arguments": {"message": f"m{i}"}}
        elif i % 4 == 0:
            status = "in_progress" if i % 8 == 0 else "open"  # writes that keep the state's size steady
            params = {"name": "set_status", "arguments": {"ticket_id": "T-2", "status": status}}
        elif i % 4 == 1:
            params = {"name": "get_ticket", "arguments": {"ticket_id": "T-2"}}
        elif i % 4 == 2:
            params = {"name": "list_tickets", "arguments": {"status": "open"}}
        else:
            params = {"name": "assign_ticket", "arguments": {"ticket_id": "T-3", "user_id": "u1"}}
        out.append(
            orjson.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}) + b"\n"
        )
    return b"".join(out)


def throughput(cmd: list[str], payload: bytes, n: int) -> float:
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    proc.stdin.write(INIT)
    reader.readline()
    t0 = time.perf_counter()
    writer = threading.Thread(target=proc.stdin.write, args=(payload,))
    writer.start()
    errors = 0
    for _ in range(n):
        line = reader.readline()
        errors += b'"isError":true' in line or b'"error"' in line
    elapsed = time.perf_counter() - t0
    writer.join()
    proc.stdin.close()
    proc.wait(timeout=60)
    assert errors == 0, f"{errors} calls failed"
    return elapsed


def main() -> None:
    n = 10_000
    starts = statistics.median(first_answer(WORLD) for _ in range(15))
    base = statistics.median(bare() for _ in range(15))
    world_t = throughput(WORLD, calls(n, echo=False), n)
    echo_t = throughput(ECHO, calls(n, echo=True), n)
    print("world server (tickets world)")
    print(
        f"  start-up to first initialize response  {starts * 1000:.1f} ms  (python -c pass {base * 1000:.1f} ms; target < 150 ms: "
        f"{'ok' if starts < 0.150 else 'MISSED'})"
    )
    print(
        f"  {n:,} pipelined validated tools/call    {n / world_t:,.0f} calls/s  (target >= 5,000: {'ok' if n / world_t >= 5000 else 'MISSED'})"
    )
    print(
        f"  baseline raw echo server                {n / echo_t:,.0f} calls/s  -> world costs {world_t / echo_t:.1f}x a raw echo"
    )


if __name__ == "__main__":
    main()
