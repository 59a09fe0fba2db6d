"""An Inspect AI agent (`react`, its MCP tool source) for `harn mcp mock run`, offline.

    harn mcp mock run --spec bank -- python examples/frameworks/inspect_ai/agent.py

One Inspect sample: the task's prompt, solved by `react(submit=False)` with the trial's world
(HARN_MCP_CONFIG) as an MCP tool source, one session for the sample. The model is Inspect's
OpenAI provider pointed at `harn mcp mock llm`'s scripted endpoint (served here in-process,
logging into the trial's folder); Inspect's own log goes to the trial's folder too.
(`harn_mcp_mock.inspect.world_task` makes the world's tasks an Inspect dataset instead.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.tool import mcp_server_http, mcp_server_stdio

from harn_mcp_mock.llm import trial_llm


def main() -> int:
    with open(os.environ["HARN_MCP_CONFIG"], encoding="utf-8") as f:
        ((name, server),) = json.load(f)["mcpServers"].items()
    world = (
        mcp_server_http(name=name, url=server["url"])
        if "url" in server
        else mcp_server_stdio(name=name, command=server["command"], args=server.get("args", []))
    )
    task = Task(
        dataset=[Sample(input=os.environ["HARN_TASK_PROMPT"])],
        solver=react(tools=[world], submit=False),  # the model's final answer ends the sample
        message_limit=80,
    )
    trial = Path(os.environ.get("HARN_TRIAL_DIR") or ".")
    os.environ.setdefault("OPENAI_API_KEY", "offline")  # the provider wants one; the endpoint ignores it
    with trial_llm(os.environ["HARN_SPEC"], os.environ.get("HARN_LLM_POLICY", "reference")) as url:  # type: ignore[arg-type]
        (log,) = inspect_eval(
            task, model="openai/scripted", model_base_url=url, log_dir=str(trial / "inspect"), display="none"
        )
    print(log.status, log.samples[0].output.completion if log.samples else "")
    return 0 if log.status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
