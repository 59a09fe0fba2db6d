"""The run report in a real browser (headless Chromium): it loads from disk with no console error,
has one cell per trial, shows a trial's tool calls and state diff on click, and filters; the data
behind it (outcomes, faults fired, the diff's roles) is checked without a browser too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3

from harn_mcp_mock.report import eval_report_data, outcome_of, render_page, run_report_data
from harn_mcp_mock.runner import run_episodes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "agent"))
from scripted_agent import in_process  # noqa: E402

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("report/test_run")

IMAGES = ROOT / "docs" / "images"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The flaky scripted agent on bank, k=4, with and without faults; a good run as baseline."""
    base = tmp_path_factory.mktemp("report")
    run_episodes(["bank"], in_process("good"), out=base / "good", k=4, faults=["flaky"])
    run_episodes(["bank"], in_process("flaky"), out=base / "flaky", k=4, faults=["flaky"])
    return base


def test_each_trial_gets_the_outcome_of_its_worst_failure() -> None:
    assert outcome_of("scored", {"goal_match": True}) == ("pass", [])
    assert outcome_of("scored", {"goal_match": False, "collateral": ["/a"]}) == (
        "goal",
        ["collateral", "goal"],
    )
    assert outcome_of("scored", {"goal_match": False, "forbidden_hit": [1]})[0] == "forbidden"
    assert outcome_of("timeout", {"goal_match": False})[0] == "timeout"
    assert outcome_of("infra_error", None) == ("infra", ["infra"])
    over = {"goal_match": True, "over_budget": "3586 tokens > --max-tokens 3000"}
    assert outcome_of("scored", over) == ("over_budget", ["over_budget"])  # solved, but never a pass


def test_the_report_data_holds_every_trial_its_faults_calls_and_diff(run_dir: Path) -> None:
    data = run_report_data(run_dir / "flaky", baseline=run_dir / "good")
    assert len(data["trials"]) == len(data["details"]) == 32
    faulted = [t for t in data["trials"] if t["profile"] == "flaky"]
    assert all(t["faults"] for t in faulted if t["task"] == "pay-rent")
    assert not any(t["faults"] for t in data["trials"] if t["profile"] == "none")
    i = next(
        i for i, t in enumerate(data["trials"]) if t["outcome"] == "collateral" or "collateral" in t["kinds"]
    )
    detail = data["details"][i]
    assert {row["role"] for row in detail["diff"]} >= {"collateral"}
    assert detail["calls"] and all({"t_ms", "tool", "args"} <= set(c) for c in detail["calls"])
    assert any("result" in c for c in detail["calls"])  # from the tape: what the world answered
    assert data["baseline"]["summary"]["regressed"] >= 1
    for group in data["groups"]:  # the intervals the chart draws as error bars
        low, high = group["pass_rate_interval"]
        assert low <= group["pass_rate"] <= high
        assert all(p[2][0] <= p[1] <= p[2][1] for p in group["pass_k"])
    eval_data = eval_report_data(
        ["bank"], sorted(str(p) for p in (run_dir / "flaky").glob("trials/*/*/*/*/report.json"))
    )
    by_run = {(t["profile"], t["run_id"]): t["outcome"] for t in data["trials"]}
    assert {(t["profile"], t["run_id"]): t["outcome"] for t in eval_data["trials"]} == by_run


def test_the_page_is_one_file_that_loads_nothing_and_cannot_be_injected(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "kind": "cassette",
        "title": "</title><script>alert(1)</script>",
        "cassette": {"path": "x", "server": "s", "redactions": 0, "messages": [
            {"seq": 0, "direction": "server", "method": None, "reply_to": 0, "latency_ms": 1.0, "bytes": 9,
             "error": False, "redacted": False, "text": "</script><img src=x onerror=alert(1)>"},
        ]},
    }  # fmt: skip
    page = render_page(data)
    assert "<script>alert(1)" not in page and "</script><img" not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


