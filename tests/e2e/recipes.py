"""The framework recipes of examples/frameworks/ that the e2e tests run, and how to run them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARN = [sys.executable, "-m", "harn_mcp_mock"]

# framework -> (the modules it needs, pass rate without faults, pass rate under flaky)
RECIPES = {
    "claude_agent_sdk": (("claude_agent_sdk",), 1.0, 1.0),
    "fastmcp": (("fastmcp", "openai"), 1.0, 1.0),  # its loop asks the scripted endpoint through openai
    "inspect_ai": (("inspect_ai",), 1.0, 1.0),
    "langchain": (("langchain",), 1.0, 1.0),
    "llama_index": (("llama_index.tools.mcp",), 1.0, 1.0),
    "openai_agents": (("agents",), 1.0, 1.0),
    "pydantic_ai": (("pydantic_ai",), 1.0, 1.0),
}

PRELOAD = {
    "claude_agent_sdk": ("claude_agent_sdk", "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "fastmcp": ("fastmcp", "fastmcp.client", "fastmcp.exceptions", "mcp.shared.exceptions", "openai",
                "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "inspect_ai": ("inspect_ai", "inspect_ai.agent", "inspect_ai.dataset", "inspect_ai.tool",
                   "inspect_ai.model._providers.openai", "inspect_ai.model._providers.anthropic",
                   "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "langchain": ("langchain.agents", "langchain_core.language_models", "langchain_core.messages",
                  "langchain_core.outputs", "langchain_core.tools", "langchain_core.utils.function_calling",
                  "mcp.client.stdio", "mcp.client.streamable_http", "jsonschema",
                  "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "llama_index": ("llama_index.core.agent.workflow", "llama_index.core.base.llms.types",
                    "llama_index.core.llms.mock", "llama_index.tools.mcp", "mcp.client.stdio",
                    "mcp.client.streamable_http", "jsonschema", "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "openai_agents": ("agents", "agents.mcp", "openai", "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
    "pydantic_ai": ("fastmcp", "fastmcp.client.transports", "pydantic_ai", "pydantic_ai.mcp",
                    "pydantic_ai.models.openai", "pydantic_ai.providers.openai",
                    "harn_mcp_mock.llm", "harn_mcp_mock.llm.server"),
}  # fmt: skip
"""What `--preload` imports once per run for each recipe (docs/runner.md, "Warm starts"): the
modules its agent.py imports, and those its run imports later that cost most (measured: the
modules new in ``sys.modules`` at the agent's exit; inspect_ai's model providers, the scripted
LLM endpoint's server). llama_index imports numpy, whose OpenBLAS starts a thread at import:
its run sets ``OPENBLAS_NUM_THREADS=1`` (:data:`PRELOAD_ENV`), else --preload refuses it."""
PRELOAD_ENV = {"llama_index": {"OPENBLAS_NUM_THREADS": "1"}}


def preload_args(name: str) -> list[str]:
    """``--preload M`` for each module of :data:`PRELOAD` ``[name]``."""
    return [arg for module in PRELOAD[name] for arg in ("--preload", module)]
