"""Translating between the two MCP handshakes when a cassette holds only the other one.

A cassette recorded in the 2026-07-28 era holds a ``server/discover`` answer and no
``initialize``; a classic client (``initialize``, protocol 2025-11-25 or older) replaying it would
miss its very first request. :func:`initialize_from_discover` makes the ``initialize`` result
from the recorded discover result:

* ``serverInfo``: the discover result's ``_meta["io.modelcontextprotocol/serverInfo"]`` (where a
  2026-07-28 server names itself), else the cassette's ``server.serverInfo``, else the
  placeholder ``{"name": "harn-mcp-mock replay", "version": "0"}`` (it is required);
* ``capabilities`` and ``instructions``: copied as recorded;
* ``protocolVersion``: the client's requested version if the recorded ``supportedVersions`` list
  it; else the newest handshake-era version (not a 2026 one) they list; else the client's own
  requested version. A server of the official SDKs lists only its 2026 versions in
  ``supportedVersions`` although it answers ``initialize`` too, so echoing the client's version
  is what the recorded server would have done; a 2026 version would make the client disconnect.

The other way round needs no translation: a ``server/discover`` against a cassette without one
is answered -32601 (Method not found), as a classic server does, and every client of the
official SDKs then falls back to ``initialize``, which the cassette holds. (An initialize result
tells nothing of the server's 2026 support, so a synthesised discover answer could only list the
recorded version, which makes those clients fall back all the same.)
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
MODERN_ERA_START = "2026-07-28"
"""The first protocol version of the stateless (``server/discover``) era."""
PLACEHOLDER_SERVER_INFO = {"name": "harn-mcp-mock replay", "version": "0"}


def _is_modern(version: str) -> bool:
    return version >= MODERN_ERA_START  # date-shaped versions sort as dates


def initialize_from_discover(
    recorded: dict[str, Any] | None, params: Any, server: dict[str, Any]
) -> dict[str, Any] | None:
    """The ``initialize`` result made from a recorded ``server/discover`` response message, or
    None when that response holds no result (an error answer)."""
    result = recorded.get("result") if isinstance(recorded, dict) else None
    if not isinstance(result, dict):
        return None
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    supported = [v for v in result.get("supportedVersions") or [] if isinstance(v, str)]
    handshake_era = [v for v in supported if not _is_modern(v)]
    if isinstance(asked, str) and asked in supported:
        version = asked
    elif handshake_era:
        version = max(handshake_era)
    elif isinstance(asked, str):
        version = asked
    else:
        version = supported[0] if supported else ""
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_META) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = server.get("serverInfo")
    out: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {},
        "serverInfo": info if isinstance(info, dict) else dict(PLACEHOLDER_SERVER_INFO),
    }
    if isinstance(result.get("instructions"), str):
        out["instructions"] = result["instructions"]
    return out
