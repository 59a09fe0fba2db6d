"""The replay API takes one options value (``options=``, ``callbacks=``); the keyword forms are a
thin shim laid over it, spelled once (replay_session's parameters are open_replay's)."""

from __future__ import annotations

import inspect
from pathlib import Path

import anyio
import pytest

from harn_mcp_mock.api import (
    EpisodesTransport,
    ReplayTransport,
    cassette_transport,
    open_replay,
    replay_session,
)
from harn_mcp_mock.options import ClientCallbacks, ReplayOptions, split_session_keywords

CASSETTE = Path(__file__).resolve().parent.parent / "cassettes" / "time.cassette.json"


def test_replay_session_has_open_replays_parameters() -> None:
    assert inspect.signature(replay_session).parameters == inspect.signature(open_replay).parameters
    assert replay_session.__name__ == "replay_session"
    assert "options" in inspect.signature(open_replay).parameters


def test_the_transport_takes_the_value_or_the_keywords_alike() -> None:
    options = ReplayOptions.build(repeat="cycle", ignore_paths=["/params/x"])
    by_value = ReplayTransport(CASSETTE, options=options)
    by_keywords = ReplayTransport(CASSETTE, repeat="cycle", ignore_paths=["/params/x"])
    assert by_value.options == by_keywords.options == options
    laid_over = ReplayTransport(CASSETTE, options=options, seed=4)
    assert laid_over.options == ReplayOptions.build(options, seed=4)
    assert laid_over.options.repeat == "cycle" and laid_over.options.seed == 4


def test_cassette_transport_passes_the_value_whole() -> None:
    options = ReplayOptions.build(strict_order=True, latency="recorded")
    transport = cassette_transport(CASSETTE, options=options)
    assert isinstance(transport, ReplayTransport)
    assert transport.options == options


def test_episodes_take_the_matching_options_from_the_value(tmp_path: Path) -> None:
    options = ReplayOptions.build(ignore_paths=["/params/x"])
    episodes = EpisodesTransport(tmp_path / "c.cassette.json", ["true"], options=options)
    assert episodes.options.ignore_paths == ("/params/x",)
    by_keywords = EpisodesTransport(tmp_path / "c.cassette.json", ["true"], ignore_paths=["/params/x"])
    assert by_keywords.options == episodes.options


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="'repeats'"):
        ReplayTransport(CASSETTE, repeats="cycle")  # type: ignore[call-arg]

    async def main() -> None:
        async with open_replay(CASSETTE, repeats="cycle"):  # type: ignore[call-arg]
            pass

    with pytest.raises(TypeError, match="'repeats'"):
        anyio.run(main)


def test_build_lays_keywords_over_a_value() -> None:
    base = ReplayOptions.build(repeat="error", faults=[{"id": "f", "kind": "tool_error", "message": "boom"}])
    assert ReplayOptions.build(base) is base
    over = ReplayOptions.build(base, seed=9)
    assert (over.repeat, over.seed, over.faults, over.fault_rules) == (
        "error",
        9,
        base.faults,
        base.fault_rules,
    )


def test_session_keywords_split_into_options_and_callbacks() -> None:
    def handler(message: object) -> None: ...

    replay, callbacks = split_session_keywords({"repeat": "cycle", "message_handler": handler})
    assert replay == {"repeat": "cycle"}
    assert callbacks.message_handler is handler and callbacks.sampling_callback is None
    base = ClientCallbacks(logging_callback=handler)  # type: ignore[arg-type]
    _, merged = split_session_keywords({"message_handler": handler}, base)
    assert merged.logging_callback is handler and merged.message_handler is handler


def test_a_session_over_the_value_answers_as_over_the_keywords() -> None:
    async def tools(**keywords: object) -> list[str]:
        async with replay_session(CASSETTE, **keywords) as session:  # type: ignore[arg-type]
            return [tool.name for tool in (await session.list_tools()).tools]

    by_value = anyio.run(lambda: tools(options=ReplayOptions.build(repeat="cycle")))
    by_keywords = anyio.run(lambda: tools(repeat="cycle"))
    assert by_value == by_keywords and by_value
