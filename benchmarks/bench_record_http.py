"""Cost of recording a large SSE answer through `record --url`, against the same call made directly.

- direct: an SDK `MCPServer` over Streamable HTTP (a subprocess of this script, answering
  POSTs with an SSE stream) whose `big` tool returns a text of SIZE bytes (20 MB by default);
  the SDK client (`mcp.Client`) opens a session and calls it.
- through the proxy: the same call through `harn-mcp-mock record --url` (a subprocess, as a user
  runs it) in front of the same server, which records it into a temporary cassette.

Both are measured in the same run (best of `--rounds`); the ratio proxy / direct is printed.
Target: <= 2.0.

Give several source trees (a checkout's root, or a folder with an older ``harn_mcp_mock``) to
compare their `record --url` in the same run: each round measures the direct call and then each
tree in turn, so load on a shared machine hits them alike; the ratios to the first are printed.

Run: `.venv/bin/python benchmarks/bench_record_http.py [--mb N] [--rounds R] [--quick] [TREE ...]`
(default: this checkout).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import anyio
from _http import start, stop  # benchmarks/ is on sys.path when run as scripts

TARGET = 2.0
ROOT = Path(__file__).resolve().parents[1]


def serve() -> None:
    """The upstream: an SDK server with a `big(size)` tool; prints its URL first."""
    from mcp.server.mcpserver import MCPServer

    from harn_mcp_mock.http.server import HttpServer

    server = MCPServer("big")

    @server.tool()
    def big(size: int) -> str:
        """A text of ``size`` bytes."""
        return "x" * size

    HttpServer(server.streamable_http_app(), lifespan="on").run()


async def call(url: str, size: int) -> float:
    """Seconds for one SDK session that calls `big(size)` (session set-up included)."""
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    started = time.perf_counter()
    transport = streamable_http_client(url, max_sse_event_size=None)  # the default stops at 1 MB
    async with mcp.Client(transport, mode="legacy") as client:
        result = await client.session.call_tool("big", {"size": size})
    elapsed = time.perf_counter() - started
    text = result.content[0].text  # type: ignore[union-attr]
    assert len(text) == size, len(text)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="answer size in MB (default 20)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 MB, one round")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("trees", nargs="*", type=Path, default=[ROOT])
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if args.quick:
        args.mb, args.rounds = 2.0, 1
    size = int(args.mb * 1_000_000)
    upstream, url = start([sys.executable, __file__, "--serve"])
    direct: list[float] = []
    proxied: dict[Path, list[float]] = {t: [] for t in args.trees}
    harn = [sys.executable, "-P", "-m", "harn_mcp_mock"]  # -P: harn_mcp_mock from the tree
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.rounds):
                direct.append(anyio.run(call, url, size))
                for k, tree in enumerate(args.trees):
                    env = {**os.environ, "PYTHONPATH": str(tree)}
                    cassette = Path(tmp) / f"big{n}-{k}.cassette.json"
                    argv = [*harn, "record", "--cassette", str(cassette), "--url", url]
                    proxy, proxy_url = start(argv, env)
                    try:
                        proxied[tree].append(anyio.run(call, proxy_url, size))
                    finally:
                        proxy.send_signal(signal.SIGTERM)  # writes the cassette
                        proxy.wait(120)
                    assert cassette.exists(), "record --url wrote no cassette"
    finally:
        stop(upstream)
    best_direct = min(direct)
    first = min(proxied[args.trees[0]])
    print(f"SSE answer of {args.mb:g} MB, best of {args.rounds}:")
    print(f"  direct (SDK client -> SDK server):   {best_direct:7.2f} s")
    for tree in args.trees:
        best_proxied = min(proxied[tree])
        ratio = best_proxied / best_direct
        verdict = "ok" if ratio <= TARGET else "over"
        print(f"  through record --url ({tree}):")
        print(f"    {best_proxied:7.2f} s   ratio: {ratio:.2f}x (target <= {TARGET:g}x: {verdict})")
        if tree != args.trees[0]:
            print(f"    vs {args.trees[0]}: {best_proxied / first:.2f}x")


if __name__ == "__main__":
    main()
