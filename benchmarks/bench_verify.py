"""Speed of `harn mcp mock verify --candidate` on two 10,000-interaction cassettes (target < 2 s).

Baseline measured in the same run: loading the two cassettes (which verify must do anyway).
The cassettes have 20 tools with input and output schemas; every call returns structuredContent
(validated against both output schemas) and half the tools are read-only (results compared).
The candidate changes a few schemas and results, so findings are really computed.

Run: `.venv/bin/python benchmarks/bench_verify.py [--interactions N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, save_cassette

TOOLS = 20


def tools(changed: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(TOOLS):
        props: dict[str, Any] = {
            "city": {"type": "string", "maxLength": 40},
            "days": {"type": "integer", "minimum": 1},
        }
        required = ["city"]
        if changed and i == 3:
            required.append("days")  # I4
        output = {
            "type": "object",
            "properties": {"temp": {"type": "number"}, "city": {"type": "string"}},
            "required": ["temp", "city"],
        }
        if changed and i == 5:
            output["properties"]["temp"] = {"type": ["number", "string"]}  # O6
        out.append(
            {
                "name": f"tool_{i}",
                "description": f"Tool {i}.",
                "inputSchema": {"type": "object", "properties": props, "required": required},
                "outputSchema": output,
                "annotations": {"readOnlyHint": i % 2 == 0},
            }
        )
    return out


def build(path: Path, n: int, changed: bool) -> Path:
    msgs: list[Message] = []

    def exchange(method: str, params: dict[str, Any], result: dict[str, Any], latency: float) -> None:
        seq = len(msgs)
        i = seq // 2
        msgs.append(Message(seq, "client", {"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
        msgs.append(
            Message(
                seq + 1,
                "server",
                {"jsonrpc": "2.0", "id": i, "result": result},
                reply_to=seq,
                latency_ms=latency,
            )
        )

    exchange("tools/list", {}, {"tools": tools(changed)}, 1.0)
    for k in range(n):
        name = f"tool_{k % TOOLS}"
        temp = 20 + (k % 7) + (1 if changed and k % 97 == 0 else 0)
        value = {"temp": temp, "city": f"city {k % 50}"}
        exchange(
            "tools/call",
            {"name": name, "arguments": {"city": f"city {k % 50}", "days": 1 + k % 5}},
            {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value},
            1.0 + k % 3,
        )
    return save_cassette(
        Cassette(msgs, {"server": {"handshake": "initialize", "capabilities": {"tools": {}}}}), path
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--interactions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a = build(Path(tmp) / "a.cassette.json", args.interactions, False)
        b = build(Path(tmp) / "b.cassette.json", args.interactions, True)
        loads = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            load_cassette(a)
            load_cassette(b)
            loads.append(time.perf_counter() - t0)
        runs = []
        out = None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "harn_mcp_mock",
                    "verify",
                    "--cassette",
                    str(a),
                    "--candidate",
                    str(b),
                    "--format",
                    "json",
                ],
                capture_output=True,
                timeout=120,
            )
            runs.append(time.perf_counter() - t0)
        assert out is not None and out.returncode == 1, out.stderr if out else None
        counts = json.loads(out.stdout)["counts"]
    load, total = statistics.median(loads), statistics.median(runs)
    print(
        f"verify two {args.interactions:,}-interaction cassettes ({TOOLS} tools, structuredContent validated, read-only results compared)"
    )
    print(
        f"  whole command (process start to report)  {total:.3f} s   (target < 2 s: {'ok' if total < 2 else 'MISSED'})"
    )
    print(
        f"  baseline: loading both cassettes        {load:.3f} s   verify costs {total / load:.1f}x the load"
    )
    print(f"  findings: {counts}")


if __name__ == "__main__":
    main()
