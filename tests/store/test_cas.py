from pathlib import Path

import pytest

from harn_mcp_mock.errors import CassetteIntegrityError
from harn_mcp_mock.store import CasStore, canonical_bytes, digest, digest_json
from harn_mcp_mock.store.cas import atomic_write


def test_canonical_bytes_sort_keys_and_drop_spaces() -> None:
    assert canonical_bytes({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == b'{"a":[1,{"c":3,"d":2}],"b":1}'


def test_equal_content_has_equal_digest_whatever_the_key_order() -> None:
    assert digest_json({"a": 1, "b": 2}) == digest_json({"b": 2, "a": 1})
    assert digest_json({"a": 1}) != digest_json({"a": 2})
    assert digest(b"abc") == "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"


def test_identical_payloads_are_stored_once(tmp_path: Path) -> None:
    cas = CasStore(tmp_path / "cas")
    first = cas.put(b"x" * 5000)
    second = cas.put(b"x" * 5000)
    assert first == second
    assert [p.name for p in (tmp_path / "cas").iterdir()] == [first]
    assert cas.get(first) == b"x" * 5000


def test_an_altered_blob_is_refused(tmp_path: Path) -> None:
    cas = CasStore(tmp_path)
    key = cas.put(b"payload")
    (tmp_path / key).write_bytes(b"tampered")
    with pytest.raises(CassetteIntegrityError, match="altered"):
        cas.get(key)
    assert cas.verify() == [key]


def test_a_missing_blob_is_named(tmp_path: Path) -> None:
    with pytest.raises(CassetteIntegrityError, match="missing CAS blob " + "a" * 64):
        CasStore(tmp_path).get("a" * 64)


def test_a_blob_name_cannot_escape_the_store(tmp_path: Path) -> None:
    with pytest.raises(CassetteIntegrityError, match="invalid blob name"):
        CasStore(tmp_path).get("../../etc/passwd")


def test_atomic_write_leaves_no_temp_file_and_a_readable_mode(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]
    assert target.stat().st_mode & 0o044  # not the 0600 of a bare mkstemp


@pytest.mark.parametrize(("sync", "fsyncs"), [(True, 1), (False, 0)])
def test_a_store_without_sync_writes_its_blobs_without_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool, fsyncs: int
) -> None:
    import os

    calls: list[int] = []
    monkeypatch.setattr(os, "fsync", calls.append)
    cas = CasStore(tmp_path / "cas", sync=sync)
    key = cas.put(b"y" * 5000)
    assert len(calls) == fsyncs
    assert cas.get(key) == b"y" * 5000
    assert [p.name for p in (tmp_path / "cas").iterdir()] == [key]  # renamed into place all the same


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_atomic_write_where_it_cannot_is_an_output_error_naming_the_file(tmp_path: Path, where: str) -> None:
    """A --report or --state-out given a folder (or a path under a file) is one line naming it,
    not an internal IsADirectoryError; it is an OSError too, for code that handles failed writes."""
    from harn_mcp_mock.errors import OutputError

    (tmp_path / "out").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    target = tmp_path / ("out" if where == "folder" else "notes.txt/report.json")
    with pytest.raises(OutputError) as caught:
        atomic_write(target, b"{}")
    said = "it is a folder" if where == "folder" else f"{tmp_path / 'notes.txt'} is a file, not a folder"
    assert str(caught.value) == f"{target}: cannot write it: {said}"
    assert caught.value.exit_code == 2
    assert isinstance(caught.value, OSError) and caught.value.errno is not None
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["notes.txt", "out"]


@pytest.mark.parametrize("target", ["out", "notes.txt/report.json", "notes.txt/deep/report.json"])
def test_check_writable_refuses_now_what_atomic_write_would_refuse_at_the_end(
    tmp_path: Path, target: str
) -> None:
    from harn_mcp_mock.errors import OutputError
    from harn_mcp_mock.store.cas import check_writable

    (tmp_path / "out").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    with pytest.raises(OutputError) as early:
        check_writable(None, tmp_path / target)
    with pytest.raises(OutputError) as late:
        atomic_write(tmp_path / target, b"{}")
    assert str(early.value) == str(late.value) and early.value.exit_code == 2


def test_check_writable_passes_a_new_file_in_a_new_folder_and_creates_nothing(tmp_path: Path) -> None:
    from harn_mcp_mock.store.cas import check_writable

    (tmp_path / "old.json").write_text("{}")
    check_writable(tmp_path / "new" / "deeper" / "report.json", tmp_path / "old.json", Path("state.json"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["old.json"]
