"""The public surface is a deliberate decision: pinned here (the httpx habit)."""

from __future__ import annotations

import subprocess
import sys

import harn_mcp_mock


def test_the_package_exports_exactly_the_public_api_sorted() -> None:
    assert harn_mcp_mock.__all__ == sorted(harn_mcp_mock.__all__)
    assert harn_mcp_mock.__all__ == [
        "RecordTransport",
        "ReplaySession",
        "ReplayTransport",
        "open_replay",
        "record_session",
        "replay_session",
        "run_eval",
        "run_eval_async",
    ]
    for name in harn_mcp_mock.__all__:
        assert getattr(harn_mcp_mock, name) is not None


def test_importing_the_package_stays_light() -> None:
    code = "import sys, harn_mcp_mock; print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'anyio', 'typer', 'jsonschema', 'deepdiff') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_replay_and_world_start_without_the_sdk_typer_or_jsonschema(tmp_path: object) -> None:
    probe = (
        "import sys, runpy; sys.argv = ['harn-mcp-mock', 'replay', '--cassette', 'missing.cassette.json'];\n"
        "try:\n    runpy.run_module('harn_mcp_mock', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('mcp', 'typer', 'pydantic', 'jsonschema', 'deepdiff', 'asyncio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"
