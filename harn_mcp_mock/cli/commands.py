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


def verify_main(
    cassette: Path,
    *,
    command: list[str],
    candidate: Path | None = None,
    save_candidate: Path | None = None,
    fmt: str = "text",
    report: Path | None = None,
    fail_on: str = "ERR",
    ignore_file: Path | None = None,
    ignore_path: list[str] | None = None,
    latency_ratio: float = 2.0,
    latency_floor_ms: float = 100.0,
    timeout: float = 30.0,
    redact_policy: Path | None = None,
) -> int:
    """`harn mcp mock verify`; returns 0 (no drift at or above --fail-on), 1 (drift) or 2 (cannot compare)."""
    import os
    import sys

    from harn_mcp_mock.errors import HarnError, UsageError

    prog = "harn mcp mock verify"
    try:
        from harn_mcp_mock.store.cas import atomic_write
        from harn_mcp_mock.verify.findings import Severity
        from harn_mcp_mock.verify.report import FORMATS, github_step_summary, render
        from harn_mcp_mock.verify.run import verify

        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}", where="--format")
        threshold = Severity.parse(fail_on)
        result = verify(
            cassette,
            candidate=candidate,
            command=command or None,
            save_candidate=save_candidate,
            ignore_file=ignore_file,
            ignore_paths=ignore_path or [],
            latency_ratio=latency_ratio,
            latency_floor_ms=latency_floor_ms,
            timeout=timeout,
            policy_path=redact_policy,
            on_event=lambda text: note(prog, text),
        )
    except HarnError as exc:
        note(prog, f"error: {exc}")
        return 2  # the inputs could not be compared
    color = fmt == "text" and report is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = render(result, fmt, fail_on=threshold, color=color)
    if report is not None:
        atomic_write(report, text.encode())
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt == "github" and summary_file:
        with open(summary_file, "a", encoding="utf-8") as fh:
            fh.write(github_step_summary(result, threshold))
    return result.exit_code(threshold)
