"""Render an eval result as a terminal table, JSON or Markdown (pure: same result, same text)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Final

import orjson

from harn_mcp_mock.formats import Formats
from harn_mcp_mock.scoring.eval import EvalResult, GroupSummary, Robustness, RunRecord, Spend

__all__ = ["FORMATS", "power_line", "render", "shown_ks", "spend_text"]

RESULT_FORMATS: Final[Formats[Callable[[EvalResult], str]]] = Formats("format", aliases={"table": "text"})
"""Eval's result formats, by name (``table`` is the old name of ``text``)."""
MAX_PATHS: Final = 3
"""Collateral paths shown per run in the table and Markdown (the JSON result has all)."""
MAX_KS: Final = 12
"""With more runs per task than this, the table and Markdown show pass^k for k up to this,
then only for powers of two and the largest k."""


def render(result: EvalResult, fmt: str = "text") -> str:
    """The result in ``fmt`` (one of :data:`FORMATS`), ending with a newline.

    Raises :class:`~harn_mcp_mock.errors.UsageError` for an unknown format.
    """
    return RESULT_FORMATS.get(fmt)(result)


def _json(result: EvalResult) -> str:
    return orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"


def _dec(value: Fraction | None) -> str:
    return "-" if value is None else f"{float(value):.4f}"


def _short(value: Fraction) -> str:
    """The exact fraction when it is short enough to read, else "-" (JSON has it)."""
    text = str(value)
    return text if len(text) <= 24 else "-"


def _interval(value: tuple[float, float] | None) -> str:
    return "" if value is None else f"[{value[0]:.4f}, {value[1]:.4f}]"


def _level(result: EvalResult) -> str:
    return f"{result.confidence * 100:g}%"


def power_line(group: GroupSummary) -> list[str]:
    power = group.power
    if power is None:
        return []
    head = f"  trials per task to detect a drop of {power.drop:g} in pass rate (power {power.power:.0%}, alpha {power.alpha:g}): "
    if power.trials is None:
        return [head + f"none: every task's pass rate is below {power.drop:g}"]
    hardest = max(
        (t for t, n in power.per_task.items() if n is not None), key=lambda t: (power.per_task[t] or 0, t)
    )
    line = head + f"{power.trials} (task {hardest})"
    cannot = [t for t, n in power.per_task.items() if n is None]
    if cannot:
        line += f"; cannot fall that far: {', '.join(cannot)}"
    return [line]


def spend_text(usage: Spend, passes: int) -> str:
    text = f"{usage.input_tokens + usage.output_tokens} tokens, ${usage.cost_usd:.4f}"
    per_dollar = usage.pass_per_dollar(passes)
    return text + (f", {per_dollar:.1f} passes per $" if per_dollar is not None else "")


def _signed(value: Fraction) -> str:
    return f"{float(value):+.4f}"


def shown_ks(ks: list[int]) -> list[int]:
    """The k the human formats show: 1..12, then powers of two and the last (JSON has all)."""
    if len(ks) <= MAX_KS:
        return ks
    last = ks[-1]
    return [k for k in ks if k <= MAX_KS or (k & (k - 1)) == 0 or k == last]


def _profile(faults: str | None) -> str:
    return "none" if faults is None else faults


def _headline(result: EvalResult) -> str:
    passed = sum(1 for r in result.runs if r.score.passed)
    specs = ", ".join(result.specs)
    line = (
        f"{len(result.specs)} spec{'s' if len(result.specs) != 1 else ''} ({specs}), "
        f"{len(result.runs)} run{'s' if len(result.runs) != 1 else ''} scored, {passed} passed"
    )
    if result.excluded:
        line += f", {len(result.excluded)} excluded (infrastructure errors)"
    if result.merged:
        line += f", {len(result.merged)} state file(s) merged with their report"
    return line


