"""``open_record``: the recording engine over a Streamable HTTP upstream (a real SDK server)."""

from pathlib import Path

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.session.open import open_record
from tests.http.conftest import INIT
from tests.http.test_record_proxy import TOKEN, serve_upstream


def test_a_url_is_recorded_through_the_http_upstream_with_its_http_facts(tmp_path: Path) -> None:
    cassette = tmp_path / "http.cassette.json"
    with serve_upstream() as url:
        engine = open_record(url, cassette, headers=[f"Authorization:Bearer {TOKEN}"], timeout=30.0)
        [init] = engine.receive(INIT)
        assert init.message["result"]["serverInfo"]["name"] == "upstream"
        assert engine.receive({"jsonrpc": "2.0", "method": "notifications/initialized"}) == []
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
        [answer] = engine.receive(call)
        assert answer.message["result"]["content"][0]["text"] == "5"
        recorded = engine.finish()
    assert recorded is not None
    on_disk = load_cassette(cassette)
    assert [m.method for m in on_disk.messages if m.direction == "client"] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert on_disk.meta["transport"] == "http"
    assert TOKEN not in cassette.read_text()  # the header's value is a secret to the redactor
    notes = on_disk.meta["http"]
    assert any(n["method"] == "GET" for n in notes)  # the push side: the upstream's GET stream, asked for
    assert [(n["method"], n["seq"], n["status"]) for n in notes if n["method"] != "GET"] == [
        ("POST", 0, 200),
        ("POST", 2, 202),
        ("POST", 3, 200),
        ("DELETE", None, 200),
    ]
