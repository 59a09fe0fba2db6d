"""CI integration: the GitHub Action's logic (``action.yml`` calls :mod:`harn_mcp_mock.ci.action`)."""

from __future__ import annotations

__all__: list[str] = []
