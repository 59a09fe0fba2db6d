"""The Harness: the protocol's services over one store, wired together.

No HTTP here: :mod:`.app` maps requests onto these services and :class:`ProtocolError`
envelopes onto responses. The services, one module each:

* :class:`~.ledger.Ledger`: the store, the clock, events and listeners, visibility,
  idempotency and event cursors, which every other service writes through;
* :class:`~.sessions.Sessions`: sessions and their messages;
* :class:`~.tasks.Tasks`: submit, the lifecycle, outcomes, running the scripted agent;
* :class:`~.issuer.Issuer`: receipts;
* :mod:`.replay`: the Replay level (functions over a Harness).

Every state change is one :meth:`ProtocolStore.transaction`, so a lifecycle transition, its
event, the outcome and the receipt are committed together or not at all. A new Harness fails
the tasks a dead process left WORKING (:meth:`Tasks.recover`; their ids are in
:attr:`Harness.recovered`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.db import ProtocolStore
from harn_mcp_mock.agents.server import replay
from harn_mcp_mock.agents.server.issuer import Issuer
from harn_mcp_mock.agents.server.ledger import DEFAULT_WORKSPACE, IDEMPOTENCY_RETENTION_MS, Ledger
from harn_mcp_mock.agents.server.sessions import Sessions
from harn_mcp_mock.agents.server.tasks import Tasks
from harn_mcp_mock.clock import Clock

__all__ = [
    "ALL_SCOPES",
    "DEFAULT_WORKSPACE",
    "IDEMPOTENCY_RETENTION_MS",
    "SUPPORTED_VERSIONS",
    "Harness",
]

SUPPORTED_VERSIONS: tuple[str, ...] = (PROTOCOL_VERSION,)
ALL_SCOPES: frozenset[str] = frozenset(
    {
        "tasks:read",
        "tasks:write",
        "sessions:read",
        "sessions:write",
        "events:read",
        "artifacts:read",
        "receipts:read",
    }
)


class Harness:
    """The services of one Harness over a :class:`ProtocolStore`. Thread-safe."""

    def __init__(
        self,
        store: ProtocolStore,
        *,
        clock: Clock | None = None,
        issuer: str = "harn-mcp-mock",
        world_root: Path | None = None,
    ) -> None:
        self.ledger = Ledger(store, clock)
        self.sessions = Sessions(self.ledger)
        self.receipts = Issuer(self.ledger, issuer)
        self.tasks = Tasks(self.ledger, self.sessions, self.receipts, world_root=world_root or Path.cwd())
        self.recovered: list[str] = self.tasks.recover()

    @property
    def store(self) -> ProtocolStore:
        return self.ledger.store

    def get(self, actor: str, kind: str, resource_id: str) -> dict[str, Any]:
        """Any resource ``actor`` may see (404 ``resource_not_found`` otherwise)."""
        return self.ledger.visible(kind, resource_id, actor)

    def run_task(self, task_id: str, *, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run one SUBMITTED task to a terminal state: a replay task plays its source's events
        back, any other runs the scripted agent. Returns the task."""
        task = self.tasks.current(task_id)
        if isinstance(task.get("metadata", {}).get("replay"), Mapping):
            return replay.run_replay(self, task_id)
        return self.tasks.run(task_id, on_step=on_step)
