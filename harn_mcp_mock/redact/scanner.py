"""The scanner: a redactor's string rules, composed once.

Rules come in two kinds (see :class:`~harn_mcp_mock.redact.gates.Facts`):

* *contained* rules (token formats, long literal secrets, entropy) only ever match inside one
  run of token characters, whatever surrounds it. The scanner finds the runs long enough for
  any of them (one ``bytes.translate`` and a few substring searches), runs the rules on each
  distinct run alone and caches the result per run: a URL, a path or a schema ``$id`` that
  comes back in every message costs one dict lookup after the first time.
* the other rules (Bearer/Basic values, URL passwords, PEM blocks, ``name=value`` text, the
  user's free-form patterns) run on the whole text, each behind its own cheap gate.

The entropy rule is the last contained rule; its hits can be left out (``allow`` and
``entropy.skip_pointers`` areas).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from harn_mcp_mock.redact.gates import Text, lazy_regex
from harn_mcp_mock.redact.rules import EntropyRule, Hit

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

    Group = tuple[str | None, bool, str | None, tuple[tuple[Any, str | None, str | None], ...]]
    """(needle, searched case-folded, a character of the needle searched first, (rule, its longest
    needle, a character of that) for each rule); see :func:`_first_char`"""

_CACHE_MAX = 4096
_NAMED_ID_SHY = frozenset({"otp-seed"})
"""Token formats whose shape ids share (16 or 32 characters of base32: an S3 request id): their
hit is dropped where the text names the value an id (``x-amz-request-id: ``, ``requestId=``,
``"requestId": "``). Checked on the hits, not in the expression: a lookbehind would make the
rule depend on what surrounds its run, and it would be run on every text instead of once per
distinct run (a clean message's cost: 55 -> 83 us on the corpus's harmless values)."""
_NAMED_ID = lazy_regex(r"""[Ii][Dd](?:: |=|": ?")\Z""")
_CACHED_RUN_MAX = 256  # longer runs are data (base64 payloads): scanned, never kept
_RUNS_ONE_BY_ONE = 12  # with more runs than this, run each contained rule on the whole text


_ENTRIES: dict[int, tuple[Any, tuple[str | None, bool], str | None, str | None]] = {}
"""id(a rule's facts) -> (the facts, its group key, its longest needle, that needle's character):
what :func:`_groups` reads off a rule, once per process for the policy's rules."""
_ENTRIES_MAX = 4096
_SYMBOLS: dict[tuple[str, str], str | None] = {}
_FIRST: dict[tuple[str, str], str | None] = {}


class Scanner:
    """``rules`` (callables from :class:`Text` to hits, with ``contained``/``run``/``any``)
    plus an optional entropy rule, composed once."""

    def __init__(self, rules: Sequence[Any], entropy: EntropyRule | None) -> None:
        self._text_rules = tuple(r for r in rules if not r.contained)
        contained = [r for r in rules if r.contained]
        self._entropy = entropy
        if entropy is not None:
            contained.append(entropy)
        self._run_rules = tuple(contained)
        self._run_min = min((r.run for r in contained), default=0)
        self._joined = tuple(r for r in self._text_rules if getattr(r, "joinable", True))
        # The rule groups (see _groups) are built when first asked for (``__getattr__``): a
        # scanner that a replay's start-up never uses (escaped text, base64 blobs) costs nothing.
        self._separate = tuple(r for r in self._text_rules if not getattr(r, "joinable", True))
        self.separate = bool(self._separate)
        """Whether some rule cannot look at joined strings (see :meth:`any_separately`)."""
        self._cache: dict[str, tuple[Hit, ...]] = {}
        self.min_len = min((r.min_len for r in (*self._text_rules, *contained)), default=1 << 30)

    def __getattr__(self, name: str) -> Any:
        # Three sets, each built alone: the env scan at start-up (``hits``) needs no joined groups.
        # The groups whose needle holds a symbol (``:``, ``-``, ``sig=``): one search for any of
        # those symbols skips them all in a text that has none (a short clean string).
        if name == "_run_groups":
            self._run_groups = _groups(self._run_rules)
        elif name in ("_text_groups", "_text_symbols", "_text_no_symbol_groups"):
            self._text_groups = _groups(self._text_rules)
            self._text_symbols, self._text_no_symbol_groups = _symbol_gate(self._text_groups)
        elif name in ("_joined_groups", "_symbols", "_no_symbol_groups"):
            self._joined_groups = _groups(self._joined)
            self._symbols, self._no_symbol_groups = _symbol_gate(self._joined_groups)
        else:
            raise AttributeError(name)
        return getattr(self, name)

    def any(self, text: Text) -> bool:
        """Whether some rule may hit ``text`` (entropy included; ``allow`` not considered)."""
        s = text.s
        if len(s) < self.min_len:
            return False
        symbols = self._symbols
        groups = (
            self._no_symbol_groups
            if symbols is not None and symbols.search(s) is None
            else self._joined_groups
        )
        if any(rule.any(text) for rule in _admitted(groups, text)):
            return True
        return self._any_run(text)

    def any_separately(self, strings: Sequence[str]) -> bool:
        """Whether a rule that cannot look at joined strings hits one of ``strings``."""
        if not self._separate:
            return False
        texts = [Text(s) for s in strings]
        return any(rule.any(text) for rule in self._separate for text in texts)

    def _any_run(self, text: Text) -> bool:
        least = self._run_min
        if not self._run_rules or not text.has_run(least):
            return False
        s = text.s
        if text.count_runs(least) > _RUNS_ONE_BY_ONE:
            return any(rule.any(text) for rule in _admitted(self._run_groups, text))
        cache = self._cache
        seen: set[str] = set()
        for start, end in text.runs(least):
            run = s[start:end]
            if run in seen:
                continue
            seen.add(run)
            found = cache.get(run)
            if found is None:
                found = self._run_hits(run)
            if found:
                return True
        return False

    def hits(self, text: Text, *, entropy: bool) -> list[Hit]:
        """Every hit in ``text``; entropy hits only if ``entropy``."""
        hits: list[Hit] = []
        if not self._run_rules or not text.has_run(self._run_min):
            pass
        elif text.count_runs(self._run_min) > _RUNS_ONE_BY_ONE:
            for rule in _admitted(self._run_groups, text):
                if entropy or rule is not self._entropy:
                    found = rule(text)
                    if found:
                        hits.extend(found)
        else:
            s = text.s
            for start, end in text.runs(self._run_min):
                for a, b, name in self._run_hits(s[start:end]):
                    if entropy or name != EntropyRule.name:
                        hits.append((start + a, start + b, name))
        s = text.s
        symbols = self._text_symbols
        groups = (
            self._text_no_symbol_groups
            if symbols is not None and symbols.search(s) is None
            else self._text_groups
        )
        for rule in _admitted(groups, text):
            found = rule(text)
            if found:
                hits.extend(found)
        if hits and _NAMED_ID_SHY.intersection(name for _a, _b, name in hits):
            hits = [
                (a, b, name)
                for a, b, name in hits
                if name not in _NAMED_ID_SHY or not _NAMED_ID.search(s, max(0, a - 8), a)
            ]
        return hits

    def _run_hits(self, run: str) -> tuple[Hit, ...]:
        """The hits of the contained rules in one run (offsets relative to the run); cached."""
        found = self._cache.get(run)
        if found is None:
            text = Text(run)
            collected: list[Hit] = []
            for rule in _admitted(self._run_groups, text):
                hits = rule(text)
                if hits:
                    collected.extend(hits)
            found = tuple(collected)
            if len(run) <= _CACHED_RUN_MAX:
                if len(self._cache) >= _CACHE_MAX:
                    self._cache.clear()
                self._cache[run] = found
        return found


def _admitted(groups: Sequence[Group], text: Text) -> Iterator[Any]:
    """The rules of ``groups`` whose gates ``text`` passes, in order: a group's needle (searched in
    the text case-folded when the group's rules fold case, with its one-character gate ``pre``
    first), then each rule's own longer substring (``long``, its gate ``lpre`` first)."""
    s = text.s
    fold = None  # the text case-folded, asked for once
    for needle, folded, pre, rules in groups:
        if needle is not None:
            if folded:
                if fold is None:
                    fold = text.ascii_fold
                hay = fold
            else:
                hay = s
            if (pre is not None and pre not in hay) or needle not in hay:
                continue
        for rule, long, lpre in rules:
            if long is None or ((lpre is None or lpre in s) and long in s):
                yield rule


def _groups(rules: Sequence[Any]) -> tuple[Group, ...]:
    """``rules`` grouped by the first substring each needs (its cheapest gate, usually one rare
    character such as ``_`` or ``-``): one search tells a whole group it cannot match. A rule
    that needs no exact substring is grouped by the first ASCII substring it needs case-folded
    (``password``, ``identified``: searched in :attr:`Text.ascii_fold`, the flag ``True``), so
    that it costs one search too. Each rule comes with the longest exact substring it needs (or
    None), searched before the rule is called. Rules with neither form groups of their own
    (``None``). Order is kept.

    Each substring of several characters comes with one character it holds (``=`` for ``sig=``,
    ``k`` for ``token``; :func:`_first_char`),
    searched first: a one-character search is a ``memchr``, several times cheaper than the
    substring's own search in a long text that lacks the character."""
    by_needle: dict[tuple[str | None, bool], list[tuple[Any, str | None, str | None]]] = {}
    for rule in rules:
        _facts, key, long, pre = _entry(rule)
        by_needle.setdefault(key, []).append((rule, long, pre))
    return tuple(
        (needle, folded, None if needle is None or len(needle) == 1 else _first_char(needle), tuple(group))
        for (needle, folded), group in by_needle.items()
    )


def _entry(rule: Any) -> tuple[Any, tuple[str | None, bool], str | None, str | None]:
    """(the rule's facts, its group key, its longest needle if not the first, a character of that)."""
    facts = getattr(rule, "_facts", None)
    cached = _ENTRIES.get(id(facts))
    if cached is not None and cached[0] is facts:
        return cached
    needles = facts.needles if facts is not None else ()
    folds = [n for n in facts.fold_needles if n.isascii()] if facts is not None else []
    first = needles[0] if needles else None
    longest = max(needles, key=len) if needles else None
    long = longest if longest != first else None
    key = (first, False) if first is not None or not folds else (folds[0], True)
    pre = (
        None
        if long is None
        else _first_char(long, skip=first if first is not None and len(first) == 1 else "")
    )
    entry = (facts, key, long, pre)
    if facts is not None:
        if len(_ENTRIES) >= _ENTRIES_MAX:
            _ENTRIES.clear()
        _ENTRIES[id(facts)] = entry  # the entry holds the facts: the id is not reused meanwhile
    return entry


def _symbol_gate(groups: tuple[Group, ...]) -> tuple[re.Pattern[str] | None, tuple[Group, ...]]:
    """(one search for any symbol the groups' needles hold, the groups left when it finds none)."""
    symbols = sorted({s for g in groups if not g[1] for s in [_symbol(g[0])] if s is not None})
    regex = re.compile("[" + "".join(map(re.escape, symbols)) + "]") if symbols else None
    return regex, tuple(g for g in groups if g[1] or g[0] is None or _symbol(g[0]) is None)


_RARE_FIRST = "zqjxkvbpygfwmucldrhsnioate"
"""Lower-case letters from the rarest in text to the commonest (English letter frequencies)."""
_UNRANKED = chr(99)
_RANKS: dict[int, str] = {
    **{i: chr(0) for i in range(128) if not chr(i).isalnum()},  # a symbol: searched first
    **dict.fromkeys(map(ord, " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"), _UNRANKED),  # white space: never
    **{ord(c): chr(1 + i) for i, c in enumerate(_RARE_FIRST.upper())},  # capitals: rarer than small letters
    **{ord(c): chr(27 + i) for i, c in enumerate(_RARE_FIRST)},
    **dict.fromkeys(map(ord, "0123456789"), chr(31)),  # digits: about as common as a small 'k'
}
"""``str.translate`` table: an ASCII character -> its rank (as a character), the rarest first."""


def _first_char(needle: str, skip: str = "") -> str | None:
    """The character of ``needle`` searched before the needle itself (a ``memchr``: a few
    nanoseconds, where the needle's own search costs about a nanosecond per character of the
    text): its first ASCII symbol, else its rarest letter or digit (``k`` in ``token``, ``q`` in
    ``sqlplus``); not ``skip`` (a character already searched for). Every text that holds the
    needle holds it (a case-folded needle's is looked for in the case-folded text), so this
    search never changes what matches."""
    known = _FIRST.get((needle, skip), "")
    if known != "":
        return known
    ranks = (needle.replace(skip, " ") if skip else needle).translate(_RANKS)  # C-speed
    least = min(ranks, default=_UNRANKED)
    found = needle[ranks.index(least)] if least < _UNRANKED else None
    if len(_FIRST) >= _ENTRIES_MAX:
        _FIRST.clear()
    _FIRST[needle, skip] = found
    return found


def _symbol(needle: str | None, skip: str = "") -> str | None:
    """The first character of ``needle`` that is neither a letter, a digit nor a space (nor
    ``skip``, a character already searched for)."""
    if needle is None:
        return None
    known = _SYMBOLS.get((needle, skip), "")
    if known != "":
        return known
    found = next((c for c in needle if not c.isalnum() and not c.isspace() and c != skip), None)
    if len(_SYMBOLS) >= _ENTRIES_MAX:
        _SYMBOLS.clear()
    _SYMBOLS[needle, skip] = found
    return found
