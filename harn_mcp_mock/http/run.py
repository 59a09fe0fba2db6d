"""What the CLI calls for ``replay --http`` (:func:`run_http_session`, whatever the record mode)
and ``record --url`` (:func:`~harn_mcp_mock.http.record_proxy.record_http`).

The session is :func:`~harn_mcp_mock.session.open.open_session`'s (its engines, tape and fault
marking, its merged report); this module only serves its engines over Streamable HTTP, one
per ``Mcp-Session-Id``, and hands each ended one back. A recording of a Streamable HTTP server
(``--url``) goes through the recording reverse proxy, which keeps HTTP's own facts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson

from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, SessionPlan
from harn_mcp_mock.http.guard import GuardSettings
from harn_mcp_mock.http.replay_server import SseMode, build_app, redirect_paths
from harn_mcp_mock.http.server import HttpServer, print_url
from harn_mcp_mock.options import LiveTarget, ReplayOptions
from harn_mcp_mock.replay.engine import ReplayReport
from harn_mcp_mock.session.open import ReplayOutcome, Session, open_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from harn_mcp_mock.shutdown import StopSignals


class _Serving:
    """Where and how the sessions are served (the HTTP server's settings)."""

    def __init__(
        self,
        host: str,
        port: int,
        allow_remote: bool,
        sse: SseMode,
        on_event: Callable[[str], None] | None,
        on_ready: Callable[[str], None] | None,
        on_server: Callable[[HttpServer], None] | None,
        stop: StopSignals | None,
        guard: GuardSettings | None,
    ) -> None:
        self.host, self.port, self.allow_remote, self.sse = host, port, allow_remote, sse
        self.on_event, self.on_ready, self.on_server, self.stop = on_event, on_ready, on_server, stop
        self.guard = guard or GuardSettings.for_host(host)

    def serve(self, session: Session) -> None:
        """Serve ``session``'s engines until a stop signal or ``server.stop()``; every session
        still open then is handed back too."""
        also = redirect_paths(session.first_engine()) if session.kind is SessionKind.REPLAY else ()
        app, endpoint = build_app(
            session.engine, sse=self.sse, on_event=self.on_event, also=also, guard=self.guard
        )
        endpoint.on_retire = session.retire
        server = HttpServer(
            app, host=self.host, port=self.port, allow_remote=self.allow_remote, on_shutdown=endpoint.close
        )
        if self.on_server is not None:
            self.on_server(server)
        server.run(self.on_ready, stop=self.stop)
        for engine in list(endpoint.engines):  # the sessions still open when the serving stopped
            session.retire(engine)


def run_replay_http(
    cassette: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    sse: SseMode = "auto",
    report_path: str | Path | None = None,
    options: ReplayOptions | None = None,
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[str], None] | None = print_url,
    on_server: Callable[[HttpServer], None] | None = None,
    stop: StopSignals | None = None,
    guard: GuardSettings | None = None,
    emit_tape: str | Path | None = None,
) -> ReplayReport:
    """Serve ``cassette`` over Streamable HTTP until ``server.stop()`` or a stop signal (caught by
    ``stop``, see :meth:`HttpServer.run`); write ``report_path``; the merged report of all sessions.
    ``guard``: the Origin/Host/body-size checks and session limits (defaults for ``host``).
    ``emit_tape``: also write every exchange of every session, in the order served, to one event
    tape (as stdio replay's ``--emit-tape``)."""
    plan = SessionPlan.of(SessionKind.REPLAY, Path(cassette))
    serving = _Serving(host, port, allow_remote, sse, on_event, on_ready, on_server, stop, guard)
    return _run(plan, None, options, emit_tape, serving, report_path)


