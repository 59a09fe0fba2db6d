"""Building a session: the one place an engine is put together for a transport to serve.

:func:`open_session` takes what :func:`~harn_mcp_mock.cassette.modes.plan_session` planned
(replay, episodes or record), the live server (a :class:`~harn_mcp_mock.options.LiveTarget`)
and the replay options, and returns a :class:`Session`: the engines a transport serves, one per
client session (:meth:`Session.engine`), with the tape and the fault marking wired here, once,
whatever the transport (stdio, Streamable HTTP, the Python API's in-memory streams); each
ended client session is handed back (:meth:`Session.retire`) and folded into one report, or
its recording written. Transports only serve the engines and carry out wire faults::

    plan --> open_session(plan, live, options) --> Session.engine() --> transport serves it

:func:`open_record` puts a recording engine together (the recorder, the tape's observer, the
upstream).

This module is on replay's start-up path (stdio replay): it imports nothing heavy at module
level (no typing, no threading; the recording and episodes modules load when used).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from harn_mcp_mock._record import record
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind
from harn_mcp_mock.options import LiveTarget, ReplayOptions
from harn_mcp_mock.replay.engine import ReplayEngine, ReplayReport

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import IO, Any

    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.cassette.modes import SessionPlan
    from harn_mcp_mock.jsonrpc.server import Engine, Out
    from harn_mcp_mock.session.episodes import NewEpisodes
    from harn_mcp_mock.session.record import RecordEngine
    from harn_mcp_mock.session.recorder import MessageRedactor
    from harn_mcp_mock.session.tape import RecordingTape


@record
class ReplayOutcome:
    """What a session came to: its record mode, the replay report (None: it recorded) and,
    for a stdio recording, the live server's exit code."""

    mode: RecordMode
    report: ReplayReport | None
    exit_code: int = 0

    @property
    def clean(self) -> bool:
        return self.report is None or self.report.clean

    def problem_summary(self) -> str:
        if self.report is None:
            return "recorded"
        r = self.report
        return (
            f"{len(r.misses)} missed request(s), {len(r.unused)} unused recorded interaction(s), "
            f"{len(r.answer_mismatches)} client answer(s) different from the recording"
            + (
                f", {len(r.unanswered)} request(s) recorded without an answer (the session ended there)"
                if r.unanswered
                else ""
            )
        )


class ReportMerger:
    """Folds the reports of sessions' engines into one, an engine at a time (an ended session's
    engine is folded in and then freed): counts and misses add up; an interaction is unused
    only if no session used it (sessions of one replay share their interactions, see
    :meth:`ReplayEngine.continue_from`, so that is one judgement over all of them)."""

    def __init__(self, cassette: str | None) -> None:
        self.merged = ReplayReport(cassette)
        self.count = 0
        self._unused: dict[int, dict[str, object]] | None = None
        self._only: ReplayReport | None = None

    def add(self, engine: Any) -> None:
        """Finish ``engine`` (a replay engine, or anything whose ``finish()`` is a report)."""
        self.add_report(engine.finish())

    def add_report(self, report: ReplayReport) -> None:
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
        self._only = report if not self.count else None
        self.count += 1

    def result(self) -> ReplayReport:
        if self._only is not None:  # one session: its own report, as it stands
            return self._only
        self.merged.unused = list((self._unused or {}).values())
        return self.merged


def merge_reports(engines: Sequence[ReplayEngine], cassette: str | None) -> ReplayReport:
    """One report for every session's engine (see :class:`ReportMerger`)."""
    merger = ReportMerger(cassette)
    for engine in engines:
        merger.add(engine)
    return merger.result()


def tape_server_name(cassette: Cassette, path: Path) -> str:
    """The ``server`` of a replay's tape records: the recorded server's name, else the file's."""
    return str((cassette.server.get("serverInfo") or {}).get("name") or path.name)


class Refusing:
    """The engine of a session that cannot be recorded: every request gets an error saying why
    (a stdio server is recorded one session at a time; the server could not be started)."""

    def __init__(self, text: str) -> None:
        self.cassette = None
        self.text = text

    def receive(self, message: Any) -> list[Out]:
        from harn_mcp_mock.jsonrpc.codes import INVALID_REQUEST
        from harn_mcp_mock.jsonrpc.server import Out

        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            error = {"code": INVALID_REQUEST, "message": self.text}
            return [Out({"jsonrpc": "2.0", "id": message["id"], "error": error})]
        return []


