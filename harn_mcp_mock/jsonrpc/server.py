"""Serve a JSON-RPC engine over our own stdin/stdout: one thread, ``select``, no asyncio.

An engine is anything with ``receive(parsed_message) -> list[Out]`` (the replay engine, the
world engine). Start-up cost matters (a test suite may start hundreds of servers), so this
loop imports nothing heavy. Outputs with a delay (``--latency recorded``) wait on a timer heap;
later outputs of the same request never overtake an earlier delayed one.
"""

from __future__ import annotations

import heapq
import os
import select
from collections.abc import Callable

from harn_mcp_mock import deepjson
from harn_mcp_mock._record import record
from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.jsonrpc.codes import INVALID_REQUEST, PARSE_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter, write_all

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object  # a protocol for the type checker; a plain base class at run time


@record
class Out:
    """One message to send, optionally after ``delay_ms`` (on the injected clock)."""

    message: Any
    delay_ms: float = 0.0
    close: bool = False
    """The session ends after this output (a replayed server that exited here): the transport
    sends it, reads nothing more and closes, as the recorded server's end did."""
    raw: bytes | None = None
    """A line that is not JSON-RPC (a replayed server's stdout noise), written as it is followed
    by a newline instead of ``message``; only stdio sends it."""
    fault: dict[str, Any] | None = None
    """An injected transport fault for the HTTP transport to carry out (``replay --faults``:
    ``disconnect``, ``http_status``, ``malformed``); stdio needs only ``message``/``raw``/``close``.
    ``message`` is None when nothing is sent."""


class Engine(Protocol):
    def receive(self, message: Any) -> list[Out]: ...


def receive_batch(receive: Callable[[Any], list[Out]], batch: list[Any]) -> list[Out]:
    """An engine's outputs for a JSON-RPC batch: each member through ``receive``, the answers
    gathered into one batch output after whatever else came out (server requests and
    notifications, in order); a ``close`` on any output closes after the last."""
    outs: list[Out] = []
    responses: list[Any] = []
    close = False
    for item in batch:
        for out in receive(item):
            close = close or out.close
            if isinstance(out.message, dict) and "method" not in out.message:
                responses.append(out.message)
            else:
                outs.append(out)
    if responses:
        outs.append(Out(responses))
    if close and outs:
        outs[-1].close = True
    return outs


CHUNK = 1 << 16


def serve_stdio(
    engine: Engine,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    clock: Clock = SYSTEM_CLOCK,
    on_event: Callable[[str], None] | None = None,
    stop_fd: int | None = None,
) -> None:
    """Answer client messages until stdin closes (or an output says ``close``) and every
    delayed output is sent.

    ``stop_fd`` (:attr:`harn_mcp_mock.shutdown.StopSignals.fd`): once it is readable the loop
    returns at once, as if the client had gone (outputs still delayed are dropped).
    """
    splitter = LineSplitter()
    timers: list[tuple[int, int, bytes]] = []
    counter = 0
    client_gone = False

    def emit(outs: list[Out], now: int, buffer: list[bytes]) -> None:
        nonlocal counter
        due = now
        for out in outs:
            if out.raw is None and out.message is None:
                continue  # nothing to send (an injected disconnect: only ``close``)
            data = (out.raw if out.raw is not None else deepjson.dumps(out.message)) + b"\n"
            due = max(due, now + int(out.delay_ms * 1_000_000))
            if due > now:
                counter += 1
                heapq.heappush(timers, (due, counter, data))
            else:
                buffer.append(data)

    def send(buffer: list[bytes]) -> None:
        nonlocal client_gone
        if buffer and not client_gone:
            try:
                write_all(stdout_fd, b"".join(buffer))
            except (BrokenPipeError, OSError):
                client_gone = True

    watched = [stdin_fd] if stop_fd is None else [stdin_fd, stop_fd]
    eof = False
    while not eof or timers:
        now = clock.monotonic_ns()
        ready: list[bytes] = []
        while timers and timers[0][0] <= now:
            ready.append(heapq.heappop(timers)[2])
        send(ready)
        if client_gone:
            break
        if eof:
            if timers:
                delay = max(0, timers[0][0] - clock.monotonic_ns()) / 1e9
                if stop_fd is not None and select.select([stop_fd], [], [], delay)[0]:
                    break
                clock.sleep(max(0, timers[0][0] - clock.monotonic_ns()) / 1e9)
            continue
        timeout = None if not timers else max(0.0, (timers[0][0] - now) / 1e9)
        readable, _, _ = select.select(watched, [], [], timeout)
        if stop_fd is not None and stop_fd in readable:
            break  # a stop signal: end as at a client disconnect
        if not readable:
            # The wait was on the real clock; let an injected (paused) clock catch up too. For
            # the system clock the remaining time is already ~0.
            clock.sleep(max(0, timers[0][0] - clock.monotonic_ns()) / 1e9)
            continue
        try:
            chunk = os.read(stdin_fd, CHUNK)
        except OSError:
            chunk = b""
        lines: list[bytes]
        if chunk:
            lines = splitter.feed(chunk)
        else:
            eof = True
            rest = splitter.flush()
            lines = [rest] if rest is not None else []
        now = clock.monotonic_ns()
        buffer: list[bytes] = []
        for line in lines:
            frame = parse_frame(line, CLIENT)
            if frame.kind == "invalid":
                if on_event is not None:
                    on_event(f"invalid message from the client: {frame.problem}")
                not_json = (frame.problem or "").startswith("not JSON")
                code, text = (
                    (PARSE_ERROR, "Parse error") if not_json else (INVALID_REQUEST, "Invalid Request")
                )
                error = {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": code, "message": f"{text}: {frame.problem}"},
                }
                emit([Out(error)], now, buffer)
                continue
            outs = engine.receive(frame.obj)
            emit(outs, now, buffer)
            if any(out.close for out in outs):
                eof = True  # the replayed server ended here: read nothing more
                break
        send(buffer)
