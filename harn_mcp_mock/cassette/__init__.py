"""The cassette model: load, save, journal recovery, format versions; record modes and the
session each one plans (:func:`plan_session`)."""

from harn_mcp_mock._lazy import lazy_exports
from harn_mcp_mock.cassette.migrate import FORMAT, FORMAT_VERSION
from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette, save_cassette
from harn_mcp_mock.cassette.modes import RecordMode, SessionKind, SessionPlan, plan_session

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from harn_mcp_mock.cassette.recovery import recover_journal

# Recovery takes the recording claim (filelock): loaded on first use, not by every replay.
__getattr__ = lazy_exports(__name__, {"recover_journal": "recovery"})

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
