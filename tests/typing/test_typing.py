"""mypy --strict over typed uses of the public API (tests/typing/public_api.py), as the SDKs do:
the public names, their signatures and the package's ``py.typed`` are checked from a user's side."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.slow  # mypy --strict from a cold cache
def test_typed_uses_of_the_public_api_pass_mypy_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            "/dev/null",
            "--cache-dir",
            str(tmp_path),
            str(HERE / "public_api.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
