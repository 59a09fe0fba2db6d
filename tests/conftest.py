"""Fixtures shared by every test directory (keep this small: directory-specific ones live beside their tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder (where pyproject.toml is)."""
    return REPO_ROOT
