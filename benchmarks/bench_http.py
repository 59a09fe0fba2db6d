"""Throughput of replay over Streamable HTTP on loopback, with a baseline measured in the same run.

- replay: `harn-mcp-mock replay --http` (a subprocess, as a user runs it) serving a
  1,000-interaction cassette; N concurrent keep-alive clients (one httpx2 AsyncClient, N
  connections) send `tools/call` requests in one session, each answered as `application/json`.
  Target: >= 2,000 requests/s.
- baseline: a minimal Starlette JSON echo endpoint under the same uvicorn settings (the same
  `HttpServer`: h11, no access log, log level warning), driven by the same client. It is the
  ceiling this machine and client allow; the replay's share of it is printed too.

Run: `.venv/bin/python benchmarks/bench_http.py [--requests N] [--connections C] [--quick]`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
from _cassettes import handshake, init_params  # benchmarks/ is on sys.path when run as scripts
from _http import HARN, hammer, serve_app, start, stop

from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

TARGET = 2000.0
INIT_PARAMS = init_params("2025-06-18")


def build(path: Path, interactions: int) -> Path:
    """initialize + ``interactions`` distinct tools/call, each with its recorded result."""
    msgs = [
        *handshake("2025-06-18"),
        Message(2, "client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    seq = 3
    for i in range(interactions):
        call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": _params(i)}
        text = f"item {i}: " + "x" * 64
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        msgs.append(Message(seq, "client", call))
        msgs.append(
            Message(seq + 1, "server", {"jsonrpc": "2.0", "id": i + 1, "result": result}, reply_to=seq)
        )
        seq += 2
    return save_cassette(Cassette(msgs, {"transport": "http"}), path)


def _params(i: int) -> dict[str, Any]:
    return {"name": "lookup", "arguments": {"key": f"k{i}", "limit": 10}}


def echo_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def echo(request: Request) -> Response:
        body = orjson.loads(await request.body())
        reply = {"jsonrpc": "2.0", "id": body.get("id"), "result": {"echo": body.get("params")}}
        return Response(orjson.dumps(reply), media_type="application/json")

    return Starlette(routes=[Route("/mcp", endpoint=echo, methods=["POST"])])


async def drive(url: str, requests: int, connections: int, interactions: int) -> tuple[float, int]:
    """(requests/s, errors) for ``requests`` tools/call over ``connections`` keep-alive connections."""
    import httpx2

    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with httpx2.AsyncClient(limits=limits, timeout=30.0) as client:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}
        opened = await client.post(url, content=orjson.dumps(init), headers=headers)
        sid = opened.headers.get("mcp-session-id")
        if sid:
            headers["mcp-session-id"] = sid
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await client.post(url, content=orjson.dumps(note), headers=headers)
        bodies = [
            orjson.dumps(
                {"jsonrpc": "2.0", "id": k + 1, "method": "tools/call", "params": _params(k % interactions)}
            )
            for k in range(requests)
        ]
        warm = [
            client.post(url, content=bodies[k], headers=headers)
            for k in range(min(connections * 4, requests))
        ]
        await asyncio.gather(*warm)

        async def call(k: int) -> bool:
            response = await client.post(url, content=bodies[k], headers=headers)
            answer = orjson.loads(response.content) if response.status_code == 200 else {}
            return answer.get("id") == k + 1 and "result" in answer

        return await hammer(requests, connections, call)


def measure(
    argv: list[str], requests: int, connections: int, interactions: int, rounds: int
) -> tuple[float, int]:
    proc, url = start(argv)
    try:
        best, errors = 0.0, 0
        for _ in range(rounds):
            rate, errs = asyncio.run(drive(url, requests, connections, interactions))
            best, errors = max(best, rate), errors + errs
        return best, errors
    finally:
        stop(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--interactions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs each")
    parser.add_argument("--quick", action="store_true", help="1,000 requests, one round")
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        serve_app(echo_app())
        return 0
    if args.quick:
        args.requests, args.rounds = 1000, 1
    with tempfile.TemporaryDirectory(prefix="bench-http-") as scratch:
        cassette = build(Path(scratch) / "bench.cassette.json", args.interactions)
        replay_argv = [*HARN, "replay", "--cassette", str(cassette), "--http", "--port", "0"]
        echo_argv = [sys.executable, __file__, "--serve-echo"]
        base, base_errors = measure(
            echo_argv, args.requests, args.connections, args.interactions, args.rounds
        )
        rate, errors = measure(replay_argv, args.requests, args.connections, args.interactions, args.rounds)
    print(
        f"replay over HTTP: {args.requests} tools/call, {args.connections} keep-alive connections, "
        f"{args.interactions}-interaction cassette (best of {args.rounds})"
    )
    print(f"  baseline (Starlette JSON echo, same uvicorn settings): {base:8.0f} req/s")
    print(
        f"  harn-mcp-mock replay --http:                           {rate:8.0f} req/s ({rate / base:.0%} of baseline)"
    )
    ok = rate >= TARGET and errors == 0
    print(
        f"  target >= {TARGET:,.0f} req/s: {'PASS' if ok else 'FAIL'} (errors: {errors}, baseline errors: {base_errors})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
