"""Output paths that are not regular files are written into, never replaced: a device node
(as root, `verify --report /dev/null` replaced the machine's /dev/null with a text file), a
FIFO, a symlink to one, and this process's own descriptors (/dev/fd/N).

Every device and FIFO here is the test's own, made in tmp_path: never /dev/null itself, never
/dev/stdout (a regression would replace the machine's). Each runs the real command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIME_CASSETTE = ROOT / "cassettes" / "time.cassette.json"
PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ: every report here fits, so no writer waits for our read

root_only = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod of a device node needs root"
)


def _harn(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A cassette to verify against itself and a final state of the notes world."""
    from tests.echo_cassette import echo_cassette

    base = tmp_path_factory.mktemp("inputs")
    echo_cassette(base / "echo.cassette.json", "hi")
    state = base / "state.json"
    done = _harn("world", "--spec", "notes", "--task", "save-new-todo", "--state-out", str(state), cwd=base)
    assert done.returncode == 0, done.stderr
    return {"cassette": base / "echo.cassette.json", "state": state}


def _commands(inputs: dict[str, Path], target: Path) -> dict[str, list[str]]:
    out = str(target)
    echo, state = str(inputs["cassette"]), str(inputs["state"])
    return {
        "verify --report": ["verify", "--cassette", echo, "--candidate", echo, "--report", out],
        "show --out": ["show", "--cassette", str(TIME_CASSETTE), "--out", out],
        "show --format html --out": [
            "show",
            "--cassette",
            str(TIME_CASSETTE),
            "--format",
            "html",
            "--out",
            out,
        ],
        "eval --report": ["eval", "--spec", "notes", "--state", state, "--report", out],
        "world --state-out": ["world", "--spec", "notes", "--state-out", out],
        "world --report": ["world", "--spec", "notes", "--report", out],
        "report --out": ["report", "--spec", "notes", "--state", state, "--out", out],
        "lint --report": ["lint", echo, "--report", out],
    }


COMMANDS = list(_commands({"cassette": Path(), "state": Path()}, Path()))


def _null_twin(path: Path) -> Path:
    """A character device 1:3 (what /dev/null is) of the test's own."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def _assert_still_the_device(path: Path) -> None:
    st = os.lstat(path)
    assert stat.S_ISCHR(st.st_mode), f"{path} was replaced by a {stat.filemode(st.st_mode)} file"
    assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left beside it


@root_only
@pytest.mark.parametrize("command", COMMANDS)
def test_a_device_node_as_the_output_path_is_written_into_not_replaced(
    command: str, inputs: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "dev").mkdir()
    null = _null_twin(tmp_path / "dev" / "null")
    done = _harn(*_commands(inputs, null)[command], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _assert_still_the_device(null)


@root_only
def test_a_symlink_to_a_device_node_stays_a_link_to_the_device(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "dev").mkdir()
    null = _null_twin(tmp_path / "dev" / "null")
    link = tmp_path / "report.txt"
    link.symlink_to(null)
    done = _harn(*_commands(inputs, link)["verify --report"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(null)
    _assert_still_the_device(null)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break  # drained (the writer has exited)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_with_a_reader_gets_the_output_and_stays_a_fifo(
    command: str, inputs: dict[str, Path], tmp_path: Path
) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader before the writer: no wait
    try:
        import fcntl

        fcntl.fcntl(reader, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
        done = _harn(*_commands(inputs, fifo)[command], cwd=tmp_path)
        data = _read_all(reader)
    finally:
        os.close(reader)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.fifo"]
    if command.startswith("world"):
        assert isinstance(json.loads(data), dict)
    elif command == "eval --report":
        assert b"save-new-todo" in data
    elif command == "lint --report":
        assert data.startswith(b"lint: 1 cassette(s)")
    elif command in ("report --out", "show --format html --out"):
        assert data.lower().startswith(b"<!doctype html>")
    else:
        assert data.strip(), "nothing was written into the FIFO"


def test_a_fifo_nobody_reads_is_a_one_line_error_not_a_hang(inputs: dict[str, Path], tmp_path: Path) -> None:
    """Opened without waiting for a reader: a command that would otherwise block forever at its
    end (a shell redirect would) says why and exits 2."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done = _harn(*_commands(inputs, fifo)["eval --report"], cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"harn mcp mock eval: error: {fifo}: cannot write it: it is a FIFO that no process is"
        " reading (start its reader first)"
    ]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("name", ["/dev/fd/1", "/proc/self/fd/1"])
def test_the_processs_own_stdout_by_name_gets_the_report_in_order(
    name: str, inputs: dict[str, Path], tmp_path: Path
) -> None:
    """Written to descriptor 1 itself (like a shell's >&1): not replaced (that would replace the
    link in /dev), not reopened (that would truncate a file stdout was redirected to)."""
    out = tmp_path / "stdout.txt"
    with out.open("wb") as fh:
        fh.write(b"before\n")
        fh.flush()
        cmd = [sys.executable, "-m", "harn_mcp_mock", *_commands(inputs, Path(name))["world --report"]]
        code = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=fh, timeout=120, cwd=tmp_path).returncode
    assert code == 0
    text = out.read_bytes()
    assert text.startswith(b"before\n")
    assert json.loads(text[len(b"before\n") :])["world"] == "notes"
