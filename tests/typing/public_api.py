"""Typed uses of the public API, checked by mypy --strict (tests/typing/test_typing.py); never run.

If a change to a public signature breaks what a user's typed code does, mypy fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import assert_type

from mcp import ClientSession

import harn_mcp_mock
from harn_mcp_mock import ReplaySession, ReplayTransport, open_replay, record_session, replay_session
from harn_mcp_mock.api import EpisodesTransport, RecordTransport, cassette_transport, session_over
from harn_mcp_mock.errors import CassetteError, HarnError, ServerError, UpstreamTimeout, UsageError
from harn_mcp_mock.formats import Formats
from harn_mcp_mock.options import ClientCallbacks, ReplayOptions
from harn_mcp_mock.replay import ReplayEngine, ReplayReport, open_engine
from harn_mcp_mock.upstream import ExitInfo, HttpUpstream, StdioUpstream, Upstream, open_upstream
from harn_mcp_mock.verify import Severity, VerifyResult, verify
from harn_mcp_mock.world import WorldEngine, load_spec


async def replaying(path: Path) -> None:
    async with replay_session(path, ignore_paths=["/params/_meta"], repeat="cycle") as session:
        assert_type(session, ClientSession)
    async with open_replay(path, mode="new_episodes", command=["python", "server.py"]) as replay:
        assert_type(replay, ReplaySession)
        report: ReplayReport | None = replay.report
        del report
    async with record_session(path, ["python", "server.py"]) as live:
        assert_type(live, ClientSession)
    transport = cassette_transport(path, mode="once", command=["python", "server.py"])
    assert_type(transport, ReplayTransport | RecordTransport | EpisodesTransport)
    async with session_over(ReplayTransport(path), ClientCallbacks(), initialize=False) as again:
        assert_type(again, ReplaySession)


def options_and_engines(path: Path) -> None:
    options = ReplayOptions.build(ignore_paths="/params/arguments/id", strict_order=True)
    assert_type(options.ignore_paths, tuple[str, ...])
    assert_type(open_engine(path, options), ReplayEngine)
    assert_type(harn_mcp_mock.__version__, str)


def live_servers(path: Path) -> None:
    upstream: Upstream = open_upstream(["python", "server.py"])
    assert_type(upstream.close(5.0), ExitInfo)
    assert isinstance(upstream, StdioUpstream | HttpUpstream)
    result = verify(path, command=["python", "server.py"])
    assert_type(result, VerifyResult)
    assert_type(result.exit_code(Severity.WARN), int)


def worlds(spec: Path) -> None:
    engine = WorldEngine(load_spec(spec), seed=7, run_id="r1")
    assert_type(engine.now_ms, int)


def errors() -> None:
    try:
        pass
    except UpstreamTimeout as exc:
        assert_type(exc, UpstreamTimeout)
        assert isinstance(exc, ServerError)
    except (CassetteError, UsageError) as exc:
        assert_type(exc.exit_code, int)
    except HarnError:
        pass


def formats() -> None:
    registry: Formats[Callable[[int], str]] = Formats("format")

    @registry.register("text")
    def text(value: int) -> str:
        return str(value)

    assert_type(registry.get("text")(1), str)
    assert_type(registry.names, tuple[str, ...])
