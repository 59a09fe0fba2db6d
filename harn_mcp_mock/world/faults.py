"""Deterministic fault decisions: schedules by per-tool call ordinal, every/length, a state
predicate, or a probability decided by a keyed BLAKE3 hash of (seed, run id, tool, ordinal,
canonical arguments). Never Python's ``hash()`` (salted per process) or a global random generator.
"""

from __future__ import annotations

from harn_mcp_mock.store.canonical import canonical_bytes
from harn_mcp_mock.world.predicates import holds
from harn_mcp_mock.world.spec import FaultRule

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


def keyed_unit(seed: int, run_id: str, tool: str, ordinal: int, args: Any) -> float:
    """A number in [0, 1) fixed by the call's identity."""
    from blake3 import blake3  # on first use: only probability schedules need it

    digest = blake3(canonical_bytes([seed, run_id, tool, ordinal, args])).digest(length=8)
    return int.from_bytes(digest, "big") / 2**64


def fires(rule: FaultRule, *, tool: str, ordinal: int, args: Any, state: Any, seed: int, run_id: str) -> bool:
    if rule.tool not in ("*", tool):
        return False
    if rule.on_calls is not None and ordinal not in rule.on_calls:
        return False
    if rule.every is not None and (ordinal - 1) % rule.every >= rule.length:
        return False
    if rule.when is not None and not holds(rule.when, state):
        return False
    return not (
        rule.probability is not None and keyed_unit(seed, run_id, tool, ordinal, args) >= rule.probability
    )


def decide(rules: list[FaultRule], **call: Any) -> FaultRule | None:
    """The first rule that fires for this call, if any."""
    for rule in rules:
        if fires(rule, **call):
            return rule
    return None
