"""pytest plugin: the ``mcp_mock`` fixture, the ``@pytest.mark.mcp_mock`` marker, ``--mcp-record-mode``.

Modelled on pytest-recording: tests replay by default (``--mcp-record-mode=none``), so CI never
starts a real server or records by accident. Each test gets its own cassette,
``<test dir>/cassettes/<module>/<test name>.cassette.json``, unless the marker names one (a
path relative to ``<test dir>/cassettes/``; nothing may escape that folder). At the end of a
test, every request that missed and every recorded interaction left unused fails it, with one
line per problem. See ``docs/pytest-plugin.md``.

This module is loaded by every pytest run (entry point ``pytest11``), so it imports only light
modules at start-up; the replay machinery and the ``mcp`` SDK load when a test uses the fixture.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import AsyncIterator, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harn_mcp_mock.cassette.modes import (
    ALIASES,
    RecordMode,
    SessionKind,
    SessionPlan,
    parse_record_mode,
    plan_session,
)
from harn_mcp_mock.errors import CassetteError, PathEscapeError, UsageError
from harn_mcp_mock.options import REPLAY_FLAGS, LiveTarget, ReplayOptions

if TYPE_CHECKING:
    from typing import Unpack

    from mcp import ClientSession

    from harn_mcp_mock.api import EpisodesTransport, RecordTransport, ReplayTransport
    from harn_mcp_mock.options import CallbackKeywords, ClientCallbacks
    from harn_mcp_mock.replay.engine import ReplayReport

MARKER = "mcp_mock"
CASSETTE_DIR = "cassettes"
SUFFIX = ".cassette.json"
MODE_CHOICES = [m.value for m in RecordMode] + list(ALIASES)
ALLOW_ABSOLUTE_INI = "mcp_mock_allow_absolute_paths"
CLAIM_TIMEOUT_INI = "mcp_mock_claim_timeout"
SERVE_TIMEOUT = 60.0
"""Seconds ``serve_http`` waits for its server to listen, and then to stop."""
DEFAULT_CLAIM_TIMEOUT = "300"  # = harn_mcp_mock.cassette.claim.DEFAULT_WAIT (not imported at start-up)
MAX_NAME = 120

MARKER_OPTIONS = frozenset(
    {
        "command",
        "env",
        "cwd",
        "allow_unused",
        "allow_misses",
        "allow_answer_mismatches",
        *ReplayOptions.names(),
    }
)
"""The marker's keywords: the live server's, the checks' and every :class:`ReplayOptions` field."""


# --- hooks ---------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harn-mcp-mock", "harn-mcp-mock: replay MCP servers from cassettes")
    group.addoption(
        "--mcp-record-mode",
        action="store",
        default=None,
        choices=MODE_CHOICES,
        help=(
            "how the mcp_mock fixture uses cassettes: none (default: replay only, never start a server), "
            "once (record missing cassettes), all (re-record everything), "
            "new_episodes (replay what the cassette holds, record the rest through the live server); X07 "
            "names off/replay/record/rewrite/record_missing are aliases."
        ),
    )
    parser.addini(
        ALLOW_ABSOLUTE_INI,
        type="bool",
        default=False,
        help="let @pytest.mark.mcp_mock name an absolute cassette path outside the test's cassettes/ folder",
    )
    parser.addini(
        CLAIM_TIMEOUT_INI,
        type="string",
        default=DEFAULT_CLAIM_TIMEOUT,
        help=(
            "seconds --mcp-record-mode=once waits for another process (a pytest-xdist worker) that is "
            f"recording the same cassette, then replays it (default {DEFAULT_CLAIM_TIMEOUT})"
        ),
    )


_PARTIAL = pytest.StashKey[bool]()


def _usage_cache(config: pytest.Config) -> Path | None:
    """Where the plugin records the cassettes tests use (lint's H1); None with no cache."""
    if not config.pluginmanager.has_plugin("cacheprovider"):
        return None
    return Path(config.rootpath, str(config.getini("cache_dir")))


def _record_use(config: pytest.Config, path: Path) -> None:
    cache = _usage_cache(config)
    if cache is not None:
        from harn_mcp_mock.lint.usage import record_use

        try:
            record_use(cache, path)
        except OSError:
            pass  # a read-only checkout: lint then has no usage record (H1 is skipped)


