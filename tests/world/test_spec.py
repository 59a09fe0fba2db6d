"""Reading a world spec: what a user points --spec at by mistake is one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.errors import WorldSpecError
from harn_mcp_mock.world.spec import load_spec


def test_a_folder_given_as_the_spec_is_a_world_spec_error_not_an_internal_one(tmp_path: Path) -> None:
    with pytest.raises(WorldSpecError) as caught:
        load_spec(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a folder, not a world spec (NAME.world.json)"
    assert caught.value.exit_code == 2


def test_a_spec_under_a_file_is_a_world_spec_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file")
    spec = tmp_path / "notes.txt" / "x.world.json"
    with pytest.raises(WorldSpecError, match=r"x\.world\.json: cannot read it: Not a directory"):
        load_spec(spec)


def test_a_repository_path_to_a_shipped_world_that_is_not_here_says_its_name(tmp_path: Path) -> None:
    """The docs' `--spec worlds/tickets/tickets.world.json`, run away from a checkout (a pip user)."""
    spec = tmp_path / "worlds" / "tickets" / "tickets.world.json"
    with pytest.raises(WorldSpecError) as caught:
        load_spec(spec)
    assert str(caught.value) == (
        f"{spec}: no such world spec (shipped worlds: bank, notes, retail, support, tickets; "
        "the shipped 'tickets' is --spec tickets)"
    )


def test_a_missing_spec_names_the_shipped_worlds(tmp_path: Path) -> None:
    with pytest.raises(
        WorldSpecError, match=r"no such world spec \(shipped worlds: bank, notes, retail, support, tickets\)"
    ):
        load_spec(tmp_path / "nope.world.json")
