"""What ``harn mcp mock run`` prints when it ends: for a person, not a parser (``results.json``
is for parsers).

- Each group's table with **one interval per figure**: the pass rate and pass^1 are the same
  figure, printed once (``pass_rate = pass^1``) with its Wilson interval, then pass^k for k >= 2,
  and a legend saying what the brackets are.
- **Every trial that did not simply pass, with its exact cause**: ``timeout (after N s)``,
  ``crash (exit N: <the agent's last stderr line>)``, ``goal: <the predicates that fail>``,
  ``collateral: <paths>``, ``forbidden: ...``, ``over_budget: ...``, ``usage_invalid: ...``,
  ``usage_unknown: ...``,
  ``infra: ...``; and, apart, each PASS whose agent exited non-zero ("passed, but the agent
  exited N"), which ``--strict-exit`` makes a FAIL.
- Paths relative to the current folder when under it. One line per trial as trials finish (every
  PASS too) only with ``--verbose`` (:mod:`harn_mcp_mock.cli.progress`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harn_mcp_mock.runner.folder import TrialRecord
from harn_mcp_mock.scoring.eval import EvalResult, GroupSummary, RunRecord

__all__ = ["last_stderr_line", "nonzero_passes", "render_summary", "shown_path", "trial_cause"]

MAX_SHOWN = 3
"""Predicates and paths named per trial (``(+N more)`` after)."""
SHORT = 60
"""Characters of one predicate, or of the agent's last stderr line, before ``...``."""


