"""``harn protocol conform``: check any Harness base URL from outside against the spec's MUSTs.

* :mod:`.client` -- a small bounded HTTP/SSE client (``httpx2``; imported only in this subpackage)
* :mod:`.registry` -- :class:`Check`, levels, outcomes and the shared :class:`Context`
* :mod:`.checks` -- the checks, one per observable requirement, each quoting its spec sentence
* :mod:`.run` -- selection and orchestration into a :class:`Report`
* :mod:`.render` -- the table and JSON renderings

See ``docs/protocol-conformance.md``.
"""

from __future__ import annotations

from harn_mcp_mock.agents.conform import checks as _checks  # registers the checks
from harn_mcp_mock.agents.conform.client import ConformClient, ConnectionFailed
from harn_mcp_mock.agents.conform.registry import CHECKS, LEVELS, Check, Level, Outcome, Settings, select
from harn_mcp_mock.agents.conform.render import render_json, render_list, render_table, summary_line
from harn_mcp_mock.agents.conform.run import CheckResult, Report, run_checks, run_conformance

__all__ = [
    "CHECKS",
    "LEVELS",
    "Check",
    "CheckResult",
    "ConformClient",
    "ConnectionFailed",
    "Level",
    "Outcome",
    "Report",
    "Settings",
    "render_json",
    "render_list",
    "render_table",
    "run_checks",
    "run_conformance",
    "select",
    "summary_line",
]

del _checks
