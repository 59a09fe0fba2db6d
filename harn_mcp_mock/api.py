"""The Python API: MCP client sessions over a cassette, in memory.

Replay needs no subprocess: :class:`ReplayTransport` is an ``mcp`` transport whose other end is
a :class:`~harn_mcp_mock.replay.engine.ReplayEngine`, so ``mcp.Client(ReplayTransport(path))``
and :func:`replay_session` talk to the cassette directly. :class:`RecordTransport` launches the
real server with the SDK's stdio client and records every message at the transport seam::

    async with replay_session("tests/cassettes/notes.cassette.json") as session:
        result = await session.call_tool("list_notes", {})

    async with open_replay("notes.cassette.json") as replay:   # when you want the report
        await replay.session.list_tools()
    assert replay.report is not None and replay.report.clean

The ``mcp`` SDK is imported only when a transport is entered, so importing this module (and
``harn_mcp_mock``) stays fast.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TextIO

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, SessionPlan, plan_session
from harn_mcp_mock.errors import ServerStartError, UsageError, sole_exception
from harn_mcp_mock.jsonrpc.codes import INTERNAL_ERROR
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, parse_frame
from harn_mcp_mock.jsonrpc.server import Out
from harn_mcp_mock.options import ClientCallbacks, LiveTarget, ReplayOptions, split_session_keywords
from harn_mcp_mock.replay.engine import ReplayEngine, ReplayReport

if TYPE_CHECKING:
    from typing import Unpack

    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp import ClientSession
    from mcp.client._transport import ReadStream, TransportStreams, WriteStream
    from mcp.client.session import (
        ElicitationFnT,
        ListRootsFnT,
        LoggingFnT,
        MessageHandlerFnT,
        SamplingFnT,
    )
    from mcp.shared.message import SessionMessage
    from mcp_types import Implementation

    from harn_mcp_mock.cassette.claim import CassetteClaim
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.options import ReplayKeywords, SessionKeywords
    from harn_mcp_mock.session.open import Session
    from harn_mcp_mock.session.record import RecordCore

__all__ = [
    "EngineTransport",
    "EpisodesTransport",
    "RecordTransport",
    "ReplaySession",
    "ReplayTransport",
    "WorldTransport",
    "cassette_transport",
    "open_replay",
    "record_session",
    "replay_session",
    "session_over",
]


PathLike = str | os.PathLike[str]


# --- the wire shape of an SDK message ------------------------------------------------------


def _to_wire(message: Any) -> Any:
    """The JSON value the SDK's stdio transport would write for ``message`` (``_meta`` included)."""
    return message.model_dump(by_alias=True, mode="json", exclude_unset=True)


def _frame(message: Any, direction: str) -> Frame:
    return parse_frame(deepjson.dumps(_to_wire(message)), direction)


# --- replay --------------------------------------------------------------------------------


class _SingleUse:
    """An async context manager over ``self._connect()`` that can be entered once."""

    _cm: AbstractAsyncContextManager[TransportStreams] | None = None

    def _connect(self) -> AbstractAsyncContextManager[TransportStreams]:
        raise NotImplementedError

    async def __aenter__(self) -> TransportStreams:
        if self._cm is not None:
            raise RuntimeError(f"{type(self).__name__} can be entered only once: make a new one")
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        __tracebackhide__ = True
        assert self._cm is not None, "not entered"
        try:
            return await self._cm.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The transport's task group wrapped the block's error: let the error itself go on.
            sole = sole_exception(group)
            if sole is group:
                raise
            if sole is exc:
                return False
            raise sole from None


