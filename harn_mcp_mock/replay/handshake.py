"""Translating between the two MCP protocol eras: the handshake, and the server's questions.

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

A request's era is its own: a 2026-07-28 client stamps ``_meta["io.modelcontextprotocol/
protocolVersion"]`` on every request (:func:`is_modern_request`). How a server asks the client
(sampling, elicitation, roots) differs between the eras, and the replay engine bridges it with
the helpers below:

* a recorded ``input_required`` result (:func:`input_requests`) is asked of a handshake-era
  client as one ordinary server-to-client request per entry (:func:`as_request`), and the
  client's answers become the ``inputResponses`` of the recorded retry;
* a recorded server-to-client request is asked of a 2026-07-28 client as an ``input_required``
  result with one input request (:func:`input_required`), and the ``inputResponses`` of its
  retry are matched as the recorded answer. Only a request sent while a ``tools/call``,
  ``prompts/get`` or ``resources/read`` was being answered can be asked so; one sent at another
  time (a ``roots/list`` after ``initialized``) has no 2026-07-28 form and is left out;
* a result recorded in the handshake era, which has no ``resultType``, gets
  ``"resultType": "complete"`` for a 2026-07-28 client (:func:`as_complete`), and the result of
  a cacheable method (``tools/list``, ``resources/read``...) the most conservative cache hint,
  ``"ttlMs": 0, "cacheScope": "private"`` (stale at once, never shared: what a handshake-era
  server's answer meant); a 2026-07-28 server MUST send them, and the SDK's client refuses a
  result without them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
MODERN_ERA_START = "2026-07-28"
"""The first protocol version of the stateless (``server/discover``) era."""
PLACEHOLDER_SERVER_INFO = {"name": "harn-mcp-mock replay", "version": "0"}


PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
INPUT_REQUIRED = "input_required"
BRIDGE_STATE_PREFIX = "harn-mcp-mock/replay/"
"""How a ``requestState`` the replay made for a bridged question begins."""


def _is_modern(version: str) -> bool:
    return version >= MODERN_ERA_START  # date-shaped versions sort as dates


def is_modern_request(message: dict[str, Any]) -> bool:
    """Whether ``message`` was sent by a 2026-07-28 (or later) client: its ``_meta`` names it."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    return isinstance(version, str) and _is_modern(version)


def input_requests(response: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], Any] | None:
    """The ``(key, request)`` pairs and the ``requestState`` of a recorded ``input_required``
    response message, or None when it is not one."""
    result = response.get("result")
    if not isinstance(result, dict) or result.get("resultType") != INPUT_REQUIRED:
        return None
    asked = result.get("inputRequests")
    pairs = [(k, v) for k, v in asked.items() if isinstance(v, dict)] if isinstance(asked, dict) else []
    return pairs, result.get("requestState")


def as_request(input_request: dict[str, Any], request_id: Any) -> dict[str, Any]:
    """An input request (``{"method", "params"}``) as a handshake-era JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": request_id, **input_request}


def input_required(request: dict[str, Any], key: str, state: str) -> dict[str, Any]:
    """A recorded server-to-client request as the ``input_required`` result of a 2026-07-28 server."""
    asked = {k: v for k, v in request.items() if k in ("method", "params")}
    return {"resultType": INPUT_REQUIRED, "inputRequests": {key: asked}, "requestState": state}


INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""Methods a 2026-07-28 server may answer ``input_required`` (mcp_types' list)."""
CACHEABLE_METHODS = frozenset(
    {
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "tools/list",
    }
)
"""Methods whose 2026-07-28 results carry ``ttlMs`` and ``cacheScope`` (mcp_types' list)."""


def as_complete(response: dict[str, Any], method: str) -> dict[str, Any]:
    """A handshake-era response message to ``method`` with the fields a 2026-07-28 result must
    have (``resultType``; ``ttlMs`` and ``cacheScope`` for a cacheable method) added."""
    result = response.get("result")
    if not isinstance(result, dict):
        return response
    added: dict[str, Any] = {"resultType": "complete"}
    if method in CACHEABLE_METHODS:
        added.update(ttlMs=0, cacheScope="private")
    missing = {k: v for k, v in added.items() if k not in result}
    return {**response, "result": {**result, **missing}} if missing else response


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
