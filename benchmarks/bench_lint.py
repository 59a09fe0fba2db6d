"""Speed of lint's poisoning rules, with a baseline measured in the same run.

Text: the paragraphs of the README files of the npm packages in tests/e2e/node_modules (ordinary
technical English nobody here wrote), and the same paragraphs with a poisoned sentence in one of
the thirteen languages appended to every tenth. For each, the time of
``harn_mcp_mock.lint.rules.poisoning`` (skeleton, decoding, every language's phrases) against the
baseline ``json.loads(json.dumps(text))`` plus ``str.casefold()`` (what reading a string out of a
cassette and lower-casing it costs at least), their ratio, the throughput, and how many
paragraphs were flagged (the false positives on the plain READMEs).

Run: `.venv/bin/python benchmarks/bench_lint.py [--quick]`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harn_mcp_mock.lint.rules import poisoning  # noqa: E402
from tests.lint.poisoning_corpus import CORPUS  # noqa: E402


def paragraphs(limit: int) -> list[str]:
    out: list[str] = []
    for readme in sorted((ROOT / "tests" / "e2e" / "node_modules").glob("**/README.md"))[:limit]:
        text = readme.read_text(encoding="utf-8", errors="replace")
        out += [p for p in re.split(r"\n\s*\n", text) if len(p) > 40]
    return out


def timed(fn: Callable[[str], object], texts: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    hits = sum(1 for t in texts if fn(t))
    return time.perf_counter() - start, hits


def baseline(text: str) -> bool:
    return not json.loads(json.dumps(text)).casefold()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 README files instead of 400")
    args = parser.parse_args()
    plain = paragraphs(40 if args.quick else 400)
    orders = [s.text for s in CORPUS if s.text and not s.disguise]
    mixed = [p + " " + orders[i // 10 % len(orders)] if i % 10 == 0 else p for i, p in enumerate(plain)]
    size = sum(map(len, plain)) / 1e6
    print(f"{len(plain)} paragraphs, {size:.2f} MB of text")
    print(f"{'text':<28}{'baseline s':>12}{'lint s':>10}{'ratio':>9}{'MB/s':>8}{'flagged':>9}")
    for name, texts in (("READMEs", plain), ("READMEs, 1 in 10 poisoned", mixed)):
        base, _ = timed(baseline, texts)
        lint, flagged = timed(lambda t: poisoning(t, surface=False), texts)
        print(f"{name:<28}{base:>12.3f}{lint:>10.2f}{lint / base:>9.0f}x{size / lint:>8.3f}{flagged:>9}")


if __name__ == "__main__":
    main()
