"""An error inside a session or transport block leaves it as itself, not in exception groups."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.api import ReplayTransport, replay_session
from harn_mcp_mock.jsonrpc.codes import CASSETTE_MISS
from tests.echo_cassette import echo_cassette


async def test_an_error_in_a_transport_block_is_raised_as_itself(tmp_path: Path) -> None:
    cassette = echo_cassette(tmp_path / "echo.cassette.json", "hi")
    with pytest.raises(ValueError, match="mine") as caught:
        async with ReplayTransport(cassette):
            raise ValueError("mine")
    assert caught.type is ValueError


async def test_a_miss_leaves_the_session_block_as_the_sdks_mcp_error(tmp_path: Path) -> None:
    cassette = echo_cassette(tmp_path / "echo.cassette.json", "hi")
    with pytest.raises(MCPError) as caught:
        async with replay_session(cassette) as session:
            await session.call_tool("echo", {"text": "nope"})
    assert caught.type is MCPError and caught.value.code == CASSETTE_MISS
    assert "recorded 'hi', got 'nope'" in str(caught.value)
