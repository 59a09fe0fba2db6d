"""The mock Harness in-process: Starlette's TestClient against create_app, on a paused clock."""

from __future__ import annotations

import threading
from pathlib import Path

import orjson
import pytest
from starlette.testclient import TestClient

from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.events import EVENT_KINDS
from harn_mcp_mock.agents.models import Artifact, Event, HarnAgentCard, Message, Outcome, Session, Task
from harn_mcp_mock.agents.receipts import verify_chain
from harn_mcp_mock.agents.server import IDEMPOTENCY_RETENTION_MS, Harness, create_app
from harn_mcp_mock.clock import PausedClock
from tests.agents.harness_client import (
    CLOSE_BUG,
    KEYS,
    REPO,
    harness,
    headers,
    sse_frames,
    submit,
)

# --------------------------------------------------------------------------- discovery, versions, auth


def test_the_agent_card_is_public_and_a_valid_harn_agent_card(client: TestClient) -> None:
    for path in ("/.well-known/harn-agent-card.json", "/v1/agent-card"):
        r = client.get(path)
        assert r.status_code == 200
        card = HarnAgentCard.from_dict(r.json())
        assert card.protocol_version == PROTOCOL_VERSION
        assert card.a2a_card["preferredTransport"]


@pytest.mark.parametrize("version", [None, "agents-protocol-1999-01-01"])
def test_a_missing_or_unsupported_version_is_426_listing_the_supported_ones(
    client: TestClient, version: str | None
) -> None:
    h = {"Authorization": "Bearer key-alice-s3cr3t"}
    if version is not None:
        h[VERSION_HEADER] = version
    r = client.get("/v1/tasks", headers=h)
    assert r.status_code == 426
    error = r.json()["error"]
    assert error["code"] == "unsupported_protocol_version"
    assert error["details"]["supported_versions"] == [PROTOCOL_VERSION]
    assert error["request_id"] == r.headers["Request-Id"]


@pytest.mark.parametrize("auth", [None, "Bearer wrong-key-zzz", "Basic key-alice-s3cr3t", "Bearer "])
def test_a_missing_or_bad_key_is_401_and_the_key_is_never_echoed(
    client: TestClient, auth: str | None
) -> None:
    h = {VERSION_HEADER: PROTOCOL_VERSION}
    if auth is not None:
        h["Authorization"] = auth
    r = client.get("/v1/tasks", headers=h)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "unauthenticated"
    assert r.headers["WWW-Authenticate"] == "Bearer"
    assert "wrong-key" not in r.text and "s3cr3t" not in r.text


def test_an_actor_without_the_routes_scope_gets_403(client: TestClient) -> None:
    r = client.post("/v1/tasks", json={"input": CLOSE_BUG}, headers=headers("key-reader-s3cr3t"))
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "permission_denied"
    assert client.get("/v1/tasks", headers=headers("key-reader-s3cr3t")).status_code == 200


def test_another_actors_task_is_not_found_rather_than_forbidden(client: TestClient) -> None:
    task = submit(client)
    r = client.get(f"/v1/tasks/{task['id']}", headers=headers("key-bob-s3cr3t"))
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "resource_not_found"
    assert client.get("/v1/tasks", headers=headers("key-bob-s3cr3t")).json()["data"] == []