def pytest_sessionstart(session: pytest.Session) -> None:
    cache = _usage_cache(session.config)
    if cache is not None and not hasattr(session.config, "workerinput"):
        from harn_mcp_mock.lint.usage import start_usage

        with contextlib.suppress(OSError):
            start_usage(cache)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[_PARTIAL] = True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    cache = _usage_cache(session.config)
    if cache is None or hasattr(session.config, "workerinput"):
        return
    from harn_mcp_mock.lint.usage import merge_usage

    config = session.config
    partial = (
        config.stash.get(_PARTIAL, False)
        or bool(config.option.keyword or config.option.markexpr)
        or config.args_source == pytest.Config.ArgsSource.ARGS  # only the paths given were run
        or exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR)
    )
    with contextlib.suppress(OSError):
        merge_usage(cache, complete=not partial)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, *, command=None, env=None, cwd=None, ignore_paths=(), repeat='last', "
        "strict_order=False, latency='none', redact_policy=None, faults=None, seed=0, run_id='run', "
        "allow_unused=False, allow_misses=False, "
        "allow_answer_mismatches=False): the cassette and replay options of the mcp_mock fixture "
        "(path is relative to the test module's cassettes/ folder)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    """A harn-mcp-mock error setting up the fixture (bad marker, no cassette) shows as its one line."""
    try:
        return (yield)
    except BaseException as exc:
        short = short_failure(item, exc)
        if short is None:
            raise
        raise pytest.fail.Exception(short, pytrace=False) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test that passed but left misses or unused interactions in a closed session.

    A test that failed on a replay miss or a harn-mcp-mock error shows the test's own line and
    that error, not the SDK's or this plugin's source, nor the task groups' exception groups.
    """
    mock = getattr(item, "funcargs", {}).get("mcp_mock")
    try:
        result = yield
    except BaseException as exc:
        if isinstance(mock, MCPMock):
            mock._test_failed = True
        short = short_failure(item, exc)
        if short is None:
            raise
        raise pytest.fail.Exception(short, pytrace=False) from None
    if isinstance(mock, MCPMock):
        problems = mock._take_problems()
        if problems:
            pytest.fail(problems, pytrace=False)
    return result


def short_failure(item: pytest.Item, exc: BaseException) -> str | None:
    """The failure text for a replay miss or a harn-mcp-mock error: the test's line, then the error.

    None for any other error, which pytest shows as usual, and in an ``xfail`` test (whose
    ``raises=`` must still see the error's own type).
    """
    from harn_mcp_mock.errors import HarnError, sole_exception

    error = sole_exception(exc)
    if not (isinstance(error, HarnError) or _is_miss(error)) or item.get_closest_marker("xfail"):
        return None
    text = f"{type(error).__name__}: {error}"
    where = _test_line(item, error)
    return f"{text}\n  at {where}" if where else text


def _is_miss(error: BaseException) -> bool:
    """An ``MCPError`` carrying the replay's miss code (what a request no recording matches raises)."""
    from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS

    return type(error).__name__ == "MCPError" and getattr(error, "code", None) == CASSETTE_MISS


def _test_line(item: pytest.Item, error: BaseException) -> str:
    """``test_x.py:12: <source line>``: the innermost frame of the test's own file, if any."""
    import linecache

    test_file = os.path.normcase(os.path.abspath(item.path))
    found = ""
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if os.path.normcase(os.path.abspath(filename)) == test_file:
            line = linecache.getline(filename, tb.tb_lineno).strip()
            found = f"{item.path.name}:{tb.tb_lineno}: {line}"
        tb = tb.tb_next
    return found


# --- cassette paths --------------------------------------------------------------------------


def cassette_dir(test_path: Path) -> Path:
    """``<test dir>/cassettes``: the folder every cassette of the module's tests lives in."""
    return Path(os.path.normpath(os.path.abspath(test_path.parent / CASSETTE_DIR)))


def sanitize_name(name: str) -> str:
    """A test name (with its parametrize id) as a portable file name."""
    text = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "test"
    if len(text) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:10]
        text = f"{text[: MAX_NAME - 11]}-{digest}"
    return text


def default_cassette_path(test_path: Path, test_name: str, class_name: str | None = None) -> Path:
    """``<test dir>/cassettes/<module>/<Class.>test_name.cassette.json``."""
    name = f"{class_name}.{test_name}" if class_name else test_name
    return cassette_dir(test_path) / test_path.stem / (sanitize_name(name) + SUFFIX)


