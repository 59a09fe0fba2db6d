from __future__ import annotations

import asyncio
import datetime
import time

import pytest

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.testbench import DEFAULT_START_MS, Testbench, TestbenchError

REAL_TIME = time.time
REAL_SLEEP = time.sleep
REAL_DATETIME = datetime.datetime


def test_time_reads_the_paused_clock_and_sleep_advances_it_instantly() -> None:
    with Testbench.builder().paused_clock_at_ms(1_000_000).build():
        assert time.time() == 1000.0  # allow-wall-clock: virtual
        start = time.monotonic()
        time.sleep(3600)  # allow-wall-clock: virtual
        assert time.monotonic() - start == 3600.0
        assert time.time() == 4600.0  # allow-wall-clock: virtual
        assert time.time_ns() == 4_600_000_000_000


def test_datetime_now_follows_the_clock_and_isinstance_still_holds() -> None:
    with Testbench.builder().paused_clock_at_ms().build():
        now = datetime.datetime.now(datetime.UTC)
        assert now == REAL_DATETIME(2026, 1, 1, tzinfo=datetime.UTC)
        assert datetime.datetime.utcnow() == REAL_DATETIME(2026, 1, 1)
        assert isinstance(REAL_DATETIME(2020, 1, 1), datetime.datetime)
        time.sleep(86_400)  # allow-wall-clock: virtual
        assert datetime.datetime.now(datetime.UTC).day == 2


def test_everything_is_restored_on_exit_even_after_an_error() -> None:
    with pytest.raises(RuntimeError), Testbench.builder().paused_clock_at_ms().build():
        raise RuntimeError("boom")
    assert time.time is REAL_TIME
    assert time.sleep is REAL_SLEEP
    assert datetime.datetime is REAL_DATETIME
    assert abs(time.time() - DEFAULT_START_MS / 1000) > 1  # real time again (allow-wall-clock: virtual)


def test_an_injected_paused_clock_is_the_one_installed() -> None:
    clock = PausedClock(5_000)
    with Testbench.builder().clock(clock).build():
        time.sleep(2)  # allow-wall-clock: virtual
    assert clock.wall_ms() == 7_000


def test_a_second_active_testbench_is_refused() -> None:
    with Testbench.builder().paused_clock_at_ms().build():
        with pytest.raises(TestbenchError, match="already active"):
            Testbench.builder().build().__enter__()
    assert time.time is REAL_TIME


def test_real_clock_mode_patches_nothing() -> None:
    with Testbench.builder().real_clock().build():
        assert time.time is REAL_TIME


async def test_asyncio_sleep_and_timeouts_jump_virtual_time(testbench: Testbench) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.sleep(3600)  # allow-wall-clock: virtual
    assert loop.time() - start == pytest.approx(3600, abs=0.01)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.Event().wait(), timeout=30)
    assert loop.time() - start == pytest.approx(3630, abs=0.01)
    assert time.time() == pytest.approx(DEFAULT_START_MS / 1000 + 3630, abs=0.01)  # allow-wall-clock: virtual


def test_the_fixture_denies_the_network_and_pauses_the_clock(testbench: Testbench) -> None:
    assert time.time() == DEFAULT_START_MS / 1000  # allow-wall-clock: virtual
    assert testbench.network is not None
