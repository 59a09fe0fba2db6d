"""Receipts: issued once per terminal task, chained by hash, read and verified per actor.

The receipt's shape and the chain rules live in :mod:`harn_mcp_mock.agents.receipts`; this
service fills a receipt from a task's events and stores it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harn_mcp_mock.agents import PROTOCOL_VERSION
from harn_mcp_mock.agents.receipts import RECEIPT_SCHEMA, seal, sha256_ref, verify_chain
from harn_mcp_mock.agents.server.agent import AgentResult
from harn_mcp_mock.agents.server.ledger import Ledger

__all__ = ["Issuer", "verification"]


def verification(receipts: list[Any], receipt_id: str | None, receipt_hash: Any) -> dict[str, Any]:
    """The ``receipt_verification`` object for a chain ending at ``receipt_id``."""
    report = verify_chain(receipts)
    return {
        "object": "receipt_verification",
        "receipt_id": receipt_id,
        "receipt_hash": receipt_hash,
        "ok": report.ok,
        "checked": report.checked,
        "problem": report.problem,
        "index": report.index,
        "expected": report.expected,
        "found": report.found,
        "message": report.describe(),
    }


class Issuer:
    """Issues, reads and verifies receipts, as ``issuer_id``."""

    def __init__(self, ledger: Ledger, issuer_id: str = "harn-mcp-mock") -> None:
        self.ledger = ledger
        self.issuer_id = issuer_id

    def issue(
        self,
        task: Mapping[str, Any],
        owner: str,
        result: AgentResult | None,
        artifacts: list[str],
        replay: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Seal and store the receipt of a task that just reached its terminal state (inside the
        caller's transaction, so the chain has no gap)."""
        store = self.ledger.store
        events = store.events_for_task(task["id"])
        tool_calls = [
            {
                "tool_call_id": e["payload"].get("tool_call_id"),
                "name": e["payload"].get("name"),
                "server": e["payload"].get("server"),
                **({"replayed": True} if e.get("metadata", {}).get("replayed") else {}),
            }
            for e in events
            if e["event"] == "agent.mcp_tool_use"
        ]
        previous = store.last("receipt")
        receipt_id, ord_ = store.new_id("rcpt")
        receipt: dict[str, Any] = {
            "schema": RECEIPT_SCHEMA,
            "receipt_id": receipt_id,
            "subject": {"object": "task", "id": task["id"]},
            "issuer": {"id": self.issuer_id, "protocol_version": PROTOCOL_VERSION},
            "issued_at": self.ledger.now(),
            "identifiers": {
                "tenant_id": None,
                "persona_id": task.get("persona_id"),
                "workspace_id": task["workspace_id"],
                "session_id": task["session_id"],
                "task_id": task["id"],
                "branch_id": task.get("branch_id"),
                "trace_id": None,
            },
            "lifecycle": {
                "submitted_at": task["created_at"],
                "started_at": task.get("started_at"),
                "completed_at": task.get("completed_at"),
                "canceled_at": task.get("canceled_at"),
                "final_state": task["status"],
            },
            "trust": {"autonomy_tier_start": "act_auto", "autonomy_tier_end": "act_auto"},
            "autonomy_budget": {"consumed": len(tool_calls), "unit": "tool_calls"},
            "replay_input": {
                "task_input_hash": sha256_ref(task["input"]),
                "event_log": {
                    "task_id": task["id"],
                    "first_event_id": events[0]["id"] if events else None,
                    "last_event_id": events[-1]["id"] if events else None,
                },
                "world": result.world if result else None,
                "world_task": result.world_task if result else None,
                **({"replay": dict(replay)} if replay is not None else {}),
            },
            "model_route": {"chosen": "scripted", "alternatives": [], "reason": "scripted agent (no model)"},
            "cost": {"total_usd": 0, "providers": {}},
            "side_effects": {
                "file_writes": [],
                "network_egress": [],
                "tool_calls": tool_calls,
                "a2a_handoffs": [],
            },
            "final_artifacts": [{"object": "artifact", "id": a} for a in artifacts],
            "chain": {"merkle_root": None},
        }
        sealed = seal(receipt, previous["chain"]["receipt_hash"] if previous else None)
        store.put(sealed, ord=ord_, owner=owner, object="receipt", task_id=task["id"])
        return sealed

    def get(self, actor: str, receipt_id: str) -> dict[str, Any]:
        return self.ledger.visible("receipt", receipt_id, actor)

    def verify(self, actor: str, receipt_id: str) -> dict[str, Any]:
        """Check this receipt's hash and the Harness's chain up to it."""
        receipt = self.get(actor, receipt_id)
        store = self.ledger.store
        upto = store.ord_of(receipt_id) or 0
        chain = [doc for o, doc in store.find("receipt") if o <= upto]
        return verification(chain, receipt_id, receipt["chain"].get("receipt_hash"))
