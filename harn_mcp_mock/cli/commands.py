"""Command bodies that must not import typer: shared by the typer CLI and the start-up fast path."""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.cli._common import handle_errors, note


def replay_main(
    cassette: Path,
    *,
    command: list[str],
    mode: str = "none",
    strict: bool = False,
    report: Path | None = None,
    latency: str = "none",
    ignore_path: list[str] | None = None,
    repeat: str = "last",
    strict_order: bool = False,
    redact_policy: Path | None = None,
) -> int:
    """`harn mcp mock replay`; returns the exit code."""
    prog = "harn mcp mock replay"
    with handle_errors(prog):
        from harn_mcp_mock.replay.run import run_replay

        outcome = run_replay(
            cassette,
            command=command,
            mode=mode,
            report_path=report,
            latency=latency,
            ignore_paths=ignore_path or [],
            repeat=repeat,
            strict_order=strict_order,
            policy_path=redact_policy,
            on_event=lambda text: note(prog, text),
        )
    if strict and not outcome.clean:
        note(prog, f"--strict: {outcome.problem_summary()}")
        return 1
    return outcome.exit_code