class EngineTransport(_SingleUse):
    """An ``mcp`` client transport answered in memory by a server-side engine (anything with
    ``receive(message) -> list[Out]``: a replay engine, a world engine, or one of yours wrapped by
    :class:`~harn_mcp_mock.tape.mcp.TapedEngine`). Enter it for ``(read_stream, write_stream)``
    or hand it to ``mcp.Client``/:func:`session_over`; it can be entered once."""

    engine: Any
    _what = "server"

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    @property
    def path(self) -> Path | None:
        return None

    def _finished(self) -> None:
        """Called once the client side has closed."""

    def _engine_failed(self, wire: Any, exc: Exception) -> list[Out]:
        text = f"harn-mcp-mock {self._what} engine failed: {type(exc).__name__}: {exc}"
        if not (isinstance(wire, dict) and isinstance(wire.get("method"), str) and "id" in wire):
            return []
        return [Out({"jsonrpc": "2.0", "id": wire["id"], "error": {"code": INTERNAL_ERROR, "message": text}})]

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[TransportStreams]:
        import anyio
        from mcp.shared.message import SessionMessage

        # Unbounded towards the client: the engine's outputs for one message are finite, and a
        # bounded buffer could deadlock a client that is itself blocked writing to us.
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with to_client, client_reads, client_writes, from_client, anyio.create_task_group() as tg:
                tg.start_soon(self._pump, from_client, to_client, tg)
                try:
                    yield client_reads, client_writes
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._finished()

    async def _pump(
        self,
        from_client: MemoryObjectReceiveStream[SessionMessage],
        to_client: MemoryObjectSendStream[SessionMessage | Exception],
        tg: TaskGroup,
    ) -> None:
        import anyio

        async for item in from_client:
            wire = _to_wire(item.message)
            try:
                outs = self.engine.receive(wire)
            except Exception as exc:  # an engine bug must answer the request, not hang the client
                outs = self._engine_failed(wire, exc)
            prefix = 0
            while prefix < len(outs) and outs[prefix].delay_ms <= 0:
                prefix += 1
            if not await _deliver(to_client, outs[:prefix]):
                return
            if prefix < len(outs):
                tg.start_soon(_deliver_later, to_client, outs[prefix:], anyio.current_time())
            if any(out.close for out in outs):
                # The server exited here: end the session as it did. The client reads what was
                # sent, then the end of the stream; its later requests fail at once.
                await from_client.aclose()
                if prefix == len(outs):
                    await to_client.aclose()
                return


class WorldTransport(EngineTransport):
    """An ``mcp`` client transport answered in memory by a seeded world (no subprocess), as
    ``harn mcp mock world`` serves it. After exit, :meth:`state_document` and
    :meth:`report_document` are what ``--state-out`` and ``--report`` would hold. ``tape``
    writes the world's event tape there."""

    _what = "world"

    def __init__(
        self,
        spec: PathLike,
        *,
        task: str | None = None,
        seed: int = 0,
        run_id: str = "run",
        faults: str | None = None,
        tape: PathLike | None = None,
    ) -> None:
        from harn_mcp_mock.shipped import resolve_spec
        from harn_mcp_mock.world.engine import WorldEngine
        from harn_mcp_mock.world.spec import load_spec

        self.spec_path = resolve_spec(spec if isinstance(spec, str) else Path(spec))
        self.world = WorldEngine(
            load_spec(self.spec_path), task=task, seed=seed, run_id=run_id, faults=faults
        )
        self._tape: Any = None
        engine: Any = self.world
        if tape is not None:
            from harn_mcp_mock.tape.mcp import McpTapeObserver, TapedEngine
            from harn_mcp_mock.world.run import world_tape

            self._tape = world_tape(self.world, Path(tape), self.spec_path)
            engine = TapedEngine(self.world, McpTapeObserver(self._tape, self.world.spec.name))
        super().__init__(engine)

    @property
    def path(self) -> Path | None:
        return self.spec_path

    def _finished(self) -> None:
        if self._tape is not None:
            self._tape.close()

    def state_document(self, infra_error: str | None = None) -> dict[str, Any]:
        """The world's final state, as ``--state-out`` writes it."""
        return self.world.state_document(infra_error)

    def report_document(self) -> dict[str, Any]:
        """The world's report (goal, collateral, calls, faults), as ``--report`` writes it."""
        from harn_mcp_mock.scoring.world_report import world_report

        return world_report(self.world)


