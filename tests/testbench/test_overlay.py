from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest

from harn_mcp_mock.errors import PathEscapeError
from harn_mcp_mock.testbench import FsChange, Testbench, render_unified_diff

REAL_OPEN = builtins.open


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "worktree"
    root.mkdir()
    (root / "existing.txt").write_text("old content\n")
    (root / "doomed.txt").write_text("content\n")
    return root


def test_writes_stay_in_memory_and_the_diff_renders_like_the_seed(worktree: Path) -> None:
    bench = Testbench.builder().fs_overlay(worktree).build()
    with bench:
        (worktree / "new-file.txt").write_text("hello\n")
        with open(worktree / "existing.txt", "w") as fh:
            fh.write("new content\n")
        os.remove(worktree / "doomed.txt")
        assert (worktree / "existing.txt").read_text() == "new content\n"
        assert not (worktree / "doomed.txt").exists()
    assert (worktree / "existing.txt").read_text() == "old content\n"
    assert sorted(p.name for p in worktree.iterdir()) == ["doomed.txt", "existing.txt"]
    result = bench.finalize()
    assert [(c.path, c.kind) for c in result.fs_diff] == [
        ("doomed.txt", "deleted"),
        ("existing.txt", "modified"),
        ("new-file.txt", "added"),
    ]
    assert result.fs_diff[1] == FsChange("existing.txt", "modified", b"old content\n", b"new content\n")


def test_unified_diff_format() -> None:
    changes = [
        FsChange("new-file.txt", "added", None, b"hello\n"),
        FsChange("existing.txt", "modified", b"old content\n", b"new content\n"),
        FsChange("doomed.txt", "deleted", b"content\n", None),
    ]
    assert render_unified_diff(changes) == (
        "--- /dev/null\n+++ b/new-file.txt\n+hello\n"
        "--- a/existing.txt\n+++ b/existing.txt\n-old content\n+new content\n"
        "--- a/doomed.txt\n+++ /dev/null\n-content\n"
    )


def test_append_mkdir_rename_and_unchanged_rewrites(worktree: Path) -> None:
    bench = Testbench.builder().fs_overlay(worktree).build()
    with bench:
        with open(worktree / "existing.txt", "a") as fh:
            fh.write("more\n")
        os.makedirs(worktree / "a" / "b")
        (worktree / "a" / "b" / "x.bin").write_bytes(b"\x00\x01")
        os.replace(worktree / "a" / "b" / "x.bin", worktree / "moved.bin")
        (worktree / "doomed.txt").write_text("content\n")  # same bytes: no change
    assert not (worktree / "a").exists()
    diff = {c.path: c for c in bench.finalize().fs_diff}
    assert diff["existing.txt"].after == b"old content\nmore\n"
    assert diff["moved.bin"].kind == "added"
    assert "doomed.txt" not in diff and "a/b/x.bin" not in diff


def test_paths_escaping_the_root_are_refused(worktree: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    (worktree / "link").symlink_to(tmp_path)
    with Testbench.builder().fs_overlay(worktree).build():
        with pytest.raises(PathEscapeError, match="leaves the overlay root"):
            open(f"{worktree}/../secret.txt")
        with pytest.raises(PathEscapeError):
            (worktree / "link" / "secret.txt").write_text("x")


def test_reads_outside_the_root_fall_through(worktree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("real")
    with Testbench.builder().fs_overlay(worktree).build():
        assert (tmp_path / "outside.txt").read_text() == "real"
    assert builtins.open is REAL_OPEN
