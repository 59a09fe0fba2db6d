"""Sessions: recording as an engine over any upstream, and the one place a session is built.

``recorder.py`` is the sink (frames -> redaction -> journal -> cassette); ``record.py`` holds
:class:`RecordCore` (what a recording is, no I/O; the stdio proxy, the
HTTP endpoint and the Python API drive it) and :class:`RecordEngine` (the core over any
:class:`~harn_mcp_mock.upstream.Upstream`); ``recorders.py`` is the one place a recorder is
built; ``tape.py`` is the one place a recording's tape is wired; ``episodes.py`` is
``new_episodes`` (:class:`NewEpisodes`, and :class:`EpisodesEngine` over it); ``open.py`` is
the one place a session is built (:func:`open_session`: the engines a transport serves, with
the tape and the fault marking wired once; :func:`open_record`: a recording engine).
"""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.session.episodes import EpisodesEngine, NewEpisodes
    from harn_mcp_mock.session.open import ReplayOutcome, ReportMerger, Session, open_record, open_session
    from harn_mcp_mock.session.record import RecordCore, RecordEngine
    from harn_mcp_mock.session.recorder import MessageRedactor, Recorder
    from harn_mcp_mock.session.recorders import new_recorder
    from harn_mcp_mock.session.tape import RecordingTape

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "EpisodesEngine": "episodes",
    "NewEpisodes": "episodes",
    "ReplayOutcome": "open",
    "ReportMerger": "open",
    "Session": "open",
    "open_session": "open",
    "MessageRedactor": "recorder",
    "RecordCore": "record",
    "RecordEngine": "record",
    "Recorder": "recorder",
    "RecordingTape": "tape",
    "new_recorder": "recorders",
    "open_record": "open",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "EpisodesEngine",
    "MessageRedactor",
    "NewEpisodes",
    "RecordCore",
    "RecordEngine",
    "Recorder",
    "RecordingTape",
    "ReplayOutcome",
    "ReportMerger",
    "Session",
    "new_recorder",
    "open_record",
    "open_session",
]
