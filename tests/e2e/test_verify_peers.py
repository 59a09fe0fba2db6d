"""`harn mcp mock verify` against a real third-party server (mcp-server-time) and a changed variant.

Record the real server with the official SDK client through `harn mcp mock record`, then verify
the cassette (a) against the same server, live: no ERR; (b) against a variant that removes a
tool, adds a required argument, widens an output type and drops readOnlyHint: exactly the
rule ids T1, I1, O6 and A1 at ERR.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.peers import WAIT
from tests.e2e.scenarios import run_time

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e/test_verify_peers")]

HARN = [sys.executable, "-m", "harn_mcp_mock"]
VARIANT = str(Path(__file__).parents[1] / "servers" / "variant_time.py")
VOLATILE = [
    "--ignore-path",
    "/structuredContent/datetime",
    "--ignore-path",
    "/structuredContent/day_of_week",
    "--ignore-path",
    "/content",
]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, time_command: list[str]) -> Path:
    cassette = tmp_path_factory.mktemp("verify") / "time.cassette.json"
    record = [*HARN, "record", "--quiet", "--cassette", str(cassette), "--", *time_command]
    anyio.run(lambda: run_time(record, mode="legacy"))
    assert cassette.exists()
    return cassette


def verify(cassette: Path, *args: str) -> tuple[int, Any, str]:
    done = subprocess.run(
        [*HARN, "verify", "--cassette", str(cassette), "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    report = json.loads(done.stdout) if done.stdout.strip().startswith("{") else None
    return done.returncode, report, done.stderr


def err_rules(report: Any) -> set[str]:
    return {f["rule"] for f in report["findings"] if f["severity"] == "ERR"}


def test_the_same_live_server_shows_no_breaking_drift(baseline: Path, time_command: list[str]) -> None:
    code, report, stderr = verify(baseline, *VOLATILE, "--", *time_command)
    assert code == 0, stderr
    assert err_rules(report) == set()
    assert report["compared"]["tools"] == 2
    assert report["compared"]["calls_replayed"] >= 4


def test_a_changed_variant_gives_exactly_the_expected_breaking_rules(
    baseline: Path, time_command: list[str], tmp_path: Path
) -> None:
    variant = [
        sys.executable,
        VARIANT,
        "--remove-tool",
        "convert_time",
        "--require-arg",
        "get_current_time:format",
        "--widen-output",
        "get_current_time:is_dst",
        "--flip-readonly",
        "get_current_time",
        "--",
        *time_command,
    ]
    saved = tmp_path / "variant.cassette.json"
    code, report, stderr = verify(baseline, *VOLATILE, "--save-candidate", str(saved), "--", *variant)
    assert code == 1, stderr
    assert err_rules(report) == {"T1", "I1", "O6", "A1"}
    by_rule = {f["rule"]: f for f in report["findings"] if f["severity"] == "ERR"}
    assert by_rule["T1"]["tool"] == "convert_time"
    assert by_rule["I1"]["pointer"].startswith("/inputSchema")
    assert by_rule["O6"]["pointer"] == "/outputSchema/properties/is_dst/type"
    assert by_rule["A1"]["pointer"] == "/annotations/readOnlyHint"
    # the saved candidate gives the same verdict offline
    again_code, again, _ = verify(baseline, *VOLATILE, "--candidate", str(saved))
    assert again_code == 1 and err_rules(again) == err_rules(report)
    # --fail-on and an ignore file
    ignore = tmp_path / "accepted.txt"
    ignore.write_text(
        "T1 convert_time *  # retired on purpose\nI1 get_current_time *  # new arg accepted\n"
        "O6 get_current_time *  # accepted\nA1 get_current_time *  # accepted\n"
    )
    code, report, _ = verify(baseline, *VOLATILE, "--candidate", str(saved), "--ignore-file", str(ignore))
    assert code == 0 and err_rules(report) == set()
    assert {i["rule"] for i in report["ignored"]} == {"T1", "I1", "O6", "A1"}


def test_ci_formats_render_the_variant_findings(
    baseline: Path, time_command: list[str], tmp_path: Path
) -> None:
    variant = [sys.executable, VARIANT, "--remove-tool", "convert_time", "--", *time_command]
    saved = tmp_path / "v.cassette.json"
    assert verify(baseline, *VOLATILE, "--save-candidate", str(saved), "--", *variant)[0] == 1
    junit = tmp_path / "verify.xml"
    done = subprocess.run(
        [
            *HARN,
            "verify",
            "--cassette",
            str(baseline),
            "--candidate",
            str(saved),
            "--format",
            "junit",
            "--report",
            str(junit),
            *VOLATILE,
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 1
    assert ET.parse(junit).getroot().find(".//failure") is not None
    github = subprocess.run(
        [
            *HARN,
            "verify",
            "--cassette",
            str(baseline),
            "--candidate",
            str(saved),
            "--format",
            "github",
            *VOLATILE,
        ],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={"PATH": "/usr/bin:/bin", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")},
    )
    assert github.returncode == 1
    # Each annotation points at the tool's definition in the cassette file (findings carry it).
    assert re.search(r"^::error file=[^,\n]+\.cassette\.json,line=\d+,col=\d+,title=T1", github.stdout, re.M)
    assert "convert_time" in (tmp_path / "summary.md").read_text()


def test_a_server_that_cannot_start_is_exit_2(baseline: Path) -> None:
    code, report, stderr = verify(baseline, "--", "no-such-server-xyz")
    assert code == 2 and report is None
    assert stderr.strip().count("\n") == 0 and "command not found" in stderr
