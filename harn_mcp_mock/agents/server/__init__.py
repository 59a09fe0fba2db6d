"""The mock Harness of the Harn Agents Protocol v1: ``create_app`` (ASGI) and ``serve`` (uvicorn).

Layers: :mod:`.harness` (state machine, idempotency, receipts) over
:class:`~harn_mcp_mock.agents.store.ProtocolStore` (SQLite); :mod:`.app` (REST + SSE);
:mod:`.agent` (the scripted agent, calling tools on an in-process MCP world). Starlette and
uvicorn load only when this package is imported.
"""

from __future__ import annotations

from harn_mcp_mock.agents.server.app import EventBus, TaskRunner, agent_card, create_app
from harn_mcp_mock.agents.server.harness import (
    ALL_SCOPES,
    IDEMPOTENCY_RETENTION_MS,
    SUPPORTED_VERSIONS,
    Harness,
)
from harn_mcp_mock.agents.server.serve import serve

__all__ = [
    "ALL_SCOPES",
    "IDEMPOTENCY_RETENTION_MS",
    "SUPPORTED_VERSIONS",
    "EventBus",
    "Harness",
    "TaskRunner",
    "agent_card",
    "create_app",
    "serve",
]
