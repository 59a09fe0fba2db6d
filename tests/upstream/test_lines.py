"""upstream/lines.py: a Streamable HTTP server (the MCP SDK's, in a thread) read as one stream
of lines, the way new_episodes reads a child's stdout."""

from __future__ import annotations

import orjson

from harn_mcp_mock.upstream import open_upstream
from harn_mcp_mock.upstream.lines import LineUpstream
from tests.http.conftest import INIT
from tests.http.test_record_proxy import TOKEN, serve_upstream

WAIT = 30.0


def read_message(live: LineUpstream) -> dict[str, object]:
    """The next complete message on the pipe (bounded: nothing within WAIT fails)."""
    while True:
        chunk = live.read_chunk(WAIT)
        assert chunk, "nothing came on the pipe"
        frames = live.frames(chunk)
        if frames:
            (frame,) = frames
            return dict(frame.obj)


def test_requests_come_back_as_lines_and_the_end_of_the_session_ends_the_pipe() -> None:
    with serve_upstream() as url:
        live = LineUpstream(open_upstream(url, headers={"Authorization": f"Bearer {TOKEN}"}), timeout=WAIT)
        body = orjson.dumps(INIT)
        [init] = [f.obj for f in live.exchange(body, {orjson.dumps(INIT["id"])}, WAIT)]
        assert init["result"]["serverInfo"]["name"] == "upstream"
        live.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
        live.send(orjson.dumps(call))  # exchanged in a thread of its own; the answer is a line
        answer = read_message(live)
        assert answer["id"] == 7 and answer["result"]["content"][0]["text"] == "5"  # type: ignore[index]
        live.close_input()
        assert live.read_chunk(WAIT) == b""  # the pipe ends as a child's stdout does
        assert live.exit == {"code": None, "signal": None, "reason": "client-eof"}
        live.close_output()


def test_a_request_the_server_cannot_answer_gets_an_error_line() -> None:
    with serve_upstream() as url:
        pass  # gone: its port refuses
    live = LineUpstream(open_upstream(url, timeout=5.0), timeout=5.0)
    live.send(b'{"jsonrpc":"2.0","id":"a","method":"tools/list"}')
    error = read_message(live)
    assert error["id"] == "a"
    assert f"cannot reach the live server {url}" in error["error"]["message"]  # type: ignore[index]
    live.kill()
    live.close_output()