def _run_problems(run: RunRecord) -> str:
    score = run.score
    if score.passed:
        return ""
    parts = []
    if not score.goal_match:
        parts.append(f"goal: {len(score.failed_goals)} of its predicates failed")
    if score.collateral:
        shown = ", ".join(score.collateral[:MAX_PATHS])
        more = len(score.collateral) - MAX_PATHS
        parts.append(f"collateral: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    if score.forbidden_hit:
        parts.append(f"forbidden: {len(score.forbidden_hit)} hit(s)")
    parts += score.spending_verdicts()
    return "; ".join(parts)


def _run_where(run: RunRecord) -> str:
    bits = [f"{run.world}/{run.task}", f"faults {_profile(run.faults)}"]
    if run.seed is not None:
        bits.append(f"seed {run.seed}")
    if run.run_id is not None:
        bits.append(f"run {run.run_id}")
    return "  ".join(bits)


# --- table -----------------------------------------------------------------------------------


def _table(result: EvalResult) -> str:
    lines = [f"eval: {_headline(result)}"]
    for group in result.groups:
        lines += ["", *_table_group(group, _level(result))]
    for robust in result.robustness:
        lines += ["", *_table_robustness(robust)]
    if result.excluded:
        lines += ["", "excluded (infrastructure errors, not counted in n)"]
        for ex in result.excluded:
            seed = f"  seed {ex.seed}" if ex.seed is not None else ""
            run_id = f"  run {ex.run_id}" if ex.run_id is not None else ""
            lines.append(
                f"  {ex.file}  {ex.world}/{ex.task}  faults {_profile(ex.faults)}{seed}{run_id}: {ex.infra_error}"
            )
    if result.runs:
        lines += ["", "runs"]
        for run in result.runs:
            verdict = "PASS" if run.score.passed else "FAIL"
            problems = _run_problems(run)
            lines.append(
                f"  {verdict}  {run.file}  {_run_where(run)}" + (f"  {problems}" if problems else "")
            )
    return "\n".join(lines) + "\n"


def task_rows(group: GroupSummary) -> list[str]:
    """A group's task table: a header, then each task's c/n and its flags (flaky, excluded, spend)."""
    width = max([4, *(len(t.task) for t in group.tasks)])
    lines = [f"  {'task'.ljust(width)}  {'c/n':>7}"]
    for t in group.tasks:
        flags = []
        if t.flaky:
            flags.append(f"flaky (flip rate {t.flip_rate:.2f})" if t.flip_rate is not None else "flaky")
        if t.excluded:
            flags.append(f"{t.excluded} excluded")
        if t.usage is not None:
            flags.append(spend_text(t.usage, t.c))
        lines.append(
            f"  {t.task.ljust(width)}  {f'{t.c}/{t.n}':>7}" + (f"  {', '.join(flags)}" if flags else "")
        )
    return lines


def _table_group(group: GroupSummary, level: str) -> list[str]:
    lines = [f"{group.world}, faults: {_profile(group.faults)} (intervals: {level})", *task_rows(group)]
    lines.append(f"  pass_rate {_dec(group.pass_rate)} {_interval(group.pass_rate_interval)}".rstrip())
    shown = shown_ks(list(group.pass_power_k))
    for start in range(0, len(shown), 3):
        lines.append(
            "  "
            + "  ".join(
                f"pass^{k} {_dec(group.pass_power_k[k])} {_interval(group.pass_power_k_interval.get(k))}".rstrip()
                for k in shown[start : start + 3]
            )
        )
    if len(shown) < len(group.pass_power_k):
        lines.append(f"  (pass^k for every k up to {max(group.pass_power_k)} in --format json)")
    lines += power_line(group)
    if group.usage is not None:
        lines.append(f"  spent: {spend_text(group.usage, group.passes)}")
    lines += [f"  note: {note}" for note in group.notes]
    return lines


def _table_robustness(robust: Robustness) -> list[str]:
    label = robust.faults
    lines = [f"robustness: {robust.world}, faults {label} vs none ({len(robust.tasks)} tasks in common)"]
    width = max(len(label), 6)
    lines.append(f"  {'k':>3}  {'none':>6}  {label:>{width}}  {'delta':>7}")
    for k in shown_ks(list(robust.pass_power_k)):
        base, faulted = robust.pass_power_k[k]
        lines.append(f"  {k:>3}  {_dec(base):>6}  {_dec(faulted):>{width}}  {_signed(faulted - base):>7}")
    return lines


# --- markdown --------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(result: EvalResult) -> str:
    out = ["## harn-mcp-mock eval", "", _headline(result) + "."]
    for group in result.groups:
        out += ["", f"### {_md_cell(group.world)}, faults: {_md_cell(_profile(group.faults))}", ""]
        out += ["| task | c/n | flip rate | |", "|---|---:|---:|---|"]
        for t in group.tasks:
            flags = (["flaky"] if t.flaky else []) + ([f"{t.excluded} excluded"] if t.excluded else [])
            flips = "-" if t.flip_rate is None else f"{t.flip_rate:.2f}"
            out.append(f"| `{_md_cell(t.task)}` | {t.c}/{t.n} | {flips} | {', '.join(flags)} |")
        out.append("")
        out += [f"| metric | value | {_level(result)} interval | exact |", "|---|---:|---:|---:|"]
        exact = "-" if group.pass_rate is None else _short(group.pass_rate)
        out.append(
            f"| pass_rate | {_dec(group.pass_rate)} | {_interval(group.pass_rate_interval) or '-'} | {exact} |"
        )
        for k in shown_ks(list(group.pass_power_k)):
            value = group.pass_power_k[k]
            shown_interval = _interval(group.pass_power_k_interval.get(k)) or "-"
            out.append(f"| pass^{k} | {_dec(value)} | {shown_interval} | {_short(value)} |")
        if group.power is not None:
            out.append("")
            out += [f"- {_md_cell(line.strip())}" for line in power_line(group)]
        if group.notes:
            out.append("")
            out += [f"- {_md_cell(note)}" for note in group.notes]
    for robust in result.robustness:
        out += ["", f"### Robustness: {_md_cell(robust.world)}, faults {_md_cell(robust.faults)} vs none", ""]
        out.append(
            f"Over {len(robust.tasks)} task(s) run both ways: "
            + ", ".join(f"`{t}`" for t in robust.tasks)
            + "."
        )
        out += ["", "| k | none | faults | delta |", "|---:|---:|---:|---:|"]
        for k in shown_ks(list(robust.pass_power_k)):
            base, faulted = robust.pass_power_k[k]
            out.append(f"| {k} | {_dec(base)} | {_dec(faulted)} | {_signed(faulted - base)} |")
    if result.excluded:
        out += ["", "### Excluded (infrastructure errors, not counted in n)", ""]
        out += ["| file | task | faults | error |", "|---|---|---|---|"]
        for ex in result.excluded:
            out.append(
                f"| `{_md_cell(ex.file)}` | {_md_cell(ex.world)}/{_md_cell(ex.task)} | "
                f"{_md_cell(_profile(ex.faults))} | {_md_cell(ex.infra_error)} |"
            )
    if result.runs:
        out += ["", "### Runs", "", "| | file | task | faults | problems |", "|---|---|---|---|---|"]
        for run in result.runs:
            verdict = "PASS" if run.score.passed else "**FAIL**"
            out.append(
                f"| {verdict} | `{_md_cell(run.file)}` | {_md_cell(run.world)}/{_md_cell(run.task)} | "
                f"{_md_cell(_profile(run.faults))} | {_md_cell(_run_problems(run))} |"
            )
    return "\n".join(out) + "\n"


for _name, _renderer in (("text", _table), ("json", _json), ("markdown", _markdown)):
    RESULT_FORMATS.register(_name)(_renderer)

FORMATS: Final = RESULT_FORMATS.names
"""The format names (``text`` first); ``table`` is accepted too."""
