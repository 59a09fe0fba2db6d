"""How each fault kind reaches the model (or the host) through each framework recipe of
examples/frameworks/: every recipe runs the probe world (tests/e2e/probe.world.json: one read,
one write, a fault profile per kind) under `harn mcp mock run`, and the text its model was handed
for the faulted call is read from the trial's llm.ndjson. docs/frameworks.md's table is PROBED.
The runs are warm starts (`--preload` of the modules each recipe imports, PRELOAD in recipes.py;
test_frameworks.py runs the same recipes plain), so both ways are proven with real frameworks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.recipes import HARN, PRELOAD_ENV, RECIPES, ROOT, preload_args

pytestmark = pytest.mark.frameworks

PROBE = Path(__file__).with_name("probe.world.json")
PROBED: dict[str, dict[str, tuple[str, float]]] = {
    "claude_agent_sdk": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("ok", 1.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
    "fastmcp": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("crash (exit 1)", 0.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
    "inspect_ai": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("text: Tool 'lookup' timed out before completing.", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("crash (exit 1)", 0.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("text: Tool 'record' timed out before completing.", 1.0),
    },
    "langchain": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("crash (exit 1)", 0.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
    "llama_index": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("ok", 1.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
    "openai_agents": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("ok", 1.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
    "pydantic_ai": {
        "rate_limit": ("message", 1.0),
        "unavailable": ("message", 1.0),
        "timeout": ("message", 1.0),
        "tool_error": ("message", 1.0),
        "latency": ("ok", 1.0),
        "schema_violation": ("crash (exit 1)", 0.0),
        "partial_write": ("message", 0.0),
        "ghost_success": ("message", 1.0),
    },
}
KINDS = (
    "rate_limit",
    "unavailable",
    "timeout",
    "tool_error",
    "latency",
    "schema_violation",
    "partial_write",
    "ghost_success",
)
HINTS = {
    "rate_limit": "retry after 250 ms",
    "unavailable": "retry later",
    "timeout": "may have completed",
    "ghost_success": "may have completed",
    "tool_error": "internal error",
    "partial_write": "partly applied",
}


def seen(trial: Path, kind: str) -> str:
    """How a fault reached the model (or the host) in one probe trial, in a few words:
    ``message`` (the error's message with its hint), ``text: ...`` (some other text),
    ``ok`` (some text reached the model and the run went on), ``crash (exit N)`` (the host
    ended the run)."""
    record = json.loads((trial / "trial.json").read_text())
    tool = "record" if kind in ("partial_write", "ghost_success") else "lookup"
    log = trial / "agent" / "llm.ndjson"  # HARN_TRIAL_DIR's files, copied back when the trial ended
    lines = log.read_text().splitlines() if log.exists() else []
    results = [
        c["result"]
        for line in lines[-1:]
        for c in json.loads(line)["calls"]
        if c["name"].endswith(tool) and c["result"] is not None
    ]
    if not results:
        return f"crash (exit {record['exit_code']})"
    first = results[0]
    if kind in HINTS:
        return "message" if HINTS[kind] in first else f"text: {first[:60]}"
    return "ok"


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_how_each_fault_kind_reaches_the_model(name: str, tmp_path: Path) -> None:
    modules, _, _ = RECIPES[name]
    for module in modules:
        pytest.importorskip(module)
    agent = ROOT / "examples" / "frameworks" / name / "agent.py"
    faults = [arg for kind in KINDS for arg in ("--faults", kind)]
    done = subprocess.run(
        [
            *HARN,
            "run",
            "--spec",
            str(PROBE),
            *faults,
            "--workers",
            "2",
            "--timeout",
            "120",
            "--out",
            str(tmp_path / "run"),
            *preload_args(name),
            "--",
            sys.executable,
            str(agent),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
        env={**os.environ, **PRELOAD_ENV.get(name, {})},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    trials = tmp_path / "run" / "trials" / "probe" / "probe"
    passed = {
        g["faults"]: g["pass_rate"]["value"]
        for g in json.loads((tmp_path / "run" / "results.json").read_text())["groups"]
    }
    row = {kind: (seen(trials / kind / "1", kind), passed[kind]) for kind in KINDS}
    print(name, json.dumps(row))
    assert passed[None] == 1.0
    assert {k: list(v) for k, v in row.items()} == {k: list(v) for k, v in PROBED[name].items()}, json.dumps(
        row
    )
