"""Which cassettes the tests use, for lint's H1: the pytest plugin records every cassette a test
opens, and at the end of a complete run writes ``<cache_dir>/harn_mcp_mock/used.json``.

Each process (pytest-xdist workers too) appends to its own file under ``used.d/``; the main
process clears that folder when the session starts and merges it when the session ends. A run
that selected only some tests (``-k``, ``-m``, node ids, deselection) adds to the last record
instead of replacing it, so a cassette is "unused" only when no complete run used it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["USAGE_FILE", "merge_usage", "read_usage", "record_use", "start_usage"]

USAGE_FILE = Path("harn_mcp_mock") / "used.json"
_PARTS = Path("harn_mcp_mock") / "used.d"


def start_usage(cache_dir: Path) -> None:
    parts = cache_dir / _PARTS
    if parts.is_dir():
        for part in parts.iterdir():
            part.unlink(missing_ok=True)


def record_use(cache_dir: Path, cassette: Path) -> None:
    parts = cache_dir / _PARTS
    parts.mkdir(parents=True, exist_ok=True)
    with open(parts / f"{os.getpid()}.txt", "a", encoding="utf-8") as out:
        out.write(str(cassette.resolve()) + "\n")


def merge_usage(cache_dir: Path, *, complete: bool) -> None:
    """Write the record: only in projects that use cassettes (this run opened one, or an earlier
    record exists), so a project without any gets no file."""
    parts = cache_dir / _PARTS
    target = cache_dir / USAGE_FILE
    if not target.exists() and not (parts.is_dir() and any(parts.iterdir())):
        return
    used: set[str] = set()
    if parts.is_dir():
        for part in parts.iterdir():
            used.update(line for line in part.read_text(encoding="utf-8").splitlines() if line)
    if not complete:
        used |= read_usage(target) or set()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"version": 1, "complete": complete, "used": sorted(used)}, indent=1) + "\n")


def read_usage(path: Path) -> set[str] | None:
    """The cassettes (resolved paths) the recorded runs used; None when there is no record."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    used = doc.get("used") if isinstance(doc, dict) else None
    return {str(p) for p in used} if isinstance(used, list) else None
