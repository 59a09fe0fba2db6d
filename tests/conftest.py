"""Fixtures shared by every test directory (keep this small: directory-specific ones live beside their tests).

The commands that start the real third-party MCP servers are here (not in tests/e2e/) because
tests of several packages drive them: a missing peer skips the tests that need it, with the
install command in the reason, except on CI (``CI`` set), where it fails them: CI must never go
green by skipping the real servers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

# httpx2 maps httpcore2's exceptions to its own once, on first use; the plugin tests' in-process
# pytester runs drop every module first imported during them. Were httpcore2 first imported inside
# such a run, a later import would make new exception classes the map does not know, and an
# unreachable upstream would raise a raw httpcore2.ConnectError in the tests that follow (seen
# with some xdist schedules). Imported here, before any run, the classes stay the same.
import httpcore2  # noqa: F401
import httpx2  # noqa: F401
import pytest
from hypothesis import HealthCheck, settings

from tests.e2e.peers import (
    PeerUnavailableError,
    everything_server_command,
    fastmcp_client_class,
    in_ci,
    inspector_cli_command,
    time_server_command,
)

REPO_ROOT = Path(__file__).resolve().parent.parent

# Property tests draw the same examples on every run (a CI failure reproduces locally) and never
# fail on the machine's speed: Hypothesis's deadline and "generation is slow" checks time the test
# by the wall clock, which a loaded 2-core machine running the suite on xdist inflates at random.
settings.register_profile(
    "harn", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("harn")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (where pyproject.toml is)."""
    return REPO_ROOT


T = TypeVar("T")


def require_peer(locate: Callable[[], T]) -> T:
    """``locate()``, or skip (locally) / fail (on CI) with its reason."""
    try:
        return locate()
    except PeerUnavailableError as exc:
        if in_ci():
            pytest.fail(f"{exc} (CI is set: a missing peer fails the run)", pytrace=False)
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def everything_command() -> list[str]:
    """Starts ``@modelcontextprotocol/server-everything`` on stdio."""
    return require_peer(everything_server_command)


@pytest.fixture(scope="session")
def time_command() -> list[str]:
    """Starts ``mcp-server-time --local-timezone UTC`` on stdio."""
    return require_peer(time_server_command)


@pytest.fixture(scope="session")
def inspector_command() -> list[str]:
    """Runs the MCP Inspector's CLI (``mcp-inspector --cli``): append a server command and ``--method``."""
    return require_peer(inspector_cli_command)


@pytest.fixture(scope="session")
def fastmcp_client() -> Any:
    """fastmcp's ``Client`` class (``fastmcp-slim[client]`` of the ``peers`` extra)."""
    return require_peer(fastmcp_client_class)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers that follow from what a test uses, so `make test-fast` can leave the heavy ones out:
    a test that takes the ``browser`` fixture is ``browser``; a module whose name says ``ray``
    holds ``ray`` tests."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        if "ray" in item.path.stem.split("_"):
            item.add_marker(pytest.mark.ray)