class ReplayTransport(EngineTransport):
    """An ``mcp`` client transport answered in memory by a replay engine (no subprocess).

    ``cassette`` is a cassette path (the engine is built as ``harn mcp mock replay`` builds
    it, with ``options``, a :class:`~harn_mcp_mock.options.ReplayOptions`, or its fields as
    keywords: ``repeat="cycle"``...) or a ready :class:`ReplayEngine`. Use it as ``mcp.Client(ReplayTransport(path))`` or
    enter it yourself for ``(read_stream, write_stream)``. After exit, :attr:`report` holds the
    :class:`ReplayReport` (misses, unused interactions, client answers that differ). A
    transport can be entered once.
    """

    engine: ReplayEngine
    _what = "replay"

    def __init__(
        self,
        cassette: PathLike | ReplayEngine,
        *,
        options: ReplayOptions | None = None,
        env: Mapping[str, str] | None = None,
        on_event: Callable[[str], None] | None = None,
        **keywords: Unpack[ReplayKeywords],
    ) -> None:
        self._session: Session | None = None
        if isinstance(cassette, ReplayEngine):
            self.engine = cassette
        else:
            from harn_mcp_mock.session.open import open_session

            self.options = ReplayOptions.build(options, **keywords)
            plan = SessionPlan.of(SessionKind.REPLAY, Path(cassette))
            self._session = open_session(
                plan, None, self.options, env={**os.environ, **(env or {})}, on_event=on_event
            )
            self.engine = self._session.engine()  # type: ignore[assignment]  # no tape: the replay engine
        self.report: ReplayReport | None = None
        """The replay report, set when the transport exits."""

    @property
    def path(self) -> Path | None:
        return self.engine.cassette.path

    def _finished(self) -> None:
        if self._session is None:
            self.report = self.engine.finish()
            return
        self._session.retire(self.engine)
        self.report = self._session.report()

    def _engine_failed(self, wire: Any, exc: Exception) -> list[Out]:
        outs = super()._engine_failed(wire, exc)
        for out in outs:
            text = out.message["error"]["message"]
            self.engine.report.misses.append(
                {"method": wire["method"], "id": wire["id"], "explanation": text}
            )
        return outs


async def _deliver(to_client: MemoryObjectSendStream[SessionMessage | Exception], outs: list[Out]) -> bool:
    """Send outputs to the client in order; False when the client has gone."""
    import anyio

    for out in outs:
        if out.fault is not None and out.raw is not None:
            # An injected malformed answer: what an SDK transport hands its session for a line
            # that does not parse.
            problem = ValueError(f"invalid JSON-RPC message from the server: {out.raw[:60]!r}")
            try:
                await to_client.send(problem)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return False
            continue
        if out.message is None:
            continue  # nothing to send (an injected disconnect: only ``close``)
        items = out.message if isinstance(out.message, list) else [out.message]
        for obj in items:
            try:
                await to_client.send(_session_message(obj))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return False
    return True


async def _deliver_later(
    to_client: MemoryObjectSendStream[SessionMessage | Exception], outs: list[Out], start: float
) -> None:
    """Latency mode: each output waits for its delay after ``start``, never overtaking the one before."""
    import anyio

    due = start
    for out in outs:
        due = max(due, start + out.delay_ms / 1000)
        await anyio.sleep_until(due)
        if not await _deliver(to_client, [out]):
            return


