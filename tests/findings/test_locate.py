"""The JSON pointer -> line/column locator: every value of any document is found where a JSON
parser reads it, escapes in keys and strings honoured, a missing pointer falls back to its
deepest existing parent, and a cassette's CAS blobs are located in their own files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.findings.locate import CassetteLocator, JsonText
from harn_mcp_mock.store.pointer import escape

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def pointers(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    out = [(pointer, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            out += pointers(item, f"{pointer}/{escape(key)}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += pointers(item, f"{pointer}/{i}")
    return out


def offset_of(text: str, line: int, column: int) -> int:
    return sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + column - 1


@settings(max_examples=150, deadline=None)
@given(doc=_json, indent=st.sampled_from([None, 1, 2]), ascii_only=st.booleans())
def test_every_pointer_is_located_where_a_parser_reads_its_value(
    doc: Any, indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    located = JsonText(text)
    for pointer, value in pointers(doc):
        offset, exact = located.offset(pointer)
        assert exact, pointer
        assert json.JSONDecoder().raw_decode(text, offset)[0] == value
        line, column = located.line_column(offset)
        assert offset_of(text, line, column) == offset


@settings(max_examples=150, deadline=None)
@given(value=st.text(min_size=1), ascii_only=st.booleans(), data=st.data())
def test_an_index_inside_a_string_maps_to_its_raw_character_through_escapes(
    value: str, ascii_only: bool, data: st.DataObject
) -> None:
    text = json.dumps({'k"ey': value}, ensure_ascii=ascii_only)
    located = JsonText(text)
    start, exact = located.offset('/k"ey')
    assert exact
    index = data.draw(st.integers(0, len(value) - 1))
    raw = located.inside(start, index)
    # the raw text from that offset, read as the rest of the string, is value[index:]
    assert json.loads('"' + text[raw : located._string_end(start)]) == value[index:]


def test_keys_with_escapes_slashes_and_tildes_and_the_last_duplicate_win() -> None:
    text = '{\n  "a/b": {"m~n": [10, {"x": "\\"}\\\\"}]},\n  "dup": 1,\n  "dup": [2]\n}'
    located = JsonText(text)
    offset, exact = located.offset("/a~1b/m~0n/1/x")
    assert exact and text[offset:].startswith('"\\"}')
    offset, exact = located.offset("/dup")
    assert exact and text[offset] == "[" and located.line_column(offset) == (4, 10)


def test_a_missing_pointer_gives_its_deepest_existing_parent() -> None:
    text = '{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}'
    located = JsonText(text)
    offset, exact = located.offset("/tools/0/inputSchema/properties/x")
    assert not exact and text[offset:].startswith('{"type"')
    assert located.offset("/tools/7") == (text.index("["), False)
    assert JsonText("not json").offset("/a") == (0, False)
    assert JsonText("").line_column(0) == (1, 1)


def test_crlf_and_lone_cr_end_lines() -> None:
    located = JsonText('{\r\n"a":\r1}')
    offset, _ = located.offset("/a")
    assert located.line_column(offset) == (3, 1)


def test_a_cassette_message_in_a_cas_blob_is_located_in_the_blob_file(tmp_path: Path) -> None:
    from harn_mcp_mock.cassette.model import INLINE_THRESHOLD
    from tests.lint.poisoned import tool, tools, write

    big = "x " * INLINE_THRESHOLD
    path = write(tmp_path / "b.cassette.json", tools(tool("q", "Returns a quote.")),
                 {"content": [{"type": "text", "text": "hi"}, {"type": "text", "text": big}]})  # fmt: skip
    locator = CassetteLocator(path, "b.cassette.json")
    where = locator.position("/messages/5/message/result/content/1/text", index=3)
    assert where.exact and where.file.startswith("b.cassette.json.cas/")
    blob = (tmp_path / where.file).read_text()
    offset = offset_of(blob, where.line, where.column)
    assert json.loads('"' + blob[offset : offset + 4] + '"') == big[3:7]
    inline = locator.position("/messages/3/message/result/tools/0/description")
    text = path.read_text()
    assert inline.file == "b.cassette.json"
    assert text[offset_of(text, inline.line, inline.column) :].startswith('"Returns a quote."')
