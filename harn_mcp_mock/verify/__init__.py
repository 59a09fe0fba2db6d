"""Verify: classify drift between a recorded cassette and a candidate (cassette or live server)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harn_mcp_mock._lazy import lazy_exports

if TYPE_CHECKING:
    from harn_mcp_mock.findings.model import Finding, Severity
    from harn_mcp_mock.verify.answers import BaselineAnswers, RoundTrips
    from harn_mcp_mock.verify.drift import VerifyOptions, compare
    from harn_mcp_mock.verify.ignore import IgnoreRule, apply_ignores, load_ignore_file
    from harn_mcp_mock.verify.live import drive, rerun_live, rerun_live_http
    from harn_mcp_mock.verify.report import VerifyResult, github_step_summary, render
    from harn_mcp_mock.verify.run import verify
    from harn_mcp_mock.verify.schema_diff import diff_input_schema, diff_output_schema
    from harn_mcp_mock.verify.surface import Surface, surface_of

# name -> the module that defines it; loaded on first use (start-up speed, no heavy imports)
_HOME = {
    "BaselineAnswers": "answers",
    "Finding": "harn_mcp_mock.findings.model",
    "IgnoreRule": "ignore",
    "RoundTrips": "answers",
    "Severity": "harn_mcp_mock.findings.model",
    "Surface": "surface",
    "VerifyOptions": "drift",
    "VerifyResult": "report",
    "apply_ignores": "ignore",
    "compare": "drift",
    "diff_input_schema": "schema_diff",
    "diff_output_schema": "schema_diff",
    "drive": "live",
    "github_step_summary": "report",
    "load_ignore_file": "ignore",
    "render": "report",
    "rerun_live": "live",
    "rerun_live_http": "live",
    "surface_of": "surface",
    "verify": "run",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "BaselineAnswers",
    "Finding",
    "IgnoreRule",
    "RoundTrips",
    "Severity",
    "Surface",
    "VerifyOptions",
    "VerifyResult",
    "apply_ignores",
    "compare",
    "diff_input_schema",
    "diff_output_schema",
    "drive",
    "github_step_summary",
    "load_ignore_file",
    "render",
    "rerun_live",
    "rerun_live_http",
    "surface_of",
    "verify",
]
