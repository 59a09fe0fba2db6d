"""The pytest plugin serving a test's cassette over Streamable HTTP (``mcp_mock_url``,
``mcp_mock.serve_http()``) to a client under test that takes a URL: the official SDK client."""

from __future__ import annotations

import json

import pytest

from tests.echo_cassette import echo_cassette
from tests.test_pytest_plugin import NOTES, project, run  # noqa: F401  (project: a fixture)

pytest_plugins = ["pytester"]

URL_TEST = """
import mcp

async def test_hi(mcp_mock, mcp_mock_url):
    assert mcp_mock_url.startswith("http://127.0.0.1:")
    async with mcp.Client(mcp_mock_url, mode="legacy") as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"
"""


def test_the_url_fixture_serves_the_cassette_to_an_sdk_client(project: pytest.Pytester) -> None:  # noqa: F811
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi")
    project.makepyfile(test_echo=URL_TEST)
    run(project).assert_outcomes(passed=1)


def test_what_the_client_left_unused_over_http_fails_the_test(project: pytest.Pytester) -> None:  # noqa: F811
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi", "bye")
    project.makepyfile(test_echo=URL_TEST)
    result = run(project)
    result.assert_outcomes(passed=1, errors=1)  # the check runs in the fixture's teardown
    result.stdout.fnmatch_lines(["*1 recorded interaction(s) were never used:", "*tools/call*bye*"])


@pytest.mark.slow
def test_serve_http_records_once_through_the_command_then_replays(
    project: pytest.Pytester,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project.makeconftest(
        f"""
        import sys
        import pytest

        @pytest.fixture
        def mcp_mock_config():
            return {{"command": [sys.executable, {NOTES!r}]}}
        """
    )
    project.makepyfile(
        test_notes="""
        import os
        import mcp

        async def test_notes(mcp_mock):
            with mcp_mock.serve_http() as url:
                async with mcp.Client(url, mode="legacy") as client:
                    result = await client.call_tool("read_note", {"name": "welcome"})
            assert result.structured_content["words"] == 9
            assert mcp_mock.recorded is (os.environ["EXPECT_RECORDING"] == "1")
        """
    )
    cassette = project.path / "cassettes" / "test_notes" / "test_notes.cassette.json"
    monkeypatch.setenv("EXPECT_RECORDING", "1")
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    recorded = json.loads(cassette.read_text())
    client = [m["message"].get("method") for m in recorded["messages"] if m["dir"] == "client"]
    assert client[0] == "initialize" and "tools/call" in client
    monkeypatch.setenv("EXPECT_RECORDING", "0")
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    run(project).assert_outcomes(passed=1)
    assert json.loads(cassette.read_text()) == recorded  # replays left it as it was
