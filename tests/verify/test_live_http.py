"""`harn mcp mock verify --url`: re-run a baseline's client side against a live Streamable HTTP server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp.server.mcpserver import MCPServer

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.cli.commands import verify_main
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Severity
from harn_mcp_mock.options import LiveTarget
from harn_mcp_mock.verify.run import verify
from tests.http.test_record_proxy import TOKEN, _session, recording, serve_app_lifespan, serve_upstream
from tests.steady import STEADY_FLOOR_MS

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("verify/test_live_http")

AUTH = f"Authorization:Bearer {TOKEN}"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette recorded through the proxy from the SDK HTTP server (token-guarded)."""
    cassette = tmp_path_factory.mktemp("verify-http") / "up.cassette.json"

    async def run(url: str) -> None:
        with anyio.fail_after(30):
            async with mcp.Client(url, mode="legacy") as client:
                await _session(client)

    with serve_upstream() as upstream, recording(cassette, upstream, [AUTH]) as (url, _result):
        anyio.run(run, url)
    return cassette


@contextmanager
def drifted_upstream() -> Iterator[str]:
    """The same tools, but `add` is off by one and `shout` is gone."""
    server = MCPServer("upstream")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b + 1

    with serve_app_lifespan(server.streamable_http_app()) as url:
        yield url


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_verify_url_against_the_same_server_finds_no_drift(baseline: Path, tmp_path: Path) -> None:
    saved = tmp_path / "cand.cassette.json"
    events: list[str] = []
    with serve_upstream() as upstream:
        result = verify(
            baseline,
            url=upstream,
            headers=[AUTH],
            save_candidate=saved,
            on_event=events.append,
            latency_floor_ms=STEADY_FLOOR_MS,
        )
    # No drift, and none against itself: the SDK's structuredContent ({"result": 5} beside the
    # text "5") has no JSON text mirror, but it never had one, so B3 does not fire.
    itself = verify(baseline, candidate=baseline)
    assert result.findings == [] and itself.findings == []
    assert result.exit_code(Severity.ERR) == 0
    assert result.compared.get("calls_replayed", 1) >= 1
    cand = load_cassette(saved)
    assert cand.meta["transport"] == "http"
    assert TOKEN not in saved.read_text() and TOKEN not in result.candidate
    methods = [m.method for m in cand.messages if m.method]
    assert methods.count("tools/call") == 2 and "notifications/message" in methods
    statuses = [(e["method"], e["status"]) for e in cand.meta["http"]]
    assert statuses[0] == ("POST", 200) and ("DELETE", 200) in statuses


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_verify_url_cli_reports_drift(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    with drifted_upstream() as upstream:
        code = verify_main(baseline, live=LiveTarget(url=upstream), fmt="json", report=report)
    assert code == 1
    doc: Any = json.loads(report.read_text())
    rules = {f["rule"] for f in doc["findings"]}
    assert {"T1", "B4"} <= rules, rules  # shout is gone: no longer listed, and its call now fails
    # Without the token, the guarded server answers 401: the candidate holds it, and drift shows.
    with serve_upstream() as upstream:
        denied = tmp_path / "denied.cassette.json"
        result = verify(baseline, url=upstream, save_candidate=denied)
    assert load_cassette(denied).meta["http"][0]["status"] == 401
    assert result.findings


def test_verify_url_usage_errors(baseline: Path) -> None:
    with pytest.raises(UsageError):
        verify(baseline, url="http://127.0.0.1:1/mcp", command=["x"])
    with pytest.raises(UsageError):
        verify(baseline, candidate=baseline, headers=["A:b"])
    assert verify_main(baseline, live=LiveTarget(url="http://127.0.0.1:1/mcp")) == 2
