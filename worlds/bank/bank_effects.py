"""Effects of the bank world that the declarative effect language cannot say (it has no
subtraction: a debit is ``balance - amount``). The spec's ``requires`` run first (accounts exist
and are active, the transfer is completed); these functions add the rules that need arithmetic.

Each is ``f(state, args, ctx) -> {"result": ..., "error": str | None}`` (docs/worlds.md, "Python
escape hatch"): ``state`` is a copy the engine commits only when ``error`` is None.
"""

from __future__ import annotations

import datetime as dt
from typing import Any


def _iso(ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def transfer(state: dict[str, Any], args: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    """Move ``amount_cents`` between two accounts and record the transfer (not idempotent)."""
    source, target, amount = args["from_account"], args["to_account"], args["amount_cents"]
    if source == target:
        return {"result": None, "error": f"cannot transfer from {source} to itself"}
    accounts = state["accounts"]
    available = accounts[source]["balance_cents"] + accounts[source].get("overdraft_limit_cents", 0)
    if amount > available:
        return {"result": None, "error": f"insufficient funds in {source}"}
    transfer_id = ctx["new_id"]("/transfers", "TX-{n}")
    accounts[source]["balance_cents"] -= amount
    accounts[target]["balance_cents"] += amount
    state["transfers"][transfer_id] = {
        "from": source,
        "to": target,
        "amount_cents": amount,
        "memo": args["memo"],
        "status": "completed",
        "created_at": _iso(ctx["now_ms"]),
    }
    return {
        "result": {
            "id": transfer_id,
            "status": "completed",
            "from_balance_cents": accounts[source]["balance_cents"],
        },
        "error": None,
    }


def reverse_transfer(state: dict[str, Any], args: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    """Give a completed transfer's money back to the payer and mark it reversed."""
    record = state["transfers"][args["transfer_id"]]
    accounts = state["accounts"]
    accounts[record["to"]]["balance_cents"] -= record["amount_cents"]
    accounts[record["from"]]["balance_cents"] += record["amount_cents"]
    record["status"] = "reversed"
    record["reversal_reason"] = args["reason"]
    record["reversed_at"] = _iso(ctx["now_ms"])
    return {"result": {"id": args["transfer_id"], "status": "reversed"}, "error": None}
