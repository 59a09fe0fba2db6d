"""Record: the stdio proxy and the command (the recorder, redaction before anything is written,
is :mod:`harn_mcp_mock.session.recorder`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harn_mcp_mock._lazy import lazy_exports

if TYPE_CHECKING:
    from harn_mcp_mock.record.proxy import RecordResult, StdioProxy, record_stdio
    from harn_mcp_mock.record.recover import Recovered, recover_recording
    from harn_mcp_mock.record.session import load_policy, record_command
    from harn_mcp_mock.session.recorder import MessageRedactor, Recorder

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "MessageRedactor": "harn_mcp_mock.session.recorder",
    "RecordResult": "proxy",
    "Recorder": "harn_mcp_mock.session.recorder",
    "Recovered": "recover",
    "StdioProxy": "proxy",
    "load_policy": "session",
    "record_command": "session",
    "record_stdio": "proxy",
    "recover_recording": "recover",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "MessageRedactor",
    "RecordResult",
    "Recorder",
    "Recovered",
    "StdioProxy",
    "load_policy",
    "record_command",
    "record_stdio",
    "recover_recording",
]
