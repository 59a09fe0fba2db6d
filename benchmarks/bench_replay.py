"""Speed of `harn mcp mock replay`, with baselines measured in the same run.

- cold start: spawn `harn-mcp-mock replay` and time until the first `initialize` response
  (median of N), against spawning `python -c pass` and `python -c "import mcp"` (what any replay
  that imports the SDK at start-up pays before answering anything). Target: <= 150 ms median and
  >= 10x faster than the SDK import;
- throughput: 10,000 pipelined `tools/call` over stdio against a 10,000-interaction cassette
  (target >= 10,000 calls/s);
- scaling: time per request with cassettes of 100 ... 100,000 interactions (target: flat).

Run: `.venv/bin/python benchmarks/bench_replay.py [--starts N] [--quick] [--only PART ...]`
(parts: start, throughput, faults, scaling).
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
PARTS = ("start", "throughput", "faults", "scaling")
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


def spawn(cmd: list[str], stdin: bytes | None) -> tuple[float, float]:
    """Seconds from spawn to the first answer (to the exit without ``stdin``), and the CPU
    seconds (user + system) the whole process used, which a loaded machine does not inflate."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = io.BufferedReader(proc.stdout, 1 << 16)  # type: ignore[arg-type]  # raw pipe: buffer reads
    assert proc.stdin and proc.stdout
    if stdin is not None:
        proc.stdin.write(stdin)
        reader.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if stdin is None:
        elapsed = time.perf_counter() - t0
    return elapsed, usage.ru_utime + usage.ru_stime


