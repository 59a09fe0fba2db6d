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

    Check = tuple[FaultRule, frozenset[int] | None, int | None, int, float | None]
    """A compiled rule: itself, its ``on_calls``, ``every``, ``length``, ``probability``."""

__all__ = ["Schedule", "Target", "decide", "fires", "keyed_unit"]


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


class Target:
    """The rules of a :class:`Schedule` that can fire on one target (a tool or a method),
    checked in their order; ``label`` is what the ordinals count (``tool NAME``,
    ``method NAME``), ``keyed`` whether any of them needs the call's arguments (a probability)."""

    __slots__ = ("checks", "keyed", "label", "prefix")

    def __init__(self, label: str, checks: list[Check], prefix: bytes | None) -> None:
        self.label = label
        self.checks = checks
        self.keyed = prefix is not None
        self.prefix = prefix or b""
        """The canonical bytes of ``[seed, run_id, key,`` that :func:`keyed_unit` hashes first."""


class Schedule:
    """``rules`` compiled for a session of calls that have no state to test (a replay): what
    :func:`decide` answers, with the rules that can fire on each target picked once, and the
    keyed hash's fixed prefix serialized once, instead of every rule tested on every call.
    A rule with a ``when`` never fires here (``fires`` without ``holds``)."""

    def __init__(self, rules: list[FaultRule], *, seed: int, run_id: str) -> None:
        self.rules = rules
        self.seed = seed
        self.run_id = run_id
        self._targets: dict[tuple[str, str | None], Target] = {}
        self._blake3: Any = None

    def target(self, tool: str, method: str | None) -> Target:
        """The compiled rules for calls of ``tool`` (``method`` None) or of ``method``."""
        found = self._targets.get((tool, method))
        if found is None:
            found = self._targets[(tool, method)] = self._compile(tool, method)
        return found

    def _compile(self, tool: str, method: str | None) -> Target:
        checks: list[Check] = []
        for rule in self.rules:
            if rule.when is not None:
                continue
            if rule.method is not None:
                if rule.method != method:
                    continue
            elif method is not None or rule.tool not in ("*", tool):
                continue
            on_calls = frozenset(rule.on_calls) if rule.on_calls is not None else None
            checks.append((rule, on_calls, rule.every, rule.length, rule.probability))
        key = method if method is not None else tool
        prefix = None
        if any(check[4] is not None for check in checks):
            if self._blake3 is None:
                from blake3 import blake3  # only probability schedules need it

                self._blake3 = blake3
            whole = canonical_bytes([self.seed, self.run_id, key])
            prefix = whole[:-1] + b","  # the list's closing bracket off: the ordinal and args follow
        label = f"method {method}" if method is not None else f"tool {tool}"
        return Target(label, checks, prefix)

    def decide(self, target: Target, ordinal: int, args: Any = None) -> FaultRule | None:
        """The first rule of ``target`` that fires on call ``ordinal`` (1-based) with ``args``
        (read only when ``target.keyed``), as :func:`decide` says."""
        unit = None
        for rule, on_calls, every, length, probability in target.checks:
            if on_calls is not None and ordinal not in on_calls:
                continue
            if every is not None and (ordinal - 1) % every >= length:
                continue
            if probability is not None:
                if unit is None:
                    data = b"%b%d,%b]" % (target.prefix, ordinal, canonical_bytes(args))
                    digest = self._blake3(data).digest(length=8)
                    unit = int.from_bytes(digest, "big") / 2**64
                if unit >= probability:
                    continue
            return rule
        return None
