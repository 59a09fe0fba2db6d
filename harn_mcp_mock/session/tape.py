"""The event tape of a session that records: the one place its tape is wired.

``record --emit-tape`` (stdio), ``record --url --emit-tape`` and ``replay --http --emit-tape``
in the modes that record write their exchanges, redacted, as ``mcp_json_rpc`` records through
one :class:`RecordingTape`: its writer, one observer every recorder of the run shares (made at
the first), and the redactors it is redacted again with when it closes (a value identified
after the records that carry it were written: docs/redaction.md, value memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harn_mcp_mock.clock import Clock
    from harn_mcp_mock.tape.mcp import McpTapeObserver


class RecordingTape:
    """The tape at ``path`` (header: ``script_path`` and ``argv``); :meth:`close` it."""

    def __init__(
        self, path: str | Path, *, script_path: str, argv: list[str], clock: Clock | None = None
    ) -> None:
        from harn_mcp_mock.tape import TapeWriter

        self.writer = TapeWriter(path, clock=clock, script_path=script_path, argv=argv)
        self.redactors: list[Any] = []
        """The redactors of the recordings on this tape (it is redacted again with them)."""
        self._observer: McpTapeObserver | None = None

    @property
    def path(self) -> Path:
        return Path(self.writer.path)

    def observer(self, server: str) -> McpTapeObserver:
        """The observer a recorder writes to this tape through (``server``: the name the
        tape's records give the live server; the first one made is shared by all)."""
        if self._observer is None:
            from harn_mcp_mock.tape.mcp import McpTapeObserver

            self._observer = McpTapeObserver(self.writer, server)
        return self._observer

    def close(self, *, unanswered: bool = True) -> None:
        """Tape the requests never answered (unless not ``unanswered``), close, and redact the
        tape again with what the redactors learned."""
        from harn_mcp_mock.tape.mcp import redact_again

        try:
            if unanswered and self._observer is not None:
                self._observer.finish()
        finally:
            self.writer.close()
            redact_again(self.redactors, tape=self.path)