def cold_start(cassette: Path, n: int) -> tuple[tuple[float, float], ...]:
    """Medians of (replay, world, bare interpreter, SDK import) as (wall, CPU) seconds, the
    first three alternated run by run so that a load change on the machine hits all of them alike."""
    init = line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
    replays, worlds, bares = [], [], []
    for _ in range(n):
        replays.append(spawn([*REPLAY, "--cassette", str(cassette)], init))
        worlds.append(spawn([*WORLD, "--spec", str(WORLD_SPEC)], init))
        bares.append(spawn([sys.executable, "-c", "pass"], None))
    sdks = [spawn([sys.executable, "-c", "import mcp"], None) for _ in range(max(3, n // 4))]
    return tuple(
        (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        for runs in (replays, worlds, bares, sdks)
    )


def cpu_ns(pid: int) -> int | None:
    """CPU time the process `pid` has run so far, in ns (Linux's schedstat), or None."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        return sum(int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0]) for t in tasks)
    except (OSError, ValueError, IndexError):
        return None


def pipelined(cassette: Path, interactions: int, calls: int, extra: tuple[str, ...] = ()) -> float:
    """Seconds per request for `calls` pipelined tools/call (after start-up and load)."""
    return served(cassette, interactions, calls, extra)[0]


def served(
    cassette: Path, interactions: int, calls: int, extra: tuple[str, ...] = ()
) -> tuple[float, float | None]:
    """Seconds per request for `calls` pipelined tools/call (after start-up and load): wall
    time, and the CPU time the server spent on them (None where it cannot be read). On a shared
    machine the wall time counts the server's waits for a core; its CPU time does not."""
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
    cpu0 = cpu_ns(proc.pid)
    t0 = time.perf_counter()
    writer = threading.Thread(target=proc.stdin.write, args=(payload,))
    writer.start()
    for _ in range(calls):
        reader.readline()
    elapsed = time.perf_counter() - t0
    cpu1 = cpu_ns(proc.pid)
    writer.join()
    proc.stdin.close()
    proc.wait(timeout=60)
    cpu = (cpu1 - cpu0) / 1e9 / calls if cpu0 is not None and cpu1 is not None else None
    return elapsed / calls, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="smaller scaling sizes")
    parser.add_argument(
        "--only",
        choices=PARTS,
        action="append",
        help="measure only this part (repeatable; default: all of them)",
    )
    args = parser.parse_args()
    parts = set(args.only or PARTS)
    sizes = [100, 1_000, 10_000] if args.quick else [100, 1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        needed = sizes if "scaling" in parts else [100, 10_000]
        cassettes = {n: build(Path(tmp) / f"c{n}.cassette.json", n) for n in needed}
        if "start" in parts:
            start(cassettes[100], args.starts)
        if "throughput" in parts:
            per = pipelined(cassettes[10_000], 10_000, 10_000)
            print(
                f"throughput: 10,000 pipelined tools/call, 10,000-interaction cassette: {1 / per:,.0f} calls/s "
                f"(target >= 10,000: {'ok' if 1 / per >= 10_000 else 'MISSED'})"
            )
        if "faults" in parts:
            faults(cassettes[10_000], Path(tmp))
        if "scaling" in parts:
            scaling(cassettes, sizes)


def start(cassette: Path, starts: int) -> None:
    (replay, replay_cpu), (world, world_cpu), (bare, bare_cpu), (sdk, _) = cold_start(cassette, starts)
    print("cold start (spawn -> first initialize response, median, runs alternated)")
    print(
        f"  python -c pass       {bare * 1000:6.1f} ms   the bare interpreter, same venv "
        f"(CPU {bare_cpu * 1000:.1f} ms)"
    )
    for name, took, cpu in (("replay", replay, replay_cpu), ("world ", world, world_cpu)):
        ratio = took / bare
        print(
            f"  harn-mcp-mock {name} {took * 1000:6.1f} ms   {ratio:.1f}x bare "
            f"(target <= {START_RATIO}x: {'ok' if ratio <= START_RATIO else 'MISSED'}; <= 150 ms: "
            f"{'ok' if took <= 0.150 else 'MISSED'}); CPU, whole process: {cpu * 1000:.1f} ms, "
            f"{cpu / bare_cpu:.1f}x bare"
        )
    print(
        f"  python -c 'import mcp' {sdk * 1000:6.1f} ms  an SDK-importing replay pays at least this: ours is {sdk / replay:.1f}x faster"
        f" (target >= 10x: {'ok' if sdk / replay >= 10 else 'MISSED'})"
    )


def faults(cassette: Path, tmp: Path) -> None:
    # replay --faults: the overlay decides every call; every 10th is answered by a fault.
    rules = tmp / "faults.json"
    rules.write_text(
        '[{"id": "rl", "tool": "echo", "kind": "rate_limit", "every": 10, "length": 1},'
        ' {"id": "p", "tool": "echo", "kind": "tool_error", "probability": 0.01},'
        ' {"id": "never", "method": "resources/read", "kind": "hang"}]'
    )
    # Best of 5 each, runs alternated so that a load change on the machine hits both alike.
    plains, faulteds = [], []
    for _ in range(5):
        plains.append(served(cassette, 10_000, 10_000))
        faulteds.append(served(cassette, 10_000, 10_000, ("--faults", str(rules))))
    plain, faulted = min(p[0] for p in plains), min(f[0] for f in faulteds)
    print(
        f"replay --faults (3 rules, ~11% of calls faulted): {1 / faulted:,.0f} calls/s (without: "
        f"{1 / plain:,.0f}), {faulted / plain:.2f}x the per-request time without faults (target <= 1.5x: "
        f"{'ok' if faulted / plain <= 1.5 else 'MISSED'})"
    )
    plain_cpus = [p[1] for p in plains if p[1] is not None]
    faulted_cpus = [f[1] for f in faulteds if f[1] is not None]
    if plain_cpus and faulted_cpus:
        plain_cpu, faulted_cpu = min(plain_cpus), min(faulted_cpus)
        print(
            f"  the server's CPU time per request: {faulted_cpu * 1e6:.1f} us with faults, "
            f"{plain_cpu * 1e6:.1f} us without: {faulted_cpu / plain_cpu:.2f}x"
        )


def scaling(cassettes: dict[int, Path], sizes: list[int]) -> None:
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
