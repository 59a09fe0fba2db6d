"""`harn mcp mock show`'s summary of a cassette (harn_mcp_mock/cassette/summary.py)."""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.cassette.model import Cassette, Message, load_cassette
from harn_mcp_mock.cassette.summary import render_summary, summarise

ROOT = Path(__file__).resolve().parents[2]


def test_a_recorded_handshake_is_named_with_its_protocol() -> None:
    summary = summarise(load_cassette(ROOT / "cassettes" / "time.cassette.json"))
    text = render_summary(summary)
    assert summary["handshake"] == "initialize"
    assert f"handshake  initialize (protocol {summary['protocol_version']})" in text
    assert summary["server"]["name"] == "mcp-time"


def test_a_cassette_with_no_answered_handshake_says_so_instead_of_none() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    cassette = Cassette(meta={}, messages=[Message(seq=0, direction="client", message=init)])
    text = render_summary(summarise(cassette))
    assert "handshake  none answered" in text and "None (protocol None)" not in text
    assert "server     ?" in text
