"""The verify and cassette pages in a real browser (headless Chromium): findings grouped by
severity and rule with old and new side by side; a recorded session as a timeline with its
redaction placeholders marked; both filter, and neither logs a console error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.verify.report import VerifyResult, render

ROOT = Path(__file__).resolve().parents[2]


def _open(page: Any, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def test_verify_html_groups_findings_by_severity_and_rule_with_old_and_new(page: Any, tmp_path: Path) -> None:
    findings = [
        Finding("I1", Severity.ERR, "get_current_time", "/inputSchema/properties/tz", "new required input 'tz'",
                new={"type": "string"}),
        Finding("I10", Severity.INFO, "get_current_time", "/inputSchema/properties/fmt/enum", "enum value added",
                ["a"], ["a", "iso"]),
        Finding("I10", Severity.INFO, "convert_time", "/inputSchema/properties/fmt/enum", "enum value added",
                ["b"], ["b", "</pre><script>alert(1)</script>"]),
    ]  # fmt: skip
    result = VerifyResult("time.cassette.json", "uvx mcp-server-time", findings, [], {"tools": 2})
    html = tmp_path / "verify.html"
    html.write_text(render(result, "html"), encoding="utf-8")
    _open(page, html)
    assert page.locator("section.severity").count() == 2
    assert page.locator(".finding").count() == 3
    first = page.locator(".finding").first
    assert "I1" in first.inner_text() and "get_current_time" in first.inner_text()
    sides = page.locator(".finding .sides").all_inner_texts()
    assert any("recorded (old)" in text and '"iso"' in text for text in sides)
    assert any("<script>alert(1)</script>" in text for text in sides)  # shown as text, not run
    page.select_option("#f-severity", "INFO")
    assert page.locator(".finding:not(.hidden)").count() == 2
    page.select_option("#f-rule", "I1")
    assert page.locator(".finding:not(.hidden)").count() == 0
    assert page.locator("#shown").inner_text() == "0 of 3 findings shown"
    assert page.console_messages == []


def test_show_html_draws_the_session_as_a_timeline_with_redactions_marked(page: Any, tmp_path: Path) -> None:
    cassette = ROOT / "cassettes" / "time.cassette.json"
    html = tmp_path / "show.html"
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "show", "--cassette", str(cassette), "--format", "html",
         "--out", str(html)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _open(page, html)
    rows = page.locator("table.timeline tbody tr")
    assert rows.count() >= 4
    assert "initialize" in rows.first.inner_text() and "→ server" in rows.first.inner_text()
    page.select_option("#f-dir", "server")
    assert all(
        "← server" in t for t in page.locator("table.timeline tbody tr:not(.hidden)").all_inner_texts()
    )
    assert page.console_messages == []


def test_show_html_marks_redaction_placeholders(page: Any, tmp_path: Path) -> None:
    from harn_mcp_mock.cassette.model import Cassette, Message, save_cassette

    secret = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "token [REDACTED:3] ok"}]},
    }
    path = save_cassette(
        Cassette([Message(0, "client", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                        "params": {"name": "t", "arguments": {}}}),
                  Message(1, "server", secret, reply_to=0, latency_ms=2.5)], {"transport": "stdio"}),
        tmp_path / "r.cassette.json",
    )  # fmt: skip
    html = tmp_path / "r.html"
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "show", "--cassette", str(path), "--format", "html", "--out", str(html)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _open(page, html)
    assert page.locator("mark.redacted").all_inner_texts() == ["[REDACTED:3]"]
    page.check("#f-redacted")
    assert page.locator("table.timeline tbody tr:not(.hidden)").count() == 1
    assert page.console_messages == []
