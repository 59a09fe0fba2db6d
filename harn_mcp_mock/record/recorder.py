"""The recorder moved to :mod:`harn_mcp_mock.session.recorder` (the recording core's sink);
this name stays for the code that imports it from here."""

from __future__ import annotations

from harn_mcp_mock.session.recorder import JournalWriter, MessageRedactor, Recorder

__all__ = ["JournalWriter", "MessageRedactor", "Recorder"]