def _session_message(obj: Any) -> SessionMessage | Exception:
    """A recorded message as the SDK's transports hand it over; a bad one becomes a value."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(obj, by_name=False))
    except ValidationError as exc:
        msg_id = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(obj, dict) and "method" not in obj and isinstance(msg_id, int | str):
            # A response the SDK cannot read: answer the request with an error instead of a hang.
            text = f"harn-mcp-mock replay: the recorded response is not valid JSON-RPC for the SDK: {exc}"
            error = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": INTERNAL_ERROR, "message": text}}
            return SessionMessage(jsonrpc_message_adapter.validate_python(error, by_name=False))
        return exc


# --- record --------------------------------------------------------------------------------


class _RecordingReadStream:
    """Delegates to the server's read stream, recording every message it delivers."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], core: RecordCore) -> None:
        self._inner = inner
        self._core = core

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        if isinstance(item, Exception):
            # The SDK could not parse a server line; keep its (redacted) complaint in the cassette.
            problem = f"the SDK could not parse a server message ({type(item).__name__})"
            self._core.frame(Frame(SERVER, "invalid", str(item).encode(), problem=problem))
        else:
            self._core.frame(_frame(item.message, SERVER))
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class _RecordingWriteStream:
    """Delegates to the server's write stream, recording each message once it was sent."""

    def __init__(self, inner: WriteStream[SessionMessage], core: RecordCore) -> None:
        self._inner = inner
        self._core = core

    async def send(self, item: SessionMessage, /) -> None:
        # Record only after the inner send returns: a failed or cancelled send never reached the server.
        await self._inner.send(item)
        self._core.frame(_frame(item.message, CLIENT))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


