"""A scripted, deterministic LLM endpoint (``harn mcp mock llm``): OpenAI Chat Completions and
Responses and Anthropic Messages on loopback, playing a world task's reference plan as tool
calls, so that real agent hosts run end to end offline. docs/frameworks.md is the reference.

:mod:`.policy` decides the next move from the conversation, :mod:`.wire` reads and writes the
three APIs, :mod:`.server` serves them (``serve_llm`` in a thread, or the CLI).
"""

from __future__ import annotations

from harn_mcp_mock._lazy import lazy_exports

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from harn_mcp_mock.llm.policy import POLICIES, Conversation, Move, ToolCall, ToolResult, next_move
    from harn_mcp_mock.llm.server import LlmEndpoint, serve_llm, trial_llm

_HOME = {
    "POLICIES": "policy",
    "Conversation": "policy",
    "Move": "policy",
    "ToolCall": "policy",
    "ToolResult": "policy",
    "next_move": "policy",
    "LlmEndpoint": "server",
    "serve_llm": "server",
    "trial_llm": "server",
}

__getattr__ = lazy_exports(__name__, _HOME)

__all__ = [
    "POLICIES",
    "Conversation",
    "LlmEndpoint",
    "Move",
    "ToolCall",
    "ToolResult",
    "next_move",
    "serve_llm",
    "trial_llm",
]
