"""`harn test-bench`: the files it writes after the script are refused before the script runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harn_mcp_mock.cli.testbench import app


@pytest.mark.parametrize("flag", ["--llm-record", "--process-record", "--emit-diff"])
def test_a_file_written_after_the_script_that_cannot_be_written_is_refused_before_it_runs(
    flag: str, tmp_path: Path
) -> None:
    """It was an internal error (exit 70, IsADirectoryError) once the script had done its work."""
    ran = tmp_path / "ran"
    script = tmp_path / "work.py"
    script.write_text(f"open({str(ran)!r}, 'w').close()\n")
    (tmp_path / "out").mkdir()
    overlay = ["--fs-overlay", str(tmp_path)] if flag == "--emit-diff" else []
    result = CliRunner().invoke(app, ["run", str(script), flag, str(tmp_path / "out"), *overlay])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"harn test-bench: error: {tmp_path / 'out'}: cannot write it: it is a folder"
    ]
    assert not ran.exists()
