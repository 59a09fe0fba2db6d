"""verify(): the option values it refuses before reading a file or starting a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.verify.run import verify

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("flag", "param", "value"),
    [
        ("--latency-ratio", "latency_ratio", -1.0),
        ("--latency-ratio", "latency_ratio", 0.0),
        ("--latency-ratio", "latency_ratio", NAN),
        ("--latency-ratio", "latency_ratio", INF),
        ("--latency-floor-ms", "latency_floor_ms", -1.0),
        ("--latency-floor-ms", "latency_floor_ms", NAN),
        ("--latency-floor-ms", "latency_floor_ms", INF),
        ("--timeout", "timeout", 0.0),
        ("--timeout", "timeout", -5.0),
        ("--timeout", "timeout", NAN),
        ("--timeout", "timeout", INF),
    ],
)
def test_a_value_no_comparison_can_use_is_a_usage_error_naming_the_flag_before_any_file_is_read(
    flag: str, param: str, value: float, tmp_path: Path
) -> None:
    absent = tmp_path / "absent.cassette.json"  # read first, it would be a CassetteError (exit 3)
    with pytest.raises(UsageError) as raised:
        verify(absent, candidate=absent, **{param: value})
    assert raised.value.where == flag and raised.value.exit_code == 2
    assert str(raised.value).startswith(f"{flag}: must be ")


def test_a_zero_floor_and_any_ratio_above_zero_are_accepted(tmp_path: Path) -> None:
    from tests.echo_cassette import echo_cassette

    cassette = tmp_path / "echo.cassette.json"
    echo_cassette(cassette, "hi")
    result = verify(cassette, candidate=cassette, latency_ratio=0.5, latency_floor_ms=0.0, timeout=0.1)
    assert result.findings == []
