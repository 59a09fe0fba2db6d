"""The stdio replay loop driven through real pipes, with an injected clock."""

from __future__ import annotations

import os
import threading
from typing import Any

import orjson

from harn_mcp_mock.cassette.model import Cassette, Message
from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.jsonrpc.server import serve_stdio
from harn_mcp_mock.replay.engine import ReplayEngine


def cassette() -> Cassette:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}}
    done = {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    after = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    return Cassette(
        [
            Message(0, "client", call),
            Message(1, "server", done, reply_to=0, latency_ms=250.0),
            Message(2, "server", after),
        ]
    )


def serve(stdin: bytes, latency_scale: float | None, clock: PausedClock) -> list[Any]:
    engine = ReplayEngine(cassette(), latency_scale=latency_scale)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.write(in_w, stdin)
    os.close(in_w)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(out_r, 65536), b"")))
    reader.start()
    serve_stdio(engine, stdin_fd=in_r, stdout_fd=out_w, clock=clock)
    os.close(out_w)
    reader.join(timeout=10)
    os.close(in_r)
    os.close(out_r)
    return [orjson.loads(line) for line in b"".join(chunks).splitlines()]


CALL = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}\n'


def test_recorded_latency_delays_the_response_on_the_injected_clock_and_keeps_order() -> None:
    clock = PausedClock()
    out = serve(CALL, 2.0, clock)
    assert [m.get("id", m.get("method")) for m in out] == [9, "notifications/tools/list_changed"]
    assert clock.monotonic_ns() >= 500_000_000  # 250 ms recorded x 2, all virtual


def test_latency_none_never_waits() -> None:
    clock = PausedClock()
    out = serve(CALL, None, clock)
    assert out[0]["result"] == {"ok": True}
    assert clock.monotonic_ns() == 0


def test_bad_lines_get_parse_or_invalid_request_errors() -> None:
    out = serve(b"{nope\n[]\n" + CALL, None, PausedClock())
    assert [m["error"]["code"] for m in out[:2]] == [-32700, -32600]
    assert out[2]["result"] == {"ok": True}
