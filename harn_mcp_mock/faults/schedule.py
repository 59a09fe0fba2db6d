"""Deterministic fault decisions: schedules by per-target call ordinal, every/length, a state
predicate (worlds), or a probability decided by a keyed BLAKE3 hash of (seed, run id, target,
ordinal, canonical arguments). Never Python's ``hash()`` (salted per process) or a global random
generator, so the same seed and the same calls give the same faults in any process.
"""

from __future__ import annotations

from harn_mcp_mock.store.canonical import canonical_bytes

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from harn_mcp_mock.faults.rules import FaultRule

__all__ = ["decide", "fires", "keyed_unit"]


def keyed_unit(seed: int, run_id: str, tool: str, ordinal: int, args: Any) -> float:
    """A number in [0, 1) fixed by the call's identity."""
    from blake3 import blake3  # on first use: only probability schedules need it

    digest = blake3(canonical_bytes([seed, run_id, tool, ordinal, args])).digest(length=8)
    return int.from_bytes(digest, "big") / 2**64


def fires(
    rule: FaultRule,
    *,
    tool: str,
    ordinal: int,
    args: Any,
    seed: int,
    run_id: str,
    method: str | None = None,
    holds: Callable[[dict[str, Any]], bool] | None = None,
) -> bool:
    """Whether ``rule`` fires for this call: ``tool`` (a ``tools/call``'s tool name) or
    ``method`` (any other request), its 1-based ``ordinal`` among calls of the same target,
    its ``args``; ``holds(predicate)`` tests a ``when`` on the world's state."""
    if rule.method is not None:
        if rule.method != method:
            return False
        key = method
    else:
        if method is not None or rule.tool not in ("*", tool):
            return False
        key = tool
    if rule.on_calls is not None and ordinal not in rule.on_calls:
        return False
    if rule.every is not None and (ordinal - 1) % rule.every >= rule.length:
        return False
    if rule.when is not None and (holds is None or not holds(rule.when)):
        return False
    return not (
        rule.probability is not None and keyed_unit(seed, run_id, key, ordinal, args) >= rule.probability
    )


def decide(rules: list[FaultRule], **call: Any) -> FaultRule | None:
    """The first rule that fires for this call, if any."""
    for rule in rules:
        if fires(rule, **call):
            return rule
    return None
