"""Speed of `harn mcp mock replay`, with baselines measured in the same run.

- cold start: spawn `harn-mcp-mock replay` and time until the first `initialize` response
  (median of N), against spawning `python -c pass` and `python -c "import mcp"` (what any replay
  that imports the SDK at start-up pays before answering anything). Target: <= 150 ms median and
  >= 10x faster than the SDK import;
- throughput: 10,000 pipelined `tools/call` over stdio against a 10,000-interaction cassette
  (target >= 10,000 calls/s);
- scaling: time per request with cassettes of 100 ... 100,000 interactions (target: flat).

Run: `.venv/bin/python benchmarks/bench_replay.py [--starts N] [--quick]`.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
from _cassettes import handshake, init_params  # benchmarks/ is on sys.path when run as scripts

from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

BIN = Path(sys.executable).parent
REPLAY = (
    [str(BIN / "harn-mcp-mock"), "replay"]
    if (BIN / "harn-mcp-mock").exists()
    else [sys.executable, "-m", "harn_mcp_mock", "replay"]
)
WORLD = [*REPLAY[:-1], "world"]
WORLD_SPEC = Path(__file__).resolve().parents[1] / "worlds" / "notes" / "notes.world.json"
INIT_PARAMS = init_params("2025-11-25")
START_RATIO = 3.5
"""Target: replay and world answer `initialize` within 3.5x a bare interpreter's start."""


def build(path: Path, interactions: int) -> Path:
    msgs = [
        *handshake("2025-11-25"),
    ]
    for i in range(1, interactions + 1):
        seq = len(msgs)
        args = {"message": f"hello {i}"}
        msgs.append(
            Message(
                seq,
                "client",
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": args},
                },
            )
        )
        msgs.append(
            Message(
                seq + 1,
                "server",
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "result": {
                        "content": [{"type": "text", "text": f"hello {i}"}],
                        "structuredContent": {"echo": f"hello {i}"},
                    },
                },
                reply_to=seq,
                latency_ms=0.5,
            )
        )
    return save_cassette(Cassette(msgs, {"transport": "stdio"}), path)


def line(obj: object) -> bytes:
    return orjson.dumps(obj) + b"\n"


def timed_spawn(cmd: list[str], stdin: bytes | None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    if stdin is not None:
        proc.stdin.write(stdin)
        reader.readline()
        elapsed = time.perf_counter() - t0
        proc.stdin.close()
        proc.wait(timeout=30)
        return elapsed
    proc.stdin.close()
    proc.wait(timeout=30)
    return time.perf_counter() - t0


def cold_start(cassette: Path, n: int) -> tuple[float, float, float, float]:
    """Medians of (replay, world, bare interpreter, SDK import), the first three alternated run
    by run so that a load change on the machine hits all of them alike."""
    init = line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
    replays, worlds, bares = [], [], []
    for _ in range(n):
        replays.append(timed_spawn([*REPLAY, "--cassette", str(cassette)], init))
        worlds.append(timed_spawn([*WORLD, "--spec", str(WORLD_SPEC)], init))
        bares.append(timed_spawn([sys.executable, "-c", "pass"], None))
    sdk = statistics.median(
        timed_spawn([sys.executable, "-c", "import mcp"], None) for _ in range(max(3, n // 4))
    )
    return statistics.median(replays), statistics.median(worlds), statistics.median(bares), sdk


def pipelined(cassette: Path, interactions: int, calls: int, extra: tuple[str, ...] = ()) -> float:
    """Seconds per request for `calls` pipelined tools/call (after start-up and load)."""
    proc = subprocess.Popen(
        [*REPLAY, "--cassette", str(cassette), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    proc.stdin.write(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}))
    reader.readline()  # loaded and ready
    payload = b"".join(
        line(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": f"hello {(i % interactions) + 1}"}},
            }
        )
        for i in range(1, calls + 1)
    )
    t0 = time.perf_counter()
    writer = threading.Thread(target=proc.stdin.write, args=(payload,))
    writer.start()
    for _ in range(calls):
        reader.readline()
    elapsed = time.perf_counter() - t0
    writer.join()
    proc.stdin.close()
    proc.wait(timeout=60)
    return elapsed / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="smaller scaling sizes")
    args = parser.parse_args()
    sizes = [100, 1_000, 10_000] if args.quick else [100, 1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        cassettes = {n: build(Path(tmp) / f"c{n}.cassette.json", n) for n in sizes}
        replay, world, bare, sdk = cold_start(cassettes[100], args.starts)
        print("cold start (spawn -> first initialize response, median, runs alternated)")
        print(f"  python -c pass       {bare * 1000:6.1f} ms   the bare interpreter, same venv")
        for name, took in (("replay", replay), ("world ", world)):
            ratio = took / bare
            print(
                f"  harn-mcp-mock {name} {took * 1000:6.1f} ms   {ratio:.1f}x bare "
                f"(target <= {START_RATIO}x: {'ok' if ratio <= START_RATIO else 'MISSED'}; <= 150 ms: "
                f"{'ok' if took <= 0.150 else 'MISSED'})"
            )
        print(
            f"  python -c 'import mcp' {sdk * 1000:6.1f} ms  an SDK-importing replay pays at least this: ours is {sdk / replay:.1f}x faster"
            f" (target >= 10x: {'ok' if sdk / replay >= 10 else 'MISSED'})"
        )
        per = pipelined(cassettes[10_000], 10_000, 10_000)
        print(
            f"throughput: 10,000 pipelined tools/call, 10,000-interaction cassette: {1 / per:,.0f} calls/s "
            f"(target >= 10,000: {'ok' if 1 / per >= 10_000 else 'MISSED'})"
        )
        # replay --faults: the overlay decides every call; every 10th is answered by a fault.
        rules = Path(tmp) / "faults.json"
        rules.write_text(
            '[{"id": "rl", "tool": "echo", "kind": "rate_limit", "every": 10, "length": 1},'
            ' {"id": "p", "tool": "echo", "kind": "tool_error", "probability": 0.01},'
            ' {"id": "never", "method": "resources/read", "kind": "hang"}]'
        )
        plain = min(pipelined(cassettes[10_000], 10_000, 10_000) for _ in range(3))
        faulted = min(
            pipelined(cassettes[10_000], 10_000, 10_000, ("--faults", str(rules))) for _ in range(3)
        )
        print(
            f"replay --faults (3 rules, ~11% of calls faulted): {1 / faulted:,.0f} calls/s, "
            f"{faulted / plain:.2f}x the per-request time without faults (target <= 1.5x: "
            f"{'ok' if faulted / plain <= 1.5 else 'MISSED'})"
        )
        print("per-request time by cassette size (10,000 pipelined calls each):")
        base = None
        for n in sizes:
            us = pipelined(cassettes[n], n, 10_000) * 1e6
            base = base or us
            print(
                f"  {n:>7,} interactions  {us:6.1f} us/request  ({us / base:.2f}x the 100-interaction cassette)"
            )


if __name__ == "__main__":
    main()
