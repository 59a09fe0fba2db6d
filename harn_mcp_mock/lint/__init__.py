"""``harn mcp mock lint``: secrets left in cassettes, tool poisoning and prompt injection in
recorded tool surfaces and results, and cassette hygiene (docs/lint.md)."""

from __future__ import annotations

from harn_mcp_mock.lint.config import LintConfig, load_config
from harn_mcp_mock.lint.render import LINT_FORMATS, render_lint
from harn_mcp_mock.lint.rules import RULES, Rule
from harn_mcp_mock.lint.scan import LintResult, find_cassettes, lint_paths
from harn_mcp_mock.lint.usage import read_usage

__all__ = [
    "LINT_FORMATS",
    "RULES",
    "LintConfig",
    "LintResult",
    "Rule",
    "find_cassettes",
    "lint_paths",
    "load_config",
    "read_usage",
    "render_lint",
]
