"""Sessions and their messages: ``POST /v1/sessions``, ``.../messages``, ``.../close`` and reads.

A session is ACTIVE until closed (``session.closed``); a CLOSED or FAILED session takes no new
message or task (409 ``conflict``). Messages keep their order in the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harn_mcp_mock.agents.envelopes import ErrorEnvelope, ProtocolError
from harn_mcp_mock.agents.lifecycle import is_terminal
from harn_mcp_mock.agents.server.ledger import DEFAULT_WORKSPACE, Created, Ledger, event_page, invalid

__all__ = ["ROLES", "VISIBILITIES", "Sessions"]

ROLES = frozenset({"user", "assistant", "system", "tool", "agent"})
VISIBILITIES = frozenset({"public", "internal", "receipt_only"})


class Sessions:
    """Sessions and messages over one :class:`Ledger`."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    # -- building blocks (inside a caller's transaction) -------------------------------------

    def open(
        self, actor: str, workspace_id: str, now: str, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A new ACTIVE session and its ``session.created`` event."""
        store = self.ledger.store
        session_id, ord_ = store.new_id("sess")
        session = {
            "id": session_id,
            "object": "session",
            "created_at": now,
            "updated_at": now,
            "workspace_id": workspace_id,
            "state": "ACTIVE",
            "transcript": {"messages_url": f"/v1/sessions/{session_id}/messages"},
            "metadata": metadata or {},
        }
        store.put(session, ord=ord_, owner=actor)
        self.ledger.emit("session.created", {"object": "session", "id": session_id}, {}, task_id=None)
        return session

    def add_message(
        self,
        actor: str,
        session: Mapping[str, Any],
        role: str,
        parts: list[dict[str, Any]],
        task_id: str | None,
        now: str,
    ) -> dict[str, Any]:
        """Store one message at the end of ``session``'s transcript (no event)."""
        store = self.ledger.store
        message_id, ord_ = store.new_id("msg")
        message = {
            "id": message_id,
            "object": "message",
            "created_at": now,
            "role": role,
            "parts": parts,
            "session_id": session["id"],
            **({"task_id": task_id} if task_id is not None else {}),
            "metadata": {},
        }
        store.put(message, ord=ord_, owner=actor)
        return message

    @staticmethod
    def check_open(session: Mapping[str, Any]) -> None:
        """409 ``conflict`` when the session takes no new messages or tasks."""
        if session["state"] in ("CLOSED", "FAILED"):
            raise ProtocolError(
                ErrorEnvelope.of(
                    "conflict",
                    f"session {session['id']} is {session['state']}: it takes no new messages or tasks",
                    param="session_id",
                    details={"state": session["state"]},
                )
            )

    # -- routes ------------------------------------------------------------------------------

    def create(self, actor: str, body: Any, idempotency_key: str | None = None) -> Created:
        """``POST /v1/sessions``: an ACTIVE session (``session.created``)."""
        if not isinstance(body, Mapping):
            raise invalid("the request body must be a JSON object", "body")
        workspace_id = body.get("workspace_id", DEFAULT_WORKSPACE)
        if not isinstance(workspace_id, str) or not workspace_id:
            raise invalid("workspace_id must be a non-empty string", "workspace_id")
        metadata = body.get("metadata", {})
        if not isinstance(metadata, Mapping):
            raise invalid("metadata must be an object", "metadata")
        persona_id = body.get("persona_id")
        if persona_id is not None and not isinstance(persona_id, str):
            raise invalid("persona_id must be a string", "persona_id")

        def create() -> tuple[int, dict[str, Any]]:
            session = self.open(actor, workspace_id, self.ledger.now(), dict(metadata))
            if persona_id is not None:
                session["persona_id"] = persona_id
                self.ledger.put(session, actor)
            return 201, session

        return self.ledger.idempotent(actor, workspace_id, "POST /v1/sessions", idempotency_key, body, create)

    def append(self, actor: str, session_id: str, body: Any, idempotency_key: str | None = None) -> Created:
        """``POST /v1/sessions/{id}/messages``: append one message, in order, to an open session.

        The body is ``{"role": "user", "parts": [...]}`` or ``{"text": "..."}`` (a user text part)."""
        if not isinstance(body, Mapping):
            raise invalid("the request body must be a JSON object", "body")
        role = body.get("role", "user")
        if role not in ROLES:
            raise invalid(f"role must be one of {', '.join(sorted(ROLES))}", "role")
        parts = body.get("parts")
        if parts is None and isinstance(body.get("text"), str):
            parts = [{"type": "text", "text": body["text"], "visibility": "public"}]
        if not isinstance(parts, list) or not parts:
            raise invalid("missing required field: parts (a non-empty list) or text", "parts")
        for index, part in enumerate(parts):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise invalid("each part is an object with a string type", f"parts[{index}].type")
            if part.get("visibility", "public") not in VISIBILITIES:
                raise invalid(
                    f"visibility must be one of {', '.join(sorted(VISIBILITIES))}",
                    f"parts[{index}].visibility",
                )
        ledger = self.ledger
        session = ledger.visible("session", session_id, actor)

        def create() -> tuple[int, dict[str, Any]]:
            current = ledger.visible("session", session_id, actor)  # re-read inside the transaction
            self.check_open(current)
            normalized = [{**dict(part), "visibility": part.get("visibility", "public")} for part in parts]
            message = self.add_message(actor, current, role, normalized, None, ledger.now())
            ledger.emit(
                "user.message" if role == "user" else "session.message_appended",
                {"object": "session", "id": session_id},
                {"message_id": message["id"], "role": role},
                task_id=None,
            )
            current["updated_at"] = message["created_at"]
            ledger.put(current, actor)
            return 201, message

        target = f"POST /v1/sessions/{session_id}/messages"
        return ledger.idempotent(actor, session["workspace_id"], target, idempotency_key, body, create)

    def close(self, actor: str, session_id: str) -> dict[str, Any]:
        """CLOSED (``session.closed``); closing a closed session returns it unchanged."""
        ledger = self.ledger
        with ledger.store.transaction():
            session = ledger.visible("session", session_id, actor)
            if session["state"] == "CLOSED":
                return session
            session["state"] = "CLOSED"
            session["updated_at"] = ledger.now()
            ledger.put(session, actor)
            ledger.emit("session.closed", {"object": "session", "id": session_id}, {}, task_id=None)
        ledger.notify()
        return session

    def events(self, actor: str, session_id: str, *, after: int = 0, limit: int = 1000) -> dict[str, Any]:
        """The session's events and its tasks' events, in id order (a range read)."""
        self.ledger.visible("session", session_id, actor)
        self.ledger.check_issued(after)
        rows = self.ledger.store.events_for_session(session_id, after=after, limit=limit + 1)
        return event_page(rows, limit, after)

    def messages(self, actor: str, session_id: str) -> dict[str, Any]:
        self.ledger.visible("session", session_id, actor)
        rows = self.ledger.store.find("message", owner=actor, session_id=session_id)
        return {"object": "list", "data": [doc for _, doc in rows], "has_more": False, "next_cursor": None}

    def settled(self, session_id: str) -> bool:
        """A session stream ends once the session is CLOSED and every task in it is terminal."""
        store = self.ledger.store
        found = store.get(session_id, "session")
        if found is None or found[0]["state"] != "CLOSED":
            return False
        return all(is_terminal(doc["status"]) for _, doc in store.find("task", session_id=session_id))
