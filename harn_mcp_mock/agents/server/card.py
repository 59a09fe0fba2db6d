"""The HarnAgentCard this Harness serves at ``/.well-known/harn-agent-card.json`` (public)."""

from __future__ import annotations

from typing import Any

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.server.harness import SUPPORTED_VERSIONS
from harn_mcp_mock.agents.server.replay import SUPPORTED_REPLAY_MODES

__all__ = ["agent_card"]


def agent_card(base_url: str) -> dict[str, Any]:
    """The HarnAgentCard this Harness serves (public discovery)."""
    skill = {
        "id": "world-task",
        "name": "world-task",
        "description": "Run tool calls against an in-process MCP world (checking the world task's goal) "
        "or an MCP cassette replay.",
        "input_schema": {
            "type": "object",
            "properties": {
                "world": {"type": "string"},
                "world_task": {"type": "string"},
                "cassette": {"type": "string"},
                "steps": {"type": "array"},
                "text": {"type": "string"},
            },
        },
        "output_schema": None,
    }
    return {
        "id": "card_harn_mcp_mock",
        "object": "harn_agent_card",
        "name": "harn-mcp-mock scripted agent",
        "description": "A mock Harness of the Harn Agents Protocol v1 with a deterministic scripted agent.",
        "protocol_version": PROTOCOL_VERSION,
        "a2a_card": {
            "name": "harn-mcp-mock scripted agent",
            "description": "Deterministic scripted agent (mock Harness).",
            "url": f"{base_url}/v1",
            "version": "1.0.0",
            "preferredTransport": "HTTP+JSON",
            "additionalInterfaces": [],
            "capabilities": {"streaming": True, "pushNotifications": False},
            "defaultInputModes": ["application/json", "text/plain"],
            "defaultOutputModes": ["application/json", "text/plain"],
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "security": [{"apiKey": []}],
            "skills": [
                {"id": "world-task", "name": "world-task", "description": skill["description"], "tags": []}
            ],
        },
        "skills": [skill],
        "capabilities": {
            "conformance_levels": ["core", "receipts", "replay"],
            "replay_modes": list(SUPPORTED_REPLAY_MODES),
            "transports": ["rest", "sse"],
            "supported_versions": list(SUPPORTED_VERSIONS),
        },
        "auth_schemes": ["api_key"],
        "receipt_policy": "required",
        "harn_interfaces": {"rest": f"{base_url}/v1", "sse": f"{base_url}/v1/tasks/{{task_id}}/stream"},
        "public_url": base_url,
        "metadata": {},
    }