def _open(page: Any, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def test_in_chromium_the_grid_click_and_filters_work_with_no_console_errors(
    run_dir: Path, page: Any, tmp_path: Path
) -> None:
    html = tmp_path / "report.html"
    data = run_report_data(run_dir / "flaky", baseline=run_dir / "good")
    html.write_text(render_page(data), encoding="utf-8")
    _open(page, html)
    assert page.locator(".cell").count() == 32
    assert page.locator("#shown").inner_text() == "32 of 32 trials shown"
    assert page.locator(".cell.faulted").count() == sum(1 for t in data["trials"] if t["faults"])
    assert page.locator("#passk svg polyline").count() == 2  # one line per fault profile
    assert page.locator("#passk svg g.error-bar").count() == sum(len(g["pass_k"]) for g in data["groups"])
    assert "[" in page.locator("#passk table").first.inner_text()  # pass_rate [low, high]
    assert "regressed" in page.locator("#baseline").inner_text()
    # a failing trial under faults: its timeline and its diff
    i = next(i for i, t in enumerate(data["trials"]) if t["outcome"] != "pass" and t["faults"])
    page.locator(f".cell[data-trial='{i}']").click()
    detail = page.locator("#detail")
    assert detail.is_visible()
    assert detail.locator("table.timeline tr.call").count() == len(data["details"][i]["calls"])
    assert detail.locator(".pill.fault").count() >= 1
    assert detail.locator("table.diff tbody tr").count() == len(data["details"][i]["diff"])
    if IMAGES.is_dir() and os.environ.get("HARN_UPDATE_SCREENSHOTS"):
        page.screenshot(path=str(IMAGES / "report-trial.png"))
    page.locator("#detail .close").click()
    assert not detail.is_visible()
    # filters
    page.select_option("#f-profile", "flaky")
    assert page.locator(".cell:not(.hidden)").count() == 16
    page.select_option("#f-outcome", "pass")
    passed = sum(1 for t in data["trials"] if t["profile"] == "flaky" and t["outcome"] == "pass")
    assert page.locator(".cell:not(.hidden)").count() == passed
    assert page.locator("#shown").inner_text() == f"{passed} of 32 trials shown"
    page.select_option("#f-outcome", "")
    page.select_option("#f-profile", "")
    page.select_option("#f-task", "pay-rent")
    assert page.locator(".cell:not(.hidden)").count() == 8
    assert page.console_messages == []


def test_the_docs_picture_is_what_the_page_shows(run_dir: Path, page: Any, tmp_path: Path) -> None:
    """The screenshot docs/report.md shows, taken from the page as built now (``make
    screenshots`` writes it into docs/images/; here it must render and have the page's size)."""
    html = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "report", str(run_dir / "flaky"), "--out", str(html),
         "--baseline", str(run_dir / "good")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("(32 trials)")
    _open(page, html)
    shot = tmp_path / "report-run.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if IMAGES.is_dir() and os.environ.get("HARN_UPDATE_SCREENSHOTS"):
        shutil.copy(shot, IMAGES / "report-run.png")
    assert page.console_messages == []
    assert json.loads((run_dir / "flaky" / "results.json").read_text())["summary"]["runs"] == 32


def test_a_trial_panel_shows_the_agents_stderr_end_and_a_long_timeline_stays_small(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("import sys\nsys.stderr.write('x' * 9000 + '\\nTraceback: the model said no\\n')\n")
    out = tmp_path / "out"
    run_episodes(["bank"], [sys.executable, str(agent)], out=out, tasks=["pay-rent"])
    folder = out / "trials" / "bank" / "pay-rent" / "none" / "1"
    report = json.loads((folder / "report.json").read_text())
    call = {"t_ms": 0, "tool": "get_account", "arguments": {"account_id": "A-101"}, "outcome": "ok"}
    report["calls"] = [{**call, "t_ms": i} for i in range(100_000)]  # as a 100,000-call trial's world logs
    raw = json.dumps(report).encode()
    (folder / "report.json").write_bytes(raw)
    record = json.loads((folder / "trial.json").read_text())  # as the runner would have written it
    record["files"]["report.json"] = "blake3:" + blake3(raw).hexdigest()
    (folder / "trial.json").write_text(json.dumps(record))
    data = run_report_data(out)
    (trial,) = data["trials"]
    assert trial["stderr_tail"].endswith("Traceback: the model said no") and len(trial["stderr_tail"]) < 4096
    (detail,) = data["details"]
    assert (detail["calls_total"], detail["calls_omitted"], len(detail["calls"])) == (100_000, 99_800, 200)
    assert [c["t_ms"] for c in detail["calls"][99:101]] == [99, 99_900]
    assert len(render_page(data)) < 500_000
