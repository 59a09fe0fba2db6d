from hypothesis import given
from hypothesis import strategies as st

from harn_mcp_mock.jsonrpc import CLIENT, LineSplitter, parse_frame
from harn_mcp_mock.jsonrpc.frames import batch_items


def test_lines_split_across_chunks_are_joined() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b':1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert splitter.flush() == b'{"c"'
    assert splitter.flush() is None


def test_blank_lines_and_crlf_are_tolerated() -> None:
    assert LineSplitter().feed(b'\n\r\n{"a":1}\r\n  \n') == [b'{"a":1}']


@given(
    st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b and b.strip()), max_size=20), st.data()
)
def test_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    splitter = LineSplitter()
    got: list[bytes] = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        got += splitter.feed(stream[prev:cut])
        prev = cut
    assert got == [line.rstrip(b"\r") for line in lines]


def test_frames_are_classified() -> None:
    assert parse_frame(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', CLIENT).kind == "request"
    assert parse_frame(b'{"jsonrpc":"2.0","method":"notifications/x"}', CLIENT).kind == "notification"
    assert parse_frame(b'{"jsonrpc":"2.0","id":1,"result":{}}', CLIENT).kind == "response"
    assert parse_frame(b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}', CLIENT).kind == "error"
    batch = parse_frame(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]', CLIENT)
    assert batch.kind == "batch"
    assert [f.kind for f in batch_items(batch)] == ["request", "notification"]


def test_bad_input_becomes_an_invalid_frame_that_never_quotes_the_line() -> None:
    for raw in (b"password=hunter2", b"[]", b"42", b'{"jsonrpc":"2.0"}', b"[1,2]", b"\xff\xfe"):
        frame = parse_frame(raw, CLIENT)
        assert frame.kind == "invalid"
        assert frame.problem
        assert "hunter2" not in frame.problem
