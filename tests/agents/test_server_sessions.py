"""Sessions: create, append messages in order (idempotently), close, and read their events."""

from __future__ import annotations

from starlette.testclient import TestClient

from harn_mcp_mock.agents.models import Message, Session
from tests.agents.harness_client import harness, headers, sse_frames, submit


def new_session(client: TestClient, **extra: str) -> dict[str, object]:
    r = client.post("/v1/sessions", json={"metadata": {"purpose": "test"}}, headers=headers(**extra))
    assert r.status_code == 201, r.text
    body: dict[str, object] = r.json()
    return body


def test_a_created_session_is_active_readable_and_valid(client: TestClient) -> None:
    session = new_session(client)
    assert Session.from_dict(session).state == "ACTIVE"
    assert client.get(f"/v1/sessions/{session['id']}", headers=headers()).json() == session
    kinds = [
        e["event"]
        for e in client.get(f"/v1/sessions/{session['id']}/events", headers=headers()).json()["data"]
    ]
    assert kinds == ["session.created"]


def test_messages_append_in_order_and_tasks_join_the_same_session(client: TestClient) -> None:
    sid = new_session(client)["id"]
    for text in ("first", "second"):
        r = client.post(f"/v1/sessions/{sid}/messages", json={"text": text}, headers=headers())
        assert r.status_code == 201 and Message.from_dict(r.json()).role == "user"
    note = {"role": "system", "parts": [{"type": "json", "value": {"k": 1}, "visibility": "internal"}]}
    assert client.post(f"/v1/sessions/{sid}/messages", json=note, headers=headers()).status_code == 201
    task = submit(client, {"input": {"text": "third"}, "session_id": str(sid)})
    harness(client).run_task(task["id"])
    messages = client.get(f"/v1/sessions/{sid}/messages", headers=headers()).json()["data"]
    assert [m["parts"][0].get("text", m["parts"][0].get("value")) for m in messages] == [
        "first", "second", {"k": 1}, "third", "echo: third",
    ]  # fmt: skip
    events = client.get(f"/v1/sessions/{sid}/events", headers=headers()).json()["data"]
    assert [e["event"] for e in events][:4] == [
        "session.created", "user.message", "user.message", "session.message_appended",
    ]  # fmt: skip
    assert "task.completed" in [e["event"] for e in events]  # the session's tasks' events too
    after = events[2]["id"]
    page = client.get(f"/v1/sessions/{sid}/events?after={after}", headers=headers()).json()["data"]
    assert [e["id"] for e in page] == [e["id"] for e in events if e["id"] > after]


def test_a_message_append_is_idempotent_and_a_changed_body_is_409(client: TestClient) -> None:
    sid = new_session(client)["id"]
    first = client.post(
        f"/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=headers(**{"Idempotency-Key": "m1"})
    )
    again = client.post(
        f"/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=headers(**{"Idempotency-Key": "m1"})
    )
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other = client.post(
        f"/v1/sessions/{sid}/messages", json={"text": "bye"}, headers=headers(**{"Idempotency-Key": "m1"})
    )
    assert (other.status_code, other.json()["error"]["code"]) == (409, "idempotency_key_reused")
    assert len(client.get(f"/v1/sessions/{sid}/messages", headers=headers()).json()["data"]) == 1


def test_session_creation_is_idempotent(client: TestClient) -> None:
    a = new_session(client, **{"Idempotency-Key": "s1"})
    b = new_session(client, **{"Idempotency-Key": "s1"})
    assert a == b


def test_a_closed_session_takes_no_messages_or_tasks_and_its_stream_ends(client: TestClient) -> None:
    sid = new_session(client)["id"]
    closed = client.post(f"/v1/sessions/{sid}/close", headers=headers())
    assert (closed.status_code, closed.json()["state"]) == (200, "CLOSED")
    assert client.post(f"/v1/sessions/{sid}/close", headers=headers()).json() == closed.json()
    r = client.post(f"/v1/sessions/{sid}/messages", json={"text": "late"}, headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (409, "conflict")
    r = client.post("/v1/tasks", json={"input": {"text": "late"}, "session_id": sid}, headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (409, "conflict")
    frames = sse_frames(client.get(f"/v1/sessions/{sid}/stream", headers=headers()).text)
    assert [f["event"] for f in frames] == ["session.created", "session.closed"]


def test_bad_messages_name_the_field(client: TestClient) -> None:
    sid = new_session(client)["id"]
    for body, param in [
        ({}, "parts"),
        ({"role": "robot", "text": "x"}, "role"),
        ({"parts": [{"text": "no type"}]}, "parts[0].type"),
        ({"parts": [{"type": "text", "text": "x", "visibility": "secret"}]}, "parts[0].visibility"),
    ]:
        r = client.post(f"/v1/sessions/{sid}/messages", json=body, headers=headers())
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), body


def test_another_actors_session_is_not_found(client: TestClient) -> None:
    sid = new_session(client)["id"]
    r = client.post(f"/v1/sessions/{sid}/messages", json={"text": "x"}, headers=headers("key-bob-s3cr3t"))
    assert (r.status_code, r.json()["error"]["code"]) == (404, "resource_not_found")
