"""One self-contained HTML page: the shell, the inlined stylesheet and script, the data as JSON.

No templating library and no chart library: the page is one static shell and a JSON blob that a
small script (``assets/report.js``) draws, with inline SVG for the pass^k chart. Every value from
a cassette, a tape or a report reaches the page as JSON and is put in the DOM as text, never as
markup, so recorded tool output cannot inject anything. Nothing is loaded from the network: the
file opens from disk and in a CI artifact viewer.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock._version import __version__

__all__ = ["KINDS", "render_page"]

KINDS = ("run", "verify", "cassette")
_ASSETS = Path(__file__).with_name("assets")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element early (``<`` escaped as ``\\u003c``)."""
    text = orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_page(data: dict[str, Any]) -> str:
    """The page for ``data`` (``data["kind"]`` in :data:`KINDS`, ``data["title"]``)."""
    if data.get("kind") not in KINDS:
        raise ValueError(f"unknown report kind {data.get('kind')!r}")
    title = escape(str(data.get("title", "harn-mcp-mock report")))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="harn-mcp-mock {escape(__version__)}">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>\n{_asset('report.css')}</style>\n</head>\n<body>\n"
        '<main id="app"></main>\n'
        f'<script type="application/json" id="harn-data">{_json_for_script(data)}</script>\n'
        f"<script>\n{_asset('report.js')}</script>\n</body></html>\n"
    )
