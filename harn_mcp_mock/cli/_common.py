"""What every command shares: one-line errors with documented exit codes, stderr notes."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import typer

from harn_mcp_mock.errors import HarnError

EXIT_INTERNAL = 70
"""An unexpected internal error (a bug): one line, and the traceback with HARN_DEBUG=1."""


def note(prog: str, text: str) -> None:
    """A line for the human on stderr (stdout may be a protocol channel)."""
    sys.stderr.write(f"{prog}: {text}\n")
    sys.stderr.flush()


@contextlib.contextmanager
def handle_errors(prog: str) -> Iterator[None]:
    """Turn a HarnError into ``prog: error: <one line>`` and its exit code; never a traceback."""
    try:
        yield
    except HarnError as exc:
        note(prog, f"error: {exc}")
        raise typer.Exit(exc.exit_code) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:
        if os.environ.get("HARN_DEBUG"):
            raise
        note(prog, f"internal error: {type(exc).__name__}: {exc} (set HARN_DEBUG=1 for a traceback)")
        raise typer.Exit(EXIT_INTERNAL) from None
