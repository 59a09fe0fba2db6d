"""Streamable HTTP: serve an engine (replay, world) over HTTP, and record through a reverse proxy.

Nothing here is imported by the stdio paths; starlette, uvicorn and httpx are imported inside
functions so that ``import harn_mcp_mock.http`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harn_mcp_mock._lazy import lazy_exports

if TYPE_CHECKING:
    from harn_mcp_mock.http.guard import GuardSettings, HttpGuard, SessionTable, guard_middleware
    from harn_mcp_mock.http.record_proxy import RecordProxy, build_proxy_app, record_http
    from harn_mcp_mock.http.replay_server import StreamableHttpEndpoint, build_app, serve_http
    from harn_mcp_mock.http.run import run_http_session, run_replay_http
    from harn_mcp_mock.http.server import HttpServer
    from harn_mcp_mock.session.open import ReportMerger, merge_reports

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "GuardSettings": "guard",
    "HttpGuard": "guard",
    "HttpServer": "server",
    "RecordProxy": "record_proxy",
    "ReportMerger": "harn_mcp_mock.session.open",
    "SessionTable": "guard",
    "StreamableHttpEndpoint": "replay_server",
    "build_app": "replay_server",
    "build_proxy_app": "record_proxy",
    "guard_middleware": "guard",
    "merge_reports": "harn_mcp_mock.session.open",
    "record_http": "record_proxy",
    "run_http_session": "run",
    "run_replay_http": "run",
    "serve_http": "replay_server",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "GuardSettings",
    "HttpGuard",
    "HttpServer",
    "RecordProxy",
    "ReportMerger",
    "SessionTable",
    "StreamableHttpEndpoint",
    "build_app",
    "build_proxy_app",
    "guard_middleware",
    "merge_reports",
    "record_http",
    "run_http_session",
    "run_replay_http",
    "serve_http",
]
