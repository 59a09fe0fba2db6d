"""The pytest plugin on a cassette whose server died before answering a call: the test gets
error -32051 (not a hang) and fails listing the request recorded without an answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.cassette.model import Message, load_cassette, save_cassette
from tests.echo_cassette import echo_cassette
from tests.test_pytest_plugin import run

pytest_plugins = ["pytester"]


def crashed_echo_cassette(path: Path) -> None:
    echo_cassette(path, "hi")
    cassette = load_cassette(path)
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}
    cassette.messages.append(Message(len(cassette.messages), "client", call))
    cassette.meta["exit"] = {"code": 1, "signal": None, "reason": "server-exit"}
    save_cassette(cassette, path)


def test_a_request_recorded_without_an_answer_fails_the_test_and_does_not_hang(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        """
        [pytest]
        asyncio_mode = auto
        asyncio_default_fixture_loop_scope = function
        filterwarnings = error
        """
    )
    crashed_echo_cassette(pytester.path / "cassettes" / "test_echo" / "test_crash.cassette.json")
    pytester.makepyfile(
        test_echo="""
        import anyio
        import pytest
        from mcp.shared.exceptions import MCPError

        async def test_crash(mcp_mock):
            with anyio.fail_after(30):
                async with mcp_mock.session() as session:
                    await session.call_tool("echo", {"text": "hi"})
                    with pytest.raises(MCPError) as died:
                        await session.call_tool("crash", {})
                    assert died.value.error.code == -32051
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 request(s) were recorded without an answer:",
            "*- tools/call (id *): recorded without an answer: the server exited with code 1 before answering*",
        ]
    )
