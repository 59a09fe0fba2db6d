"""Sessions: recording as an engine over any upstream, and the one place a session is built.

``recorder.py`` is the sink (frames -> redaction -> journal -> cassette); ``record.py`` holds
:class:`RecordCore` (what a recording is, no I/O; the stdio proxy, the
HTTP endpoint and the Python API drive it) and :class:`RecordEngine` (the core over any
:class:`~harn_mcp_mock.upstream.Upstream`); ``recorders.py`` is the one place a recorder is
built; ``tape.py`` is the one place a recording's tape is wired; ``open.py`` puts a recording
engine together (recorder, tape, upstream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harn_mcp_mock._lazy import lazy_exports

if TYPE_CHECKING:
    from harn_mcp_mock.session.open import open_record
    from harn_mcp_mock.session.record import RecordCore, RecordEngine
    from harn_mcp_mock.session.recorder import MessageRedactor, Recorder
    from harn_mcp_mock.session.recorders import new_recorder
    from harn_mcp_mock.session.tape import RecordingTape

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
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
    "MessageRedactor",
    "RecordCore",
    "RecordEngine",
    "Recorder",
    "RecordingTape",
    "new_recorder",
    "open_record",
]