def shown_path(path: str | os.PathLike[str], cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` (default: the current folder) when under it, else as is."""
    here = (cwd or Path.cwd()).resolve()
    target = Path(path)
    if target.is_absolute():
        try:
            return str(target.relative_to(here))
        except ValueError:
            return str(target)
    return str(target)


def _cut(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _some(items: Sequence[str]) -> str:
    more = len(items) - MAX_SHOWN
    return ", ".join(items[:MAX_SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def _predicate(failed: Any) -> str:
    """A failed goal predicate, shortened: ``/accounts/A-101/balance_cents equals 1000``."""
    predicate = failed.get("predicate") if isinstance(failed, dict) else failed
    if isinstance(predicate, dict) and isinstance(predicate.get("path"), str):
        rest = {k: v for k, v in predicate.items() if k != "path"}
        words = " ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in rest.items())
        return _cut(f"{predicate['path']} {words}".strip())
    return _cut(json.dumps(predicate, ensure_ascii=False, sort_keys=True))


def last_stderr_line(data: bytes) -> str:
    """The last line of an agent's stderr with words in it (not a border such as ``+------``)."""
    lines = [line.strip(" |+-=─│┌└") for line in data[-4096:].decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if any(ch.isalnum() for ch in line)]
    return lines[-1] if lines else ""


def _stderr(record: TrialRecord, out: Path) -> str:
    data = record.outputs.get("agent.stderr")
    if data is None:  # written already (or resumed): the runner's own file, read for display only
        data = b""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(out.joinpath(*record.parts, "agent.stderr"), flags)
        except OSError:
            return ""
        try:  # a regular file only: never a FIFO or device left in its place
            size = os.fstat(fd).st_size
            if stat.S_ISREG(os.fstat(fd).st_mode):
                data = os.pread(fd, 4096, max(0, size - 4096))
        finally:
            os.close(fd)
    return last_stderr_line(data)


def _exit(record: TrialRecord, out: Path) -> str:
    line = _stderr(record, out)
    return f"exit {record.exit_code}" + (f": {_cut(line)}" if line else "")


def trial_cause(record: TrialRecord, run: RunRecord | None, out: Path) -> str:
    """Why the trial is not a plain PASS, exactly (empty for a PASS whose agent exited 0)."""
    if record.status == "infra_error":
        return f"infra: {record.infra_error}"
    parts = []
    if record.status == "timeout":
        after = (record.message or "").removeprefix("timed out ")
        parts.append(f"timeout ({after})" if after.startswith("after ") else "timeout")
    elif record.exit_code not in (0, None):
        parts.append(f"crash ({_exit(record, out)})")
    if record.agent_error:
        parts.append(f"crash (the agent raised {_cut(record.agent_error)})")
    score = run.score if run is not None else None
    if score is None:
        return "; ".join(parts)
    if score.passed:
        return f"passed, but the agent exited {_exit(record, out).removeprefix('exit ')}" if parts else ""
    if not score.goal_match:
        parts.append("goal: " + _some([_predicate(f) for f in score.failed_goals]))
    if score.collateral:
        parts.append("collateral: " + _some(score.collateral))
    if score.forbidden_hit:
        parts.append(f"forbidden: {len(score.forbidden_hit)} hit(s)")
    parts += score.spending_verdicts()
    if score.exit_failed is not None and not any(p.startswith("crash") for p in parts):
        parts.append(f"strict exit: {score.exit_failed}")
    return "; ".join(parts)


def _dec(value: Any) -> str:
    return "-" if value is None else f"{float(value):.4f}"


def _interval(value: tuple[float, float] | None) -> str:
    return "" if value is None else f" [{value[0]:.4f}, {value[1]:.4f}]"


def _group(group: GroupSummary) -> list[str]:
    from harn_mcp_mock.scoring.render import power_line, shown_ks, spend_text, task_rows

    label = group.faults if group.faults is not None else "none"
    lines = [f"{group.world}, faults: {label}", *task_rows(group)]
    figures = [f"pass_rate = pass^1 {_dec(group.pass_rate)}{_interval(group.pass_rate_interval)}"]
    shown = [k for k in shown_ks(list(group.pass_power_k)) if k > 1]
    figures += [
        f"pass^{k} {_dec(group.pass_power_k[k])}{_interval(group.pass_power_k_interval.get(k))}"
        for k in shown
    ]
    for start in range(0, len(figures), 3):
        lines.append("  " + "  ".join(figures[start : start + 3]))
    if shown and len(shown) + 1 < len(group.pass_power_k):
        lines.append(f"  (pass^k for every k up to {max(group.pass_power_k)} in results.json)")
    lines += power_line(group)
    if group.usage is not None:
        lines.append(f"  spent: {spend_text(group.usage, group.passes)}")
    lines += [f"  note: {note}" for note in group.notes]
    return lines


def render_summary(trials: Sequence[TrialRecord], result: EvalResult, out: Path) -> str:
    """The end of ``run``'s output (see the module docstring); ``out`` the run folder (resolved)."""
    runs = {(run.world, run.run_id): run for run in result.runs}
    passed = sum(1 for run in result.runs if run.score.passed)
    level = f"{result.confidence * 100:g}%"
    head = f"eval: {len(result.runs)} trial(s) scored, {passed} passed"
    if result.excluded:
        head += f", {len(result.excluded)} excluded (infrastructure errors, not counted in n)"
    lines = [head]
    for group in result.groups:
        lines += ["", *_group(group)]
    if result.groups:
        lines += [
            "",
            f"(c/n: trials passed / scored; pass^k: the chance that all k trials of a task pass, "
            f"averaged over tasks; [low, high]: its {level} interval)",
        ]
    failed, odd = [], []
    for record in trials:
        run = runs.get((record.world, record.run_id))
        cause = trial_cause(record, run, out)
        where = f"{record.world}/{record.task}/{record.profile}/{record.trial}"
        folder = shown_path(out.joinpath(*record.parts))
        verdict = "infra" if run is None else "PASS" if run.score.passed else "FAIL"
        line = f"  {verdict}  {where}" + (f"  {cause}" if cause else "") + f"  ({folder})"
        if verdict == "PASS" and cause:
            odd.append(line)
        elif verdict != "PASS":
            failed.append(line)
    if failed:
        lines += ["", f"failures ({len(failed)})", *failed]
    if odd:
        lines += ["", f"passed, but the agent exited non-zero ({len(odd)}; --strict-exit fails them)", *odd]
    return "\n".join(lines) + "\n"


def nonzero_passes(trials: Sequence[TrialRecord], result: EvalResult) -> int:
    """How many PASS trials' agents exited non-zero (counted apart)."""
    runs = {(run.world, run.run_id): run for run in result.runs}
    return sum(
        1
        for record in trials
        if record.exit_code not in (0, None)
        and (run := runs.get((record.world, record.run_id))) is not None
        and run.score.passed
    )