def _default_errlog() -> TextIO:
    """The current stderr if a subprocess can write to it (pytest may swap in one without a fd)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
    return sys.stderr


def _stdio_live(command: LiveTarget | Sequence[str] | None, needs: str) -> LiveTarget:
    """The stdio live server ``command`` (its argv, or a :class:`LiveTarget` with one) as one
    value, checked once; ``needs``: what the error says when there is none."""
    if isinstance(command, str) or command is None:
        command = ()
    live = command if isinstance(command, LiveTarget) else LiveTarget(command)
    if live.url is not None or not live.command:
        raise UsageError(f"{needs}: give its command as a list, e.g. ['python', 'server.py']")
    return live


class RecordTransport(_SingleUse):
    """An ``mcp`` client transport to the real stdio server ``command`` that records a cassette.

    Every message is redacted (``redact_policy``, or the default policy, told the server's argv
    and environment) and recorded as it crosses the seam; on exit the cassette is written to
    ``cassette`` atomically and kept in :attr:`cassette`. The server inherits our environment
    with ``env`` laid over it. While recording it holds the cassette's claim
    (:mod:`harn_mcp_mock.cassette.claim`): a cassette another live process is recording fails
    with :class:`~harn_mcp_mock.errors.CassetteBusyError` naming it (``claim``: one already
    held, as :func:`cassette_transport` passes for record mode ``once``). A transport can be
    entered once.
    """

    def __init__(
        self,
        cassette: PathLike,
        command: LiveTarget | Sequence[str],
        *,
        redact_policy: PathLike | None = None,
        env: Mapping[str, str] | None = None,
        cwd: PathLike | None = None,
        errlog: TextIO | None = None,
        claim: CassetteClaim | None = None,
    ) -> None:
        self.live = _stdio_live(command, "recording needs the live server")
        self.path = Path(cassette)
        self.command = list(self.live.command)
        self.redact_policy = redact_policy
        self.env = dict(env or {})
        self.cwd = cwd
        self.errlog = errlog
        self._claim = claim
        self.cassette: Cassette | None = None
        """The recorded cassette, set when the transport exits."""

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[TransportStreams]:
        from harn_mcp_mock.cassette.claim import recording_claim

        __tracebackhide__ = True
        claim, self._claim = self._claim, None
        with recording_claim(self.path, claim):  # one recorder per cassette (cassette/claim.py)
            async with self._record() as streams:
                yield streams

    @asynccontextmanager
    async def _record(self) -> AsyncIterator[TransportStreams]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from harn_mcp_mock.record.session import load_policy
        from harn_mcp_mock.session.record import RecordCore
        from harn_mcp_mock.session.recorders import new_recorder

        __tracebackhide__ = True
        policy = load_policy(Path(self.redact_policy) if self.redact_policy is not None else None)
        server_env = {**os.environ, **self.env}
        recorder = new_recorder(self.path, policy, self.command, env=server_env)
        core = RecordCore(recorder)
        params = StdioServerParameters(
            command=self.command[0],
            args=self.command[1:],
            env=server_env,
            cwd=os.fspath(self.cwd) if self.cwd is not None else None,
        )
        started = False
        reason = "client-closed"
        try:
            async with stdio_client(params, errlog=self.errlog or _default_errlog()) as (read, write):
                started = True
                try:
                    yield _RecordingReadStream(read, core), _RecordingWriteStream(write, core)
                except BaseException:
                    reason = "client-error"
                    raise
        except BaseException as exc:
            if not started:
                core.discard()
                if isinstance(exc, OSError):
                    raise ServerStartError(
                        f"cannot start the server {self.command[0]!r}: {exc.strerror or exc}", path=self.path
                    ) from exc
                raise
            if not core.server_lines:  # it died before a word (a typo in its path): keep the cassette
                core.discard()
                if isinstance(exc, Exception):
                    raise ServerStartError(
                        f"the server {' '.join(self.command)!r} ended the session before writing a "
                        f"message (its stderr says why; {type(exc).__name__}: {exc}); the cassette "
                        "was left as it was",
                        path=self.path,
                    ) from exc
                raise
            self.cassette = core.finish({"code": None, "signal": None, "reason": reason})
            raise
        self.cassette = core.finish({"code": None, "signal": None, "reason": reason})


# --- new episodes -----------------------------------------------------------------------------


class EpisodesTransport(_SingleUse):
    """``new_episodes``: replay what the cassette holds, forward the rest to the real server
    ``command`` and append it to the cassette.

    It runs in this process: the replay engine answers in memory, as :class:`ReplayTransport`
    does, and the first miss starts ``command`` (the live server) as a child process, through
    the same :class:`~harn_mcp_mock.session.episodes.NewEpisodes` session the CLI's
    ``replay --mode new_episodes`` drives. It holds the cassette's recording claim while it
    runs (``claim``: one held already, as :func:`cassette_transport` passes). On exit it waits
    (up to ``shutdown_timeout`` seconds) for the live server's answers
    to forwarded requests, stops the server and appends, so the new interactions are on disk
    when the ``async with`` block ends; :attr:`report` then holds the replay report
    (``recorded`` counts the forwarded requests). A transport can be entered once.
    """

    def __init__(
        self,
        cassette: PathLike,
        command: LiveTarget | Sequence[str],
        *,
        options: ReplayOptions | None = None,
        ignore_paths: Iterable[str] = (),
        redact_policy: PathLike | None = None,
        env: Mapping[str, str] | None = None,
        cwd: PathLike | None = None,
        errlog: TextIO | None = None,
        shutdown_timeout: float = 30.0,
        claim: CassetteClaim | None = None,
    ) -> None:
        self.live = _stdio_live(command, "new_episodes forwards misses to the live server")
        self.path = Path(cassette)
        self.command = list(self.live.command)
        given: ReplayKeywords = {"ignore_paths": ignore_paths} if ignore_paths else {}
        if redact_policy is not None:
            given["redact_policy"] = redact_policy
        self.options = ReplayOptions.build(options, **given)
        """How the recorded part is matched (``ignore_paths``) and the new part redacted."""
        self.env = dict(env or {})
        self.cwd = cwd
        self.errlog = errlog
        self.shutdown_timeout = shutdown_timeout
        self.report: ReplayReport | None = None
        """The replay report, set when the transport exits."""
        self._claim = claim

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[TransportStreams]:
        import anyio
        from mcp.shared.message import SessionMessage

        from harn_mcp_mock.session.open import open_session

        claim, self._claim = self._claim, None  # one held already (plan_session), else taken here
        plan = SessionPlan.of(SessionKind.EPISODES, self.path, claim)
        with open_session(  # it holds the claim: appends to the cassette, one writer at a time
            plan,
            self.live,
            self.options,
            grace=self.shutdown_timeout,
            env={**os.environ, **self.env},
            cwd=os.fspath(self.cwd) if self.cwd is not None else None,
            stderr=self.errlog or _default_errlog(),
        ) as opened:
            session = opened.episodes()
            to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
            client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](0)
            live_done = anyio.Event()
            answered: list[anyio.Event] = []
            """Set when no forwarded request is left unanswered (or the live server ended)."""

            async def relay(lines: list[bytes]) -> None:
                for line in lines:
                    await to_client.send(_session_message(orjson.loads(line)))

            async def read_live() -> None:
                """The live server's output, read in a worker thread, relayed to the client."""
                assert session.live is not None
                live = session.live
                try:
                    while True:
                        chunk = await anyio.to_thread.run_sync(live.read_chunk)
                        if not chunk:
                            return
                        await relay(session.from_live(chunk))
                        if answered and not session.waiting:
                            answered[0].set()
                finally:
                    live_done.set()
                    if answered:
                        answered[0].set()

            async def write(tg: TaskGroup) -> None:
                async with from_client:
                    async for item in from_client:
                        started = session.live is not None
                        line = deepjson.dumps(_to_wire(item.message))
                        out = await anyio.to_thread.run_sync(session.from_client, line)
                        if not started and session.live is not None:
                            tg.start_soon(read_live)
                        await relay(out)

            try:
                async with to_client, client_reads, anyio.create_task_group() as tg:
                    tg.start_soon(write, tg)
                    try:
                        yield client_reads, client_writes
                    finally:
                        with anyio.CancelScope(shield=True):
                            await client_writes.aclose()
                            if session.live is not None:
                                # Let the forwarded requests be answered, then end the server's
                                # input: it exits, its output ends, the reader stops.
                                answered.append(anyio.Event())
                                if session.waiting and not live_done.is_set():
                                    with anyio.move_on_after(self.shutdown_timeout):
                                        await answered[0].wait()
                                session.live.close_input()
                                with anyio.move_on_after(self.shutdown_timeout):
                                    await live_done.wait()
                        tg.cancel_scope.cancel()
            except BaseException:
                session.abort()
                raise
            self.report = await anyio.to_thread.run_sync(session.finish)


