"""`harn test-bench fidelity`: exit codes, summary, JSON report, typer registration."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from harn_mcp_mock.cli.fidelity import fidelity_main, register
from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.store import canonical_bytes
from harn_mcp_mock.tape import TapeWriter


def make(path: Path, *, response: str = "hi", extra: bool = False) -> Path:
    clock = PausedClock(step_ns=1_000_000)
    with TapeWriter(path, clock=clock) as w:
        w.record("clock_read", source="wall", value_ms=clock.wall_ms())
        w.record("llm_call", request_digest="r", payloads={"response": response})
        if extra:
            w.record("file_write", path="x", content_hash="0" * 64, len_bytes=0)
    return path


def test_identical_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make(tmp_path / "a.tape"), make(tmp_path / "b.tape")
    assert fidelity_main(a, b, "byte-identical", None) == 0
    out = capsys.readouterr().out
    assert "no divergences" in out and "(2 records)" in out


def test_divergence_exit_2_as_the_seed_says_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = make(tmp_path / "a.tape"), make(tmp_path / "b.tape", response="ho", extra=True)
    report = tmp_path / "out" / "fidelity.json"
    assert fidelity_main(a, b, "semantic", report) == 2
    out = capsys.readouterr().out
    assert "2 divergences: 1 length_mismatch, 1 payload_mismatch" in out
    doc = orjson.loads(report.read_bytes())
    assert doc["mode"] == "semantic" and doc["identical"] is False
    assert doc["records"] == [2, 3]
    assert [d["category"] for d in doc["divergences"]] == ["payload_mismatch", "length_mismatch"]
    assert fidelity_main(a, b, "outcome", None) == 2  # one more file written


def test_unreadable_or_newer_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make(tmp_path / "a.tape")
    newer = tmp_path / "new.tape"
    newer.write_bytes(canonical_bytes({"type": "header", "version": 2}) + b"\n")
    assert fidelity_main(a, newer, "semantic", None) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(newer) in err and "newer" in err
    assert fidelity_main(tmp_path / "missing.tape", a, "semantic", None) == 3
    assert "cannot read tape" in capsys.readouterr().err


def test_bad_mode_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = make(tmp_path / "a.tape")
    assert fidelity_main(a, a, "fuzzy", None) == 2
    captured = capsys.readouterr()
    # the usage code every command has; told apart from divergences by stdout (no summary)
    assert "--mode must be one of" in captured.err and captured.out == ""


def test_torn_tape_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make(tmp_path / "a.tape"), make(tmp_path / "b.tape")
    with b.open("ab") as fh:
        fh.write(b'{"type":"rec')
    assert fidelity_main(a, b, "byte-identical", None) == 0
    assert "torn last line" in capsys.readouterr().err


def test_many_divergences_are_truncated_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.tape", tmp_path / "b.tape"
    with TapeWriter(a, clock=PausedClock()) as wa, TapeWriter(b, clock=PausedClock()) as wb:
        for i in range(30):
            wa.record("clock_sleep", duration_ms=i)
            wb.record("clock_sleep", duration_ms=i + 1)
    assert fidelity_main(a, b, "byte-identical", None) == 2
    assert "... 10 more (use --report)" in capsys.readouterr().out


def test_register_typer_command(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command so `fidelity` stays a subcommand
        pass

    a, b = make(tmp_path / "a.tape"), make(tmp_path / "b.tape", response="ho")
    runner = CliRunner()
    result = runner.invoke(app, ["fidelity", str(a), str(a)])
    assert result.exit_code == 0, result.output
    report = tmp_path / "r.json"
    result = runner.invoke(
        app, ["fidelity", str(a), str(b), "--mode", "phase-aware", "--report", str(report)]
    )
    assert result.exit_code == 2
    assert orjson.loads(report.read_bytes())["mode"] == "phase-aware"
    result = runner.invoke(app, ["fidelity", str(a), str(b), "--mode", "nope"])
    assert result.exit_code == 2  # click usage error


def test_a_report_into_a_fifo_nobody_reads_is_one_line_naming_it_and_the_fifo_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opened without waiting (no hang at the end); it was replaced by a regular file."""
    import os
    import stat

    a = make(tmp_path / "a.tape")
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    assert fidelity_main(a, a, "byte-identical", fifo) == 3
    assert capsys.readouterr().err.splitlines() == [
        f"harn test-bench fidelity: error: {fifo}: cannot write it: it is a FIFO that no process is"
        " reading (start its reader first)"
    ]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
