"""upstream/http.py against a real Streamable HTTP server (the MCP SDK's, in a thread)."""

from __future__ import annotations

import orjson
import pytest

from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.jsonrpc.frames import CLIENT, parse_frame
from harn_mcp_mock.upstream import HttpUpstream, open_upstream, request_ids
from tests.http.conftest import INIT
from tests.http.test_record_proxy import TOKEN, serve_upstream


def _exchange(upstream: HttpUpstream, message: dict[str, object], seq: int | None = None) -> list[object]:
    body = orjson.dumps(message)
    frames = upstream.exchange(body, request_ids(parse_frame(body, CLIENT)), 30.0, seq=seq)
    return [f.obj for f in frames]


def test_an_http_upstream_keeps_the_session_version_and_notes_each_exchange() -> None:
    with serve_upstream() as url:
        upstream = open_upstream(url, headers={"Authorization": f"Bearer {TOKEN}"})
        assert isinstance(upstream, HttpUpstream)
        [init] = _exchange(upstream, INIT, seq=0)
        assert upstream.session is not None and upstream.version == INIT["params"]["protocolVersion"]  # type: ignore[index]
        upstream.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', seq=2)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
        [answer] = _exchange(upstream, call, seq=3)
        assert answer["result"]["content"][0]["text"] == "5"  # type: ignore[index]
        assert upstream.close(5.0) == {"code": None, "signal": None, "reason": "client-eof"}
    assert [(n["method"], n["seq"], n["status"]) for n in upstream.http] == [
        ("POST", 0, 200),
        ("POST", 2, 202),
        ("POST", 3, 200),
        ("DELETE", None, 200),
    ]
    assert init["result"]["serverInfo"]["name"] == "upstream"  # type: ignore[index]


def test_an_unreachable_http_upstream_is_one_server_error_naming_it() -> None:
    with serve_upstream() as url:
        pass  # the server is gone: its port refuses
    upstream = open_upstream(url, timeout=5.0)
    with pytest.raises(ServerError, match=f"cannot reach the live server {url}"):
        _exchange(upstream, INIT)  # type: ignore[arg-type]
    upstream.close(1.0)  # type: ignore[union-attr]
