from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def lint() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "lint_test_patterns", REPO_ROOT / "scripts" / "lint_test_patterns.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BAD = (
    "import time, socket, asyncio, datetime\n"
    "time.sleep(0.1)\n"  # allow-wall-clock: lint fixture
    "await asyncio.sleep(0.5)\n"  # allow-wall-clock: lint fixture
    "await asyncio.sleep(0)\n"
    "stamp = datetime.datetime.now()\n"  # allow-wall-clock: lint fixture
    "while time.monotonic() < deadline:\n"
    "    pass\n"
    "s.bind(('127.0.0.1', 8080))\n"
    "s.bind(('127.0.0.1', 0))\n"
    "# time.sleep(1) in a comment is fine\n"  # allow-wall-clock: lint fixture
)


def test_each_banned_pattern_is_reported_with_its_rule(lint: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "test_bad.py").write_text(BAD)
    found = [(v.lineno, v.rule) for v in lint.scan(lint.iter_files([tmp_path]))]
    assert found == [
        (2, "sleep"),
        (3, "async-sleep"),
        (5, "wall-clock"),
        (6, "polling-loop"),
        (8, "fixed-port"),
    ]


def test_the_allowlist_needs_a_reason_and_silences_matching_lines(
    lint: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text("time.sleep(1)\n")  # allow-wall-clock: lint fixture
    allow = tmp_path / "allow.txt"
    reviewed = "  # reviewed: exercises a real timer"
    allow.write_text(f"{bad.as_posix()}:time.sleep(1){reviewed}\n")  # allow-wall-clock: lint fixture
    assert lint.main([str(tmp_path), "--allowlist", str(allow)]) == 0
    allow.write_text(f"{bad.as_posix()}:time.sleep(1)\n")  # allow-wall-clock: lint fixture
    assert lint.main([str(tmp_path), "--allowlist", str(allow)]) == 1
    assert "reason" in capsys.readouterr().err


def test_the_repository_tests_pass_the_lint(lint: ModuleType) -> None:
    assert lint.main([]) == 0
