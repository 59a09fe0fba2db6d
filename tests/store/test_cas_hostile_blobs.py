"""Sidecar blobs are untrusted files: symlinks, FIFOs, devices, folders and oversized blobs are
refused with one line naming the blob file (exit 3), without hanging or reading past the
declared size."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harn_mcp_mock.cassette.model import Cassette, Message, cas_dir, load_cassette, save_cassette
from harn_mcp_mock.errors import CassetteIntegrityError
from harn_mcp_mock.store.cas import CasStore

WAIT = 30


def big_cassette(tmp_path: Path) -> tuple[Path, Path]:
    """A cassette whose one message lives in a CAS blob; returns (cassette, blob path)."""
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"text": "x" * 9000}}
    path = tmp_path / "b.cassette.json"
    save_cassette(Cassette([Message(0, "client", msg)]), path)
    (blob,) = [p for p in cas_dir(path).iterdir() if not p.name.startswith(".")]
    return path, blob


def to_symlink_to_dev_zero(blob: Path) -> None:
    blob.unlink()
    blob.symlink_to("/dev/zero")


def to_symlink_to_a_copy(blob: Path) -> None:
    copy = blob.with_name("elsewhere")
    blob.rename(copy)
    blob.symlink_to(copy)


def to_fifo(blob: Path) -> None:
    blob.unlink()
    os.mkfifo(blob)


def to_folder(blob: Path) -> None:
    blob.unlink()
    blob.mkdir()


def to_longer(blob: Path) -> None:
    blob.write_bytes(blob.read_bytes() + b" " * 100_000)


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "symlink to /dev/zero": (to_symlink_to_dev_zero, "is a symlink"),
    "symlink to a regular file": (to_symlink_to_a_copy, "is a symlink"),
    "FIFO": (to_fifo, "is a FIFO"),
    "folder": (to_folder, "is a folder"),
    "longer than declared": (to_longer, "longer than the"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_hostile_blob_is_refused_by_the_loader(tmp_path: Path, kind: str) -> None:
    path, blob = big_cassette(tmp_path)
    make, words = KINDS[kind]
    make(blob)
    with pytest.raises(CassetteIntegrityError) as err:
        load_cassette(path)
    assert words in str(err.value) and str(blob) in str(err.value)
    assert err.value.exit_code == 3


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_hostile_blob_is_one_line_and_exit_3_from_the_cli(tmp_path: Path, kind: str) -> None:
    path, blob = big_cassette(tmp_path)
    KINDS[kind][0](blob)
    for args in (["show", "--cassette", str(path)], ["replay", "--cassette", str(path)]):
        done = subprocess.run(
            [sys.executable, "-m", "harn_mcp_mock", *args],
            input=b"",
            capture_output=True,
            timeout=WAIT,
        )
        assert done.returncode == 3, (args, done.stderr)
        lines = done.stderr.decode().splitlines()
        assert len(lines) == 1 and blob.name in lines[0] and KINDS[kind][1] in lines[0], lines


def test_a_device_node_is_refused(tmp_path: Path) -> None:
    store = CasStore(tmp_path)
    key = "0" * 64
    (tmp_path / key).symlink_to("/dev/null")
    with pytest.raises(CassetteIntegrityError, match="symlink"):
        store.get(key, 10)
    dev = Path("/dev/null")
    # the device itself (no symlink involved): fstat tells it is not a regular file
    from harn_mcp_mock.store.cas import read_regular

    with pytest.raises(CassetteIntegrityError, match="character device"):
        read_regular(dev, 10, what="CAS blob null")


def test_verify_lists_hostile_blobs_without_hanging(tmp_path: Path) -> None:
    path, blob = big_cassette(tmp_path)
    to_fifo(blob)
    assert CasStore(cas_dir(path)).verify() == [blob.name]