def resolve_cassette_path(
    raw: str | os.PathLike[str], test_path: Path, *, allow_absolute: bool = False
) -> Path:
    """A marker's cassette path, which must stay inside the test module's ``cassettes/`` folder.

    A relative path is taken from that folder. An absolute path must point inside it too,
    unless ``allow_absolute`` (the ``mcp_mock_allow_absolute_paths`` ini option) is on.
    """
    base = cassette_dir(test_path)
    given = Path(os.fspath(raw))
    if not os.fspath(raw):
        raise UsageError(f"@pytest.mark.{MARKER}: the cassette path is empty", path=test_path)
    candidate = Path(os.path.normpath(given if given.is_absolute() else base / given))
    if candidate == base or not candidate.is_relative_to(base):
        if given.is_absolute() and allow_absolute and candidate != base:
            return candidate
        hint = (
            f" (set `{ALLOW_ABSOLUTE_INI} = true` in the pytest ini to allow absolute paths)"
            if given.is_absolute()
            else ""
        )
        raise PathEscapeError(
            f"cassette path {os.fspath(raw)!r} escapes the test's cassette folder {base}{hint}",
            path=test_path,
            where=f"@pytest.mark.{MARKER}",
        )
    return candidate


# --- options ---------------------------------------------------------------------------------


@dataclass(slots=True)
class MockOptions:
    """The merged options of ``mcp_mock_config`` and every ``@pytest.mark.mcp_mock`` in scope."""

    live: LiveTarget | None = None
    """The marker's ``command``: the live server, one value (None: not given)."""
    env: dict[str, str] | None = None
    cwd: str | None = None
    ignore_paths: tuple[str, ...] = ()
    repeat: str = "last"
    strict_order: bool = False
    latency: str = "none"
    redact_policy: str | None = None
    faults: str | list[dict[str, Any]] | None = None
    seed: int = 0
    run_id: str = "run"
    allow_unused: bool = False
    allow_misses: bool = False
    allow_answer_mismatches: bool = False

    def replay_options(self) -> ReplayOptions:
        """The replay options these hold, one value (``faults`` read now, when a session starts)."""
        return ReplayOptions.build(**{name: getattr(self, name) for name in ReplayOptions.names()})


def merge_options(layers: Iterable[Mapping[str, Any]], where: str) -> MockOptions:
    """Later layers override earlier ones; an unknown key is an error naming the valid ones."""
    merged: dict[str, Any] = {}
    for layer in layers:
        unknown = sorted(set(layer) - MARKER_OPTIONS)
        if unknown:
            raise UsageError(
                f"unknown {MARKER} option {unknown[0]!r}; valid options: {', '.join(sorted(MARKER_OPTIONS))}",
                where=where,
            )
        merged.update(layer)
    options = MockOptions()
    if merged.get("command") is not None:
        command = merged["command"]
        if isinstance(command, str | bytes) or not isinstance(command, Sequence):
            raise UsageError(f"{MARKER} command must be a list of strings (the server's argv)", where=where)
        options.live = LiveTarget([os.fspath(arg) for arg in command])
    if merged.get("env") is not None:
        options.env = {str(k): str(v) for k, v in dict(merged["env"]).items()}
    if merged.get("cwd") is not None:
        options.cwd = os.fspath(merged["cwd"])
    if merged.get("redact_policy") is not None:
        options.redact_policy = os.fspath(merged["redact_policy"])
    ignore = merged.get("ignore_paths", ())
    options.ignore_paths = (ignore,) if isinstance(ignore, str) else tuple(ignore)
    faults = merged.get("faults")
    if faults is not None:
        if isinstance(faults, str | os.PathLike):
            options.faults = os.fspath(faults)
        elif isinstance(faults, Sequence) and not isinstance(faults, bytes):
            options.faults = [dict(rule) if isinstance(rule, Mapping) else rule for rule in faults]
        else:
            raise UsageError(f"{MARKER} faults must be a rules file's path or a list of rules", where=where)
    seed = merged.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError(f"{MARKER} seed must be an integer", where=where)
    options.seed = seed
    options.run_id = str(merged.get("run_id", "run"))
    options.repeat = str(merged.get("repeat", "last"))
    options.latency = str(merged.get("latency", "none"))
    for flag in ("strict_order", "allow_unused", "allow_misses", "allow_answer_mismatches"):
        value = merged.get(flag, False)
        if not isinstance(value, bool):
            raise UsageError(f"{MARKER} {flag} must be True or False, not {value!r}", where=where)
        setattr(options, flag, value)
    _check_replay_keywords(options, where)
    return options


