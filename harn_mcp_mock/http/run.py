"""What the CLI calls for ``replay --http`` and ``record --url`` (one function each)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from harn_mcp_mock.http.guard import GuardSettings
from harn_mcp_mock.http.replay_server import SseMode, build_app, redirect_paths
from harn_mcp_mock.http.server import HttpServer, print_url
from harn_mcp_mock.jsonrpc.server import Engine
from harn_mcp_mock.options import ReplayOptions
from harn_mcp_mock.replay.engine import ReplayEngine, ReplayReport

if TYPE_CHECKING:
    from harn_mcp_mock.shutdown import StopSignals


class ReportMerger:
    """Folds the reports of sessions' engines into one, an engine at a time (an ended session's
    engine is folded in and then freed): counts and misses add up; an interaction is unused
    only if no session used it (sessions of one replay share their interactions, see
    :meth:`ReplayEngine.continue_from`, so that is one judgement over all of them)."""

    def __init__(self, cassette: str | None) -> None:
        self.merged = ReplayReport(cassette)
        self.count = 0
        self._unused: dict[int, dict[str, object]] | None = None

    def add(self, engine: ReplayEngine) -> None:
        report = engine.finish()
        merged = self.merged
        merged.requests += report.requests
        merged.hits += report.hits
        merged.recorded += report.recorded
        merged.misses.extend(report.misses)
        merged.answer_mismatches.extend(report.answer_mismatches)
        merged.unanswered.extend(report.unanswered)
        if report.faults_fired is not None:
            merged.faults_fired = [*(merged.faults_fired or []), *report.faults_fired]
        mine = {int(entry["seq"]): entry for entry in report.unused}
        unused = self._unused
        self._unused = mine if unused is None else {seq: e for seq, e in unused.items() if seq in mine}
        self.count += 1

    def result(self) -> ReplayReport:
        self.merged.unused = list((self._unused or {}).values())
        return self.merged


def merge_reports(engines: Sequence[ReplayEngine], cassette: str | None) -> ReplayReport:
    """One report for every session's engine (see :class:`ReportMerger`)."""
    merger = ReportMerger(cassette)
    for engine in engines:
        merger.add(engine)
    return merger.result()


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
) -> ReplayReport:
    """Serve ``cassette`` over Streamable HTTP until ``server.stop()`` or a stop signal (caught by
    ``stop``, see :meth:`HttpServer.run`); write ``report_path``; the merged report of all sessions.
    ``guard``: the Origin/Host/body-size checks and session limits (defaults for ``host``)."""
    from harn_mcp_mock.replay.session import engine_factory
    from harn_mcp_mock.store.cas import atomic_write

    engines: list[ReplayEngine] = []
    origin: list[ReplayEngine] = []
    # The first engine made (the check below): every session's engine shares its interactions.

    # Fails now (bad cassette, bad flags), before printing a URL; sessions share the parsed cassette.
    make = engine_factory(cassette, options, on_event=on_event)

    def factory() -> ReplayEngine:
        engine = make()
        if origin:  # every session goes on with the one recorded sequence (a reconnecting client)
            engine.continue_from(origin[0])
        else:
            origin.append(engine)
        engines.append(engine)
        return engine

    merger = ReportMerger(str(cassette))

    def retire(engine: Engine) -> None:  # an ended session's: fold its report in, then forget it
        engines.remove(engine)  # type: ignore[arg-type]
        merger.add(engine)  # type: ignore[arg-type]

    first = factory()
    engines.clear()
    guard = guard or GuardSettings.for_host(host)
    app, endpoint = build_app(factory, sse=sse, on_event=on_event, also=redirect_paths(first), guard=guard)
    endpoint.on_retire = retire
    server = HttpServer(app, host=host, port=port, allow_remote=allow_remote, on_shutdown=endpoint.close)
    if on_server is not None:
        on_server(server)
    server.run(on_ready, stop=stop)
    for engine in engines if engines or merger.count else [first]:
        merger.add(engine)
    report = merger.result()
    if report_path is not None:
        atomic_write(Path(report_path), orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return report
