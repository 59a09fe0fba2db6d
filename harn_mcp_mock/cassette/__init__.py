"""The cassette model: load, save, journal recovery, format versions."""

from harn_mcp_mock.cassette.migrate import FORMAT, FORMAT_VERSION
from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, recover_journal, save_cassette

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Cassette",
    "Message",
    "load_cassette",
    "recover_journal",
    "save_cassette",
]
