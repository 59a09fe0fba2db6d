"""Entry points: `harn` (groups `harn mcp mock ...`) and `harn-mcp-mock` (= `harn mcp mock`).

Both first offer the arguments to the start-up fast path (no typer import for a well-formed
``replay``, ``record``, ``show``, ... command line: ``fastpath.py``), then build the typer app.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import ModuleType


def harn_main() -> None:
    with _no_traceback_on_interrupt():
        args = sys.argv[1:]
        if args[:2] == ["mcp", "mock"] or args == ["--version"]:
            _fast(args[2:] if args[:1] == ["mcp"] else args)
        _apps().harn(prog_name="harn")


def mock_main() -> None:
    with _no_traceback_on_interrupt():
        _fast(sys.argv[1:])
        _apps().mock.app(prog_name="harn-mcp-mock")


@contextlib.contextmanager
def _no_traceback_on_interrupt() -> Iterator[None]:
    """A Ctrl-C outside the commands' own handling (say, while starting up) exits 130 quietly.

    ``replay``, ``world`` and ``record`` catch SIGINT/SIGTERM/SIGHUP themselves and finish in
    order (:mod:`harn_mcp_mock.shutdown`); this is the net for the moments before and after.
    """
    try:
        yield
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def _fast(args: list[str]) -> None:
    from harn_mcp_mock.cli import fastpath

    code = fastpath.run(args)
    if code is not None:
        raise SystemExit(code)


def _apps() -> ModuleType:
    from harn_mcp_mock.cli import apps

    return apps
