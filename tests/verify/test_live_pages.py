"""`verify` and paginated lists a recording did not read to the end (its last page has a nextCursor).

Live, verify reads the rest of such a list from the live server itself (with the live server's
cursors), compares the whole list and says so; an item the new server moved to a later page is
not "removed", an item the recording never saw is not "added". A candidate cassette cut short
gives one warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.verify.run import verify

SERVER = str(Path(__file__).parents[1] / "servers" / "paged_server.py")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": {}},
]


def server(names: str) -> list[str]:
    return [sys.executable, SERVER, names, "2"]


def record_first_page(cassette: Path, names: str) -> Path:
    """A session that reads only the first page of ``resources/list`` (2 of ``names``)."""
    subprocess.run(
        [*HARN, "record", "--quiet", "--cassette", str(cassette), "--", *server(names)],
        input="".join(json.dumps(m) + "\n" for m in SESSION),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return cassette


@pytest.fixture
def first_page(tmp_path: Path) -> Path:
    return record_first_page(tmp_path / "base.cassette.json", "a,b,c,d,e")


def test_an_item_moved_to_a_later_page_is_not_removed_and_the_report_says_the_rest_was_read(
    first_page: Path,
) -> None:
    events: list[str] = []
    result = verify(first_page, command=server("z,a,b,c,d,e"), on_event=events.append)
    # Page 1 is now [z, a]: b is on page 2, which the recording never asked for.
    assert result.findings == []
    assert result.compared["list_pages_read_live"] == 2
    assert [e for e in events if "resources/list" in e] == [
        "warning: the recording did not read resources/list to the end (its last page has a "
        "nextCursor): read the live server's remaining 2 page(s); items on the pages it never read "
        "cannot be compared, so a removal there goes unseen; record a session that reads every page"
    ]


def test_an_item_the_recording_saw_is_still_removed_when_it_is_on_no_page(
    first_page: Path, tmp_path: Path
) -> None:
    result = verify(first_page, command=server("z,a,c,d,e"))
    assert [(f.rule, f.tool) for f in result.findings] == [("R1", "test://b")]
    # A list the recording read to the end is not read again.
    whole = record_first_page(tmp_path / "whole.cassette.json", "a,b")
    result = verify(whole, command=server("a,b"))
    assert (result.findings, "list_pages_read_live" in result.compared) == ([], False)


def test_a_candidate_cassette_cut_short_warns_once(first_page: Path, tmp_path: Path) -> None:
    cut = record_first_page(tmp_path / "cut.cassette.json", "a,c,d,e")
    events: list[str] = []
    result = verify(first_page, candidate=cut, on_event=events.append)
    assert [(f.rule, f.tool) for f in result.findings] == [("R1", "test://b")]
    assert len(events) == 1
    assert events[0].startswith(f"warning: the candidate {cut} did not read resources/list to the end")


def test_a_recording_cut_short_warns_even_when_the_live_list_has_no_more_pages(first_page: Path) -> None:
    # The new server's whole list fits on one page: nothing more to read live, yet the recording
    # never saw the old server's pages 2-3, whose removals verify cannot tell: it says so.
    events: list[str] = []
    result = verify(first_page, command=server("a,b"), on_event=events.append)
    assert result.findings == []
    assert [e for e in events if "resources/list" in e] == [
        "warning: the recording did not read resources/list to the end (its last page has a "
        "nextCursor): items on the pages it never read cannot be compared, so a removal there goes "
        "unseen; record a session that reads every page"
    ]
