"""Cheap prefilters: the facts about a string that tell a rule it cannot match.

Python's regular expression engine costs about 10 ns per character for a pattern without a
literal prefix, which is too slow to run a dozen detectors over every string a proxy relays.
So each rule first asks a :class:`Text` a few questions answered by C-speed string operations:
is the string long enough, does it hold a run of token characters at least this long
(``bytes.translate`` + one substring search), does it contain these substrings. Only when
every answer is "maybe" does the regular expression run.

:func:`analyze` reads those facts off a pattern (with the standard library's own parser), so a
user's pattern gets the same treatment as the built-in ones: its shortest match, the longest
run of token characters every match must contain, and literal substrings every match must
contain. When the parser is not available or the pattern is too unusual, the facts are simply
absent and the pattern always runs: slower, never wrong.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable

from harn_mcp_mock._record import record

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

_LETTERS_DIGITS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # string's, unimported
TOKEN_CHARS = frozenset(_LETTERS_DIGITS + "+/=_-.")
"""The characters of a token (API keys, base64, JWTs): runs of them are entropy candidates."""

_CLASS_TABLE = bytes(0x78 if chr(i) in TOKEN_CHARS else 0x20 for i in range(256))
_RUN_NEEDLES: dict[int, bytes] = {}
_NO_RUN = 1 << 62
_RARE = frozenset("@#$%&~`|\\<>{}[]^!*;_-.:")
_MIN_RUN = 8  # shorter required runs are everywhere in text: not worth asking about
_FOLDS_TO_ASCII = "\u017f\u0131\u0130\u212a"  # long s, dotless i, dotted I, Kelvin sign


class _LazyRegex:
    """A regular expression compiled on first use (see :func:`lazy_regex`). Each attribute asked
    for (``search``, ``sub``, ...) is the compiled pattern's own, kept on the instance after the
    first time: later calls cost what they cost on the pattern itself."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__
        compiled = own.get("_re")
        if compiled is None:
            compiled = own["_re"] = re.compile(self.pattern, self._flags)
        value = getattr(compiled, name)
        own[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy_regex({self.pattern!r}, {self._flags})"


def lazy_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled when first used rather than at import: the
    redaction modules' helper expressions cost a replay's start-up nothing until a string
    reaches the code that needs them. (Not for ``re.sub(regex, ...)``-style calls, which want a
    real pattern: call the methods.)"""
    return _LazyRegex(pattern, flags)  # type: ignore[return-value]


def _run_needle(n: int) -> bytes:
    needle = _RUN_NEEDLES.get(n)
    if needle is None:
        needle = _RUN_NEEDLES[n] = b"x" * n
    return needle


class Text:
    """One string under scan, with the facts rules ask about computed once, on demand."""

    __slots__ = ("_ascii", "_ascii_fold", "_classes", "_fold", "_no_run", "_run", "s")

    def __init__(self, s: str) -> None:
        self.s = s
        self._ascii: bytes | None = None
        self._classes: bytes | None = None
        self._fold: str | None = None
        self._ascii_fold: str | None = None
        self._no_run = _NO_RUN
        self._run = 0

    @property
    def fold(self) -> str:
        """The string case-folded (``casefold``; ``lower`` when ASCII)."""
        if self._fold is None:
            self._fold = self.s.lower() if self.s.isascii() else self.s.casefold()
        return self._fold

    @property
    def ascii_fold(self) -> str:
        """Lower-cased with every non-ASCII character as ``?``: one character per character of
        the string, and enough to search for ASCII needles. Much cheaper than :attr:`fold` on
        non-ASCII text; the same as :attr:`fold` when a non-ASCII character would fold to an
        ASCII letter (the long s, the Kelvin sign, the dotted and dotless i)."""
        if self._ascii_fold is None:
            s = self.s
            if s.isascii():
                self._ascii_fold = self.fold
            elif any(c in s for c in _FOLDS_TO_ASCII):
                self._ascii_fold = self.fold
            else:
                self._ascii_fold = self._ascii_bytes().lower().decode("ascii")
        return self._ascii_fold

    def _ascii_bytes(self) -> bytes:
        if self._ascii is None:
            self._ascii = self.s.encode("ascii", "replace")
        return self._ascii

    def _class_bytes(self) -> bytes:
        """One byte per character: ``x`` for a token character, a space for any other."""
        if self._classes is None:
            self._classes = self._ascii_bytes().translate(_CLASS_TABLE)
        return self._classes

    def count_runs(self, n: int) -> int:
        """About how many runs of at least ``n`` token characters there are (at least as many)."""
        return self._class_bytes().count(_run_needle(n)) if self.has_run(n) else 0

    def has_run(self, n: int) -> bool:
        """Whether the string holds ``n`` consecutive token characters."""
        if n <= self._run:
            return True
        if n >= self._no_run or len(self.s) < n:
            return False
        needle = _RUN_NEEDLES.get(n) or _run_needle(n)
        if needle in (self._classes or self._class_bytes()):
            self._run = n
            return True
        self._no_run = n
        return False

    def runs(self, n: int) -> list[tuple[int, int]]:
        """The (start, end) of every maximal run of at least ``n`` token characters."""
        if not self.has_run(n):
            return []
        classes = self._class_bytes()
        needle = _run_needle(n)
        out: list[tuple[int, int]] = []
        start = classes.find(needle)
        while start >= 0:
            end = classes.find(b" ", start + n)
            if end < 0:
                end = len(classes)
            out.append((start, end))
            start = classes.find(needle, end)
        return out


@record(frozen=True)
class Facts:
    """What every match of a pattern needs (see :func:`analyze`)."""

    min_len: int = 0
    """No match is shorter than this."""
    run: int = 0
    """Every match contains this many consecutive token characters."""
    needles: tuple[str, ...] = ()
    """Every match contains each of these substrings."""
    fold_needles: tuple[str, ...] = ()
    """Every match contains each of these, compared case-folded."""
    blob_safe: bool = False
    """Searching strings joined by newlines (with MULTILINE) finds every match one of them has."""
    contained: bool = False
    """Every match lies inside one run of token characters and does not depend on what is around
    the run: the pattern may be run on each run alone."""

    def admits(self, text: Text) -> bool:
        """False when ``text`` certainly holds no match."""
        s = text.s
        if len(s) < self.min_len or (self.run and not text.has_run(self.run)):
            return False
        for needle in self.needles:
            if needle not in s:
                return False
        for needle in self.fold_needles:
            # An ASCII needle is found in the cheap ASCII fold (see Text.ascii_fold).
            if needle not in (text.ascii_fold if needle.isascii() else text.fold):
                return False
        return True

    @property
    def ascii_needles(self) -> bool:
        return all(n.isascii() for n in self.fold_needles)


NO_FACTS = Facts()

_parser: Any
try:  # CPython's own regular expression parser (``sre_parse`` before 3.11).
    _parser = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - other interpreters: no prefilter, patterns always run
    _parser = None


class _Seq:
    __slots__ = ("all_token", "context_free", "literals", "run", "width")

    def __init__(
        self, literals: list[tuple[str, bool]], run: int, all_token: bool, width: int, context_free: bool
    ) -> None:
        self.literals = literals
        self.run = run
        self.all_token = all_token
        self.width = width
        self.context_free = context_free


def analyze(pattern: str, flags: int = 0) -> Facts:
    """The :class:`Facts` of ``pattern``; :data:`NO_FACTS` when it cannot be analysed."""
    if _parser is None:  # pragma: no cover
        return NO_FACTS
    try:
        tree = _parser.parse(pattern, flags)
        min_len = int(tree.getwidth()[0])
        seq = _sequence(tree, bool(tree.state.flags & re.IGNORECASE))
        safe = _blob_safe(tree)
    except Exception:  # an analysis bug must never stop redaction: fall back to no prefilter
        return NO_FACTS
    run = seq.run if seq.run >= _MIN_RUN else 0
    contained = seq.all_token and seq.context_free and run > 0
    plain = _needles(lit for lit, folded in seq.literals if not folded)
    fold = _needles(lit.casefold() for lit, folded in seq.literals if folded)
    return Facts(min_len, run, plain, fold, safe, contained)


_INDEX: dict[str, Facts] | None = None
INDEX_NAME = "default.facts.json"
"""The facts of the default policy's patterns, precomputed (``policies/default.facts.json``):
analysing its ~230 patterns costs tens of milliseconds, paid at every replay's start-up
otherwise. Written by :func:`write_index`; a test keeps it current."""


def _index_key(pattern: str, flags: int) -> str:
    return f"{flags}:{pattern}"


def facts_of(pattern: str, flags: int = 0) -> Facts:
    """:func:`analyze`, answered from the precomputed index when the pattern is in it."""
    global _INDEX
    if _INDEX is None:
        _INDEX = _load_index()
    facts = _INDEX.get(_index_key(pattern, flags))
    return analyze(pattern, flags) if facts is None else facts


def _load_index() -> dict[str, Facts]:
    import os

    import orjson

    path = os.path.join(os.path.dirname(__file__), "policies", INDEX_NAME)
    try:
        with open(path, "rb") as fh:
            raw = orjson.loads(fh.read())
    except (OSError, ValueError):
        return {}  # no index: every pattern is analysed (slower start-up, same answers)
    return {key: Facts(m, r, tuple(n), tuple(f), b, c) for key, (m, r, n, f, b, c) in raw.items()}


def index_entries(patterns: Iterable[tuple[str, int]]) -> dict[str, list[Any]]:
    """The index document for ``(pattern, flags)`` pairs (what :func:`write_index` writes)."""
    out: dict[str, list[Any]] = {}
    for pattern, flags in patterns:
        f = analyze(pattern, flags)
        out[_index_key(pattern, flags)] = [
            f.min_len,
            f.run,
            list(f.needles),
            list(f.fold_needles),
            f.blob_safe,
            f.contained,
        ]
    return dict(sorted(out.items()))


def _needles(literals: Iterable[str]) -> tuple[str, ...]:
    """The substrings worth searching for, cheapest and most telling first: single characters
    that are rare in text and absent from base64 (a one-character search is a ``memchr``), then
    the two longest literals."""
    distinct = set(literals)
    rare = sorted({c for lit in distinct for c in lit if c in _RARE})
    longest = sorted(distinct, key=lambda lit: (-len(lit), lit))[:2]
    return tuple(dict.fromkeys([*rare[:2], *longest]))


def _name(op: Any) -> str:
    return str(op)


def _token_char(code: int, icase: bool) -> bool:
    ch = chr(code)
    if ch not in TOKEN_CHARS:
        return False
    # With IGNORECASE, ASCII letters also match a few non-ASCII ones (the Kelvin sign, ...).
    return not (icase and ch.isalpha())


def _token_set(items: Any, icase: bool) -> bool:
    for op, av in items:
        name = _name(op)
        if name == "LITERAL":
            if not _token_char(av, icase):
                return False
        elif name == "RANGE":
            lo, hi = av
            if hi - lo > 256 or not all(_token_char(c, icase) for c in range(lo, hi + 1)):
                return False
        else:
            return False
    return True


def _sequence(items: Any, icase: bool) -> _Seq:
    literals: list[tuple[str, bool]] = []
    current: list[str] = []
    best_run = run = width = 0
    all_token = context_free = True

    def flush() -> None:
        if current:
            literals.append(("".join(current), icase))
            current.clear()

    def consume(n: int, token: bool) -> None:
        nonlocal run, best_run, all_token, width
        width += n
        if token:
            run += n
        else:
            best_run = max(best_run, run)
            run = 0
            all_token = False

    for op, av in items:
        name = _name(op)
        if name == "LITERAL":
            current.append(chr(av))
            consume(1, _token_char(av, icase))
            continue
        flush()
        if name == "AT":
            context_free = False  # ^, $, \b: what is next to the run matters
            continue
        if name in ("ASSERT", "ASSERT_NOT"):
            # Zero width: a run of token characters goes on across it. Looking at token
            # characters only, it sees the same inside a run as around it (the run is maximal).
            look = _sequence(av[1], icase)
            context_free = context_free and look.all_token and look.context_free
            continue
        if name == "IN":
            consume(1, _token_set(av, icase))
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            if name == "SUBPATTERN":
                _group, add, remove, sub = av
                sub_icase = (icase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            else:
                sub, sub_icase = av, icase
            inner = _sequence(sub, sub_icase)
            literals.extend(inner.literals)
            best_run = max(best_run, inner.run)
            context_free = context_free and inner.context_free
            consume(inner.width, inner.all_token)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, _hi, sub = av
            inner = _sequence(sub, icase)
            if lo >= 1:
                literals.extend(inner.literals)
                best_run = max(best_run, inner.run)
            context_free = context_free and inner.context_free
            consume(lo * inner.width, inner.all_token)
        elif name == "BRANCH":
            branches = [_sequence(b, icase) for b in av[1]]
            literals.extend(_common_literals(branches))
            best_run = max(best_run, min(b.run for b in branches))
            context_free = context_free and all(b.context_free for b in branches)
            consume(min(b.width for b in branches), all(b.all_token for b in branches))
        else:  # ANY, NOT_LITERAL, CATEGORY, GROUPREF, ...: one character of unknown kind, at most
            context_free = context_free and name in ("ANY", "NOT_LITERAL", "CATEGORY")
            consume(1 if name in ("ANY", "NOT_LITERAL", "CATEGORY") else 0, False)
    flush()
    return _Seq(literals, max(best_run, run), all_token, width, context_free)


def _common_literals(branches: list[_Seq]) -> list[tuple[str, bool]]:
    """The literals of the first branch that every other branch holds too (inside a literal)."""
    first, others = branches[0], branches[1:]
    return [
        (text, folded)
        for text, folded in first.literals
        if all(any(f == folded and text in t for t, f in other.literals) for other in others)
    ]


def _blob_safe(items: Any) -> bool:
    """No ``\\A``/``\\Z`` and no negative lookaround that a newline could satisfy."""
    for op, av in items:
        name = _name(op)
        if name == "AT":
            if _name(av) in ("AT_BEGINNING_STRING", "AT_END_STRING"):
                return False
        elif name == "ASSERT_NOT":
            if _may_match_newline(av[1]):
                return False
        elif name == "ASSERT":
            if not _blob_safe(av[1]):
                return False
        elif name == "SUBPATTERN":
            if not _blob_safe(av[3]):
                return False
        elif name == "ATOMIC_GROUP":
            if not _blob_safe(av):
                return False
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if not _blob_safe(av[2]):
                return False
        elif name == "BRANCH":
            if not all(_blob_safe(b) for b in av[1]):
                return False
        elif name == "GROUPREF_EXISTS":
            return False
    return True


def _may_match_newline(items: Any) -> bool:
    for op, av in items:
        name = _name(op)
        if name == "LITERAL":
            if av == 10:
                return True
        elif name == "IN":
            for sub_op, sub_av in av:
                sub = _name(sub_op)
                if sub == "LITERAL" and sub_av == 10:
                    return True
                if sub == "RANGE" and sub_av[0] <= 10 <= sub_av[1]:
                    return True
                if sub not in ("LITERAL", "RANGE"):
                    return True
        elif name in ("AT",):
            continue
        elif name in ("SUBPATTERN",):
            if _may_match_newline(av[3]):
                return True
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if _may_match_newline(av[2]):
                return True
        elif name == "BRANCH":
            if any(_may_match_newline(b) for b in av[1]):
                return True
        else:
            return True
    return False
