"""Record modes, with vcrpy/pytest-recording names and the X07 names as aliases.

The default is ``none``: replay only, never reach a real server, so CI cannot record by accident.
"""

from __future__ import annotations

from enum import StrEnum

from harn_mcp_mock.errors import UsageError


class RecordMode(StrEnum):
    NONE = "none"
    """Replay only; a request with no recorded match is an error. Never starts a server."""
    ONCE = "once"
    """Record if the cassette does not exist yet, else replay as ``none``."""
    NEW_EPISODES = "new_episodes"
    """Replay what matches; forward misses to the live server and append them (X07 ``record_missing``)."""
    ALL = "all"
    """Re-record everything through the live server (X07 ``rewrite``)."""


ALIASES = {
    "off": RecordMode.NONE,
    "replay": RecordMode.NONE,
    "record": RecordMode.ONCE,
    "record_missing": RecordMode.NEW_EPISODES,
    "rewrite": RecordMode.ALL,
}


def parse_record_mode(value: str | RecordMode) -> RecordMode:
    """A RecordMode from its name or an X07 alias; anything else lists the valid names."""
    if isinstance(value, RecordMode):
        return value
    text = value.strip().lower().replace("-", "_")
    try:
        return RecordMode(text)
    except ValueError:
        pass
    if text in ALIASES:
        return ALIASES[text]
    valid = ", ".join([m.value for m in RecordMode] + [f"{k} (= {v.value})" for k, v in ALIASES.items()])
    raise UsageError(f"unknown record mode {value!r}; valid modes: {valid}", where="--mode")
