"""The ``harn-mcp-mock-verify`` pre-commit hook: each changed cassette (the file names pre-commit
passes) verified as the candidate against its committed version (``git show HEAD:<path>``),
failing the commit on drift at or above ``--fail-on`` (default ERR). A cassette new in this
commit has nothing to compare with and passes.

    python -m harn_mcp_mock.ci.precommit [--fail-on ERR|WARN|INFO] FILE ...
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["main"]


def _committed(path: Path) -> bytes | None:
    """The file as HEAD has it, or None (new, or not in a git repository)."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
        rel = path.resolve().relative_to(Path(top).resolve()).as_posix()
        shown = subprocess.run(["git", "show", f"HEAD:{rel}"], capture_output=True, timeout=30)
    except (subprocess.SubprocessError, OSError, ValueError):
        return None
    return shown.stdout if shown.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    from harn_mcp_mock.errors import HarnError
    from harn_mcp_mock.findings.model import Severity
    from harn_mcp_mock.verify.report import render
    from harn_mcp_mock.verify.run import verify

    parser = argparse.ArgumentParser(prog="harn-mcp-mock-verify", description=__doc__.splitlines()[0])
    parser.add_argument("--fail-on", default="ERR", choices=("ERR", "WARN", "INFO"))
    parser.add_argument("files", nargs="*", type=Path)
    ns = parser.parse_args(argv)
    threshold = Severity[ns.fail_on]
    code = 0
    for path in ns.files:
        before = _committed(path)
        if before is None:
            continue
        with tempfile.TemporaryDirectory(prefix="harn-precommit-") as tmp:
            baseline = Path(tmp) / path.name
            baseline.write_bytes(before)
            try:
                result = verify(baseline, candidate=path)
            except HarnError as exc:
                print(f"{path}: cannot compare with its committed version: {exc}", file=sys.stderr)
                code = max(code, 2)
                continue
        result.cassette = f"{path} (HEAD)"
        if result.exit_code(threshold):
            sys.stdout.write(render(result, "text", fail_on=threshold))
            code = max(code, 1)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