# --- choosing by record mode ------------------------------------------------------------------


def cassette_transport(
    path: PathLike,
    *,
    mode: str | RecordMode = "none",
    command: LiveTarget | Sequence[str] | None = None,
    options: ReplayOptions | None = None,
    env: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
    on_event: Callable[[str], None] | None = None,
    claim_timeout: float | None = None,
    plan: SessionPlan | None = None,
    **keywords: Unpack[ReplayKeywords],
) -> ReplayTransport | RecordTransport | EpisodesTransport:
    """The transport the record ``mode`` asks for: replay ``path``, or record it through ``command``.

    ``none`` replays and never starts a server; ``once`` records when ``path`` does not exist
    yet, else replays; ``all`` always records; ``new_episodes`` replays what the cassette holds and
    forwards the rest to ``command``, appending it (:class:`EpisodesTransport`), or records the
    whole session when there is no cassette yet.

    Parallel runs (pytest-xdist workers, several processes) share cassettes safely: in ``once``
    mode, when another live process is recording ``path``, this call waits for it (up to
    ``claim_timeout`` seconds, default 300; then :class:`~harn_mcp_mock.errors.CassetteBusyError`)
    and replays what it wrote; ``all`` and ``new_episodes`` fail at once with a
    ``CassetteBusyError`` naming that process.

    :func:`~harn_mcp_mock.cassette.modes.plan_session` decides which; ``plan``: one made already
    (then ``mode`` is not read again; a recording transport takes over its claim). ``options``:
    a :class:`~harn_mcp_mock.options.ReplayOptions`, or its fields as keywords (laid over it);
    a recording takes its ``redact_policy``, ``new_episodes`` its ``ignore_paths`` too.
    ``command``: the live server's argv, or a :class:`~harn_mcp_mock.options.LiveTarget`.
    """
    path = Path(path)
    replay = ReplayOptions.build(options, **keywords)
    live = command if isinstance(command, LiveTarget) or command is None else LiveTarget(command)
    if plan is None:
        plan = plan_session(
            mode,
            path,
            live=bool(live),
            needs_live="command=[...], the live server's argv",
            claim_timeout=claim_timeout,
            on_wait=on_event,
            claim_now=False,  # all / new_episodes: taken when the transport is entered
        )
    try:
        if plan.kind is SessionKind.EPISODES:
            return EpisodesTransport(
                path,
                live or (),
                ignore_paths=replay.ignore_paths,
                redact_policy=replay.redact_policy,
                env=env,
                cwd=cwd,
                claim=plan.claim,
            )
        if plan.kind is SessionKind.RECORD:
            return RecordTransport(
                path, live or (), redact_policy=replay.redact_policy, env=env, cwd=cwd, claim=plan.claim
            )
    except BaseException:
        plan.release()
        raise
    return ReplayTransport(path, options=replay, env=env, on_event=on_event)


