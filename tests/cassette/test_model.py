from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harn_mcp_mock.cassette import Cassette, Message, load_cassette, save_cassette
from harn_mcp_mock.cassette.model import cas_dir
from harn_mcp_mock.errors import (
    CassetteError,
    CassetteFormatError,
    CassetteIntegrityError,
    CassetteVersionError,
)


def _cassette(big: bool = False) -> Cassette:
    text = "x" * 6000 if big else "hello"
    return Cassette(
        [
            Message(
                0, "client", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}
            ),
            Message(
                1,
                "server",
                {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}},
                reply_to=0,
                latency_ms=1.5,
            ),
            Message(2, "client", invalid="not JSON", raw="garbage"),
        ],
        {
            "transport": "stdio",
            "command": ["srv"],
            "exit": {"code": 0, "signal": None, "reason": "client-eof"},
        },
    )


def test_a_saved_cassette_loads_back_equal(tmp_path: Path) -> None:
    path = save_cassette(_cassette(), tmp_path / "a.cassette.json")
    loaded = load_cassette(path)
    assert loaded.messages == _cassette().messages
    assert loaded.meta == _cassette().meta
    assert [m.kind for m in loaded.messages] == ["request", "response", "invalid"]
    assert loaded.responses_by_request()[0].seq == 1


def test_large_payloads_spill_into_the_cas_sidecar_and_come_back(tmp_path: Path) -> None:
    path = save_cassette(_cassette(big=True), tmp_path / "a.cassette.json")
    doc = orjson.loads(path.read_bytes())
    assert "blob" in doc["messages"][1] and "message" not in doc["messages"][1]
    assert len(list(cas_dir(path).iterdir())) == 1
    assert load_cassette(path).messages[1].message["result"]["content"][0]["text"] == "x" * 6000


def test_the_file_is_indented_with_our_keys_first_and_message_key_order_kept(tmp_path: Path) -> None:
    path = save_cassette(_cassette(), tmp_path / "a.cassette.json")
    text = path.read_text()
    assert text.startswith('{\n  "format": "harn-mcp-mock/cassette",\n  "version": 1,')
    assert text.index('"jsonrpc"') < text.index('"id"') < text.index('"method"')


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "c.cassette.json"
    path.write_bytes(orjson.dumps(doc) if not isinstance(doc, bytes) else doc)
    return path


def test_a_newer_format_version_is_refused_with_one_line_naming_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, {"format": "harn-mcp-mock/cassette", "version": 99, "messages": []})
    with pytest.raises(CassetteVersionError) as info:
        load_cassette(path)
    assert str(info.value).startswith(f"{path}:version: written by cassette format version 99")
    assert "\n" not in str(info.value)


def test_a_truncated_cassette_is_reported_with_line_and_column(tmp_path: Path) -> None:
    full = save_cassette(_cassette(), tmp_path / "a.cassette.json").read_bytes()
    path = _write(tmp_path, full[: len(full) // 2])
    with pytest.raises(
        CassetteFormatError, match=r"c\.cassette\.json:\d+:\d+: not valid JSON \(truncated\?\)"
    ):
        load_cassette(path)


def test_a_missing_blob_names_the_message(tmp_path: Path) -> None:
    path = save_cassette(_cassette(big=True), tmp_path / "a.cassette.json")
    for blob in cas_dir(path).iterdir():
        blob.unlink()
    with pytest.raises(CassetteIntegrityError, match=r"messages\[1\]\.blob: missing CAS blob"):
        load_cassette(path)


def test_an_altered_blob_is_refused(tmp_path: Path) -> None:
    path = save_cassette(_cassette(big=True), tmp_path / "a.cassette.json")
    for blob in cas_dir(path).iterdir():
        blob.write_bytes(blob.read_bytes().replace(b"x", b"y"))
    with pytest.raises(CassetteIntegrityError, match="altered"):
        load_cassette(path)


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"format": "other", "version": 1, "messages": []}, "format"),
        ({"format": "harn-mcp-mock/cassette", "version": "1", "messages": []}, "version"),
        ({"format": "harn-mcp-mock/cassette", "version": 1, "messages": {}}, "messages"),
        (
            {"format": "harn-mcp-mock/cassette", "version": 1, "messages": [{"seq": 0, "dir": "up"}]},
            r"messages\[0\]\.dir",
        ),
        (
            {
                "format": "harn-mcp-mock/cassette",
                "version": 1,
                "messages": [{"seq": 0, "dir": "client", "message": {"x": 1}}],
            },
            r"messages\[0\]\.message",
        ),
        (
            {
                "format": "harn-mcp-mock/cassette",
                "version": 1,
                "messages": [
                    {"seq": 0, "dir": "client", "blob": {"blake3": "../x", "bytes": 1, "as": "json"}}
                ],
            },
            r"messages\[0\]\.blob",
        ),
        (
            {
                "format": "harn-mcp-mock/cassette",
                "version": 1,
                "messages": [{"seq": 0, "dir": "client", "mesage": {}}],
            },
            r"messages\[0\]\.mesage",
        ),
    ],
)
def test_malformed_cassettes_name_the_field(tmp_path: Path, doc: Any, where: str) -> None:
    with pytest.raises(CassetteError, match=rf"c\.cassette\.json:{where}: "):
        load_cassette(_write(tmp_path, doc))


def test_a_missing_cassette_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        load_cassette(tmp_path / "nope.cassette.json")


def test_the_published_schema_accepts_what_we_write(tmp_path: Path) -> None:
    import jsonschema

    schema = orjson.loads((Path(__file__).parents[2] / "harn_mcp_mock/cassette/schema.json").read_bytes())
    doc = orjson.loads(save_cassette(_cassette(big=True), tmp_path / "a.cassette.json").read_bytes())
    jsonschema.validate(doc, schema)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.binary(max_size=300)
    | st.builds(
        lambda d: orjson.dumps(d),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
            lambda kids: (
                st.lists(kids, max_size=3)
                | st.dictionaries(
                    st.sampled_from(
                        [
                            "format",
                            "version",
                            "messages",
                            "seq",
                            "dir",
                            "message",
                            "blob",
                            "invalid",
                            "raw",
                            "reply_to",
                            "id",
                            "method",
                        ]
                    ),
                    kids,
                    max_size=4,
                )
            ),
            max_leaves=12,
        ),
    )
)
def test_the_loader_never_crashes_on_arbitrary_input(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.cassette.json"
    path.write_bytes(data)
    try:
        load_cassette(path)
    except CassetteError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_loader_never_crashes_on_a_mutated_valid_cassette(tmp_path: Path, data: st.DataObject) -> None:
    good = save_cassette(_cassette(), tmp_path / "base.cassette.json").read_bytes()
    pos = data.draw(st.integers(0, len(good) - 1))
    mutated = good[:pos] + data.draw(st.binary(min_size=0, max_size=3)) + good[pos + 1 :]
    path = tmp_path / "m.cassette.json"
    path.write_bytes(mutated)
    try:
        load_cassette(path)
    except CassetteError:
        pass
