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
