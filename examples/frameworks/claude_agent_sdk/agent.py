"""A Claude Agent SDK agent (the real Claude Code CLI it bundles) for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/claude_agent_sdk/agent.py

Claude Code talks to `harn mcp mock llm`'s scripted endpoint (ANTHROPIC_BASE_URL, served here
in-process, logging into the trial's folder) and reaches the trial's world through the
HARN_MCP_CONFIG file as given: its tools are offered as `mcp__<world>__<tool>`.
ENABLE_TOOL_SEARCH=false: with tool search on, Claude Code defers MCP tools behind a search tool
and never offers them to the model.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from harn_mcp_mock.llm import trial_llm


def mcp_config() -> dict[str, Any]:
    """HARN_MCP_CONFIG: {"mcpServers": {"<world>": {"command": ..., "args": [...]} or {"url": ...}}}."""
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        config: dict[str, Any] = json.load(f)
    return config


async def main() -> int:
    config = os.environ["HARN_MCP_CONFIG"]
    (world,) = mcp_config()["mcpServers"]
    with trial_llm(os.environ["HARN_SPEC"], os.environ.get("HARN_LLM_POLICY", "reference")) as url:  # type: ignore[arg-type]
        options = ClaudeAgentOptions(
            mcp_servers=config,
            strict_mcp_config=True,
            allowed_tools=[f"mcp__{world}"],  # every tool of the world, without asking
            max_turns=30,
            cwd=os.environ.get("HARN_TRIAL_DIR") or os.getcwd(),
            env={
                "ANTHROPIC_BASE_URL": url.removesuffix("/v1"),
                "ANTHROPIC_API_KEY": "offline",
                "ENABLE_TOOL_SEARCH": "false",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
            },
        )
        final = ""
        async for message in query(prompt=os.environ["HARN_TASK_PROMPT"], options=options):
            if isinstance(message, ResultMessage):
                final = message.result or ""
    print(final)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