# --- sessions --------------------------------------------------------------------------------


@dataclass(slots=True)
class ReplaySession:
    """What :func:`open_replay` yields: the live session and, after exit, the outcome."""

    session: ClientSession
    transport: EngineTransport | RecordTransport | EpisodesTransport

    @property
    def recording(self) -> bool:
        """True when this session records through the real server instead of replaying."""
        return isinstance(self.transport, RecordTransport)

    @property
    def path(self) -> Path | None:
        return self.transport.path

    @property
    def report(self) -> ReplayReport | None:
        """The replay report once the session has closed (None while open, or when recording)."""
        return (
            self.transport.report if isinstance(self.transport, ReplayTransport | EpisodesTransport) else None
        )

    @property
    def cassette(self) -> Cassette | None:
        """The recorded cassette once a recording session has closed (None when replaying)."""
        return self.transport.cassette if isinstance(self.transport, RecordTransport) else None


async def _handshake(
    session: ClientSession, transport: EngineTransport | RecordTransport | EpisodesTransport
) -> None:
    """The classic ``initialize`` handshake, or ``server/discover`` if that is what was recorded."""
    if isinstance(transport, ReplayTransport) and transport.engine.cassette.server.get("handshake") == (
        "server/discover"
    ):
        await session.discover()
    else:
        await session.initialize()


@asynccontextmanager
async def session_over(
    transport: EngineTransport | RecordTransport | EpisodesTransport,
    callbacks: ClientCallbacks | None = None,
    *,
    initialize: bool = True,
) -> AsyncIterator[ReplaySession]:
    """A :class:`ReplaySession`: an ``mcp.ClientSession`` over ``transport`` with ``callbacks``,
    handshake done unless ``initialize=False``; an error of the block comes out as itself."""
    from mcp import ClientSession

    __tracebackhide__ = True
    # The SDK session and the transports run task groups, which wrap an error of the block in
    # (nested) exception groups; the caller gets the error itself, to read and to catch.
    try:
        async with transport as (read_stream, write_stream):
            given = callbacks or ClientCallbacks()
            session = ClientSession(
                read_stream,
                write_stream,
                sampling_callback=given.sampling_callback,
                elicitation_callback=given.elicitation_callback,
                list_roots_callback=given.list_roots_callback,
                logging_callback=given.logging_callback,
                message_handler=given.message_handler,
                client_info=given.client_info,
            )
            async with session:
                if initialize:
                    await _handshake(session, transport)
                yield ReplaySession(session, transport)
    except BaseExceptionGroup as group:
        sole = sole_exception(group)
        if sole is group:
            raise
        raise sole from None


