"""The cassette model: load, save, journal recovery, format versions; record modes and the
session each one plans (:func:`plan_session`)."""

from harn_mcp_mock.cassette.migrate import FORMAT, FORMAT_VERSION
from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, recover_journal, save_cassette
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, SessionPlan, plan_session

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Cassette",
    "Message",
    "RecordMode",
    "SessionKind",
    "SessionPlan",
    "load_cassette",
    "plan_session",
    "recover_journal",
    "save_cassette",
]
