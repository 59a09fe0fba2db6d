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
from harn_mcp_mock.errors import ServerError
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


class LineEngine(Engine, Protocol):
    """An engine with a live side, served line by line on stdio (``new_episodes``): it takes
    the client's lines as they came (bytes, passed on byte for byte), and a live server's
    output (``live_fd``) is relayed as it comes. After the client's EOF the loop waits, up to
    ``wait`` seconds of silence each time, while the live side ``owes`` answers (how many)."""

    wait: float

    def receive_line(self, line: bytes) -> list[Out]: ...
    @property
    def live_fd(self) -> int | None: ...
    def from_live(self) -> list[Out]: ...
    @property
    def owes(self) -> int: ...


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

    A :class:`LineEngine` gets each line as it came and its live side is read as it speaks;
    after the client's EOF the loop waits for what the live side owes (a ServerError when it
    stays silent ``engine.wait`` seconds). A client that stopped reading does not end it: the
    live side's answers are still taken.
    """
    relay: LineEngine | None = engine if hasattr(engine, "receive_line") else None  # type: ignore[assignment]
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

    stops = [] if stop_fd is None else [stop_fd]
    buffer: list[bytes]
    eof = False
    while not eof or timers or (relay is not None and relay.owes):
        now = clock.monotonic_ns()
        ready: list[bytes] = []
        while timers and timers[0][0] <= now:
            ready.append(heapq.heappop(timers)[2])
        send(ready)
        if client_gone and relay is None:
            break
        live_fd = None if relay is None else relay.live_fd
        if eof and relay is not None and not timers:
            assert live_fd is not None  # it owes answers: it was started
            readable = select.select([live_fd, *stops], [], [], relay.wait)[0]
            if stop_fd is not None and stop_fd in readable:
                break
            if not readable:
                raise ServerError(
                    f"the live server did not answer {relay.owes} forwarded request(s) within {relay.wait}s"
                )
            buffer = []
            emit(relay.from_live(), clock.monotonic_ns(), buffer)
            send(buffer)
            continue
        if eof:
            if timers:
                delay = max(0, timers[0][0] - clock.monotonic_ns()) / 1e9
                if stop_fd is not None and select.select([stop_fd], [], [], delay)[0]:
                    break
                clock.sleep(max(0, timers[0][0] - clock.monotonic_ns()) / 1e9)
            continue
        timeout = None if not timers else max(0.0, (timers[0][0] - now) / 1e9)
        watched = [stdin_fd, *stops] if live_fd is None else [stdin_fd, live_fd, *stops]
        readable, _, _ = select.select(watched, [], [], timeout)
        if stop_fd is not None and stop_fd in readable:
            break  # a stop signal: end as at a client disconnect
        if relay is not None and live_fd in readable:
            buffer = []
            emit(relay.from_live(), clock.monotonic_ns(), buffer)
            send(buffer)
            if stdin_fd not in readable:
                continue
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
        buffer = []
        for line in lines:
            if relay is not None:  # the line as it came: the engine passes it on byte for byte
                emit(relay.receive_line(line), now, buffer)
                continue
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