def _check_replay_keywords(options: MockOptions, where: str) -> None:
    """The replay options' values, checked at set-up where the marker is named (an error names
    the keyword, ``repeat``, not the command line's ``--repeat``); ``faults`` are read later."""
    from harn_mcp_mock.cassette.matching import parse_pointer

    try:
        ReplayOptions.build(repeat=options.repeat, latency=options.latency, seed=options.seed)
        for pointer in options.ignore_paths:
            parse_pointer(pointer)
    except UsageError as exc:
        keyword = REPLAY_FLAGS.get(exc.where or "", (exc.where, ""))[0]
        raise UsageError(f"{MARKER} {keyword}: {exc.message}", where=where) from None


# --- the fixture -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Served:
    """A cassette served over HTTP (:meth:`MCPMock.serve_http`); its report once it stopped."""

    report: ReplayReport | None = None


@dataclass(slots=True)
class _Use:
    transport: ReplayTransport | RecordTransport | EpisodesTransport | _Served
    checked: bool = False


@dataclass
class MCPMock:
    """What the ``mcp_mock`` fixture returns: sessions and transports over this test's cassette."""

    path: Path
    """The cassette this test replays (or records)."""
    record_mode: RecordMode
    """The ``--mcp-record-mode`` in effect (``none`` unless given)."""
    options: MockOptions = field(default_factory=MockOptions)
    display_path: str = ""
    """``path`` as failure messages show it (relative to the rootdir when inside it)."""
    claim_timeout: float | None = None
    """Seconds ``once`` waits for another process recording this cassette (None: the default)."""
    _uses: list[_Use] = field(default_factory=list, repr=False)
    _recorded: bool = field(default=False, repr=False)
    _test_failed: bool = field(default=False, repr=False)

    # -- public ---------------------------------------------------------------------------

    def transport(self) -> ReplayTransport | RecordTransport | EpisodesTransport:
        """An ``mcp`` transport for ``mcp.Client(mcp_mock.transport())`` (replaying or recording)."""
        __tracebackhide__ = True
        from harn_mcp_mock.api import RecordTransport, cassette_transport

        plan = self._plan()
        self._check_exists(plan)
        try:
            options = self.options.replay_options()
        except BaseException:
            plan.release()
            raise
        transport = cassette_transport(
            self.path,
            command=self.options.live,
            options=options,
            env=self.options.env,
            cwd=self.options.cwd,
            claim_timeout=self.claim_timeout,
            plan=plan,
        )
        if isinstance(transport, RecordTransport):
            # One recording per test: later sessions replay what this one recorded.
            self._recorded = True
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._uses.append(_Use(transport))
        return transport

    @asynccontextmanager
    async def session(
        self,
        *,
        callbacks: ClientCallbacks | None = None,
        initialize: bool = True,
        **keywords: Unpack[CallbackKeywords],
    ) -> AsyncIterator[ClientSession]:
        """An initialized ``mcp.ClientSession`` over this test's cassette (see ``replay_session``):
        ``callbacks``, or their fields as keywords (``sampling_callback=``...)."""
        from harn_mcp_mock.api import session_over
        from harn_mcp_mock.options import split_session_keywords

        __tracebackhide__ = True

        _, given = split_session_keywords(keywords, callbacks)
        async with session_over(self.transport(), given, initialize=initialize) as replay:
            yield replay.session

    @contextlib.contextmanager
    def serve_http(self) -> Iterator[str]:
        """Serve this test's cassette over Streamable HTTP on 127.0.0.1 (a free port) while the
        block runs, for a client under test that takes a URL; yields the URL.

        It replays, or records through the marker's ``command`` (``--mcp-record-mode``), as
        ``replay --http`` does; the replay's report is checked at the end of the test like a
        session's. The ``mcp_mock_url`` fixture is this for the whole test."""
        __tracebackhide__ = True
        import threading

        from harn_mcp_mock.http.run import run_http_session
        from harn_mcp_mock.stdio.run import ReplayOutcome

        plan = self._plan(claim_now=True)
        self._check_exists(plan)
        if plan.records and (self.options.env or self.options.cwd):
            plan.release()
            raise UsageError(
                f"{MARKER} env and cwd apply to transport() and session(); serve_http records with ours"
            )
        try:
            options = self.options.replay_options()
        except BaseException:
            plan.release()
            raise
        ready = threading.Event()
        urls: list[str] = []
        servers: list[Any] = []
        outcomes: list[ReplayOutcome] = []
        errors: list[BaseException] = []

        def on_ready(url: str) -> None:
            urls.append(url)
            ready.set()

        def serve() -> None:
            try:
                outcomes.append(
                    run_http_session(
                        self.path,
                        plan=plan,
                        live=self.options.live,
                        options=options,
                        on_ready=on_ready,
                        on_server=servers.append,
                    )
                )
            except BaseException as exc:  # raised in the test's thread below
                errors.append(exc)
            finally:
                ready.set()

        thread = threading.Thread(target=serve, name=f"mcp_mock serving {self.path.name}", daemon=True)
        thread.start()
        ready.wait(SERVE_TIMEOUT)
        if errors:
            raise errors[0]
        if not urls:
            raise UsageError(f"the HTTP server for {self.path.name} did not start within {SERVE_TIMEOUT} s")
        if plan.records:
            self._recorded = True  # one recording per test: later sessions replay it
        served = _Served()
        self._uses.append(_Use(served))
        try:
            yield urls[0]
        finally:
            servers[0].stop()
            thread.join(SERVE_TIMEOUT)
            if errors:
                raise errors[0]
            if outcomes:
                served.report = outcomes[0].report

    def _check_exists(self, plan: SessionPlan) -> None:
        __tracebackhide__ = True
        from harn_mcp_mock.cassette.model import journal_path

        if (
            plan.kind is SessionKind.REPLAY
            and not self.path.exists()
            and not journal_path(self.path).exists()
        ):
            raise CassetteError(
                f"no such cassette (record it with --mcp-record-mode=once and @pytest.mark.{MARKER}"
                "(command=[...]); the default mode none never starts a server)",
                path=self.path,
            )

    @property
    def recorded(self) -> bool:
        """True when this test recorded its cassette through the live server."""
        return self._recorded

    @property
    def reports(self) -> list[ReplayReport]:
        """The report of every replay session of this test that has closed, in order."""
        return [report for use in self._uses if (report := _report_of(use)) is not None]

    @property
    def report(self) -> ReplayReport | None:
        """The report of the last replay session that closed (None if none has)."""
        reports = self.reports
        return reports[-1] if reports else None

    # -- checks ---------------------------------------------------------------------------

    def _plan(self, *, claim_now: bool = False) -> SessionPlan:
        """What the next session is (:func:`~harn_mcp_mock.cassette.modes.plan_session`); after
        this test recorded once, its later sessions replay that recording."""
        __tracebackhide__ = True
        mode = RecordMode.NONE if self._recorded else self.record_mode
        return plan_session(
            mode,
            self.path,
            live=self.options.live is not None,
            needs_live=f"the live server: @pytest.mark.{MARKER}(command=[...]) or command in mcp_mock_config",
            claim_timeout=self.claim_timeout,
            claim_now=claim_now,
        )

    def _take_problems(self) -> str:
        """The failure text for closed, unchecked sessions ('' when clean); marks them checked."""
        reports: list[ReplayReport] = []
        for use in self._uses:
            report = None if use.checked else _report_of(use)
            if report is None:
                continue  # checked, recording, or still open (the fixture's teardown looks again)
            use.checked = True
            reports.append(report)
        return "\n\n".join(filter(None, (self._describe(r) for r in reports)))

    def _describe(self, report: ReplayReport) -> str:
        # Injected faults answer in place of recordings, which then go unused: that is the point.
        return describe_problems(
            report,
            self.display_path or str(self.path),
            allow_unused=self.options.allow_unused or bool(report.faults_fired),
            allow_misses=self.options.allow_misses,
            allow_answer_mismatches=self.options.allow_answer_mismatches,
        )


