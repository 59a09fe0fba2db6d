"""The runner's progress: a live bar on a terminal (rich); off a terminal (CI logs, pipes) one line
per finished trial with ``run --verbose``, else nothing until the summary
(:mod:`harn_mcp_mock.runner.summary`, which names every failure and its cause)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from harn_mcp_mock.runner.folder import TrialRecord
from harn_mcp_mock.runner.run import profile_label

__all__ = ["trial_line", "trial_progress"]

OnTrial = Callable[[TrialRecord, int, int], None]


def trial_line(record: TrialRecord, done: int, total: int) -> str:
    """``[3/16] bank/pay-rent/faults flaky/2: scored (exit 0, 1042 ms)``."""
    detail = f"exit {record.exit_code}" if record.exit_code is not None else "no exit code"
    if record.status == "infra_error":
        detail += f", infra: {record.infra_error}"
    elif record.message:
        detail += f", {record.message}"
    if record.agent_error:
        detail += f", agent raised {record.agent_error}"
    if record.attempts != 1:
        detail += f", {record.attempts} attempts"
    where = f"{record.world}/{record.task}/{profile_label(record.profile)}/{record.trial}"
    return f"[{done}/{total}] {where}: {record.status} ({detail}, {record.duration_ms} ms)"


@contextmanager
def trial_progress(stream: TextIO, *, live: bool | None = None, lines: bool = True) -> Iterator[OnTrial]:
    """A callback for :func:`~harn_mcp_mock.runner.run.run_episodes`'s ``on_trial``. ``live``:
    the bar (default: when ``stream`` is a terminal). ``lines``: one line per finished trial
    (``run --verbose``); without it, off a terminal, nothing until the summary."""
    if live is None:
        live = stream.isatty()
    if not live and not lines:

        def quiet(record: TrialRecord, done: int, total: int) -> None:
            return None

        yield quiet
        return
    if not live:

        def line(record: TrialRecord, done: int, total: int) -> None:
            stream.write(trial_line(record, done, total) + "\n")
            stream.flush()

        yield line
        return

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=stream)
    statuses: Counter[str] = Counter()
    with Progress(
        TextColumn("trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=False,
    ) as bar:
        task_id = bar.add_task("", total=None)

        def update(record: TrialRecord, done: int, total: int) -> None:
            statuses[record.status] += 1
            if lines or record.status != "scored":  # the odd ones stay visible above the bar
                bar.console.print(trial_line(record, done, total), markup=False, highlight=False)
            summary = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
            bar.update(task_id, completed=done, total=total, description=summary)

        yield update
