"""`harn test-bench fidelity A.tape B.tape --mode M [--report F]`: compare two event tapes.

:func:`fidelity_main` does the work without typer, with the exit codes of docs/cli.md (0: no
divergence, 2: any divergence, as the seed's tape format says, so a CI gate can rely on it; 2 as
well for a bad ``--mode``, the usage code of every command, told apart by the one ``error:`` line on
stderr and no summary on stdout; 3: a tape is unreadable or newer than this version reads); :func:`register` adds the typer command to a group.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harn_mcp_mock.cli._common import note
from harn_mcp_mock.errors import HarnError

if TYPE_CHECKING:
    import typer

PROG = "harn test-bench fidelity"
MODES = ("byte-identical", "semantic", "outcome", "phase-aware")
EXIT_IDENTICAL = 0
EXIT_DIVERGED = 2
"""The seed's status on divergences (``/work/shared/seeds/tape-format.md``: "status 2")."""
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
SHOWN = 20
"""Divergences listed on stdout (the JSON report has all of them)."""


def fidelity_main(a: Path, b: Path, mode: str, report: Path | None) -> int:
    """Compare tapes ``a`` and ``b``; print a summary, write the JSON report if asked; the exit status."""
    from harn_mcp_mock.tape.fidelity import compare
    from harn_mcp_mock.tape.model import load_tape_pair

    if mode not in MODES:
        note(PROG, f"error: --mode must be one of {', '.join(MODES)}, not {mode!r}")
        return EXIT_USAGE
    try:
        tape_a, tape_b = load_tape_pair(a, b)
    except HarnError as exc:
        note(PROG, f"error: {exc}")
        return EXIT_UNREADABLE
    for tape in (tape_a, tape_b):
        for text in tape.notes:
            note(PROG, f"{tape.path}: {text}")
    result = compare(tape_a, tape_b, mode)
    if report is not None:
        import orjson

        from harn_mcp_mock.store.cas import atomic_write

        try:
            atomic_write(report, orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
        except OSError as exc:
            note(PROG, f"error: {exc}")  # one line naming the file and why (a FIFO nobody reads...)
            return EXIT_UNREADABLE
    lines = [f"fidelity ({mode}): {a} ({result.records[0]} records) vs {b} ({result.records[1]} records)"]
    if result.identical:
        lines.append("no divergences")
    else:
        counts = ", ".join(f"{n} {cat}" for cat, n in sorted(result.counts().items()))
        lines.append(f"{len(result.divergences)} divergences: {counts}")
        for d in result.divergences[:SHOWN]:
            lines.append(f"  {d.category} seq_a={d.seq_a} seq_b={d.seq_b} {d.kind}: {d.detail}")
        if len(result.divergences) > SHOWN:
            more = len(result.divergences) - SHOWN
            lines.append(
                f"  ... {more} more" + (f" (see {report})" if report is not None else " (use --report)")
            )
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return EXIT_IDENTICAL if result.identical else EXIT_DIVERGED


def register(app: typer.Typer) -> None:
    """Add the ``fidelity`` command to ``app`` (the ``harn test-bench`` group)."""
    from typing import Annotated, get_type_hints

    import typer

    from harn_mcp_mock.tape.fidelity import FidelityMode

    @app.command("fidelity", short_help="Compare two event tapes.")
    def fidelity(
        a: Annotated[Path, typer.Argument(help="The reference tape (e.g. the recording).")],
        b: Annotated[Path, typer.Argument(help="The tape to check (e.g. the replay).")],
        mode: Annotated[
            FidelityMode, typer.Option("--mode", help="How strictly to compare.", case_sensitive=False)
        ] = FidelityMode.BYTE_IDENTICAL,
        report: Annotated[
            Path | None, typer.Option("--report", help="Write the FidelityReport JSON here.")
        ] = None,
    ) -> None:
        """Compare two event tapes; exit 2 when they diverge (or for a bad flag), 3 when one cannot be read."""
        raise typer.Exit(fidelity_main(a, b, str(mode.value), report))

    # typer reads the hints from the module globals, where typer and FidelityMode are not
    # (this module stays typer-free until register() runs): hand it the resolved ones.
    fidelity.__annotations__ = get_type_hints(
        fidelity,
        localns={"Annotated": Annotated, "typer": typer, "FidelityMode": FidelityMode},
        include_extras=True,
    )