@asynccontextmanager
async def open_replay(
    path: PathLike,
    *,
    mode: str | RecordMode = "none",
    options: ReplayOptions | None = None,
    command: LiveTarget | Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
    on_event: Callable[[str], None] | None = None,
    claim_timeout: float | None = None,
    callbacks: ClientCallbacks | None = None,
    initialize: bool = True,
    **keywords: Unpack[SessionKeywords],
) -> AsyncIterator[ReplaySession]:
    """:func:`replay_session`, yielding a :class:`ReplaySession` whose ``report`` is set on exit."""
    replay, given = split_session_keywords(keywords, callbacks)
    transport = cassette_transport(
        path,
        mode=mode,
        command=command,
        options=ReplayOptions.build(options, **replay),
        env=env,
        cwd=cwd,
        on_event=on_event,
        claim_timeout=claim_timeout,
    )
    async with session_over(transport, given, initialize=initialize) as session:
        yield session


P = ParamSpec("P")


def _client_session_of(
    opener: Callable[P, AbstractAsyncContextManager[ReplaySession]],
) -> Callable[P, AbstractAsyncContextManager[ClientSession]]:
    """``opener``'s session, with ``opener``'s parameters (spelled once, on ``opener``)."""

    @asynccontextmanager
    async def replay_session(*args: P.args, **kwargs: P.kwargs) -> AsyncIterator[ClientSession]:
        """An ``mcp.ClientSession`` connected in memory to a replay of the cassette at ``path``.

        The session has done its handshake (``initialize``, or ``server/discover`` when the
        cassette recorded that) unless ``initialize=False``. A request with no recorded match
        fails with an ``MCPError`` (code -32050) naming the method and the nearest recorded
        candidates. With ``mode="once"`` and no cassette yet, or ``mode="all"``, the session
        instead records through the real server ``command``. ``options``: a
        :class:`~harn_mcp_mock.options.ReplayOptions`, or its fields as keywords
        (``repeat="cycle"``...); ``callbacks``: a :class:`~harn_mcp_mock.options.ClientCallbacks`,
        or its fields as keywords (``sampling_callback=``...). Use :func:`open_replay` to read the
        replay report.
        """
        async with opener(*args, **kwargs) as replay:
            yield replay.session

    replay_session.__wrapped__ = opener  # type: ignore[attr-defined]  # inspect.signature: opener's
    replay_session.__qualname__ = "replay_session"
    return replay_session


replay_session = _client_session_of(open_replay)


@asynccontextmanager
async def record_session(
    path: PathLike,
    command: LiveTarget | Sequence[str],
    *,
    redact_policy: PathLike | None = None,
    env: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
    sampling_callback: SamplingFnT | None = None,
    elicitation_callback: ElicitationFnT | None = None,
    list_roots_callback: ListRootsFnT | None = None,
    logging_callback: LoggingFnT | None = None,
    message_handler: MessageHandlerFnT | None = None,
    client_info: Implementation | None = None,
    initialize: bool = True,
) -> AsyncIterator[ClientSession]:
    """An ``mcp.ClientSession`` to the real stdio server ``command``, recording ``path``.

    The cassette is written when the block exits (``exit.reason`` ``client-closed``, or
    ``client-error`` when the block raised). For ``mcp.Client``'s own handshake modes use
    ``mcp.Client(RecordTransport(path, command), mode="auto")``.
    """
    transport = RecordTransport(path, command, redact_policy=redact_policy, env=env, cwd=cwd)
    callbacks = ClientCallbacks(
        sampling_callback,
        elicitation_callback,
        list_roots_callback,
        logging_callback,
        message_handler,
        client_info,
    )
    async with session_over(transport, callbacks, initialize=initialize) as replay:
        yield replay.session
