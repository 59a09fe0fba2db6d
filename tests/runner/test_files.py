"""The run folder's files: what is in the way of ``--out`` is one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.errors import OutputError
from harn_mcp_mock.runner._files import open_folder


def test_an_out_folder_that_is_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    """`run --out FILE` was an internal FileExistsError (exit 70)."""
    out = tmp_path / "notes.txt"
    out.write_text("a file")
    with pytest.raises(OutputError) as caught:
        open_folder(out, ("bank", "pay-rent"))
    assert str(caught.value) == f"{out}: cannot write it: it is a file, not a folder"
    assert caught.value.exit_code == 2
    with pytest.raises(OutputError, match=r"notes\.txt is a file, not a folder"):
        open_folder(out / "run", ())
    assert out.read_text() == "a file"
