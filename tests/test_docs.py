"""The commands the docs show really run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def console_commands(doc: Path) -> list[tuple[str, str]]:
    """Each ``$`` line of the doc's console blocks, with the output shown under it."""
    commands: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", doc.read_text(), flags=re.S):
        shown: list[str] | None = None  # lines before a block's first `$` are not run
        for line in block.splitlines():
            if line.startswith("$ "):
                shown = []
                commands.append((line[2:], shown))
            elif shown is not None:
                shown.append(line)
    return [(command, "".join(f"{line}\n" for line in shown)) for command, shown in commands]


def python_snippets(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)


def normalise(text: str, scratch: Path) -> str:
    """Only what really varies between runs: the scratch folder, digests cut short for display."""
    text = text.replace(str(scratch), ".")
    return re.sub(r"blake3:[0-9a-f]+(\.\.\.)?", "blake3:<digest>", text)


@pytest.mark.slow
def test_the_quickstart_commands_print_what_the_doc_shows(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    doc = ROOT / "docs" / "quickstart.md"
    commands = console_commands(doc)
    assert len(commands) >= 8
    for command, shown in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}"
        assert normalise(done.stdout, tmp_path) == normalise(shown, tmp_path), command
    assert "sk-quickstart" not in "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    # The Python snippet, as written, against the cassette the commands recorded.
    (snippet,) = python_snippets(doc)
    (tmp_path / "test_notes.py").write_text(snippet)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_notes.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


@pytest.mark.parametrize("doc", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_every_doc_link_points_at_a_file(doc: Path) -> None:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
        assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def test_the_published_cassette_schema_is_the_shipped_one() -> None:
    shipped = ROOT / "harn_mcp_mock" / "cassette" / "schema.json"
    assert (ROOT / "docs" / "cassette.schema.json").read_bytes() == shipped.read_bytes()


def test_the_fault_docs_examples_print_what_they_show(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (command, shown) = next(c for c in console_commands(ROOT / "docs" / "faults.md") if " show " in c[0])
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(shown.split("...\n", 1)[1]), done.stdout
    assert "warning: fault 'weather' can never fire" in done.stderr
    # replay.md's worked example, as written.
    doc = (ROOT / "docs" / "replay.md").read_text()
    (snippet,) = (s for s in python_snippets(ROOT / "docs" / "replay.md") if "--faults" in s)
    printed = re.search(r"prints\n\n```text\n(.*?)```", doc, flags=re.S)
    assert printed is not None
    for folder in ("cassettes", "examples"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    (tmp_path / "faults_demo.py").write_text(snippet)
    ran = subprocess.run(
        [sys.executable, "faults_demo.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == printed.group(1)
    assert '"faults_fired"' in (tmp_path / "report.json").read_text()


def test_the_runner_docs_python_example_prints_what_it_shows(tmp_path: Path) -> None:
    doc = ROOT / "docs" / "runner.md"
    (snippet,) = (s for s in python_snippets(doc) if "run_eval(agent" in s)
    printed = re.search(r"every goal is missed:\n\n```text\n(.*?)```", doc.read_text(), flags=re.S)
    assert printed is not None
    (tmp_path / "eval_agent.py").write_text(snippet)
    ran = subprocess.run(
        [sys.executable, "eval_agent.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == printed.group(1)


@pytest.mark.slow
def test_the_eval_docs_worked_example_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/eval.md's worked example: the two runs and the eval --power command, as written."""
    doc = (ROOT / "docs" / "eval.md").read_text()
    example = doc.split("## Worked example: is this drop real?", 1)[1].split("### Tried", 1)[0]
    blocks = re.findall(r"```text\n(.*?)```", example, flags=re.S)
    runs, table, against, power_command, power_line = blocks[:5]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = str(ROOT)
    shown = ""
    for command in [*runs.strip().splitlines(), power_command.strip()]:
        command = command.replace("harn mcp mock", f"{sys.executable} -m harn_mcp_mock", 1)
        ran = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, ran.stderr
        shown = ran.stdout
        if "--baseline" in command:
            assert table in ran.stdout and against in ran.stdout
    assert power_line in shown
