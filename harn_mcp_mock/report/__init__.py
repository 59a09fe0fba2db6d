"""HTML reports: one self-contained page (no network) for a run (``harn mcp mock report``), a
verify result (``verify --format html``) or a cassette (``show --format html``)."""

from __future__ import annotations

from harn_mcp_mock.report.cassette import cassette_report_data
from harn_mcp_mock.report.page import KINDS, render_page
from harn_mcp_mock.report.run import OUTCOMES, eval_report_data, outcome_of, run_report_data

__all__ = [
    "KINDS",
    "OUTCOMES",
    "cassette_report_data",
    "eval_report_data",
    "outcome_of",
    "render_page",
    "run_report_data",
]
