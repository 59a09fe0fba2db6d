"""Fixtures the checks share, memoised on the :class:`~.registry.Context`.

Route layout: the narrative spec leaves exact paths to the OpenAPI artifact; the checker uses the
reference layout (``/v1/tasks``, ``/v1/tasks/{id}/events``, ``/v1/tasks/{id}/stream``,
``/v1/receipts/{id}``, ...) that ``harn protocol serve`` also serves (docs/protocol-conformance.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harn_mcp_mock.agents.conform.client import Reply
from harn_mcp_mock.agents.conform.registry import Context, Prerequisite
from harn_mcp_mock.agents.lifecycle import is_terminal

__all__ = [
    "CARD_PATHS",
    "Finished",
    "event_list",
    "finished_task",
    "probe",
    "probe_events",
    "receipt_of",
    "submit",
    "submit_body",
    "unique",
]

CARD_PATHS = ("/.well-known/harn-agent-card.json", "/v1/agent-card")
MAX_PAGES = 50


def unique(prefix: str) -> str:
    """A fresh token (idempotency keys, unknown ids): never reused across runs."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def submit_body(ctx: Context, variant: str | None = None) -> dict[str, Any]:
    """``{"input": <task input>}``; a ``variant`` differs only in ``metadata`` (where the spec lets
    objects carry extension fields), so it is a *different* body for idempotency."""
    body: dict[str, Any] = {"input": dict(ctx.settings.task_input)}
    if variant is not None:
        body["metadata"] = {"conformance_variant": variant}
    return body


def submit(ctx: Context, *, key: str | None = None, body: Mapping[str, Any] | None = None) -> Reply:
    extra = {"Idempotency-Key": key} if key is not None else None
    return ctx.client.post("/v1/tasks", dict(body) if body is not None else submit_body(ctx), extra=extra)


def task_id_of(reply: Reply, what: str) -> str:
    if not reply.ok() or not isinstance(reply.json, Mapping) or not isinstance(reply.json.get("id"), str):
        raise Prerequisite(f"cannot submit the {what}: {reply.describe()}")
    task_id: str = reply.json["id"]
    return task_id


@dataclass(frozen=True, slots=True)
class Finished:
    """A submitted task awaited to a terminal state: its submit reply, last GET, statuses seen."""

    submitted: Reply
    task: dict[str, Any]
    seen: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        task_id: str = self.task["id"]
        return task_id

    @property
    def status(self) -> str:
        return str(self.task.get("status"))


def finished_task(ctx: Context, submitted: Reply, what: str) -> Finished:
    task_id = task_id_of(submitted, what)
    seen: list[str] = []
    status = submitted.json.get("status") if isinstance(submitted.json, Mapping) else None
    if isinstance(status, str):
        seen.append(status)
    reply = ctx.client.wait_terminal(task_id, timeout=ctx.settings.task_timeout, seen=seen)
    if not reply.ok() or not isinstance(reply.json, Mapping):
        raise Prerequisite(f"cannot read the {what}: {reply.describe()}")
    final = str(reply.json.get("status"))
    if not is_terminal(final):
        raise Prerequisite(
            f"the {what} {task_id} did not reach a terminal state within {ctx.settings.task_timeout:g} s "
            f"(last status {final})"
        )
    return Finished(submitted, dict(reply.json), seen)


def probe(ctx: Context) -> Finished:
    """The probe task: submitted once with the task input and awaited to a terminal state."""
    return ctx.once(
        "probe", lambda: finished_task(ctx, ctx.once("probe.submit", lambda: submit(ctx)), "probe task")
    )


def list_page(reply: Reply) -> tuple[list[Any], str | None] | None:
    """A list body, bare or ``{data, has_more, next_cursor}``: ``(items, the cursor of the next
    page or None)``; None when the body is not a list."""
    page = reply.json
    data = page.get("data") if isinstance(page, Mapping) else page
    if not isinstance(data, list):
        return None
    more = isinstance(page, Mapping) and page.get("has_more") is True
    cursor = page.get("next_cursor") if more and isinstance(page, Mapping) else None
    return data, (str(cursor) if cursor not in (None, "") else None)


def event_list(ctx: Context, task_id: str, *, after: str | None = None) -> list[dict[str, Any]]:
    """Every event of a task from ``GET /v1/tasks/{id}/events`` (following ``next_cursor``)."""
    events: list[dict[str, Any]] = []
    cursor = after
    for _ in range(MAX_PAGES):
        path = f"/v1/tasks/{task_id}/events" + (f"?after={cursor}" if cursor is not None else "")
        reply = ctx.client.get(path)
        if not reply.ok():
            raise Prerequisite(f"cannot read events: {reply.describe()}")
        page = list_page(reply)
        if page is None:
            raise Prerequisite(f"{reply.describe()}: the body is neither an event list nor {{data: [...]}}")
        data, next_cursor = page
        events += [dict(e) for e in data if isinstance(e, Mapping)]
        if next_cursor is None or next_cursor == cursor:
            return events
        cursor = next_cursor
    raise Prerequisite(f"more than {MAX_PAGES} pages of events for task {task_id}")


def probe_events(ctx: Context) -> list[dict[str, Any]]:
    return ctx.once("probe.events", lambda: event_list(ctx, probe(ctx).id))


def receipt_of(ctx: Context, task: Finished) -> dict[str, Any]:
    """The receipt a terminal task references (re-reading the task once if needed)."""
    receipt_id = task.task.get("receipt_id")
    if not isinstance(receipt_id, str) or not receipt_id:
        again = ctx.client.get(f"/v1/tasks/{task.id}")
        receipt_id = again.json.get("receipt_id") if isinstance(again.json, Mapping) else None
    if not isinstance(receipt_id, str) or not receipt_id:
        raise Prerequisite(f"terminal task {task.id} ({task.status}) references no receipt_id")
    reply = ctx.client.get(f"/v1/receipts/{receipt_id}")
    if not reply.ok() or not isinstance(reply.json, Mapping):
        raise Prerequisite(f"cannot read receipt {receipt_id}: {reply.describe()}")
    return dict(reply.json)
