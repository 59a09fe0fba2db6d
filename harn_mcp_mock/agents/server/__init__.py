"""The mock Harness of the Harn Agents Protocol v1: ``create_app`` (ASGI) and ``serve`` (uvicorn).

Layers: :mod:`.harness` wires the services (:mod:`.ledger`, :mod:`.sessions`, :mod:`.tasks`,
:mod:`.issuer`, :mod:`.replay`) over :class:`~harn_mcp_mock.agents.db.ProtocolStore`
(SQLite); :mod:`.app` serves them as REST + SSE; :mod:`.agent` is the scripted agent, calling
tools on an in-process MCP world. Starlette and
uvicorn load only when this package is imported.
"""

from __future__ import annotations

from harn_mcp_mock.agents.server.app import create_app
from harn_mcp_mock.agents.server.card import agent_card
from harn_mcp_mock.agents.server.harness import (
    ALL_SCOPES,
    IDEMPOTENCY_RETENTION_MS,
    SUPPORTED_VERSIONS,
    Harness,
)
from harn_mcp_mock.agents.server.runner import EventBus, TaskRunner
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