def _report_of(use: _Use) -> ReplayReport | None:
    """The replay report of a closed replay, episodes or HTTP session (None for a recording)."""
    report = getattr(use.transport, "report", None)
    return report if report is not None and hasattr(report, "misses") else None


def describe_problems(
    report: ReplayReport,
    path: str | Path,
    *,
    allow_unused: bool = False,
    allow_misses: bool = False,
    allow_answer_mismatches: bool = False,
) -> str:
    """One readable block listing each miss, unused interaction and differing answer ('' if none)."""
    lines: list[str] = []
    if report.misses and not allow_misses:
        lines.append(f"{len(report.misses)} request(s) matched no recorded interaction:")
        lines += [
            f"  - {m.get('method')} (id {m.get('id')!r}): {m.get('explanation')}" for m in report.misses
        ]
    if report.unused and not allow_unused:
        lines.append(f"{len(report.unused)} recorded interaction(s) were never used:")
        lines += [f"  - seq {u.get('seq')}: {u.get('method')} {u.get('params')}" for u in report.unused]
    if report.answer_mismatches and not allow_answer_mismatches:
        lines.append(f"{len(report.answer_mismatches)} client answer(s) differ from the recording:")
        lines += [
            f"  - in {a.get('method')} (seq {a.get('seq')}): recorded {a.get('recorded')}, got {a.get('got')}"
            for a in report.answer_mismatches
        ]
    if report.unanswered:
        lines.append(f"{len(report.unanswered)} request(s) were recorded without an answer:")
        lines += [
            f"  - {u.get('method')} (id {u.get('id')!r}): {u.get('explanation')}" for u in report.unanswered
        ]
    if not lines:
        return ""
    hints = []
    if report.unused and not allow_unused:
        hints.append("allow_unused=True")
    if report.misses and not allow_misses:
        hints.append("allow_misses=True")
    if report.answer_mismatches and not allow_answer_mismatches:
        hints.append("allow_answer_mismatches=True")
    head = f"harn-mcp-mock: the replay of {path} did not go as recorded."
    tail = "Re-record with --mcp-record-mode=all (needs command=[...])" + (
        f", or accept this with @pytest.mark.{MARKER}({', '.join(hints)})." if hints else "."
    )
    return "\n".join([head, *lines, tail])


