"""The Replay level: task and session replays, overrides, markers, failures, and the cassette
tool backend (a real `mcp-server-time` recording) under the scripted agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.models import Event, Task
from harn_mcp_mock.agents.receipts import receipt_hash, sha256_ref
from harn_mcp_mock.agents.server import create_app
from harn_mcp_mock.clock import PausedClock
from tests.agents.harness_client import KEYS, REPO, harness, headers, sse_frames, submit

TIME_CASSETTE = "cassettes/time.cassette.json"


def events_of(client: TestClient, task_id: str, after: int = 0) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = client.get(
        f"/v1/tasks/{task_id}/events?after={after}", headers=headers()
    ).json()["data"]
    return data


def done_task(client: TestClient, body: dict[str, Any] | None = None) -> dict[str, Any]:
    task = submit(client, body)
    return harness(client).run_task(task["id"])


def replay(client: TestClient, task_id: str, body: dict[str, Any], **extra: str) -> Any:
    return client.post(f"/v1/tasks/{task_id}/replay", json=body, headers=headers(**extra))


AGENT_KINDS = ("agent.mcp_tool_use", "agent.tool_result", "agent.message", "artifact.created")


def test_an_exact_replay_is_a_new_task_that_replays_every_agent_event_marked_with_its_source(
    client: TestClient,
) -> None:
    source = done_task(client)
    r = replay(client, source["id"], {"mode": "exact"})
    assert r.status_code == 201, r.text
    task = Task.from_dict(r.json())
    assert task.optional["parent_task_id"] == source["id"] and task.status == "SUBMITTED"
    assert task.session_id != source["session_id"]
    assert harness(client).run_task(task.id)["status"] == "COMPLETED"

    original = events_of(client, source["id"])
    replayed = events_of(client, task.id)
    kinds = [e["event"] for e in replayed]
    assert kinds[:4] == ["user.message", "task.submitted", "task.started", "replay.started"]
    assert kinds[-3:] == ["replay.completed", "task.completed", "receipt.issued"]
    marked = [e for e in replayed if e["metadata"].get("replayed")]
    source_agent = [e for e in original if e["event"] in AGENT_KINDS]
    assert [e["event"] for e in marked] == [e["event"] for e in source_agent]
    assert [e["metadata"]["replay_of"]["event_id"] for e in marked] == [e["id"] for e in source_agent]
    for copy, orig in zip(marked, source_agent, strict=True):
        assert copy["metadata"]["replay_of"]["task_id"] == source["id"]
        Event.from_dict(copy)
        if copy["event"] != "agent.message":  # its message is copied into the replay's session
            assert copy["payload"] == orig["payload"]
    assert not [e for e in replayed if e["event"] not in AGENT_KINDS and e["metadata"].get("replayed")]
    # the replay references the source's (immutable) snapshot and says what it replayed
    source_outcome = client.get(f"/v1/tasks/{source['id']}/outcome", headers=headers()).json()
    outcome = client.get(f"/v1/tasks/{task.id}/outcome", headers=headers()).json()
    assert outcome["artifacts"] == source_outcome["artifacts"] and outcome["status"] == "SUCCEEDED"
    receipt = client.get(f"/v1/tasks/{task.id}/receipt", headers=headers()).json()
    source_receipt = client.get(f"/v1/tasks/{source['id']}/receipt", headers=headers()).json()
    assert receipt["replay_input"]["replay"] == {
        "mode": "exact",
        "source_task_id": source["id"],
        "source_receipt": {
            "receipt_id": source_receipt["receipt_id"],
            "receipt_hash": receipt_hash(source_receipt),
        },
        "substitutions": [],
    }
    assert all(call["replayed"] for call in receipt["side_effects"]["tool_calls"])
    assert client.get(f"/v1/receipts/{receipt['receipt_id']}/verification", headers=headers()).json()["ok"]


def test_the_replay_stream_marks_replayed_frames_and_resumes_with_the_replays_own_cursor(
    client: TestClient,
) -> None:
    source = done_task(client)
    task = replay(client, source["id"], {"mode": "exact"}).json()
    harness(client).run_task(task["id"])
    frames = sse_frames(client.get(f"/v1/tasks/{task['id']}/stream", headers=headers()).text)
    import orjson

    datas = [orjson.loads(f["data"]) for f in frames]
    assert any(d["metadata"].get("replayed") for d in datas)
    middle = frames[5]["id"]
    resumed = sse_frames(
        client.get(f"/v1/tasks/{task['id']}/stream", headers=headers(**{"Last-Event-ID": middle})).text
    )
    assert [f["id"] for f in resumed] == [f["id"] for f in frames if int(f["id"]) > int(middle)]


def test_with_overrides_substitutes_a_tool_return_and_records_the_receipt_delta(client: TestClient) -> None:
    source = done_task(client)
    before = next(e for e in events_of(client, source["id"]) if e["event"] == "agent.tool_result")
    key = f"tool_result:{before['payload']['tool_call_id']}"
    new_output = {"content": [{"type": "text", "text": "substituted"}], "isError": False}
    task = replay(client, source["id"], {"mode": "with_overrides", "overrides": {key: new_output}}).json()
    assert harness(client).run_task(task["id"])["status"] == "COMPLETED"
    results = [e for e in events_of(client, task["id"]) if e["event"] == "agent.tool_result"]
    assert results[0]["payload"]["output"] == new_output
    assert results[0]["metadata"]["replay_of"] == {
        "task_id": source["id"],
        "event_id": before["id"],
        "substitution": key,
    }
    assert results[1]["payload"]["output"] != new_output  # only the keyed one changed
    delta = {
        "key": key,
        "source_event_id": before["id"],
        "path": "/payload/output",
        "before_hash": sha256_ref(before["payload"]["output"]),
        "after_hash": sha256_ref(new_output),
    }
    completed = next(e for e in events_of(client, task["id"]) if e["event"] == "replay.completed")
    assert completed["payload"]["substitutions"] == [delta]
    receipt = client.get(f"/v1/tasks/{task['id']}/receipt", headers=headers()).json()
    assert receipt["replay_input"]["replay"]["substitutions"] == [delta]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"mode": "rewind"}, "mode"),
        ({"mode": "from_checkpoint"}, "mode"),
        ({"mode": "exact", "overrides": {"tool_result:toolu_0001": 1}}, "overrides"),
        ({"mode": "with_overrides"}, "overrides"),
        ({"mode": "with_overrides", "overrides": {"clock:now": 1}}, "overrides.clock:now"),
        (
            {"mode": "with_overrides", "overrides": {"tool_result:toolu_9999": 1}},
            "overrides.tool_result:toolu_9999",
        ),
        ({"mode": "with_overrides", "overrides": []}, "overrides"),
    ],
)
def test_bad_replay_requests_are_400_naming_the_field(
    client: TestClient, body: dict[str, Any], param: str
) -> None:
    source = done_task(client)
    r = replay(client, source["id"], body)
    assert (r.status_code, r.json()["error"]["code"], r.json()["error"]["param"]) == (
        400,
        "invalid_request",
        param,
    )


def test_an_unknown_override_key_lists_the_keys_that_exist(client: TestClient) -> None:
    source = done_task(client)
    r = replay(client, source["id"], {"mode": "with_overrides", "overrides": {"tool_result:nope": 1}})
    assert r.json()["error"]["details"]["available"] == [
        "tool_result:toolu_0001",
        "tool_result:toolu_0002",
        "tool_result:toolu_0003",
    ]


def test_a_non_terminal_source_is_409_and_a_pruned_one_names_the_first_unavailable_event(
    client: TestClient,
) -> None:
    pending = submit(client)
    r = replay(client, pending["id"], {"mode": "exact"})
    assert (r.status_code, r.json()["error"]["code"]) == (409, "conflict")
    source = done_task(client)
    first = events_of(client, source["id"])[0]["id"]
    harness(client).store.prune_events(source["id"], first)
    r = replay(client, source["id"], {"mode": "exact"})
    assert (r.status_code, r.json()["error"]["code"]) == (410, "cursor_expired")
    assert r.json()["error"]["details"]["first_unavailable"] == {
        "object": "event",
        "task_id": source["id"],
        "at_or_before": first,
    }


def test_events_pruned_after_the_request_fail_the_replay_with_replay_failed(client: TestClient) -> None:
    source = done_task(client)
    task = replay(client, source["id"], {"mode": "exact"}).json()
    last = events_of(client, source["id"])[-1]["id"]
    harness(client).store.prune_events(source["id"], last)
    done = harness(client).run_task(task["id"])
    assert done["status"] == "FAILED"
    assert done["failure"]["details"]["first_unavailable"]["task_id"] == source["id"]
    kinds = [e["event"] for e in events_of(client, task["id"])]
    assert kinds[-3:] == ["replay.failed", "task.failed", "receipt.issued"]


def test_a_replay_ends_in_the_sources_terminal_state(client: TestClient) -> None:
    failed = done_task(
        client,
        {
            "input": {
                "world": "worlds/tickets/tickets.world.json",
                "world_task": "close-login-bug",
                "steps": [],
            }
        },
    )
    assert failed["status"] == "FAILED"
    task = replay(client, failed["id"], {"mode": "exact"}).json()
    done = harness(client).run_task(task["id"])
    assert done["status"] == "FAILED" and done["failure"] == failed["failure"]
    canceled = submit(client)
    client.post(f"/v1/tasks/{canceled['id']}/cancel", headers=headers())
    task = replay(client, canceled["id"], {"mode": "exact"}).json()
    assert harness(client).run_task(task["id"])["status"] == "CANCELED"


def test_a_replay_can_be_canceled_and_no_success_replaces_it(client: TestClient) -> None:
    source = done_task(client)
    task = replay(client, source["id"], {"mode": "exact"}).json()
    client.post(f"/v1/tasks/{task['id']}/cancel", headers=headers())
    assert harness(client).run_task(task["id"])["status"] == "CANCELED"
    assert "replay.started" not in [e["event"] for e in events_of(client, task["id"])]


def test_a_replay_request_is_idempotent(client: TestClient) -> None:
    source = done_task(client)
    a = replay(client, source["id"], {"mode": "exact"}, **{"Idempotency-Key": "r1"})
    b = replay(client, source["id"], {"mode": "exact"}, **{"Idempotency-Key": "r1"})
    assert a.json()["id"] == b.json()["id"] and b.headers["Idempotent-Replayed"] == "true"
    c = replay(client, source["id"], {"mode": "exact", "metadata": {"x": 1}}, **{"Idempotency-Key": "r1"})
    assert (c.status_code, c.json()["error"]["code"]) == (409, "idempotency_key_reused")


def test_another_actors_task_cannot_be_replayed(client: TestClient) -> None:
    source = done_task(client)
    r = client.post(
        f"/v1/tasks/{source['id']}/replay", json={"mode": "exact"}, headers=headers("key-bob-s3cr3t")
    )
    assert (r.status_code, r.json()["error"]["code"]) == (404, "resource_not_found")


def test_a_session_replay_replays_every_task_of_the_session_in_order(client: TestClient) -> None:
    first = done_task(client, {"input": {"text": "one"}})
    second = done_task(client, {"input": {"text": "two"}, "session_id": first["session_id"]})
    r = client.post(f"/v1/sessions/{first['session_id']}/replay", json={"mode": "exact"}, headers=headers())
    assert r.status_code == 201, r.text
    session = r.json()
    pairs = session["metadata"]["replay_of"]["tasks"]
    assert [(p["source_task_id"], p["status"]) for p in pairs] == [
        (first["id"], "COMPLETED"),
        (second["id"], "COMPLETED"),
    ]
    for pair in pairs:
        got = client.get(f"/v1/tasks/{pair['task_id']}", headers=headers()).json()
        assert got["parent_task_id"] == pair["source_task_id"]
    messages = client.get(f"/v1/sessions/{session['id']}/messages", headers=headers()).json()["data"]
    assert [m["parts"][0]["text"] for m in messages] == ["one", "echo: one", "two", "echo: two"]
    kinds = [
        e["event"]
        for e in client.get(f"/v1/sessions/{session['id']}/events", headers=headers()).json()["data"]
    ]
    assert kinds[:1] == ["session.created"] and "session.replayed" in kinds
    r = client.post(
        f"/v1/sessions/{first['session_id']}/replay",
        json={"mode": "with_overrides", "overrides": {"a": 1}},
        headers=headers(),
    )
    assert (r.status_code, r.json()["error"]["param"]) == (400, "mode")


def test_replay_tasks_survive_a_restart(tmp_path: Path) -> None:
    clock = PausedClock()
    db = tmp_path / "h.sqlite3"
    store = ProtocolStore(db, clock=clock)
    client = TestClient(create_app(store, KEYS, clock, world_root=REPO))
    source = done_task(client)
    task = replay(client, source["id"], {"mode": "exact"}).json()
    store.close()
    store = ProtocolStore(db, clock=clock)
    client = TestClient(create_app(store, KEYS, clock, world_root=REPO))
    assert harness(client).tasks.pending() == [task["id"]]
    assert harness(client).run_task(task["id"])["status"] == "COMPLETED"
    store.close()


# --------------------------------------------------------------------------- the cassette tool backend


def test_a_task_on_a_recorded_mcp_server_time_cassette_plays_its_calls(client: TestClient) -> None:
    done = done_task(client, {"input": {"cassette": TIME_CASSETTE}})
    assert done["status"] == "COMPLETED", done
    events = events_of(client, done["id"])
    uses = [e["payload"] for e in events if e["event"] == "agent.mcp_tool_use"]
    assert [(u["name"], u["server"]) for u in uses] == [("convert_time", "time.cassette.json")] * 2
    results = [e["payload"] for e in events if e["event"] == "agent.tool_result"]
    assert results[0]["status"] == "ok"
    assert results[0]["output"]["structuredContent"]["target"]["datetime"] == "2026-11-21T17:30:00+09:00"
    # and a replay of that task reproduces the recorded results without the cassette
    task = replay(client, done["id"], {"mode": "exact"}).json()
    assert harness(client).run_task(task["id"])["status"] == "COMPLETED"
    again = [e["payload"] for e in events_of(client, task["id"]) if e["event"] == "agent.tool_result"]
    assert again == results


def test_an_unrecorded_call_fails_the_task_with_the_replay_miss(client: TestClient) -> None:
    steps = [{"tool": "get_current_time", "arguments": {"timezone": "Europe/Oslo"}}]
    done = done_task(client, {"input": {"cassette": TIME_CASSETTE, "steps": steps}})
    assert done["status"] == "FAILED"
    result = next(e["payload"] for e in events_of(client, done["id"]) if e["event"] == "agent.tool_result")
    assert result["status"] == "error" and result["output"]["code"] == -32050
    assert "no recorded interaction matches" in result["output"]["message"]


def test_a_cassette_outside_the_root_or_missing_fails_with_one_line(
    client: TestClient, tmp_path: Path
) -> None:
    done = done_task(client, {"input": {"cassette": "../../etc/passwd"}})
    assert done["status"] == "FAILED" and "outside" in done["failure"]["message"]
    done = done_task(client, {"input": {"cassette": "cassettes/nope.json"}})
    assert done["status"] == "FAILED" and "no such cassette" in done["failure"]["message"]
    both = done_task(
        client, {"input": {"cassette": TIME_CASSETTE, "world": "worlds/tickets/tickets.world.json"}}
    )
    assert both["status"] == "FAILED" and "either" in both["failure"]["message"]


def test_the_harness_services_call_each_other_only_through_public_methods() -> None:
    import ast
    import pkgutil

    from harn_mcp_mock.agents import server

    reaches = []
    for info in pkgutil.iter_modules(server.__path__):
        path = Path(server.__path__[0]) / f"{info.name}.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                reaches.append(f"{info.name}.py:{node.lineno}: .{node.attr}")
    assert reaches == []