class Session:
    """The session ``plan`` asks for (built as :func:`open_session`), over the live server
    ``live`` (episodes and record; None for a replay) with ``options``; use it as a context
    manager (the cassette's claim is held while it writes, the tape closed on the way out).

    :meth:`engine` makes the engine of one client session (stdio and the Python API serve one;
    Streamable HTTP one per ``Mcp-Session-Id``), already wrapped for the tape and the fault
    marking; :meth:`retire` takes an ended one back (its report folded in, its recording
    written, its new episodes appended); :meth:`report` is the merged report (replay,
    episodes) and :meth:`recorded` the recording (record).

    ``tape``: every exchange also goes to the event tape there (``tape_argv`` in its header),
    whatever the session is (a replay's exchanges; episodes' replayed and live ones; a
    recording's), redacted again at the end with what the session's redactors learned; with
    fault rules the tape marks the exchanges that got a fault. ``env``, ``cwd``, ``stderr``,
    ``grace``: episodes' live child process. ``raw_lines``: a replay re-emits the recorded
    server's non-JSON lines (stdio)."""

    def __init__(
        self,
        plan: SessionPlan,
        live: LiveTarget | None = None,
        options: ReplayOptions | None = None,
        *,
        tape: str | Path | None = None,
        tape_argv: Sequence[str] = ("replay",),
        on_event: Callable[[str], None] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[Any] | None = None,
        grace: float = 5.0,
        raw_lines: bool = False,
    ) -> None:
        options = options if options is not None else ReplayOptions()
        self.plan = plan
        self.kind: SessionKind = plan.kind
        self.mode: RecordMode = plan.mode
        self.path = Path(plan.cassette)
        self.live = live
        self.options = options
        self.on_event = on_event
        self.env = env
        self.cwd = cwd
        self.stderr = stderr
        self.grace = grace
        self.raw_lines = raw_lines
        self.merger = ReportMerger(str(plan.cassette))
        self.cassette: Cassette | None = None
        """The recording written (record), once the session ended."""
        self._tape_path = tape
        self._tape_argv = list(tape_argv)
        self.tape: RecordingTape | None = None
        self._claim: Any = None
        self._origin: Any = None
        """Replay: the first engine made; every later session's engine goes on with its sequence."""
        self._made = 0
        self._recording: list[RecordEngine] = []
        self._make: Callable[[], ReplayEngine] | None = None
        if self.kind is SessionKind.REPLAY:
            from harn_mcp_mock.replay.session import engine_factory

            self._make = engine_factory(self.path, options, env=env, on_event=on_event)  # errors now

    # -- the way in and out ------------------------------------------------------------------------

    def __enter__(self) -> Session:
        if self.kind is not SessionKind.REPLAY:  # it writes the cassette: one writer at a time
            from harn_mcp_mock.cassette.claim import recording_claim

            self._claim = recording_claim(self.path, self.plan.claim)
            self._claim.__enter__()
        try:
            if self._tape_path is not None:
                from harn_mcp_mock.session.tape import RecordingTape

                script = str(self.path)
                self.tape = RecordingTape(self._tape_path, script_path=script, argv=self._tape_argv)
        except BaseException:
            self._release(None)
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if self.tape is not None:
                self.tape.close(unanswered=exc is None)
        finally:
            self._release(exc)

    def _release(self, exc: BaseException | None) -> None:
        if self._claim is not None:
            claim, self._claim = self._claim, None
            claim.__exit__(type(exc) if exc is not None else None, exc, None)

    # -- engines -----------------------------------------------------------------------------------

    def engine(self, stop_fd: int | None = None) -> Engine:
        """The engine of a new client session. ``stop_fd``: the stdio loop's stop signal (it
        cuts short the wait for an episodes' live server to exit)."""
        self._made += 1
        if self.kind is SessionKind.REPLAY:
            return self._replay_engine()
        if self.kind is SessionKind.EPISODES:
            from harn_mcp_mock.session.episodes import EpisodesEngine

            return EpisodesEngine(self.episodes(), stop_fd=stop_fd)
        return self._record_engine()

    def _replay_engine(self) -> Engine:
        assert self._make is not None
        engine = self._make()
        engine.raw_lines = self.raw_lines
        if self._origin is None:
            self._origin = engine
        else:  # every session goes on with the one recorded sequence (a reconnecting client)
            engine.continue_from(self._origin)
        tape = self.tape
        if tape is None:
            return engine
        from harn_mcp_mock.tape.mcp import TapedEngine

        tape.redactors.append(engine.redactor)
        observer = tape.observer(tape_server_name(engine.cassette, self.path))
        if self.options.fault_rules:  # the tape marks the exchanges that got an injected fault
            engine.on_fire = lambda fired: observer.mark_fault(fired["id"], fired)  # type: ignore[attr-defined]
        taped: Engine = TapedEngine(engine, observer, engine.redactor.redact_message)
        return taped

    def episodes(self) -> NewEpisodes:
        """A new ``new_episodes`` session (:meth:`engine` wraps it in an
        :class:`~harn_mcp_mock.session.episodes.EpisodesEngine`; the Python API drives it as it is)."""
        from harn_mcp_mock.session.episodes import NewEpisodes

        session = NewEpisodes(
            self.path,
            self.live if self.live is not None else LiveTarget(),
            options=self.options,
            on_event=self.on_event,
            grace=self.grace,
            env=self.env,
            cwd=self.cwd,
            stderr=self.stderr,
        )
        if self.tape is not None:
            session.observer = self.tape.observer(tape_server_name(session.engine.cassette, self.path))
            self.tape.redactors.extend(session.redactors)
        if self._made > 1:  # sessions record side by side: one scratch recording each
            session.scratch = session.scratch.with_name(f"{self._made}.{session.scratch.name}")
        return session

    def _record_engine(self) -> Engine:
        """The recording engine of the first client session (a stdio server is recorded one
        session at a time); later sessions are told so."""
        from harn_mcp_mock.errors import ServerError

        recording = self._recording
        if recording and recording[0].only_probed:  # the probe's session-less engine, then
            return recording[0]  # the same client's initialize: one stdio session, as over stdio
        if recording:
            return Refusing(
                f"this server records one session of the stdio server into {self.path.name}; "
                "restart it (or use --url for a Streamable HTTP server) to record another"
            )
        assert self.live is not None
        try:
            recording.append(
                open_record(
                    self.live, self.path, policy_path=self.options.redact_policy, observe=self._observe
                )
            )
        except ServerError as exc:  # the session is told; a later one may try again
            return Refusing(f"the live server could not be started: {exc}")
        return recording[0]

    def _observe(self, shown: list[str], redactor: MessageRedactor) -> Any:
        if self.tape is None:
            return None
        self.tape.redactors.append(redactor)
        return self.tape.observer(Path(shown[0]).name)  # the server's name, as `record --emit-tape` gives it

    def retire(self, engine: Any) -> None:
        """An ended client session's engine: its report folded in (replay; episodes, which
        appends its new episodes), or its recording written (record)."""
        if self.kind is SessionKind.RECORD:
            if getattr(engine, "cassette", 1) is None and hasattr(engine, "finish"):
                try:
                    engine.finish()
                except BaseException:
                    engine.abort()
                    raise
            return
        try:
            self.merger.add(engine)
        except BaseException:
            abort = getattr(engine, "abort", None)
            if abort is not None:
                abort()
            raise

    # -- what it came to ---------------------------------------------------------------------------

    def report(self) -> ReplayReport:
        """The report of every retired session (replay: with no session at all, the report of
        the cassette as it stands)."""
        if not self.merger.count and self.kind is SessionKind.REPLAY:
            self.merger.add(self.first_engine())
        return self.merger.result()

    def recorded(self) -> Cassette:
        """The cassette the recording wrote (record); raises when nothing was recorded."""
        from harn_mcp_mock.errors import NothingRecordedError

        recording = self._recording
        if recording and recording[0].nothing is not None:
            raise recording[0].nothing
        if not recording or recording[0].cassette is None:
            raise NothingRecordedError(
                "no client opened a session: nothing was recorded (the cassette is as it was)", path=self.path
            )
        self.cassette = recording[0].cassette
        return self.cassette

    def first_engine(self) -> ReplayEngine:
        """Replay: the origin engine, made now if no session came yet (HTTP reads its recorded
        paths before serving)."""
        if self._origin is None:
            self._replay_engine()
        return self._origin  # type: ignore[no-any-return]


