"""JSON pointer patterns over a message envelope, matched while walking it.

A pattern is written in the one pointer-pattern dialect (:func:`harn_mcp_mock.store.pointer.
compile_pattern`, docs/cli.md "JSON pointer patterns"): an RFC 6901 pointer
(``/params/arguments/ssn``) in which a segment ``*`` matches any one key or array index, ``**``
any number of segments (none included) and a ``*`` inside a segment any run of characters in
it. All the patterns of a policy are
compiled into one small automaton whose states are shared and whose transitions are cached,
so following a key costs one dict lookup, and once no pattern can match below a node the
walk stops asking (the :data:`DEAD` state).
"""

from __future__ import annotations

from collections.abc import Sequence

from harn_mcp_mock.store import pointer as jsonptr

REDACT = 1
"""Flag: the node is a ``redact.pointers`` match: every scalar under it is a secret."""
ALLOW = 2
"""Flag: the node is an ``allow.pointers`` match."""
SKIP_ENTROPY = 4
"""Flag: the node is an ``entropy.skip_pointers`` match."""

_MAX_EDGES = 512


Pattern = jsonptr.Pattern


def parse_pointer(text: str) -> Pattern:
    """The compiled parts of a pointer pattern; ``ValueError`` (with a reason) when it is malformed."""
    if not isinstance(text, str):
        raise ValueError("must be a string")
    if not text.startswith("/"):
        raise ValueError("a JSON pointer must start with '/'")
    if "~" in text.replace("~0", "").replace("~1", ""):
        raise ValueError("'~' must be followed by 0 or 1 in a JSON pointer")
    return jsonptr.compile_pattern(text)


class PointerState:
    """Where the walk is among the patterns: which of them match here, where each goes next."""

    __slots__ = ("_automaton", "_edges", "_items", "flags")

    def __init__(
        self, automaton: PointerAutomaton | None, items: frozenset[tuple[int, int]], flags: int
    ) -> None:
        self._automaton = automaton
        self._items = items
        self._edges: dict[str, PointerState] = {}
        self.flags = flags

    def step(self, segment: str) -> PointerState:
        """The state one key or index (as a string) further down."""
        nxt = self._edges.get(segment)
        if nxt is None:
            if self._automaton is None:
                return self
            nxt = self._automaton.advance(self._items, segment)
            if len(self._edges) < _MAX_EDGES:
                self._edges[segment] = nxt
        return nxt


DEAD = PointerState(None, frozenset(), 0)
"""The state below which no pattern can match: every step stays here."""


class PointerAutomaton:
    """The patterns ``(segments, flag)`` of one policy, as a lazily built automaton."""

    def __init__(self, patterns: Sequence[tuple[Pattern, int]]) -> None:
        self._patterns = tuple(patterns)
        self._states: dict[frozenset[tuple[int, int]], PointerState] = {frozenset(): DEAD}
        self.root = self._state({(i, 0) for i in range(len(self._patterns))})

    def _state(self, items: set[tuple[int, int]]) -> PointerState:
        closed = set(items)
        todo = list(items)
        while todo:
            i, at = todo.pop()
            segments = self._patterns[i][0]
            if at < len(segments) and segments[at] == jsonptr.ANY_DEPTH and (i, at + 1) not in closed:
                closed.add((i, at + 1))
                todo.append((i, at + 1))
        key = frozenset(closed)
        state = self._states.get(key)
        if state is None:
            flags = 0
            for i, at in key:
                segments, flag = self._patterns[i]
                if at == len(segments):
                    flags |= flag
            state = self._states[key] = PointerState(self, key, flags)
        return state

    def advance(self, items: frozenset[tuple[int, int]], segment: str) -> PointerState:
        nxt: set[tuple[int, int]] = set()
        for i, at in items:
            segments = self._patterns[i][0]
            if at >= len(segments):
                continue
            want = segments[at]
            if want == jsonptr.ANY_DEPTH:
                nxt.add((i, at))
            elif jsonptr.segment_matches(want, segment):
                nxt.add((i, at + 1))
        return self._state(nxt)
