"""Budgets: what each trial's agent spent, a cap per trial and a cap per run.

The agent (or the scripted LLM endpoint it talks to, ``harn mcp mock llm``) appends one JSON line
per model call to the file ``HARN_USAGE_FILE`` names, ``usage.ndjson`` in the trial's folder:
``{"input_tokens": 812, "output_tokens": 95, "cost_usd": 0.0031}`` (any field may be missing).
When the trial ends, its lines are summed into ``usage`` in its record (``trial.json``, and its
``state.json`` and ``report.json``), and a trial over ``--max-tokens`` (input plus output) or
``--max-cost`` is marked ``over_budget`` (the reason), which eval scores as a failure whatever
the final state; each run judges the recorded usage again by its own budget.
``--run-max-cost`` stops scheduling once the finished trials have spent it; the same command
with a larger cap resumes. ``docs/eval.md`` has the worked example.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harn_mcp_mock.errors import UsageError

__all__ = [
    "USAGE_FILE",
    "Budget",
    "Usage",
    "read_usage",
    "report_usage",
    "usage_file",
]

USAGE_FILE: Final = "usage.ndjson"
_CURRENT: ContextVar[Path | None] = ContextVar("harn_usage_file", default=None)


@contextlib.contextmanager
def usage_file(path: Path) -> Iterator[None]:
    """Within this block (and the tasks it starts), :func:`report_usage` appends to ``path``:
    how an in-process agent's trial gets its own usage file."""
    token = _CURRENT.set(path)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def report_usage(input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0) -> bool:
    """Report one model call's usage for the current trial: to the in-process trial's usage
    file, else to ``HARN_USAGE_FILE`` (a command agent's). False outside a run (nowhere to write)."""
    target = _CURRENT.get() or os.environ.get("HARN_USAGE_FILE")
    if not target:
        return False
    line = json.dumps({"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost_usd})
    with open(target, "a", encoding="utf-8") as out:
        out.write(line + "\n")
    return True


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    """Lines summed (one per model call)."""
    invalid: int = 0
    """Lines that were not a JSON object with numeric counts (skipped)."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 10),
            "calls": self.calls,
            **({"invalid_lines": self.invalid} if self.invalid else {}),
        }


def _number(value: Any) -> float | None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        return None
    return float(value)


def read_usage(path: Path) -> Usage | None:
    """The sum of a usage file's lines (None when there is no file). A line that is not a JSON
    object, or has a negative or non-numeric count, is skipped and counted in ``invalid``; a torn
    last line (the agent was killed mid-write) is one of those."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return None
    totals = [0.0, 0.0, 0.0]
    calls = invalid = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            invalid += 1
            continue
        if not isinstance(doc, dict):
            invalid += 1
            continue
        values = [doc.get(key, 0) for key in ("input_tokens", "output_tokens", "cost_usd")]
        numbers = [_number(v) for v in values]
        if any(n is None for n in numbers):
            invalid += 1
            continue
        for i, n in enumerate(numbers):
            totals[i] += n or 0.0
        calls += 1
    return Usage(int(totals[0]), int(totals[1]), totals[2], calls, invalid)


@dataclass(frozen=True, slots=True)
class Budget:
    """``--max-tokens``, ``--max-cost`` (per trial) and ``--run-max-cost`` (per run)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    run_max_cost: float | None = None

    def __post_init__(self) -> None:
        for flag, value in (
            ("--max-tokens", self.max_tokens),
            ("--max-cost", self.max_cost),
            ("--run-max-cost", self.run_max_cost),
        ):
            if value is not None and (_number(value) is None or value <= 0):
                raise UsageError(f"must be a number above 0, got {value!r}", where=flag)

    @property
    def per_trial(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def over(self, usage: Usage | None) -> str | None:
        """Why a trial with this usage is over budget (None: within it, or no limit)."""
        if usage is None:
            return None
        if self.max_tokens is not None and usage.tokens > self.max_tokens:
            return f"{usage.tokens} tokens > --max-tokens {self.max_tokens}"
        if self.max_cost is not None and usage.cost_usd > self.max_cost:
            return f"${usage.cost_usd:.4f} > --max-cost ${self.max_cost:g}"
        return None
