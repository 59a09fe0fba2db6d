"""Files a user names that are not regular files: a FIFO, a character device, a folder.

Each is refused at once, in one line naming the file and what it is, with the command's documented
exit code: before `harn_mcp_mock.inputs`, a FIFO named as a cassette, spec, policy or ignore file
blocked the command in `open(2)` for good (SIGTERM did not end it), and `/dev/zero` was read
until memory ran out. The commands run as subprocesses with a timeout, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.inputs import read_input
from tests.echo_cassette import echo_cassette

HARN = [sys.executable, "-m", "harn_mcp_mock"]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "named.json"
    os.mkfifo(path)
    return path


def harn(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HARN, *map(str, args)],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("argv", "code", "what"),
    [
        (["replay", "--cassette", "{fifo}"], 3, "cannot read cassette: it is a FIFO, not a regular file"),
        (["show", "--cassette", "{fifo}"], 3, "cannot read cassette: it is a FIFO, not a regular file"),
        (["replay", "--cassette", "/dev/zero"], 3, "it is a character device, not a regular file"),
        (["replay", "--cassette", "{dir}"], 3, "it is a folder, not a regular file"),
        (["world", "--spec", "{fifo}"], 2, "cannot read it: it is a FIFO, not a regular file"),
        (["world", "check", "--spec", "/dev/zero"], 2, "it is a character device, not a regular file"),
        (["world", "init", "--from-cassette", "{fifo}", "--out", "w.json"], 3, "it is a FIFO"),
        (["verify", "--cassette", "{good}", "--candidate", "{fifo}"], 2, "it is a FIFO"),
        (
            ["verify", "--cassette", "{good}", "--candidate", "{good}", "--ignore-file", "{fifo}"],
            2,
            "cannot read ignore file: it is a FIFO, not a regular file",
        ),
        (
            ["replay", "--cassette", "{good}", "--redact-policy", "{fifo}"],
            2,
            "it is a FIFO, not a regular file",
        ),
    ],
)
def test_a_fifo_device_or_folder_named_as_an_input_is_refused_at_once(
    argv: list[str], code: int, what: str, fifo: Path, tmp_path: Path
) -> None:
    good = echo_cassette(tmp_path / "good.cassette.json", "hi")
    args = [a.format(fifo=fifo, dir=tmp_path, good=good) for a in argv]
    done = harn(*args, cwd=tmp_path)
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    assert (done.returncode, what in last, "Traceback" in done.stderr) == (code, True, False), done.stderr


def test_read_input_follows_a_users_link_to_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert read_input(tmp_path / "link.json") == b"{}"
    with pytest.raises(FileNotFoundError):
        read_input(tmp_path / "missing.json")