def test_bad_requests_get_the_error_envelope(client: TestClient) -> None:
    r = client.post("/v1/tasks", content=b"{not json", headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    r = client.post("/v1/tasks", json={"input": "a string"}, headers=headers())
    assert (r.status_code, r.json()["error"]["param"]) == (400, "input")
    r = client.post("/v1/tasks", content=b"x" * ((1 << 20) + 1), headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (413, "payload_too_large")
    r = client.get("/v1/nothing-here", headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (404, "resource_not_found")


# --------------------------------------------------------------------------- tasks and the agent


def test_a_submitted_task_is_durable_listed_and_readable(client: TestClient) -> None:
    task = submit(client)
    assert Task.from_dict(task).status == "SUBMITTED"
    assert task["created_by"] == "alice"
    assert client.get(f"/v1/tasks/{task['id']}", headers=headers()).json() == task
    listed = client.get("/v1/tasks?status=SUBMITTED", headers=headers()).json()
    assert [t["id"] for t in listed["data"]] == [task["id"]]
    session = client.get(f"/v1/sessions/{task['session_id']}", headers=headers()).json()
    assert Session.from_dict(session).state == "ACTIVE"


def test_the_task_list_pages_with_a_cursor(client: TestClient) -> None:
    ids = [submit(client)["id"] for _ in range(3)]
    first = client.get("/v1/tasks?limit=2", headers=headers()).json()
    assert [t["id"] for t in first["data"]] == ids[:2] and first["has_more"]
    rest = client.get(f"/v1/tasks?limit=2&after={first['next_cursor']}", headers=headers()).json()
    assert [t["id"] for t in rest["data"]] == ids[2:] and not rest["has_more"]


def test_the_scripted_agent_runs_the_world_task_and_leaves_outcome_artifact_message_and_receipt(
    client: TestClient,
) -> None:
    task = submit(client)
    done = harness(client).run_task(task["id"])
    assert done["status"] == "COMPLETED"
    got = client.get(f"/v1/tasks/{task['id']}", headers=headers()).json()
    assert got["status"] == "COMPLETED" and got["outcome_id"] and got["receipt_id"]

    events = client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    kinds = [e["event"] for e in events]
    assert kinds == [
        "user.message", "task.submitted", "task.started",
        *["agent.mcp_tool_use", "agent.tool_result"] * 3,
        "agent.message", "artifact.created", "task.completed", "receipt.issued",
    ]  # fmt: skip
    assert set(kinds) <= EVENT_KINDS
    ids = [e["id"] for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    task_events = [Event.from_dict(e) for e in events if e["resource"]["object"] == "task"]
    assert [e.sequence for e in task_events] == list(range(1, len(task_events) + 1))

    outcome = Outcome.from_dict(client.get(f"/v1/tasks/{task['id']}/outcome", headers=headers()).json())
    assert outcome.status == "SUCCEEDED"
    artifact = client.get(f"/v1/artifacts/{outcome.optional['artifacts'][0]}", headers=headers()).json()
    assert Artifact.from_dict(artifact).kind == "snapshot"
    assert artifact["content"]["tickets"]["T-1"]["status"] == "closed"
    messages = client.get(f"/v1/sessions/{task['session_id']}/messages", headers=headers()).json()["data"]
    assert [Message.from_dict(m).role for m in messages] == ["user", "assistant"]
    assert client.get(f"/v1/messages/{messages[1]['id']}", headers=headers()).json() == messages[1]


def test_a_run_that_misses_the_goal_fails_with_a_failed_outcome(client: TestClient) -> None:
    steps = [{"tool": "get_ticket", "arguments": {"ticket_id": "T-1"}}]
    task = submit(client, {"input": {**CLOSE_BUG, "steps": steps}})
    assert harness(client).run_task(task["id"])["status"] == "FAILED"
    outcome = client.get(f"/v1/tasks/{task['id']}/outcome", headers=headers()).json()
    assert outcome["status"] == "FAILED" and "goal" in outcome["summary"]


def test_a_world_outside_the_world_root_fails_the_task(client: TestClient) -> None:
    task = submit(client, {"input": {"world": "../../etc/passwd"}})
    done = harness(client).run_task(task["id"])
    assert done["status"] == "FAILED" and "outside" in done["failure"]["message"]


def test_a_task_without_a_world_is_echoed_and_completes(client: TestClient) -> None:
    task = submit(client, {"input": {"text": "hello"}})
    assert harness(client).run_task(task["id"])["status"] == "COMPLETED"


# --------------------------------------------------------------------------- cancel and the lifecycle


def test_cancel_makes_a_submitted_task_canceled_and_the_agent_never_starts_it(client: TestClient) -> None:
    task = submit(client)
    r = client.post(f"/v1/tasks/{task['id']}/cancel", headers=headers())
    assert (r.status_code, r.json()["status"]) == (200, "CANCELED")
    assert client.post(f"/v1/tasks/{task['id']}/cancel", headers=headers()).json() == r.json()
    assert harness(client).run_task(task["id"])["status"] == "CANCELED"
    kinds = [
        e["event"] for e in client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    ]
    assert kinds[-3:] == ["user.cancel_requested", "task.canceled", "receipt.issued"]
    assert "task.started" not in kinds


def test_a_terminal_task_cannot_be_canceled(client: TestClient) -> None:
    task = submit(client)
    harness(client).run_task(task["id"])
    r = client.post(f"/v1/tasks/{task['id']}/cancel", headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_state_transition")
    assert client.get(f"/v1/tasks/{task['id']}", headers=headers()).json()["status"] == "COMPLETED"


def test_cancel_while_working_stops_the_agent_and_no_success_replaces_it(client: TestClient) -> None:
    task = submit(client)

    def cancel_after_first_call(tool_call_id: str) -> None:
        if tool_call_id == "toolu_0001":
            assert client.post(f"/v1/tasks/{task['id']}/cancel", headers=headers()).status_code == 200

    done = harness(client).run_task(task["id"], on_step=cancel_after_first_call)
    assert done["status"] == "CANCELED"
    events = client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    assert [e["payload"]["name"] for e in events if e["event"] == "agent.mcp_tool_use"] == ["get_ticket"]
    assert "task.completed" not in [e["event"] for e in events]
    outcome = client.get(f"/v1/tasks/{task['id']}/outcome", headers=headers()).json()
    assert outcome["status"] == "CANCELED"


# --------------------------------------------------------------------------- idempotency


def test_the_same_key_and_body_return_the_same_task(client: TestClient) -> None:
    first = submit(client, **{"Idempotency-Key": "k-1"})
    r = client.post("/v1/tasks", json={"input": CLOSE_BUG}, headers=headers(**{"Idempotency-Key": "k-1"}))
    assert (r.status_code, r.json()) == (201, first)
    assert r.headers["Idempotent-Replayed"] == "true"
    assert len(client.get("/v1/tasks", headers=headers()).json()["data"]) == 1


def test_the_same_key_with_another_body_is_409_idempotency_key_reused(client: TestClient) -> None:
    submit(client, **{"Idempotency-Key": "k-1"})
    r = client.post(
        "/v1/tasks", json={"input": {"text": "other"}}, headers=headers(**{"Idempotency-Key": "k-1"})
    )
    assert (r.status_code, r.json()["error"]["code"]) == (409, "idempotency_key_reused")


def test_the_key_scope_includes_the_actor_and_the_workspace(client: TestClient) -> None:
    a = submit(client, **{"Idempotency-Key": "k-1"})
    b = submit(client, key="key-bob-s3cr3t", **{"Idempotency-Key": "k-1"})
    c = submit(client, {"input": CLOSE_BUG, "workspace_id": "ws_other"}, **{"Idempotency-Key": "k-1"})
    assert len({a["id"], b["id"], c["id"]}) == 3


def test_a_key_is_kept_24_hours_then_forgotten(client: TestClient, clock: PausedClock) -> None:
    first = submit(client, **{"Idempotency-Key": "k-1"})
    clock.advance(IDEMPOTENCY_RETENTION_MS / 1000 - 1)
    r = client.post(
        "/v1/tasks", json={"input": {"text": "other"}}, headers=headers(**{"Idempotency-Key": "k-1"})
    )
    assert r.status_code == 409
    clock.advance(2)
    second = submit(client, {"input": {"text": "other"}}, **{"Idempotency-Key": "k-1"})
    assert second["id"] != first["id"]


def test_concurrent_identical_submits_create_one_task(client: TestClient) -> None:
    barrier = threading.Barrier(8)
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def go() -> None:
        barrier.wait(timeout=10)
        r = client.post(
            "/v1/tasks", json={"input": CLOSE_BUG}, headers=headers(**{"Idempotency-Key": "race"})
        )
        with lock:
            results.append((r.status_code, r.json()["id"]))

    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(results) == 8
    assert {status for status, _ in results} == {201}
    assert len({task_id for _, task_id in results}) == 1
    assert len(client.get("/v1/tasks", headers=headers()).json()["data"]) == 1


def test_two_stores_on_one_file_still_create_one_task_per_key(db: Path, clock: PausedClock) -> None:
    stores = [ProtocolStore(db, clock=clock) for _ in range(2)]
    try:
        harnesses = [Harness(s, world_root=REPO) for s in stores]
        barrier = threading.Barrier(len(harnesses) * 4)
        ids: list[str] = []
        lock = threading.Lock()

        def go(h: Harness) -> None:
            barrier.wait(timeout=10)
            _, task, _ = h.tasks.submit("alice", {"input": CLOSE_BUG}, "race")
            with lock:
                ids.append(task["id"])

        threads = [threading.Thread(target=go, args=(h,)) for h in harnesses for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert len(ids) == 8 and len(set(ids)) == 1
        assert len(stores[0].find("task")) == 1
    finally:
        for s in stores:
            s.close()


# --------------------------------------------------------------------------- SSE


def test_the_stream_of_a_finished_task_delivers_every_event_then_closes(client: TestClient) -> None:
    task = submit(client)
    harness(client).run_task(task["id"])
    r = client.get(f"/v1/tasks/{task['id']}/stream", headers=headers())
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    frames = sse_frames(r.text)
    stored = client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    assert [f["id"] for f in frames] == [str(e["id"]) for e in stored]
    assert [f["event"] for f in frames] == [e["event"] for e in stored]
    assert [orjson.loads(f["data"]) for f in frames] == stored


def test_last_event_id_resumes_after_the_cursor(client: TestClient) -> None:
    task = submit(client)
    harness(client).run_task(task["id"])
    stored = client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    cursor = stored[4]["id"]
    r = client.get(f"/v1/tasks/{task['id']}/stream", headers=headers(**{"Last-Event-ID": str(cursor)}))
    assert [int(f["id"]) for f in sse_frames(r.text)] == [e["id"] for e in stored[5:]]
    page = client.get(f"/v1/tasks/{task['id']}/events?after={cursor}", headers=headers()).json()
    assert page["data"] == stored[5:]


@pytest.mark.parametrize("cursor", ["pruned", "999999", "not-a-cursor"])
def test_a_gone_cursor_gets_a_clear_error_event_and_the_stream_closes(
    client: TestClient, cursor: str
) -> None:
    task = submit(client)
    harness(client).run_task(task["id"])
    stored = client.get(f"/v1/tasks/{task['id']}/events", headers=headers()).json()["data"]
    if cursor == "pruned":
        client.app.state.store.prune_events(task["id"], stored[5]["id"])  # type: ignore[attr-defined]
        cursor = str(stored[2]["id"])
    r = client.get(f"/v1/tasks/{task['id']}/stream", headers=headers(**{"Last-Event-ID": cursor}))
    frames = sse_frames(r.text)
    assert len(frames) == 1 and frames[0]["event"] == "error" and "id" not in frames[0]
    assert orjson.loads(frames[0]["data"])["error"]["code"] == "cursor_expired"
    r = client.get(f"/v1/tasks/{task['id']}/events?after={cursor}", headers=headers())
    assert (r.status_code, r.json()["error"]["code"]) == (410, "cursor_expired")


# --------------------------------------------------------------------------- receipts


def test_receipts_chain_across_tasks_and_verify(client: TestClient) -> None:
    ids = [submit(client)["id"] for _ in range(2)]
    for task_id in ids:
        harness(client).run_task(task_id)
    receipts = [client.get(f"/v1/tasks/{t}/receipt", headers=headers()).json() for t in ids]
    assert verify_chain(receipts).ok
    assert receipts[1]["chain"]["previous_receipt_hash"] == receipts[0]["chain"]["receipt_hash"]
    assert "s3cr3t" not in orjson.dumps(receipts).decode()
    r = client.get(f"/v1/receipts/{receipts[1]['receipt_id']}/verification", headers=headers()).json()
    assert (r["ok"], r["checked"]) == (True, 2)
    tampered = [receipts[0], {**receipts[1], "cost": {"total_usd": 1}}]
    r = client.post("/v1/receipts/verify", json={"receipts": tampered}, headers=headers()).json()
    assert (r["ok"], r["problem"], r["index"]) == (False, "hash_mismatch", 1)


# --------------------------------------------------------------------------- restart durability


def test_a_new_harness_on_the_same_file_recovers_every_accepted_task(db: Path, clock: PausedClock) -> None:
    first = ProtocolStore(db, clock=clock)
    h = Harness(first, world_root=REPO)
    _, done, _ = h.tasks.submit("alice", {"input": CLOSE_BUG})
    h.run_task(done["id"])
    _, waiting, _ = h.tasks.submit("alice", {"input": CLOSE_BUG}, "keep-me")
    _, working, _ = h.tasks.submit("alice", {"input": CLOSE_BUG})
    assert h.tasks.start(working["id"])  # the process "dies" while this one is WORKING
    first.close()

    second = ProtocolStore(db, clock=clock)
    try:
        client = TestClient(create_app(second, KEYS, clock, world_root=REPO))
        status = {
            t: client.get(f"/v1/tasks/{t}", headers=headers()).json()["status"]
            for t in (done["id"], waiting["id"], working["id"])
        }
        assert status == {done["id"]: "COMPLETED", waiting["id"]: "SUBMITTED", working["id"]: "FAILED"}
        failed = client.get(f"/v1/tasks/{working['id']}", headers=headers()).json()
        assert "restarted" in failed["failure"]["message"]
        kinds = [
            e["event"]
            for e in client.get(f"/v1/tasks/{working['id']}/events", headers=headers()).json()["data"]
        ]
        assert kinds[-2:] == ["task.failed", "receipt.issued"]
        assert harness(client).tasks.pending() == [waiting["id"]]
        again = client.post(
            "/v1/tasks", json={"input": CLOSE_BUG}, headers=headers(**{"Idempotency-Key": "keep-me"})
        )
        assert again.json()["id"] == waiting["id"]
        assert harness(client).run_task(waiting["id"])["status"] == "COMPLETED"
        receipts = [doc for _, doc in second.find("receipt")]
        assert len(receipts) == 3 and verify_chain(receipts).ok
    finally:
        second.close()


@pytest.mark.parametrize(
    ("depth", "words"),
    [(300, "nested deeper than 200 levels"), (2000, "not valid JSON: depth limit exceeded")],
)
def test_a_deeply_nested_body_is_400_naming_the_problem(client: TestClient, depth: int, words: str) -> None:
    body = b'{"input":{"text":"hi","x":' + b"[" * depth + b"]" * depth + b"}}"
    r = client.post("/v1/tasks", content=body, headers={**headers(), "Content-Type": "application/json"})
    assert r.status_code == 400
    assert words in r.json()["error"]["message"] and r.json()["error"]["param"] == "body"
