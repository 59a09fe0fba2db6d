"""What every command shares: one-line errors with documented exit codes, stderr notes.

Nothing here imports typer, so the start-up fast path (``fastpath.py``) can use it too.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from harn_mcp_mock.errors import HarnError

EXIT_INTERNAL = 70
"""An unexpected internal error (a bug): one line, and the traceback with HARN_DEBUG=1."""


def version_line() -> str:
    """``harn-mcp-mock X.Y.Z``: the installed distribution's version (cheap: no typer, no package import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"harn-mcp-mock {version('harn-mcp-mock')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        from harn_mcp_mock._version import __version__

        return f"harn-mcp-mock {__version__}"


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
        raise SystemExit(exc.exit_code) from None
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:
        if os.environ.get("HARN_DEBUG") or type(exc).__module__.split(".")[0] in ("click", "typer"):
            raise  # the CLI framework's own exceptions (typer.Exit, Abort) carry their exit handling
        note(prog, f"internal error: {type(exc).__name__}: {exc} (set HARN_DEBUG=1 for a traceback)")
        raise SystemExit(EXIT_INTERNAL) from None
