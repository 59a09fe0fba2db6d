"""Replay options are one value, built where input arrives; the CLI's fast path and the pytest
marker read their option lists from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.cli import fastpath
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.options import REPLAY_FLAGS, ReplayOptions
from harn_mcp_mock.pytest_plugin import MARKER_OPTIONS, merge_options


def test_every_option_has_one_cli_flag_and_the_fast_path_takes_them_all() -> None:
    assert sorted(name for name, _kind in REPLAY_FLAGS.values()) == sorted(ReplayOptions.names())
    for flag, spec in REPLAY_FLAGS.items():
        assert fastpath.REPLAY_FLAGS[flag] == spec


def test_the_marker_takes_every_option_by_its_name() -> None:
    assert set(ReplayOptions.names()) <= MARKER_OPTIONS


def test_the_cli_the_api_and_the_marker_build_the_same_value() -> None:
    argv = [
        "--ignore-path",
        "/params/_meta",
        "--repeat",
        "cycle",
        "--strict-order",
        "--latency",
        "scaled:0.5",
    ]
    parsed = fastpath.parse([*argv, "--redact-policy", "p.json"], fastpath.REPLAY_FLAGS)
    assert parsed is not None
    from_cli = ReplayOptions.build(**{k: v for k, v in parsed.items() if k in ReplayOptions.names()})
    from_api = ReplayOptions.build(
        ignore_paths="/params/_meta",
        repeat="cycle",
        strict_order=True,
        latency="scaled:0.5",
        redact_policy="p.json",
    )
    marker = merge_options(
        [
            {
                "ignore_paths": ["/params/_meta"],
                "repeat": "cycle",
                "strict_order": True,
                "latency": "scaled:0.5",
            }
        ],
        "@pytest.mark.mcp_mock",
    )
    from_marker = ReplayOptions.build(
        ignore_paths=marker.ignore_paths,
        repeat=marker.repeat,
        strict_order=marker.strict_order,
        latency=marker.latency,
        redact_policy="p.json",
    )
    assert from_cli == from_api == from_marker
    assert from_cli.redact_policy == Path("p.json")


@pytest.mark.parametrize(
    ("given", "where"), [({"repeat": "twice"}, "--repeat"), ({"latency": "slow"}, "--latency")]
)
def test_a_bad_value_is_one_usage_error_where_the_options_are_built(
    given: dict[str, str], where: str
) -> None:
    with pytest.raises(UsageError) as caught:
        ReplayOptions.build(**given)  # type: ignore[arg-type]
    assert caught.value.where == where


def test_an_unknown_marker_option_names_the_valid_ones() -> None:
    with pytest.raises(
        UsageError, match=r"unknown mcp_mock option .strict_ordr.; valid options: .*strict_order"
    ):
        merge_options([{"strict_ordr": True}], "@pytest.mark.mcp_mock")


def test_record_options_are_a_value_and_refuse_a_negative_grace() -> None:
    from harn_mcp_mock.options import RecordOptions

    assert RecordOptions("p.json", 2, True) == RecordOptions(Path("p.json"), 2.0, True)
    for bad in (-1, float("nan"), float("inf")):  # inf: an internal OverflowError at the session's end
        with pytest.raises(UsageError) as caught:
            RecordOptions(grace=bad)
        assert caught.value.where == "--shutdown-timeout"
    with pytest.raises(AttributeError, match="immutable"):
        RecordOptions().grace = 3  # type: ignore[misc]


def test_a_live_target_is_checked_once_where_it_is_built() -> None:
    from harn_mcp_mock.options import LiveTarget

    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError) as caught:
            LiveTarget(["srv"], timeout=bad)
        assert caught.value.where == "--timeout"
    with pytest.raises(UsageError, match="a list"):
        LiveTarget("python server.py")  # its letters are not an argv
    assert LiveTarget(url="http://h/mcp", headers=["A: b"]).header_map() == {"A": "b"}


def test_record_options_hold_no_headers_the_live_target_does() -> None:
    from harn_mcp_mock.options import LiveTarget, RecordOptions

    assert "headers" not in RecordOptions.__slots__
    assert LiveTarget(url="http://h/mcp", headers=["A:b"]).argv == [
        "--url",
        "http://h/mcp",
        "--header",
        "A:b",
    ]
