"""pytest-xdist workers sharing one cassette in record mode ``once``, against ``mcp-server-time``.

Each round starts from no cassette and runs several tests that share it with ``-n 2``: both
workers want to record it at once. The recording claim (``harn_mcp_mock/cassette/claim.py``)
lets one worker record while the other waits and then replays, so every test passes, the
cassette holds one session, and no journal or claim file is left behind.
"""

from __future__ import annotations

import pytest

from harn_mcp_mock.cassette.claim import claim_path
from harn_mcp_mock.cassette.model import journal_path, load_cassette

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
pytest_plugins = ["pytester"]

ROUNDS = 6
TESTS = 6

SHARED_TEST = """
import os
import pytest

pytestmark = pytest.mark.mcp_mock("shared/time.cassette.json")


@pytest.mark.parametrize("n", range({tests}))
async def test_shared_cassette(mcp_mock, n):
    async with mcp_mock.session() as session:
        result = await session.call_tool("get_current_time", {{"timezone": "UTC"}})
    assert not result.is_error
    assert result.structured_content["timezone"] == "UTC"
    if mcp_mock.recorded:
        open(f"recorded-{{n}}", "w").close()
"""


def test_xdist_workers_share_a_cassette_in_once_mode_without_a_race(
    pytester: pytest.Pytester, time_command: list[str]
) -> None:
    pytester.makeini(
        """
        [pytest]
        asyncio_mode = auto
        asyncio_default_fixture_loop_scope = function
        filterwarnings = error
        """
    )
    pytester.makeconftest(
        f"""
        import pytest

        @pytest.fixture
        def mcp_mock_config():
            return {{"command": {time_command!r}}}
        """
    )
    pytester.makepyfile(test_shared=SHARED_TEST.format(tests=TESTS))
    cassette = pytester.path / "cassettes" / "shared" / "time.cassette.json"
    for round_ in range(ROUNDS):
        cassette.unlink(missing_ok=True)
        for marker in pytester.path.glob("recorded-*"):
            marker.unlink()
        result = pytester.runpytest_subprocess(
            "-n", "2", "-p", "no:cacheprovider", "--mcp-record-mode=once", timeout=120
        )
        assert result.ret == 0, f"round {round_}:\n{result.stdout.str()}"
        result.assert_outcomes(passed=TESTS)
        assert len(list(pytester.path.glob("recorded-*"))) == 1, f"round {round_}: one test records"
        initializes = [
            m
            for m in load_cassette(cassette).messages
            if isinstance(m.message, dict) and m.message.get("method") == "initialize"
        ]
        assert len(initializes) == 1, f"round {round_}: one session in the cassette"
        assert not journal_path(cassette).exists()
        assert not claim_path(cassette).exists()
