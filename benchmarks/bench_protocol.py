"""The mock Harness on loopback: task submits per second and SSE events per second, each with a
baseline measured in the same run.

- submits: `harn protocol serve` (a subprocess, as a user runs it, SQLite WAL with
  synchronous=FULL, the runner executing the submitted tasks meanwhile) takes `POST /v1/tasks`
  from C concurrent keep-alive connections, every second one with an `Idempotency-Key`.
  Baseline: a minimal Starlette JSON endpoint under the same uvicorn settings (the same
  `HttpServer`) driven by the same client: the HTTP ceiling of this machine and client.
- SSE: one finished task with 2,000+ events (a world task of 1,000 tool calls) read over
  `GET /v1/tasks/{id}/stream` by S concurrent streams. Baseline: a Starlette SSE endpoint
  writing the same number of pre-built frames of the same size.

Run: `.venv/bin/python benchmarks/bench_protocol.py [--submits N] [--connections C] [--quick]`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from _http import hammer, serve_app, start, stop  # benchmarks/ is on sys.path when run as scripts

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]
HARN = [str(BIN / "harn")] if (BIN / "harn").exists() else [sys.executable, "-m", "harn_mcp_mock"]
KEY = "bench-key-0123456789"
VERSION = "agents-protocol-2026-04-25"
HEADERS = {
    "Harn-Agents-Protocol-Version": VERSION,
    "Authorization": f"Bearer {KEY}",
    "content-type": "application/json",
}
STEPS = 1000


def baseline_app(frames: int, frame_size: int) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    counter = 0

    async def submit(request: Request) -> Response:
        nonlocal counter
        body = orjson.loads(await request.body())
        counter += 1
        task = {"id": f"task_{counter}", "object": "task", "status": "SUBMITTED", "input": body["input"]}
        return Response(orjson.dumps(task), status_code=201, media_type="application/json")

    frame = "id: 1\nevent: agent.tool_result\ndata: " + "x" * max(frame_size - 40, 1) + "\n\n"

    async def stream(request: Request) -> StreamingResponse:
        async def gen() -> Any:
            for _ in range(frames):
                yield frame

        return StreamingResponse(gen(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/v1/tasks", submit, methods=["POST"]),
            Route("/v1/tasks/{task_id}/stream", stream, methods=["GET"]),
        ]
    )


async def submits(url: str, count: int, connections: int) -> tuple[float, int]:
    """(submits/s, errors)."""
    import httpx2

    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx2.AsyncClient(base_url=url, limits=limits, timeout=60.0) as client:
        bodies = [orjson.dumps({"input": {"text": f"bench {k}"}}) for k in range(count)]
        await asyncio.gather(
            *(client.post("/v1/tasks", content=bodies[0], headers=HEADERS) for _ in range(connections))
        )

        async def submit(k: int) -> bool:
            headers = {**HEADERS, "Idempotency-Key": f"bench-{k}"} if k % 2 else HEADERS
            response = await client.post("/v1/tasks", content=bodies[k], headers=headers)
            return response.status_code == 201

        return await hammer(count, connections, submit)


async def wait_terminal(url: str, task_id: str) -> list[int]:
    """Follow the task's stream until it closes (the task is terminal); the frame sizes."""
    import httpx2

    async with httpx2.AsyncClient(base_url=url, timeout=300.0) as client:
        body = (await client.get(f"/v1/tasks/{task_id}/stream", headers=HEADERS)).text
    return [len(block) + 2 for block in body.split("\n\n") if block.startswith("id:")]


async def streams(url: str, task_id: str, concurrent: int) -> tuple[float, int]:
    """(events/s over all streams, events per stream)."""
    import httpx2

    limits = httpx2.Limits(max_connections=concurrent)
    async with httpx2.AsyncClient(base_url=url, limits=limits, timeout=300.0) as client:

        async def one() -> int:
            frames = 0
            async with client.stream("GET", f"/v1/tasks/{task_id}/stream", headers=HEADERS) as response:
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        frames += 1
            return frames

        await one()  # warm
        started = time.perf_counter()
        counts = await asyncio.gather(*(one() for _ in range(concurrent)))
        elapsed = time.perf_counter() - started
    return sum(counts) / elapsed, counts[0]


def best(rounds: int, run: Any) -> tuple[float, Any]:
    results = [asyncio.run(run()) for _ in range(rounds)]
    return max(results, key=lambda r: r[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submits", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs each")
    parser.add_argument("--quick", action="store_true", help="500 submits, one round")
    parser.add_argument("--serve-baseline", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        serve_app(baseline_app(*args.serve_baseline))
        return 0
    if args.quick:
        args.submits, args.rounds = 500, 1

    with tempfile.TemporaryDirectory(prefix="bench-protocol-") as scratch:
        db = Path(scratch) / "harness.sqlite3"
        argv = [*HARN, "protocol", "serve", "--port", "0", "--db", str(db), "--api-key-for", f"bench={KEY}",
                "--world-root", str(ROOT)]  # fmt: skip
        proc, url = start(argv)
        try:
            steps = [{"tool": "get_ticket", "arguments": {"ticket_id": "T-1"}}] * STEPS
            world = {"world": "worlds/tickets/tickets.world.json", "world_task": "close-login-bug"}

            async def submit_long() -> str:
                import httpx2

                async with httpx2.AsyncClient(base_url=url, timeout=60.0) as client:
                    body = orjson.dumps({"input": {**world, "steps": steps}})
                    r = await client.post("/v1/tasks", content=body, headers=HEADERS)
                    return str(r.json()["id"])

            long_task = asyncio.run(submit_long())
            sizes = asyncio.run(wait_terminal(url, long_task))
            rate, errors = best(args.rounds, lambda: submits(url, args.submits, args.connections))
            sse_rate, per_stream = best(args.rounds, lambda: streams(url, long_task, args.streams))
        finally:
            stop(proc)

    frame_size = sum(sizes) // max(len(sizes), 1)
    proc, base_url = start([sys.executable, __file__, "--serve-baseline", str(len(sizes)), str(frame_size)])
    base_url = base_url.removesuffix("/mcp")  # HttpServer prints its MCP endpoint
    try:
        base_rate, base_errors = best(args.rounds, lambda: submits(base_url, args.submits, args.connections))
        base_sse, _ = best(args.rounds, lambda: streams(base_url, "t", args.streams))
    finally:
        stop(proc)

    print(
        f"mock Harness on loopback (best of {args.rounds}); {args.connections} keep-alive connections, "
        f"{args.streams} concurrent SSE streams"
    )
    print(f"  task submits  baseline (Starlette JSON endpoint): {base_rate:8.0f} /s")
    print(
        f"               harn protocol serve (SQLite, fsync): {rate:8.0f} /s "
        f"({rate / base_rate:.0%} of baseline; errors {errors}, baseline errors {base_errors})"
    )
    print(f"  SSE events    baseline ({len(sizes)} pre-built frames of ~{frame_size} B): {base_sse:8.0f} /s")
    print(
        f"               harn protocol serve ({per_stream} events of a finished task): {sse_rate:8.0f} /s "
        f"({sse_rate / base_sse:.0%} of baseline)"
    )
    ok = errors == 0 and per_stream == len(sizes)
    print(f"  {'PASS' if ok else 'FAIL'}: every submit answered 201 and every stream delivered every event")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