open_session = Session
"""``open_session(plan, live, options, tape=..., ...)``: the :class:`Session` ``plan`` asks for
(the one way a session is built; see :class:`Session` for the parameters)."""


def open_record(
    live: LiveTarget | Sequence[str] | str,
    cassette: str | Path,
    *,
    policy_path: str | Path | None = None,
    headers: Sequence[str] = (),
    timeout: float = 30.0,
    observe: Callable[[list[str], MessageRedactor], Any] | None = None,
) -> RecordEngine:
    """A :class:`~harn_mcp_mock.session.record.RecordEngine` recording the live server ``live``
    (a :class:`LiveTarget`; or a command, or a Streamable HTTP URL with ``headers``,
    ``NAME:VALUE``) into ``cassette`` under the redaction policy at ``policy_path`` (the default
    one when None). ``observe(command, redactor)``, given the recorded (redacted) command and
    the recording's redactor, returns the tape observer to wire (or None)."""
    from harn_mcp_mock.redact import RedactionPolicy
    from harn_mcp_mock.session.record import RecordCore, RecordEngine
    from harn_mcp_mock.session.recorders import new_recorder
    from harn_mcp_mock.upstream import open_upstream

    target = LiveTarget.of(live, headers=headers, timeout=timeout)
    policy = RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()
    recorder = new_recorder(
        cassette, policy, target.argv, transport="http" if target.url is not None else "stdio"
    )
    try:
        if observe is not None:
            recorder.observer = observe(recorder.command, recorder.redactor)
        upstream = open_upstream(
            target.url if target.url is not None else list(target.command),
            headers=target.header_map(),  # the `--header` values are secrets to the redactor
            timeout=target.timeout,
            display=" ".join(recorder.command),
        )
    except BaseException:
        recorder.discard()  # nothing recorded: no journal left in the way
        raise
    return RecordEngine(RecordCore(recorder), upstream, timeout=target.timeout)
