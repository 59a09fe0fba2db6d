"""Speed of `harn mcp mock report` on a run of 10,000 trials, with a baseline in the same run.

The run folder is made from 32 real trials of the bank world (the flaky scripted agent, in
process, with and without faults) copied to 10,000 trial folders (k = 1250 per task), then scored
by eval into results.json as the runner does. Measured:

- build: reading every trial's files and tape into the page's data, and writing the page,
  against eval scoring the same 10,000 reports (the baseline: work any report must do).
  Target: <= 10 s, and the page <= 40 MB;
- open: headless Chromium (when installed, with Playwright) loading the file until the grid of
  10,000 cells is drawn. Target: <= 5 s.

Run: `.venv/bin/python benchmarks/bench_report.py [--trials N]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

from harn_mcp_mock.report import render_page, run_report_data  # noqa: E402
from harn_mcp_mock.runner import run_episodes  # noqa: E402
from harn_mcp_mock.scoring.eval import score_runs  # noqa: E402

BUILD_TARGET_S = 10.0
SIZE_TARGET_MB = 40.0
OPEN_TARGET_S = 5.0


def make_run(folder: Path, trials: int) -> Path:
    seed_run = folder / "seed"
    run_episodes(["bank"], in_process("flaky"), out=seed_run, k=4, faults=["flaky"])
    run = folder / "run"
    shutil.copytree(seed_run, run, ignore=shutil.ignore_patterns("trials"))
    sources = sorted(p.parent for p in (seed_run / "trials").glob("*/*/*/*/trial.json"))
    per_source = -(-trials // len(sources))
    made = 0
    next_index: dict[tuple[str, ...], int] = {}
    for source in sources:
        world, task, profile = source.parts[-4:-1]
        for _ in range(per_source):
            if made == trials:
                break
            index = next_index[world, task, profile] = next_index.get((world, task, profile), 0) + 1
            target = run / "trials" / world / task / profile / str(index)
            shutil.copytree(source, target)
            record = json.loads((target / "trial.json").read_text())
            record["trial"] = index
            (target / "trial.json").write_text(json.dumps(record))
            made += 1
    options = json.loads((run / "run.json").read_text())
    options["options"]["k"] = max(next_index.values())
    (run / "run.json").write_text(json.dumps(options))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        run = make_run(Path(tmp), ns.trials)
        spec = json.loads((ROOT / "worlds" / "bank" / "bank.world.json").read_text())
        reports = sorted(run.glob("trials/*/*/*/*/report.json"))
        started = time.perf_counter()
        result = score_runs([spec], reports)
        scoring = time.perf_counter() - started
        (run / "results.json").write_text(json.dumps(result.to_dict()))
        started = time.perf_counter()
        page = render_page(run_report_data(run))
        html = Path(tmp) / "report.html"
        html.write_text(page, encoding="utf-8")
        build = time.perf_counter() - started
        size_mb = html.stat().st_size / 1e6
        opened = open_in_chromium(html, ns.trials)
    print(f"trials: {ns.trials}")
    print(f"  eval scoring the reports (baseline)  {scoring:6.2f} s")
    print(f"  report build (data + page)           {build:6.2f} s  ({build / scoring:.1f}x eval)")
    print(f"  page size                            {size_mb:6.1f} MB")
    ok = build <= BUILD_TARGET_S and size_mb <= SIZE_TARGET_MB
    print(
        f"build target <= {BUILD_TARGET_S:.0f} s and <= {SIZE_TARGET_MB:.0f} MB: {'OK' if ok else 'MISSED'}"
    )
    if opened is None:
        print("open in Chromium: skipped (no chromium or playwright here: make browser)")
    else:
        print(f"open in Chromium until the grid is drawn: {opened:.2f} s (target <= {OPEN_TARGET_S:.0f} s) "
              f"{'OK' if opened <= OPEN_TARGET_S else 'MISSED'}")  # fmt: skip


def open_in_chromium(html: Path, trials: int) -> float | None:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=flags)
        page = browser.new_page()
        best = None
        for _ in range(2):
            started = time.perf_counter()
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            elapsed = time.perf_counter() - started
            if page.locator(".cell").count() != trials:
                raise SystemExit("the page did not draw one cell per trial")
            best = elapsed if best is None else min(best, elapsed)
        browser.close()
    return best


if __name__ == "__main__":
    main()
