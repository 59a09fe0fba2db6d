"""Frame: one newline-delimited JSON-RPC message as seen on the wire.

A frame keeps the exact bytes it arrived as (``raw``) beside the parsed value, so a proxy can
forward bytes untouched while the recorder works on structure. A line that is not JSON, or
JSON that is not a JSON-RPC message, becomes an ``invalid`` frame: never an exception.
"""

from __future__ import annotations

import orjson

from harn_mcp_mock import deepjson  # noqa: F401  (makes recursion room for MAX_DEPTH-deep messages)
from harn_mcp_mock._record import record

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any, Literal

CLIENT = "client"
"""The frame was sent by the client (client -> server)."""
SERVER = "server"
"""The frame was sent by the server (server -> client)."""

if TYPE_CHECKING:
    Kind = Literal["request", "notification", "response", "error", "batch", "invalid"]
else:
    Kind = str


@record
class Frame:
    direction: str
    kind: Kind
    raw: bytes
    obj: Any = None
    id: Any = None
    method: str | None = None
    problem: str | None = None
    """Why an ``invalid`` frame is invalid (never quotes the line: it may hold a secret)."""

    @property
    def is_message(self) -> bool:
        return self.kind != "invalid"


def classify(obj: Any) -> tuple[Kind, Any, str | None, str | None]:
    """(kind, id, method, problem) of a parsed JSON value."""
    if isinstance(obj, dict):
        method = obj.get("method")
        if isinstance(method, str):
            if "id" in obj:
                return "request", obj["id"], method, None
            return "notification", None, method, None
        if "id" in obj:
            if "error" in obj:
                return "error", obj["id"], None, None
            if "result" in obj:
                return "response", obj["id"], None, None
        return (
            "invalid",
            obj.get("id"),
            None,
            "JSON object is not a JSON-RPC request, notification or response",
        )
    if isinstance(obj, list):
        if not obj:
            return "invalid", None, None, "empty JSON-RPC batch"
        if all(isinstance(item, dict) for item in obj):
            return "batch", None, None, None
        return "invalid", None, None, "JSON-RPC batch holds a non-object element"
    return "invalid", None, None, f"JSON {type(obj).__name__} is not a JSON-RPC message"


def parse_frame(raw: bytes, direction: str) -> Frame:
    """Parse one line (without its newline) into a Frame; bad input gives an ``invalid`` Frame."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        # orjson's message names the position only ("... line 1 column 5 (char 4)"), never content.
        return Frame(direction, "invalid", raw, problem=f"not JSON: {exc}")
    kind, msg_id, method, problem = classify(obj)
    return Frame(direction, kind, raw, obj, msg_id, method, problem)


def batch_items(frame: Frame) -> list[Frame]:
    """The member frames of a batch (each classified on its own), or ``[frame]``."""
    if frame.kind != "batch":
        return [frame]
    items: list[Frame] = []
    for obj in frame.obj:
        kind, msg_id, method, problem = classify(obj)
        items.append(Frame(frame.direction, kind, b"", obj, msg_id, method, problem))
    return items
