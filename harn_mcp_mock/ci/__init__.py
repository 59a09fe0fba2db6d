"""CI integration: the GitHub Action's logic (``action.yml`` runs ``python -m
harn_mcp_mock.ci.action``) and the ``harn-mcp-mock-verify`` pre-commit hook (``python -m
harn_mcp_mock.ci.precommit``). Both are run as modules; the names below are for code that drives
the action in-process (a test, another CI system) with the same inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harn_mcp_mock._lazy import lazy_exports

if TYPE_CHECKING:
    from harn_mcp_mock.ci.action import COMMENT_MARKER, ActionInputs, run_action

# name -> the module that defines it; loaded on first use
_HOME = {
    "COMMENT_MARKER": "action",
    "ActionInputs": "action",
    "run_action": "action",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = ["COMMENT_MARKER", "ActionInputs", "run_action"]