def _run(
    plan: SessionPlan,
    live: LiveTarget | None,
    options: ReplayOptions | None,
    emit_tape: str | Path | None,
    serving: _Serving,
    report_path: str | Path | None,
) -> ReplayReport:
    """Serve a replay or episodes session; write ``report_path``; its report."""
    argv = ["replay", "--http"] + (["--mode", "new_episodes"] if plan.kind is SessionKind.EPISODES else [])
    # the cassette and the policy are loaded here: a bad one fails before a URL is printed
    with open_session(
        plan, live, options, tape=emit_tape, tape_argv=argv, on_event=serving.on_event
    ) as session:
        serving.serve(session)
        report = session.report()
    if report_path is not None:
        from harn_mcp_mock.store.cas import atomic_write

        atomic_write(Path(report_path), orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return report


def run_http_session(
    cassette: str | Path,
    *,
    mode: str = "none",
    live: LiveTarget | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_remote: bool = False,
    sse: SseMode = "auto",
    report_path: str | Path | None = None,
    options: ReplayOptions | None = None,
    emit_tape: str | Path | None = None,
    on_event: Callable[[str], None] | None = None,
    on_ready: Callable[[str], None] | None = print_url,
    on_server: Callable[[HttpServer], None] | None = None,
    stop: StopSignals | None = None,
    guard: GuardSettings | None = None,
    plan: SessionPlan | None = None,
) -> ReplayOutcome:
    """``replay --http`` in any record mode: serve what :func:`~harn_mcp_mock.cassette.modes.plan_session`
    plans over Streamable HTTP until a stop signal or ``server.stop()``.

    The live server is ``live``: a command (a stdio server) or a URL (a Streamable HTTP server,
    with its ``NAME:VALUE`` headers). A replay serves ``cassette``; a recording forwards every
    session's messages to the live server and writes the cassette when the serving stops
    (a URL: the recording reverse proxy; a command: one recorded session,
    :class:`~harn_mcp_mock.session.record.RecordEngine`); episodes replay what the cassette
    holds and forward the rest (:class:`~harn_mcp_mock.session.episodes.EpisodesEngine`),
    appending it. ``emit_tape``: also write every exchange to an event tape, whatever the
    session is (a recording tapes what the clients and the live server exchanged; episodes
    every exchange served, replayed or live), redacted again at the end with what the
    redactors learned. ``plan``: one made already (the pytest plugin's; then ``mode`` is not
    read again)."""
    from harn_mcp_mock.cassette.modes import parse_record_mode, plan_session
    from harn_mcp_mock.errors import UsageError

    record_mode = parse_record_mode(mode)
    live = live if live is not None else LiveTarget()
    if live and record_mode is RecordMode.NONE and plan is None:
        raise UsageError(
            "--mode none never starts a server: drop the live server (`--` or --url), or pick a mode that records"
        )
    opts = options if options is not None else ReplayOptions()
    if plan is None:
        plan = plan_session(
            record_mode,
            cassette,
            live=bool(live),
            needs_live="the live server: its command after `--`, or --url URL",
            on_wait=on_event,
        )
    serving = _Serving(host, port, allow_remote, sse, on_event, on_ready, on_server, stop, guard)
    with plan:
        if plan.kind is not SessionKind.REPLAY and opts.fault_rules:
            raise UsageError("--faults fires on a replay, not on a session that records", where="--faults")
        if plan.kind is not SessionKind.RECORD:
            report = _run(plan, live, opts, emit_tape, serving, report_path)
            return ReplayOutcome(plan.mode, report)
        if live.url is not None:
            from harn_mcp_mock.http.record_proxy import record_http
            from harn_mcp_mock.options import RecordOptions

            recorded, _proxy = record_http(
                cassette,
                live,
                RecordOptions(opts.redact_policy),
                host=host,
                port=port,
                allow_remote=allow_remote,
                on_ready=on_ready,
                on_event=on_event,
                on_server=on_server,
                guard=guard,
                claim=plan.claim,
                stop=stop,
                emit_tape=emit_tape,
            )
        else:  # one recorded session of a stdio server
            argv = ["replay", "--http"]  # (the command unredacted: not here)
            with open_session(plan, live, opts, tape=emit_tape, tape_argv=argv, on_event=on_event) as session:
                serving.serve(session)
                recorded = session.recorded()
        if on_event is not None:
            on_event(f"recorded {cassette} ({len(recorded.messages)} messages)")
        return ReplayOutcome(plan.mode, None)
