#!/usr/bin/env python3
"""Keep the test suite free of non-deterministic patterns (``make lint-test-patterns``).

Banned in test files (``tests/**/*.py`` by default):

* ``sleep``        -- ``time.sleep(...)``, ``from time import sleep``: blocks on the real clock;
  use the testbench's paused clock (``testbench`` fixture) or an event.
* ``async-sleep``  -- ``asyncio/anyio/trio.sleep(<non-zero literal>)``: races the scheduler;
  ``sleep(0)`` (a yield) is fine, otherwise wait on an event under ``anyio.fail_after``.
* ``wall-clock``   -- ``time.time()``, ``time.time_ns()``, ``datetime.now()/utcnow()/today()``,
  ``date.today()``: makes assertions depend on when the test runs; inject a ``PausedClock``.
* ``polling-loop`` -- a ``while`` condition or a ``deadline =`` built from ``time.monotonic()``
  / ``perf_counter()``: wall-clock polling; wait on an event or a stream instead.
* ``fixed-port``   -- ``bind(("host", 8080))`` or ``port=8080`` on a server start: collides
  between parallel runs; bind port 0 and read the port back.

Opting out: add ``path:line-content-substring  # reason`` to ``scripts/test-patterns-allowlist.txt``
(path relative to the repository root; the reason is required and reviewed). An entry covers every
line of that file containing the substring. Exit 0 clean, 1 with one line per violation.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ALLOWLIST = REPO_ROOT / "scripts" / "test-patterns-allowlist.txt"
SKIP_DIRS = {"node_modules", "__pycache__", ".venv", ".git"}

RULES: list[tuple[str, re.Pattern[str]]] = [
    ("sleep", re.compile(r"\btime\.sleep\(|\bfrom\s+time\s+import\s+(?:[\w\s,]*\b)?sleep\b")),
    ("async-sleep", re.compile(r"\b(?:asyncio|anyio|trio)\.sleep\(\s*(?!0*(?:\.0*)?\s*[,)])\d")),
    ("wall-clock", re.compile(r"\btime\.time(?:_ns)?\(|\bdatetime\.(?:now|utcnow|today)\(|\bdate\.today\(")),
    (
        "polling-loop",
        re.compile(
            r"^\s*while\b.*\b(?:monotonic|perf_counter)(?:_ns)?\("
            r"|\b\w*(?:deadline|until|end_time|stop_at)\w*\s*=\s*.*\b(?:monotonic|perf_counter)(?:_ns)?\("
        ),
    ),
    (
        "fixed-port",
        re.compile(
            r"\.bind\(\s*\(\s*[\"'][^\"']*[\"']\s*,\s*[1-9]\d*\s*\)"
            r"|\b(?:create_server|start_server|serve|run)\(.*\bport\s*=\s*[1-9]\d*"
        ),
    ),
]


@dataclass(frozen=True)
class Violation:
    path: str
    lineno: int
    rule: str
    line: str

    def render(self) -> str:
        return f"{self.path}:{self.lineno}: [{self.rule}] {self.line.strip()}"


@dataclass
class AllowEntry:
    path: str
    needle: str
    reason: str
    lineno: int
    used: bool = False


def load_allowlist(path: Path) -> tuple[list[AllowEntry], list[str]]:
    entries: list[AllowEntry] = []
    problems: list[str] = []
    if not path.exists():
        return entries, problems
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        body, sep, reason = text.partition("  # ")
        file_part, colon, needle = body.partition(":")
        if not sep or not reason.strip() or not colon or not needle.strip():
            problems.append(
                f"{path}:{lineno}: allowlist entries are `path:line-substring  # reason`: {raw!r}"
            )
            continue
        entries.append(AllowEntry(file_part.strip(), needle.strip(), reason.strip(), lineno))
    return entries, problems


def iter_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for root in paths:
        if root.is_file():
            files.append(root)
            continue
        for file in sorted(root.rglob("*.py")):
            if not SKIP_DIRS.intersection(file.relative_to(root).parts):
                files.append(file)
    return files


def _rel(file: Path) -> str:
    try:
        return file.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return file.as_posix()


def scan(files: list[Path]) -> list[Violation]:
    found: list[Violation] = []
    for file in files:
        rel = _rel(file)
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for rule, pattern in RULES:
                if pattern.search(line):
                    found.append(Violation(rel, lineno, rule, line))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders (default: tests/)")
    parser.add_argument("--allowlist", type=Path, default=DEFAULT_ALLOWLIST)
    opts = parser.parse_args(argv)
    paths = opts.paths or [REPO_ROOT / "tests"]
    entries, problems = load_allowlist(opts.allowlist)
    violations: list[Violation] = []
    for v in scan(iter_files(paths)):
        allowed = False
        for entry in entries:
            if entry.path == v.path and entry.needle in v.line:
                entry.used = True
                allowed = True
        if not allowed:
            violations.append(v)
    for problem in problems:
        print(problem, file=sys.stderr)
    for v in violations:
        print(v.render())
    for entry in entries:
        if not entry.used:
            print(
                f"{opts.allowlist}:{entry.lineno}: warning: stale allowlist entry "
                f"{entry.path}:{entry.needle} matches nothing; remove it",
                file=sys.stderr,
            )
    if violations or problems:
        print(
            f"lint-test-patterns: {len(violations)} violation(s); see docs/testbench.md "
            "(deterministic test patterns) or allowlist with a reason",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
