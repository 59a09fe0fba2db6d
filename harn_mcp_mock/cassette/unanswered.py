"""Client requests a recording holds with no answer, and how the recorded session ended.

A server that crashed or exited before answering (or an HTTP stream that ended early) leaves
client requests with no response in the cassette. ``record`` and ``show`` list them, and replay
answers them as the server's end: a JSON-RPC error (:data:`RECORDED_UNANSWERED`) and then the
session closes. A request the client itself cancelled (``notifications/cancelled``) owes no
answer and is not listed.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from harn_mcp_mock._record import record
from harn_mcp_mock.cassette.model import Cassette

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
class Unanswered:
    seq: int
    method: str
    id: Any
    tool: str | None = None
    """The tool's name when the request is a ``tools/call``."""

    def describe(self) -> str:
        return describe_unanswered(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"seq": self.seq, "method": self.method, "id": self.id}
        if self.tool is not None:
            entry["tool"] = self.tool
        return entry


def describe_unanswered(entry: Mapping[str, Any]) -> str:
    """``tools/call crash (id 3)`` for an entry of :meth:`Unanswered.to_dict`."""
    tool = entry.get("tool")
    what = f"{entry.get('method')} {tool}" if tool is not None else str(entry.get("method"))
    return f"{what} (id {orjson.dumps(entry.get('id')).decode()})"


def unanswered_note(cassette: Cassette) -> str:
    """What record's summary line adds: '' when every request was answered."""
    found = unanswered_requests(cassette)
    if not found:
        return ""
    listed = ", ".join(u.describe() for u in found[:3]) + (", ..." if len(found) > 3 else "")
    return f"; {len(found)} request(s) recorded without an answer: {listed}"


def _key(seq: int, msg_id: Any) -> tuple[int, bytes]:
    return seq, orjson.dumps(msg_id)


def unanswered_requests(cassette: Cassette) -> list[Unanswered]:
    """Every client request of ``cassette`` no server message answers, in recorded order."""
    answered: set[tuple[int, bytes]] = set()
    cancelled: set[bytes] = set()
    for msg in cassette.messages:
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        if msg.direction == "server":
            refs = msg.reply_to if isinstance(msg.reply_to, list) else [msg.reply_to]
            for item, seq in zip(items, refs, strict=False):
                if isinstance(seq, int) and isinstance(item, dict):
                    answered.add(_key(seq, item.get("id")))
            continue
        for item in items:
            if isinstance(item, dict) and item.get("method") == "notifications/cancelled":
                params = item.get("params")
                if isinstance(params, dict) and "requestId" in params:
                    cancelled.add(orjson.dumps(params["requestId"]))
    found: list[Unanswered] = []
    for msg in cassette.messages:
        if msg.direction != "client" or msg.invalid is not None:
            continue
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        for item in items:
            if not (isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item):
                continue
            if _key(msg.seq, item["id"]) in answered or orjson.dumps(item["id"]) in cancelled:
                continue
            params = item.get("params")
            tool = params.get("name") if item["method"] == "tools/call" and isinstance(params, dict) else None
            found.append(
                Unanswered(msg.seq, item["method"], item["id"], str(tool) if tool is not None else None)
            )
    return found


def how_it_ended(exit_info: Any) -> str:
    """The end of a recorded session in words, from the cassette's ``exit`` metadata."""
    info = exit_info if isinstance(exit_info, dict) else {}
    code, signame, reason = info.get("code"), info.get("signal"), info.get("reason")
    if signame:
        server = f"the server was ended by {signame}"
    elif isinstance(code, int):
        server = f"the server exited with code {code}"
    else:
        return f"the recording ended ({reason or 'no exit recorded'})"
    return server if reason in (None, "server-exit") else f"{server} ({reason})"


def unanswered_error_text(exit_info: Any) -> str:
    """Why replay answers with :data:`RECORDED_UNANSWERED` (the session then ends)."""
    return f"recorded without an answer: {how_it_ended(exit_info)} before answering; the session ends here"