@pytest.fixture
def mcp_mock_url(mcp_mock: MCPMock) -> Iterator[str]:
    """The URL of this test's cassette served over Streamable HTTP (``mcp_mock.serve_http()``)
    for the whole test: give it to the client under test. Replays, or records as
    ``--mcp-record-mode`` says; misses and unused interactions fail the test as ``mcp_mock`` does."""
    with mcp_mock.serve_http() as url:
        yield url


@pytest.fixture
def mcp_mock_config() -> dict[str, Any]:
    """Defaults for the ``mcp_mock`` fixture (any marker option); override it in a conftest.py."""
    return {}


@pytest.fixture
def mcp_mock(request: pytest.FixtureRequest, mcp_mock_config: Mapping[str, Any]) -> Iterator[MCPMock]:
    """Replay MCP sessions from this test's cassette; fails the test on misses or unused interactions."""
    test_path = Path(request.path)
    markers = list(request.node.iter_markers(MARKER))  # closest first
    where = f"@pytest.mark.{MARKER}"
    paths = [marker.args for marker in markers if marker.args]
    raw: Any = None
    if paths:
        if len(paths[0]) > 1:
            raise UsageError(f"give one cassette path, not {len(paths[0])}", path=test_path, where=where)
        raw = paths[0][0]
    options = merge_options([mcp_mock_config, *(m.kwargs for m in reversed(markers))], where)
    if raw is None:
        class_name = request.cls.__name__ if request.cls is not None else None
        path = default_cassette_path(test_path, request.node.name, class_name)
    else:
        allow_absolute = bool(request.config.getini(ALLOW_ABSOLUTE_INI))
        path = resolve_cassette_path(raw, test_path, allow_absolute=allow_absolute)
    mode = parse_record_mode(request.config.getoption("--mcp-record-mode") or "none")
    root = request.config.rootpath
    display = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    raw_timeout = str(request.config.getini(CLAIM_TIMEOUT_INI) or DEFAULT_CLAIM_TIMEOUT)
    try:
        claim_timeout = float(raw_timeout)
    except ValueError:
        raise UsageError(
            f"{CLAIM_TIMEOUT_INI} must be a number of seconds, not {raw_timeout!r}", where="pytest ini"
        ) from None
    mock = MCPMock(path, mode, options, display, claim_timeout)
    _record_use(request.config, path)
    yield mock
    problems = mock._take_problems()
    if problems and not mock._test_failed:
        pytest.fail(problems, pytrace=False)
