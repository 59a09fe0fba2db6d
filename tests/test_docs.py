"""The commands the docs show really run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def console_commands(doc: Path) -> list[str]:
    blocks = re.findall(r"```console\n(.*?)```", doc.read_text(), flags=re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_the_quickstart_commands_run_in_order(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    outputs = []
    for command in console_commands(ROOT / "docs" / "quickstart.md"):
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        outputs.append(done)
    assert "exit 1" in outputs[-1].stdout
    assert "params.arguments.name: recorded 'welcome', got 'nope'" in outputs[-1].stdout
    assert "sk-quickstart" not in "".join(p.read_text() for p in tmp_path.rglob("*.json"))


@pytest.mark.parametrize("doc", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_every_doc_link_points_at_a_file(doc: Path) -> None:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
        assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def test_the_published_cassette_schema_is_the_shipped_one() -> None:
    shipped = ROOT / "harn_mcp_mock" / "cassette" / "schema.json"
    assert (ROOT / "docs" / "cassette.schema.json").read_bytes() == shipped.read_bytes()
