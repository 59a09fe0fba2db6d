"""pytest fixtures for testbench mode: ``testbench_builder`` and ``testbench``.

``testbench`` yields an *active* :class:`~harn_mcp_mock.testbench.Testbench` built from
``testbench_builder`` -- by default a paused clock at 2026-01-01T00:00:00Z and a denied network
(loopback allowed) -- and restores everything when the test ends. Override ``testbench_builder``
in a ``conftest.py`` or a test module to add axes::

    @pytest.fixture
    def testbench_builder(tmp_path):
        return Testbench.builder().paused_clock_at_ms().deny_network().fs_overlay(tmp_path)

    def test_backoff_waits_an_hour(testbench):
        retry_with_backoff()           # sleeps for real in production, instantly here
        assert testbench.clock.wall_ms() == 1_767_229_200_000
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # loaded by every pytest run: the testbench itself loads when a test asks for it
    from harn_mcp_mock.testbench.core import Testbench, TestbenchBuilder


@pytest.fixture
def testbench_builder() -> TestbenchBuilder:
    """The configuration the ``testbench`` fixture activates (override to add axes)."""
    from harn_mcp_mock.testbench.core import Testbench

    return Testbench.builder().paused_clock_at_ms().deny_network()


@pytest.fixture
def testbench(testbench_builder: TestbenchBuilder) -> Iterator[Testbench]:
    """An active testbench for the test's duration; ``testbench.finalize()`` gives the artifacts."""
    bench = testbench_builder.build()
    with bench:
        yield bench
    bench.finalize()
