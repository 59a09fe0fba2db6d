"""String rules: plain callables from a :class:`~harn_mcp_mock.redact.gates.Text` to hits.

A hit is ``(start, end, rule name)``: the span of the secret inside the string (only the secret
part: in ``Authorization: Bearer abc`` only ``abc``). Every rule has the same shape, in the
manner of structlog's processors, and a :class:`~harn_mcp_mock.redact.Redactor` composes
them once into its scanner:

* :class:`PatternRule`: a named regular expression from the policy (the token formats of the
  default policy, and the user's ``redact.patterns``); a group named ``secret`` marks the
  part to replace.
* :class:`LiteralRule`: the literal secrets of one server, taken from its argv and
  environment; one alternation, longest first.
* :class:`AssignmentRule`: ``name = value`` and ``"name": "value"`` inside free text, where
  the name is one the policy's key rules call secret (``password: hunter2``).
* :class:`EntropyRule`: long runs of token characters that look random.

Each rule also answers ``any(text)``: is there at least one hit (without collecting them).
"""

from __future__ import annotations

import functools
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from harn_mcp_mock.redact.gates import Facts, Text, analyze, lazy_regex
from harn_mcp_mock.redact.pairs import ID_WORDS, NOT_CREDENTIAL_STEMS

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

Hit = tuple[int, int, str]
"""(start, end, rule name) of one secret inside a string."""


class PatternRule:
    """A named regular expression; the group named ``secret``, if any, is what gets replaced.

    The expression is compiled on first use: most rules' gates (:class:`~.gates.Facts`) turn
    most strings away, so a replay that answers ``initialize`` compiles only the few rules
    whose gates admitted something (a start-up cost of tens of milliseconds otherwise).
    ``facts`` may be given precomputed (the default policy ships them, see ``_factsindex``).
    """

    __slots__ = ("_blob", "_compiled", "_facts", "_flags", "_group", "name", "pattern")

    def __init__(self, name: str, regex: str, flags: int = 0, facts: Facts | None = None) -> None:
        self.name = name
        self.pattern = regex
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._blob: re.Pattern[str] | None = None
        self._group: int | str = 0
        self._facts = analyze(regex, flags) if facts is None else facts

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled expression."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self._flags)
            self._group = "secret" if "secret" in compiled.groupindex else 0
        return compiled

    def _blob_regex(self) -> re.Pattern[str]:
        blob = self._blob
        if blob is None:
            if self._flags & re.MULTILINE or _inline_multiline(self.pattern):
                blob = self._blob = self.regex  # the same expression: compiled once
            else:
                blob = self._blob = re.compile(self.pattern, self._flags | re.MULTILINE)
        return blob

    @property
    def min_len(self) -> int:
        """No match is shorter than this."""
        return self._facts.min_len

    @property
    def run(self) -> int:
        """Every match holds this many consecutive token characters."""
        return self._facts.run

    @property
    def needles(self) -> tuple[str, ...]:
        """Substrings every match contains."""
        return self._facts.needles

    @property
    def contained(self) -> bool:
        """Whether the rule may be run on each run of token characters alone (see gates.Facts)."""
        return self._facts.contained

    @property
    def joinable(self) -> bool:
        """Whether :meth:`any` may be asked of several strings joined by newlines."""
        return self._facts.blob_safe

    def __call__(self, text: Text) -> list[Hit]:
        if not self._facts.admits(text):
            return []
        regex = self.regex  # first: it sets self._group
        group, name = self._group, self.name
        hits: list[Hit] = []
        for match in regex.finditer(text.s):
            start, end = match.span(group)
            if end > start:
                hits.append((start, end, name))
        return hits

    def any(self, text: Text) -> bool:
        if not self._facts.admits(text):
            return False
        regex = self._blob_regex() if self._facts.blob_safe else self.regex
        return regex.search(text.s) is not None


def _inline_multiline(pattern: str) -> bool:
    """Whether ``pattern`` opens with global inline flags that include ``m`` (``(?m)``, ``(?im)``)."""
    if not pattern.startswith("(?"):
        return False
    end = pattern.find(")")
    flags = pattern[2:end]
    return end > 2 and "m" in flags and flags.isalpha()


class LiteralRule:
    """Known secret strings (the server's argv and env secrets, and every value the redactor
    has identified since), each with its origin.

    One regular expression shaped as a trie of the literals (longest match first at each
    position), so that hundreds of them cost about as much as a few: the engine follows one
    branch per character instead of trying each literal in turn. Split in two by
    :func:`literal_rules`: long literals of token characters, which lie inside one run
    (``contained``), and the others.
    """

    __slots__ = ("_budget", "_compiled", "_needles", "_origins", "_spent", "contained", "min_len", "run")

    def __init__(self, origins: Mapping[str, str], *, contained: bool) -> None:
        # Longest first, then in code point order (one sort by length of the sorted literals:
        # a stable sort keeps that order among literals of one length; C-speed keys).
        ordered = sorted(sorted(origins), key=len, reverse=True)
        self._origins = dict(origins)
        self._compiled: re.Pattern[str] | None = None  # when substring searches cost more
        self.contained = contained
        self.min_len = len(ordered[-1]) if ordered else 0
        self.run = self.min_len if contained else 0
        self._needles = tuple(ordered)
        # Compiling the expression costs about as much as searching ``_COMPILE_CHAR`` characters
        # per character of the literals: the substring searches run until they cost that much
        # (then it is compiled), so a memory that learns a thousand values in one message does
        # not pay for an expression it uses once. A few literals are never compiled.
        self._spent = 0
        self._budget = sum(map(len, ordered)) * _COMPILE_CHAR if len(ordered) > _FEW_NEEDLES else -1

    def _admits(self, text: Text) -> bool:
        s = text.s
        if len(s) < self.min_len or (self.contained and not text.has_run(self.run)):
            return False
        return True

    @property
    def _regex(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(trie_regex(sorted(self._origins)))
        return compiled

    def _searches(self, n: int) -> bool:
        """Whether a text of ``n`` characters is searched needle by needle (else by the
        expression): until the searches have cost as much as compiling it, and after, where
        they are still the cheaper (a long text, not too many literals)."""
        if self._budget < 0:
            return True
        finds = len(self._needles) * (_FIND_CALL + n)
        if self._compiled is None:
            self._spent += finds
            if self._spent <= self._budget:
                return True
        return finds <= _REGEX_CHAR * n

    def __call__(self, text: Text) -> list[Hit]:
        if not self._admits(text):
            return []
        origins = self._origins
        s = text.s
        # Every occurrence of every literal, overlapping ones included (``abcXYZ`` and ``XYZdef``
        # in ``abcXYZdef``; ``abab`` twice in ``ababab``): both ways find the same spans, so what
        # is redacted does not depend on which way a rule took, which depends on its history.
        hits: list[Hit] = []
        if self._searches(len(s)):  # C-speed substring searches, no expression to compile
            if self.contained and len(s) >= _HAY_MIN and len(self._needles) > _FEW_NEEDLES:
                return self._run_finds(text)
            for needle in self._needles:
                at = s.find(needle)
                while at >= 0:
                    hits.append((at, at + len(needle), origins[needle]))
                    at = s.find(needle, at + 1)
            return hits
        # The longest literal at each place one starts (a match also starting inside the last).
        search = self._regex.search
        m = search(s)
        while m is not None:
            at = m.start()
            hits.append((at, m.end(), origins[m.group()]))
            m = search(s, at + 1)
        return hits

    def _run_finds(self, text: Text) -> list[Hit]:
        """The substring searches of :meth:`__call__` for a rule of literals of token characters,
        made in the text's runs of token characters long enough for one (joined by a space,
        which no literal holds: every occurrence lies inside one run), not in all of it: the
        same hits in the same order, where a long text is mostly words and placeholders."""
        s, origins = text.s, self._origins
        runs = text.runs(self.run)
        hay = " ".join([s[a:b] for a, b in runs])
        at_hay: list[int] = []  # where each run starts in ``hay``
        at = 0
        for a, b in runs:
            at_hay.append(at)
            at += b - a + 1
        hits: list[Hit] = []
        for needle in self._needles:
            found = hay.find(needle)
            while found >= 0:
                i = bisect_right(at_hay, found) - 1
                start = runs[i][0] + found - at_hay[i]
                hits.append((start, start + len(needle), origins[needle]))
                found = hay.find(needle, found + 1)
        return hits

    def any(self, text: Text) -> bool:
        if not self._admits(text):
            return False
        s = text.s
        if self._searches(len(s)):
            return any(needle in s for needle in self._needles)
        return self._regex.search(s) is not None

    def compile(self) -> None:
        """Compile the expression now rather than when the searches have cost as much (when
        there is one)."""
        if self._budget >= 0:
            self._regex  # noqa: B018 (the property compiles)


_HAY_MIN = 1024  # in a text this long, many literals of token characters are searched run by run
_SHORT_TEXT = 256  # in a text this short, a run long enough is reason enough to search
_FEW_NEEDLES = 48  # up to this many literals, substring searches beat one expression
# Costs in characters searched by ``str.find``, tuned on CPython 3.11 on two workloads: a config
# dump that teaches 200 values in one 31 kB message (1,085 literals: 4 ms of searches against
# 41 ms to compile their trie), and benchmarks/bench_redact.py's stream of small messages that
# each teach one value (where the compiled trie wins on short strings).
_FIND_CALL = 700  # one search's fixed cost
_REGEX_CHAR = 300  # the compiled trie, per character of text
_COMPILE_CHAR = 2000  # compiling the trie, per character of the literals


def trie_regex(literals: Sequence[str]) -> str:
    """A regular expression matching any of ``literals``, the longest one where several start
    at the same place: a trie over their first characters (``ab(?:c…|d…)``), then, below
    :data:`_TRIE_DEPTH` characters, an alternation of the rests, longest first."""
    if not literals:
        return "(?!)"

    def build(words: list[str], depth: int) -> str:
        # ``words``: the rests of the literals below one node of the trie ("" = one ends here).
        ends = "" in words
        rests = [w for w in words if w]
        if not rests:
            return ""
        if depth >= _TRIE_DEPTH or len(rests) == 1:
            rests.sort(key=lambda w: (-len(w), w))
            body = "|".join(map(re.escape, rests))
            body = body if len(rests) == 1 and not ends else "(?:" + body + ")"
        else:
            by_first: dict[str, list[str]] = {}
            for w in rests:
                by_first.setdefault(w[0], []).append(w[1:])
            branches = [re.escape(ch) + build(group, depth + 1) for ch, group in sorted(by_first.items())]
            body = branches[0] if len(branches) == 1 and not ends else "(?:" + "|".join(branches) + ")"
        return "(?:" + body + ")?" if ends else body

    return build(sorted(set(literals)), 0)


_TRIE_DEPTH = 4


LONG_LITERAL = 16
"""Literals of token characters at least this long are matched run by run."""
_TOKEN_LITERAL = lazy_regex(r"[A-Za-z0-9+/=_.-]+")
"""A string of :data:`~.gates.TOKEN_CHARS` only (ASCII letters, digits, ``+/=_-.``)."""


def literal_rules(origins: Mapping[str, str]) -> list[LiteralRule]:
    """The rules for the literal secrets ``origins`` (secret -> origin name)."""
    token = _TOKEN_LITERAL.fullmatch
    long = {s: o for s, o in origins.items() if len(s) >= LONG_LITERAL and token(s)}
    other = {s: o for s, o in origins.items() if s not in long}
    rules = []
    if other:
        rules.append(LiteralRule(other, contained=False))
    if long:
        rules.append(LiteralRule(long, contained=True))
    return rules


# --- secret assignments in free text ------------------------------------------------------------

_NAME_CHARS = "A-Za-z0-9_.-"
# (reversed: the name may stand at the end of the line before, the separator starting the next
# one: Java's 'DEFAULT_ACCOUNT_KEY⏎        = "…"')
_BEFORE_SEPARATOR_REVERSED = lazy_regex(rf"""[ \t]*(?:\n\r?[ \t]*)?["']?\\*([{_NAME_CHARS}]+)""")
_SCHEME = r"(?:(?:[Bb]earer|[Bb]asic|[Tt]oken)[ \t]+)?"
_VALUE = lazy_regex(
    rf"""[ \t]*(?:(?:'''|\"\"\"|\\*["']){_SCHEME}(?P<quoted>[^"'\\\r\n]+)|{_SCHEME}(?P<bare>[^\s"'\\,;&}}\])<>]+))"""
)
_PARAMETER = lazy_regex(r"&(?:[A-Za-z_][\w.\[\]-]*=(?!=)|(?:amp|quot|lt|gt|apos|#[0-9]+|#x[0-9A-Fa-f]+);)")
"""A query parameter (``&user=``) or an HTML entity (``&amp;``) at a ``&``."""
_BARE_MORE = lazy_regex(r"""&[^\s"'\\,;&}\])<>]+""")
_NAME_WINDOW = 64
_SEPARATOR_COST = 600  # one separator looked at costs about as much as a needle searched in 600 characters


_CODE = lazy_regex(r"[A-Za-z_][A-Za-z0-9_.]*[(\[]")
_TEMPLATE_START = ("$", "<", "{", "(", "%", "`")


def template_start(value: str) -> bool:
    """Whether ``value`` opens as a template or placeholder: ``<…``, ``{…``, ``(…``, a `` `command` ``,
    or a variable's reference (``$NAME``, ``${…}``, ``$(…)``, ``%NAME%``, ``%(name)s``). A ``$`` or
    ``%`` before a digit or a symbol refers to nothing: a password that starts with one
    (``$4Qng…``, ``%5HoP…``) is no template; ``%`` and two hex digits is URL-encoded text."""
    if not value.startswith(_TEMPLATE_START):
        return False
    if value[0] not in "$%" or len(value) < 2:
        return True
    second = value[1]
    if value[0] == "%" and _PERCENT_ESCAPE.match(value):
        return True  # URL-encoded text ('%20sid=…'), no value of its own
    return second.isalpha() or second in "_{("


_PERCENT_ESCAPE = lazy_regex(r"%[0-9A-Fa-f]{2}")


_CONSTANT = lazy_regex(r"[A-Z]+(?:_[A-Z]+)+")
_REFERENCE = lazy_regex(r"[A-Za-z_]+(?:\.[A-Za-z_]+)+")
_KEBAB = lazy_regex(r"[a-z]+(?:[-_][a-z]+)+")
_KEBAB_MAX = 16
_PIPED_RULES = lazy_regex(r"[a-z_]+(?::[\w,.-]*)?(?:\|[a-z_]+(?::[\w,.-]*)?)+")


def plausible_value(value: str) -> bool:
    """A value worth redacting: not a short plain word (``password: required``), not code
    (``token = tokens[name]``, ``secret = load_secret()``, ``password = var.db_password``), not a
    template or placeholder (``$API_KEY``, ``${{ secrets.X }}``, ``<your token>``, ``{key}``,
    ``%PASSWORD%``, a `` `command` ``, ``ADD_YOUR_TOKEN_HERE``), not a short name of
    lower-case words (``secretKey: api-key``) and not validation rules
    (``required|string|min:8``)."""
    if len(value) < 4 or template_start(value) or _CODE.match(value):
        return False
    if _CONSTANT.fullmatch(value) or _REFERENCE.fullmatch(value):
        return False
    if len(value) <= _KEBAB_MAX and _KEBAB.fullmatch(value):
        return False
    if "|" in value and _PIPED_RULES.fullmatch(value):
        return False  # validation rules: Laravel's 'password' => 'required|string|min:8'
    return not (value.isalpha() and len(value) <= 10 and (value.islower() or value.istitle()))


class AssignmentRule:
    """``name = value``, ``name: value`` and ``"name": "value"`` in text, where the name looks secret.

    ``secret_name`` decides the name (the policy's key rules, so that text and JSON agree).
    ``needles`` are case-folded substrings one of which every secret name contains (``None``
    when the key rules do not tell): then only the separators right after a name holding a
    needle are looked at, found by two regular expressions over the reversed text (each with
    a one-character literal prefix, which Python's engine finds quickly). Without needles,
    every separator is looked at.
    """

    __slots__ = ("_ascii", "_colon", "_equals", "_needles", "_secret_name", "_weak", "min_len")

    name = "secret-assignment"
    run = 0
    contained = False

    def __init__(
        self, secret_name: Callable[[str], bool], needles: Sequence[str] | None, min_name: int
    ) -> None:
        self._secret_name = secret_name
        self.min_len = max(1, min_name) + 1 + 4
        self._colon: re.Pattern[str] | None = None
        self._equals: re.Pattern[str] | None = None
        # The names that only read like a secret's are taken too, unless the policy has no key
        # rules at all ("extends": "none" and no keys: then no name is a secret's).
        self._weak = needles is None or bool(needles)
        if needles:
            needles = (*needles, *_WEAK_NEEDLES)
        self._ascii = needles is not None and all(n.isascii() for n in needles)
        self._needles = tuple(needles) if needles is not None else None
        if needles is not None:
            ordered = sorted(set(needles), key=lambda n: (-len(n), n))
            alternatives = "|".join(re.escape(n[::-1]) for n in ordered) or "(?!)"
            name = r"""["']?\\*[\w.-]*?(?:""" + alternatives + ")"
            # compiled when a text first has a separator; a name may end the line before '='
            # only (Java's continuation line), not ':' (reST's ':param x:', ':return:' lines)
            self._colon = lazy_regex(r":[ \t]*" + name)
            self._equals = lazy_regex(r"=[!=]?[ \t]*(?:\n\r?[ \t]*)?" + name)

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        has_colon, has_equals = ":" in s, "=" in s
        if not (has_colon or has_equals):
            return []
        separators: list[int]
        folded = text.ascii_fold if self._ascii else text.fold
        needles = self._needles
        if needles is not None and (s.count(":") + s.count("=")) * _SEPARATOR_COST > len(s) * len(needles):
            # Many separators (JSON text): first make sure some secret name occurs at all.
            if not any(needle in folded for needle in needles):
                return []
        if self._colon is not None and self._equals is not None and len(folded) == len(s):
            reversed_fold = folded[::-1]
            last = len(s) - 1
            separators = []
            if has_colon:
                separators.extend(last - m.start() for m in self._colon.finditer(reversed_fold))
            if has_equals:
                separators.extend(last - m.start() for m in self._equals.finditer(reversed_fold))
        else:
            separators = [i for i, c in enumerate(s) if c == ":" or c == "="]
        hits: list[Hit] = []
        for at in sorted(separators):
            hits.extend(self._at(s, at))
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _at(self, s: str, at: int) -> list[Hit]:
        """The value after the separator at ``at``, if the name before it is secret: one the key
        rules take (then any plausible value), or one that merely reads like a secret's name
        (:func:`weak_secret_name`: ``SECRET KEY``, ``dbPass``, ``passworsd``; then only a value
        that looks like a credential, :func:`credential_like`)."""
        if s.startswith(("==", "=>", ":-"), at):
            # the first '=' of '==' (its second one reads the comparison); '=>' arrows; the
            # shell's '${NAME:-default}' (the code-fallback rule's)
            return []
        name_end = at - 1 if at and s[at - 1] in "!=" else at  # 'name != "v"', 'name == "v"'
        window = s[max(0, name_end - _NAME_WINDOW) : name_end][::-1]
        found = _BEFORE_SEPARATOR_REVERSED.match(window)
        if found is None or (s[at] != "=" and "\n" in window[: found.start(1)]):
            return []  # (a name on the line before: only before '=', see __init__)
        name_at = name_end - found.end(1)
        name = s[name_at : name_end - found.start(1)]
        strong = self._secret_name(name)
        if not strong:
            spaced = _WORDS_BEFORE.search(s, max(0, name_at - _NAME_WINDOW), name_at)  # 'Activation key: v'
            if not self._weak or not weak_secret_name(spaced[0] + name if spaced else name):
                return []
        if strong and name.lower() in AUTH_HEADER_NAMES:
            spans = scheme_credentials(s, at + 1)
            if spans is not None:
                return [(a, b, self.name) for a, b in spans]
        walrus = s.startswith(":=", at)
        if walrus and strong:
            return []  # Go's and Make's := is left to the code patterns (they know its quoting)
        value_at = at + 1
        while s.startswith("=", value_at):  # 'name == "value"', '===', 'name := "value"'
            value_at += 1
        paren = _OPEN_PAREN_AT_EOL.match(s, value_at)
        if paren is not None:  # black's 'API_KEY = (⏎    "…"⏎)'
            return self._next_line(s, at, paren.end(), strong=bool(strong), quoted_only=True)
        value = _VALUE.match(s, value_at)
        if value is not None:
            group = "quoted" if value.group("quoted") is not None else "bare"
            start, end = value.span(group)
        elif s.startswith("&", value_at) and not _PARAMETER.match(s, value_at):
            group, start = "bare", value_at  # 'PASSWORD=&2VyA*8c…': a '&' that starts no parameter
            end = start
        else:
            return self._next_line(s, at, value_at, strong=bool(strong))
        if walrus and group != "quoted":
            return []  # 'bitmexKey := os.Getenv(…)': only a quoted literal is a value
        if group == "quoted":
            end = quoted_end(s, start, end)
        else:  # 'PASSWORD=git&2026…&Qm9…==': a '&' that starts no parameter is the value's
            while s.startswith("&", end) and not _PARAMETER.match(s, end):
                more = _BARE_MORE.match(s, end)
                if more is None:
                    break
                end = more.end()
        secret = s[start:end]
        if not (plausible_value(secret) if strong else credential_like(secret)):
            return []
        return [(start, end, self.name)]

    def _next_line(
        self, s: str, at: int, value_at: int, *, strong: bool, quoted_only: bool = False
    ) -> list[Hit]:
        """The value on the line after a name whose own line ends at its separator: a quoted
        literal after ``=`` (``const apiKey =⏎  "…";``, ``API_KEY = (⏎    "…"⏎)``: as formatters
        wrap a long one; only such a literal when ``quoted_only``), or a
        line holding one word alone after ``:`` or ``=`` (``Save pass:⏎⏎  s3cE…``; YAML's plain
        scalar on the next line), past two blank lines at most. The word must look like a
        credential (:func:`credential_like`) whatever the name, and must not be a name itself
        (``key:⏎  nested: …``)."""
        m = _NEXT_LINE_VALUE.match(s, value_at)
        if m is None:
            return []
        if m["quoted"] is not None:
            if s[at] != "=":
                return []  # 'password:⏎  "…"' is a YAML mapping's next key, or a list
            start, end = m.span("quoted")
            secret = s[start:end]
            # the whole literal ('"export KEY = " + …' is the start of a string built), one
            # that looks like a credential by itself ('"AWS::S3::…SessionAuth"' reads as words)
            ok = _LITERAL_ENDS.match(s, end + 1) is not None and credential_like(secret) and not wordy(secret)
        else:
            if quoted_only:
                return []
            start, end = m.span("word")
            secret = s[start:end]
            ok = credential_like(secret)
        return [(start, end, self.name)] if ok else []


_LITERAL_ENDS = lazy_regex(r"[ \t]*(?:[;,)\]}]|\r?\n|\\n|//|#|\Z)")


_OPEN_PAREN_AT_EOL = lazy_regex(r"[ \t]*\((?=[ \t]*\r?\n)")
# A line break: as it stands, or between the strings of a JSON list of lines (a notebook's
# "source": ["API key:\\n", "\\n", "    …\\n"]).
_BREAK = r"""(?:\r?\n|\\n"[ \t]*,[ \t]*\r?\n[ \t]*")"""
_NEXT_LINE_VALUE = lazy_regex(
    rf"""[ \t]*{_BREAK}(?:[ \t]*{_BREAK}){{0,2}}[ \t]*(?:(?P<q>["'])(?P<quoted>[^"'\\\r\n]+)(?P=q)"""
    r"""|(?P<word>[^\s"'\\,;&}\])<>=:]+)[ \t]*(?:\r?\n|\\n|\Z))"""
)


def quoted_end(s: str, start: int, end: int) -> int:
    """Where a quoted value that opened at ``start`` (its quote right before it) really ends,
    when the assignment's expression stopped it at ``end`` on a quote: the other kind of quote
    is part of the value (``"N{w4'2si(z"``), and so is its own quote followed by a letter or digit
    (``'aB3>yN'5x[ia'``: a closing quote is followed by a space, a comma, a bracket or the line's
    end). The value then runs to its own quote that is so followed, on the same line; as it was
    when there is none."""
    n = len(s)
    if start == 0 or end >= n or s[start - 1] not in "\"'" or s[end] not in "\"'":
        return end
    quote = s[start - 1]
    if s[end] == quote and (end + 1 >= n or not s[end + 1].isalnum()):
        return end  # a closing quote
    line_end = s.find("\n", end)
    line_end = n if line_end < 0 else line_end
    at = end
    while True:
        close = s.find(quote, at + 1 if s[at] == quote else at, line_end)
        if close < 0 or "\\" in s[end:close]:
            return end
        if close + 1 >= n or not s[close + 1].isalnum():
            return close
        at = close


# --- names the key rules do not take, that still read like a secret's name ----------------------

_WEAK_NEEDLES = ("access", "api")
"""Substrings of the names :func:`weak_secret_name` takes that hold none of the key rules' needles."""

_WORDS_BEFORE = lazy_regex(r"(?:[A-Za-z][A-Za-z0-9]*[ \t]+){1,2}\Z")

_NAME_WORDS = lazy_regex(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = frozenset(
    {
        "auth",
        "authentication",
        "credential",
        "credentials",
        "key",
        "keys",
        "pass",
        "passphrase",
        "passwd",
        "password",
        "pw",
        "pwd",
        "secret",
        "session",
        "sig",
        "signature",
        "token",
    }
)
_SECRET_ENDINGS = ("pass", "passwd", "pwd", "key", "token", "secret")
_ALONE_NOT_SECRET = frozenset({"signature", "sig"})  # a function's signature, a mail signature
_FILLER_WORDS = frozenset(
    {"value", "val", "str", "string", "data", "text", "raw", "enc", "encoded", "hex", "b64"}
)
_HARMLESS_LAST_WORDS = frozenset(
    {
        "algorithm",
        "alg",
        "count",
        "dir",
        "enabled",
        "expires",
        "expiry",
        "field",
        "file",
        "format",
        "header",
        "id",
        "index",
        "label",
        "len",
        "length",
        "max",
        "method",
        "min",
        "mode",
        "name",
        "path",
        "prefix",
        "scope",
        "size",
        "state",
        "status",
        "timeout",
        "ttl",
        "type",
        "uri",
        "url",
        "version",
    }
)
_HARMLESS_KINDS = frozenset(
    {
        "cache",
        "composite",
        "foreign",
        "hash",
        "hot",
        "idempotency",
        "lookup",
        "partition",
        "primary",
        "public",
        "routing",
        "row",
        "shard",
        "sort",
        "unique",
    }
)
_ENGLISH_ENDINGS = frozenset(
    {
        "bypass",
        "compass",
        "donkey",
        "hockey",
        "hotkey",
        "jockey",
        "monkey",
        "oldpwd",
        "overpass",
        "surpass",
        "trespass",
        "turkey",
        "turnkey",
        "underpass",
        "whiskey",
    }
)
_MISSPELT = ("password", "passwd", "credential", "secret")
_NAME_WORDS_MAX = 4
HARMLESS_KINDS = _HARMLESS_KINDS
"""Kinds of key that are no secret (``primary``, ``public``, ``sort``…; the context rules read them)."""


def weak_secret_name(name: str) -> bool:
    """Whether ``name`` reads like the name of a secret although the key rules do not take it:
    one of its words (split at ``_``, ``-``, ``.``, spaces and camelCase) is a secret's word
    (``key``, ``session``, ``pass``, ``token``, ``signature`` with another word…), its last word
    ends with one (``MYSQLPASS``, ``AESKEY``; not ``compass``, ``monkey``, the shell's
    ``OLDPWD``), or a word is one typo away from ``password``, ``passwd``, ``credential`` or
    ``secret`` (``passworsd``). Trailing words such as ``value`` are skipped
    (``tp_token_value``). An access id (``SUMO_ACCESS_ID``) and a name of several words ending
    in ``api`` count too. A last word that names a property rather than the secret
    (``session_count``, ``key_type``, ``token_url``) or a kind of key that is no secret
    (``primary_key``, ``public_key``, ``sort_key``) makes it no secret's name. A name of more
    than four words is not taken (prose, long code identifiers)."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    while words and (words[-1] in _FILLER_WORDS or words[-1].isdigit()):
        words.pop()
    if not words or len(words) > _NAME_WORDS_MAX:
        return False
    if words[-2:] == ["access", "id"] or words[-1] == "accessid" or (len(words) > 1 and words[-1] == "api"):
        return True  # the id half of an access key pair (Sumo Logic, Alibaba); 'gateway_api = "…"'
    if words[-1] in _HARMLESS_LAST_WORDS:
        return False
    if any(w in _HARMLESS_KINDS for w in words) or words == ["pwd"]:
        return False
    if len(words) == 1 and words[0] in _ALONE_NOT_SECRET:
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    if words[-1].endswith(_SECRET_ENDINGS) and words[-1] not in _ENGLISH_ENDINGS:
        return True
    return any(len(w) >= 5 and any(one_typo(w, m) for m in _MISSPELT) for w in words)


def one_typo(word: str, target: str) -> bool:
    """Whether ``word`` is ``target`` with one character added, dropped or changed, or two
    neighbours swapped (Damerau-Levenshtein distance 1)."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    i = 0
    while i < min(len(word), len(target)) and word[i] == target[i]:
        i += 1
    if len(word) == len(target):
        return word[i + 1 :] == target[i + 1 :] or (
            word[i + 2 :] == target[i + 2 :] and word[i : i + 2] == target[i : i + 2][::-1]
        )
    longer, shorter = (word, target) if len(word) > len(target) else (target, word)
    return longer[i + 1 :] == shorter[i:]


_DASH_GROUPS = lazy_regex(r"[A-Za-z0-9]{3,12}(?:-[A-Za-z0-9]{3,12}){3,}")
_DOTTED = lazy_regex(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+")
_SEPARATOR_SYMBOLS = "_-."


_CREDENTIAL_MAX = 4096


def credential_like(value: str) -> bool:
    """Whether a value under a name that only reads like a secret's looks like a credential:
    8 to 4,096 characters without spaces (a token is long: an AWS session token, an OAuth
    token with a JWT inside), not a template, URL, path, host or file name, and

    * groups of letters and digits joined by ``-`` (a product key, a UUID-shaped API key) with
      a digit or in capitals; or
    * a digit and three kinds of characters of lower-case, upper-case, digits and symbols
      (``_``, ``-`` and ``.`` do not count); or
    * random by length and entropy (:func:`random_key`): one-case, lower-case and digits, or hex
      keys (``0a1b…`` of a Datadog key, ``abcdefghjkmn…``) that hold no other kind."""
    n = len(value)
    if n < 8 or n > _CREDENTIAL_MAX or template_start(value) or "://" in value or _CODE.match(value):
        return False
    if value[0] in "/~." or any(c.isspace() for c in value):
        return False
    if _DASH_GROUPS.fullmatch(value):
        return value.isupper() or any(c.isdigit() for c in value)
    if _DOTTED.fullmatch(value) and not any(c.isdigit() for c in value.rpartition(".")[2]):
        return False  # host names, file names, dotted references
    lower = upper = digit = symbol = False
    for c in value:
        if c.isdigit():
            digit = True
        elif c.islower():
            lower = True
        elif c.isupper():
            upper = True
        elif c not in _SEPARATOR_SYMBOLS:
            symbol = True
    if digit and lower + upper + digit + symbol >= 3:
        return True
    return not symbol and random_key(value)


_RANDOM_KEY_MIN = {16: 24, 26: 16, 36: 16, 52: 16, 62: 12}
"""The length a key of each alphabet (hex, one case of letters, one case and digits, both
cases, both cases and digits) needs before its entropy can tell it from a word or a name: the
smaller the alphabet, the longer."""


def random_key(value: str) -> bool:
    """Whether ``value`` (letters, digits, ``_``, ``-``, ``.``) is a random key by its length and
    entropy rather than by the kinds of characters it holds: long enough for its alphabet
    (:data:`_RANDOM_KEY_MIN`: 24 hex digits, 16 of lower-case letters and digits…), not all
    digits, not words (:func:`wordy`: ``partnerstack``, ``browser_stack_key``), and with the
    entropy of random characters of that alphabet (:func:`random_enough`)."""
    core = value.translate(_DROP_SEPARATORS)
    if core.startswith(("0x", "0X")):
        core = core[2:]  # a number written in hex ('pass_mask64: 0x81103c1452dd61cd')
    if not core.isalnum() or not core.isascii() or core.isdigit():
        return False
    size = alphabet_size(core)
    if size != 16 and len(core) >= _HEX_MOSTLY_MIN:
        hex_only = core.translate(_DROP_NOT_HEX)
        if len(core) - len(hex_only) <= len(core) // _HEX_MOSTLY_STRAY:
            # hex with a few other letters ('v1.0-13vvv5141b9758…-a670d21e…'): a hex key with a
            # version or a tag in it, judged as hex (else its letters outside hex make its
            # alphabet look larger than its entropy bears out)
            core, size = hex_only, 16
    least = _RANDOM_KEY_MIN[size]
    if size == 26 and len(core) != len(value):
        least = _ONE_CASE_JOINED_MIN  # one-case words joined ('unrecognized_keys', 'input_audio_tool_mtok')
    if len(core) < least:
        return False
    return not wordy(core) and random_enough(core)


_ONE_CASE_JOINED_MIN = 20
_HEX_MOSTLY_MIN = 32
_HEX_MOSTLY_STRAY = 20  # at most one character in 20 outside hex
_DROP_NOT_HEX = str.maketrans("", "", "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ")


AUTH_HEADER_NAMES = frozenset({"authorization", "proxy-authorization"})
_SCHEME_AT = lazy_regex(r"""[ \t]*(?P<quote>\\?["'])?([A-Za-z][A-Za-z0-9_.-]{0,39})[ \t]+(?=[^\s"'\\])""")
_LINE_END = lazy_regex(r"[\r\n]|$")
AUTH_PARAM = lazy_regex(
    r"""([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(?:\\?"([^"\\]*)\\?"|([^\s,"'\\=][^\s,"'\\]*))"""
)
KEPT_AUTH_PARAMS = frozenset(
    {"realm", "uri", "algorithm", "qop", "nc", "username", "signedheaders", "charset"}
)
"""Parameters of an ``Authorization`` value that are no credential (Digest, AWS4)."""


def scheme_credentials(s: str, start: int) -> list[tuple[int, int]] | None:
    """For ``<scheme> <credentials>`` at ``start`` (the value of an ``Authorization`` header in
    text): the spans of the credential parts, the scheme word left out: the token (``Bearer``,
    ``SSWS``, any scheme), or the values of a parameter list (``Digest``'s ``response``,
    ``cnonce``, ``nonce``…, AWS4's ``Credential`` and ``Signature``) but for the harmless ones.
    None when no scheme word stands there."""
    scheme = _SCHEME_AT.match(s, start)
    if scheme is None:
        return None
    rest_at = scheme.end()
    line_end = _LINE_END.search(s, rest_at)
    rest_end = line_end.start() if line_end is not None else len(s)
    quote = scheme["quote"]
    if quote is not None:  # a quoted value ends at its closing quote (not an escaped one inside it)
        at = rest_at
        while True:
            close = s.find(quote, at, rest_end)
            if close < 0:
                break
            if len(quote) == 1 and close > 0 and s[close - 1] == "\\":
                at = close + 1
                continue
            rest_end = close
            break
    rest = s[rest_at:rest_end]
    params = list(AUTH_PARAM.finditer(rest))
    if (
        params
        and params[0].start() == 0
        and (len(params) > 1 or "," in rest or params[0].end() == len(rest.rstrip()))
    ):
        spans = []
        for p in params:
            group = 2 if p[2] is not None else 3
            if p[1].lower() not in KEPT_AUTH_PARAMS and p[group]:
                spans.append((rest_at + p.start(group), rest_at + p.end(group)))
        return spans
    token = re.match(r"[^\s,;\"'\\]+", rest)
    if token is None or len(token[0]) < 4:
        return None
    if template_start(token[0]):
        return []  # a placeholder (``Bearer $API_KEY``, ``Bearer <your token>``): nothing to replace
    return [(rest_at, rest_at + token.end())]


# --- text wrapped in base64 ---------------------------------------------------------------------

_B64_TEXT_MIN = 24
_B64_TEXT_MAX = 64 * 1024
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_B64_TEXT_VERDICTS = 2048


class Base64TextRule:
    """A run of base64 that decodes to text in which ``inner`` (the token formats and
    ``name=value`` rules) finds a secret: a ``.env`` file or a Kubernetes Secret's ``data:`` value
    in base64. The whole run is the hit. Runs that are not valid base64 of printable UTF-8 text
    are turned away after one C-speed decode; verdicts are cached per run."""

    __slots__ = ("_inner", "_verdicts")

    name = "base64-text"
    contained = True
    run = _B64_TEXT_MIN
    min_len = _B64_TEXT_MIN

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._verdicts: dict[str, bool] = {}

    def _secret_inside(self, run: str) -> bool:
        verdict = self._verdicts.get(run)
        if verdict is None:
            verdict = self._judge(run)
            if len(self._verdicts) >= _B64_TEXT_VERDICTS:
                self._verdicts.clear()
            self._verdicts[run] = verdict
        return verdict

    def _judge(self, run: str) -> bool:
        import base64
        import binascii

        if len(run) % 4 or len(run) > _B64_TEXT_MAX or not _B64_ALPHABET.issuperset(run):
            return False
        try:
            text = base64.b64decode(run, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return False
        if not text.isprintable() and not all(c.isprintable() or c in "\n\r\t" for c in text):
            return False
        if "=" not in text and ":" not in text:
            return False
        return bool(self._inner.hits(Text(text), entropy=False))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        return [(a, b, self.name) for a, b in text.runs(_B64_TEXT_MIN) if self._secret_inside(s[a:b])]

    def any(self, text: Text) -> bool:
        s = text.s
        return any(self._secret_inside(s[a:b]) for a, b in text.runs(_B64_TEXT_MIN))


# --- text escaped for HTML or URL-encoded -------------------------------------------------------

_HTML_ENTITIES = {
    "&lt;": "<",
    "&gt;": ">",
    "&quot;": '"',
    "&#34;": '"',
    "&#x22;": '"',
    "&apos;": "'",
    "&#39;": "'",
    "&#x27;": "'",
    "&amp;": "&",
}
"""The entities that can hide a ``name="value"`` (quotes, ``<``, ``>``, ``&``), each with its
character; ``&amp;`` last: one round of unescaping."""
_ENTITY = lazy_regex("|".join(map(re.escape, _HTML_ENTITIES)))
_PERCENT = lazy_regex(r"%[0-7][0-9A-Fa-f]")  # an ASCII character, URL-encoded
_PERCENT_TELL = lazy_regex(r"%(?:3[DdAa]|2[267])")  # '=', ':', '"', '&', "'": a name=value inside
_ESCAPED_VALUE_TAIL = lazy_regex(r"(?:&amp;(?:[A-Za-z]{2,8}|#[0-9]{1,5});|[^\s\"'<>&;\\,])+")


def _unescape_html(entity: str) -> str:
    return _HTML_ENTITIES[entity]


def _unescape_html_text(s: str) -> str:
    for entity, plain in _HTML_ENTITIES.items():  # C-speed replaces, ``&amp;`` last
        if entity in s:
            s = s.replace(entity, plain)
    return s


def _unescape_percent(escape: str) -> str:
    return chr(int(escape[1:], 16))


def _unescape_percent_text(s: str) -> str:
    return _PERCENT.sub(lambda m: chr(int(m.group()[1:], 16)), s)


class EscapedTextRule:
    """Text escaped for HTML or XML (``&quot;``, ``&lt;``, ``&amp;``…: a draw.io cell, an HTML
    attribute) or URL-encoded (``token%3D…%26``): ``inner`` (the ``name=value`` rule and the
    rules that look at more than a run of token characters: an escape between token characters
    leaves their runs as they are) runs on the text unescaped once, and each hit is mapped back
    onto the escaped text.
    In HTML, a value goes on through the characters escaped twice after it (``&amp;lt;``: a
    ``<`` of the value itself, not markup). The gate: one ``&`` (or ``%``) search, then one
    search for an entity (or for an encoded ``=``, ``:``, quote or ``&``)."""

    __slots__ = ("_decode", "_decode_text", "_facts", "_inner", "_pattern", "_tell", "name")

    contained = False
    run = 0
    min_len = 8

    def __init__(self, inner: Any, kind: str) -> None:
        self._inner = inner
        decode: Callable[[str], str]
        if kind == "html":
            self.name = "html-escaped"
            self._pattern, self._tell, decode, text = _ENTITY, _ENTITY, _unescape_html, _unescape_html_text
            self._facts = Facts(min_len=self.min_len, needles=("&",))
        else:
            self.name = "url-encoded"
            self._pattern, self._tell = _PERCENT, _PERCENT_TELL
            decode, text = _unescape_percent, _unescape_percent_text
            self._facts = Facts(min_len=self.min_len, needles=("%",))
        self._decode = decode
        self._decode_text = text

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len or self._tell.search(s) is None:
            return []
        found = self._inner.hits(Text(self._decode_text(s)), entropy=False)
        if not found:
            return []
        _decoded, starts, ends = self._unescaped(s)
        hits: list[Hit] = []
        for a, b, _rule in found:
            start, end = starts[a], ends[b - 1]
            if self.name == "html-escaped":
                tail = _ESCAPED_VALUE_TAIL.match(s, end)
                if tail is not None and "&amp;" in tail[0]:
                    end = tail.end()
            hits.append((start, end, self.name))
        return hits

    def any(self, text: Text) -> bool:
        s = text.s
        if len(s) < self.min_len or self._tell.search(s) is None:
            return False
        return bool(self._inner.any(Text(self._decode_text(s))))

    def _unescaped(self, s: str) -> tuple[str, list[int], list[int]]:
        """``s`` with each escape decoded, and for each character of it where it starts and
        ends in ``s``."""
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        decode = self._decode
        for m in self._pattern.finditer(s):
            a, b = m.span()
            parts.append(s[at:a])
            starts.extend(range(at, a))
            ends.extend(range(at + 1, a + 1))
            plain = decode(m.group())
            parts.append(plain)
            starts.extend([a] * len(plain))
            ends.extend([b] * len(plain))
            at = b
        parts.append(s[at:])
        starts.extend(range(at, len(s)))
        ends.extend(range(at + 1, len(s) + 1))
        return "".join(parts), starts, ends


# --- keys written as byte arrays ----------------------------------------------------------------

_BYTE = r"(?:0[xX][0-9a-fA-F]{1,2}|[0-9]{1,3})"
_BYTE_LIST_START = lazy_regex(r"\{[ \t]*" + _BYTE + r"[ \t]*,")
_BYTE_LIST = lazy_regex(
    r"[ \t]*("
    + _BYTE
    + r"(?:[ \t]*,[ \t]*(?:\\?\r?\n[ \t]*)?"
    + _BYTE
    + r"){7,}(?:[ \t]*,)?(?:[ \t]*\\(?=\r?\n))?)"
)
_BYTE_ARRAY_NAME = lazy_regex(
    r"(?i:key|secret|token|passw(?:or)?d|pwd|credential)[\"']?[ \t]*(?:\[[0-9]*\][ \t]*)?(?::?=|:)?[ \t]*"
    r"(?:\[\][A-Za-z0-9_]+|new[ \t]+[A-Za-z0-9_]+(?:[ \t]*\[[ \t]*\])+|bytes\(|bytearray\()?[ \t]*\Z"
)
_BYTE_ARRAY_NAME_WINDOW = 48


class ByteArrayRule:
    """A key written as a list of bytes after a secret's name: ``#define AESKEY {0x35, 0x34, …}``,
    ``Secret: []byte{333, 9, …}``, ``static const uint8_t key[16] = {…}`` (eight bytes or more,
    over continued lines too). The gate: a ``{`` followed by a number and a comma (a search with
    a literal first character), then the name right before it."""

    __slots__ = ()

    name = "byte-array-key"
    contained = False
    run = 0
    min_len = 24
    _facts = Facts(min_len=24, needles=("{",))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len or "," not in s:
            return []
        hits: list[Hit] = []
        for m in _BYTE_LIST_START.finditer(s):
            brace = m.start()
            if _BYTE_ARRAY_NAME.search(s, max(0, brace - _BYTE_ARRAY_NAME_WINDOW), brace) is None:
                continue
            found = _BYTE_LIST.match(s, brace + 1)
            if found is not None:
                hits.append((found.start(1), found.end(1), self.name))
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))


# --- .pgpass lines ---------------------------------------------------------------------------------

_PGPASS_PORT = lazy_regex(r":(?:[0-9]{1,5}|\*):")
_PGPASS_LINE = lazy_regex(
    r"(?m)^(?=[^:\s]*[A-Za-z*])[A-Za-z0-9_.*-]+:(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:"
    r"(?P<secret>(?=\S*[A-Za-z])(?=[^\s\"'\\]*[^\sA-Za-z\"'\\])[^\s\"'\\]{4,})$"
)


class PgpassRule:
    """``host:port:database:user:password`` lines of a ``.pgpass`` file: the password. The host
    must hold a letter (or be ``*``: ``12:30:45:67:89`` is a time) and the password a letter and a
    digit or symbol. A rule of its own rather than a policy pattern: its only literal is ``:``,
    so it first looks for the ``:port:`` field (one C-speed search) before the line expression."""

    __slots__ = ()

    name = "pgpass-line"
    contained = False
    run = 0
    min_len = 12

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len or _PGPASS_PORT.search(s) is None:
            return []
        return [(m.start("secret"), m.end("secret"), self.name) for m in _PGPASS_LINE.finditer(s)]

    def any(self, text: Text) -> bool:
        return bool(self(text))


# --- secrets known only by their fingerprints ---------------------------------------------------

FINGERPRINT_SCHEME = "blake3-keyed-128"
"""How :func:`fingerprint` hashes: keyed BLAKE3, the first 16 bytes, hex."""
_FINGERPRINT_MIN = 6
_WHOLE_MAX = 4096
_WORDS = lazy_regex(r"""[^\s"'<>,;&?#()\[\]{}]{6,}""")
_PIECES_OF_WORDS = lazy_regex(r"""[^\s"'<>,;&?#()\[\]{}=:@/]{6,}""")


def fingerprint(key: bytes, value: str) -> str:
    """The keyed BLAKE3 fingerprint of ``value`` (hex of 16 bytes)."""
    from blake3 import blake3

    return blake3(value.encode("utf-8", "surrogatepass"), key=key).hexdigest(length=16)


class FingerprintRule:
    """Values known only by their fingerprints (the recording's env and argv secrets, kept in
    the cassette): the whole string, each word and each piece of a word between ``=``, ``:``,
    ``@`` and ``/`` is hashed and looked up. Catches a secret that travels as one of those;
    not one glued to other characters."""

    __slots__ = ("_hashes", "_key")

    name = "env"
    contained = False
    joinable = False
    run = 0
    min_len = _FINGERPRINT_MIN

    def __init__(self, key: bytes, hashes: frozenset[str]) -> None:
        self._key = key
        self._hashes = hashes

    @classmethod
    def from_meta(cls, meta: object) -> FingerprintRule | None:
        """The rule for a cassette's ``redaction.fingerprints`` (None when absent or malformed)."""
        if not isinstance(meta, Mapping) or meta.get("scheme") != FINGERPRINT_SCHEME:
            return None
        key, values = meta.get("key"), meta.get("values")
        if not isinstance(key, str) or not isinstance(values, list) or not values:
            return None
        try:
            raw = bytes.fromhex(key)
        except ValueError:
            return None
        if len(raw) != 32 or not all(isinstance(v, str) for v in values):
            return None
        return cls(raw, frozenset(values))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < _FINGERPRINT_MIN:
            return []
        spans = {m.span() for m in _WORDS.finditer(s)}
        spans.update(m.span() for m in _PIECES_OF_WORDS.finditer(s))
        if len(s) <= _WHOLE_MAX:
            spans.add((0, len(s)))
        key, hashes = self._key, self._hashes
        return [(a, b, self.name) for a, b in sorted(spans) if fingerprint(key, s[a:b]) in hashes]

    def any(self, text: Text) -> bool:
        return bool(self(text))


# --- high-entropy tokens ------------------------------------------------------------------------

_HEX = "0123456789abcdefABCDEF-"
_NUMERIC = "0123456789-.:_/+"
_DROP_SEPARATORS = str.maketrans("", "", "./_+-")
_EDGE = "./_+-"
_VERDICTS_MAX = 4096
_CACHED_RUN_MAX = 256
_PIECES = lazy_regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_PIECES_AT_MOST = 3.0
_SEPARATORS_AT_MOST = 0.2


def shannon_entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    if n == 0:
        return 0.0
    return math.log2(n) - sum(c * math.log2(c) for c in Counter(s).values()) / n


def looks_random(token: str, threshold: float) -> bool:
    """Whether a run of token characters looks like a random key rather than text or data.

    Not: pure hex (hashes, UUIDs), numbers/dates/versions, runs made of words (identifiers,
    paths, host names: their letter/digit pieces average more than three characters), runs
    with many separators; and the entropy must reach ``threshold`` bits per character.
    """
    core = token.rstrip("=")
    if not core.strip(_HEX) or not core.strip(_NUMERIC):
        return False
    pieces = _PIECES.findall(core)
    if not pieces or sum(map(len, pieces)) > _PIECES_AT_MOST * len(pieces):
        return False
    n = len(core)
    if n - len(core.translate(_DROP_SEPARATORS)) > _SEPARATORS_AT_MOST * n:
        return False
    return shannon_entropy(core) >= threshold


class EntropyRule:
    """Runs of token characters between ``min_length`` and ``max_length`` that look random.

    A run is split at ``=`` signs inside it (``API_KEY=value``) and trimmed of separators at
    its ends before it is judged by :func:`looks_random`. Longer runs are data (base64 images),
    not credentials, and are left alone.
    """

    __slots__ = ("_runs", "max_length", "min_length", "threshold")

    name = "entropy"

    def __init__(self, min_length: int, max_length: int, threshold: float) -> None:
        self.min_length = min_length
        self.max_length = max_length
        self.threshold = threshold
        self._runs: dict[str, tuple[tuple[int, int], ...]] = {}

    @property
    def min_len(self) -> int:
        return self.min_length

    @property
    def run(self) -> int:
        return self.min_length

    contained = True

    def __call__(self, text: Text) -> list[Hit]:
        return self._hits(text, first_only=False)

    def any(self, text: Text) -> bool:
        return bool(self._hits(text, first_only=True))

    def _hits(self, text: Text, *, first_only: bool) -> list[Hit]:
        s = text.s
        hits: list[Hit] = []
        for start, end in text.runs(self.min_length):
            if end - start > self.max_length:
                continue
            for a, b in self._random_parts(s[start:end]):
                hits.append((start + a, start + b, self.name))
                if first_only:
                    return hits
        return hits

    def _random_parts(self, run: str) -> tuple[tuple[int, int], ...]:
        """The random-looking parts of one run (offsets in the run); cached per run."""
        parts = self._runs.get(run)
        if parts is None:
            lo, threshold = self.min_length, self.threshold
            # After "scheme:" a run is a URL, and a run that starts with "/", "./", "../" or "~/"
            # and has three or more "/" is a file path: their segments are judged one by one
            # (a secret segment is still caught; "/home/bob/proj2/src/v3" is not a secret).
            segmented = run.startswith("//") or (run.startswith(_PATH_STARTS) and run.count("/") >= 3)
            found: list[tuple[int, int]] = []
            for a, b in _pieces(run, 0, len(run)):
                for x, y in _segments(run, a, b) if segmented else ((a, b),):
                    if y - x >= lo and looks_random(run[x:y], threshold):
                        found.append((x, y))
            parts = tuple(found)
            if len(run) <= _CACHED_RUN_MAX:
                if len(self._runs) >= _VERDICTS_MAX:
                    self._runs.clear()
                self._runs[run] = parts
        return parts


_PATH_STARTS = ("/", "./", "../", "~/")


def _segments(s: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``/``-separated parts of ``s[start:end]``."""
    out: list[tuple[int, int]] = []
    a = start
    while a < end:
        slash = s.find("/", a, end)
        b = end if slash < 0 else slash
        if b > a:
            out.append((a, b))
        a = b + 1
    return out


def _pieces(s: str, start: int, end: int) -> list[tuple[int, int]]:
    """The parts of the run ``s[start:end]`` between ``=`` signs, trimmed of edge separators."""
    out: list[tuple[int, int]] = []
    a = start
    while a < end:
        eq = s.find("=", a, end)
        if eq < 0:
            b = nxt = end
        else:
            b = eq
            while b < end and s[b] == "=":
                b += 1
            nxt = b
            if b < end:  # '=' inside the run: a separator, not base64 padding
                b = eq
        while a < b and s[a] in _EDGE:
            a += 1
        while b > a and s[b - 1] in _EDGE:
            b -= 1
        if b > a:
            out.append((a, b))
        a = nxt
    return out


def merge_hits(hits: list[Hit]) -> list[Hit]:
    """Overlapping hits merged into one span (named by the earliest, longest, first-ruled hit)."""
    hits.sort(key=lambda h: (h[0], -h[1]))
    merged: list[Hit] = []
    for start, end, name in hits:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            if end > last[1]:
                merged[-1] = (last[0], end, last[2])
            continue
        merged.append((start, end, name))
    return merged


def extra_text_rules(inner: Any, *, names: bool) -> list[Any]:
    """The text rules a redactor adds to its policy's patterns: HTML-escaped and URL-encoded text
    (with ``inner`` run on the unescaped text) and, when the policy has key rules (``names``),
    keys written as byte arrays after a secret's name. A policy with neither patterns nor key
    rules (``"extends": "none"`` and nothing else) gets none of them."""
    rules: list[Any] = [EscapedTextRule(inner, "html"), EscapedTextRule(inner, "url")]
    return [*rules, ByteArrayRule()] if names else rules


# --- vendor-prefixed tokens ---------------------------------------------------------------------

PREFIXED_TOKEN = "prefixed-token"
"""The name of the default policy's pattern judged by :func:`prefixed_secret`."""

_PREFIXED_MIN = 20  # the shortest: a prefix of 3, a separator, a body of 16
_TO_UNDERSCORE = str.maketrans("-.", "__")
_HASH_NAME = lazy_regex(
    r"(?i)sha[0-9]*|md[2-6]|blake[23][bs]?|crc[0-9]*|xxh[0-9]*|murmur[0-9]*|fnv[0-9a]*|adler32|v[0-9]+"
)
_SECRET_MARKER = lazy_regex(r"(?i).*(?:key|secret|token|tkn|cred|pass|auth).*|.*(?:tok|pat|api|pwd)|[a-z]k")
_FIXTURE_WORD = lazy_regex(r"(?i)test|example|sample|dummy|fake|mock|demo")
_PREFIX_WORD_MAX = 8  # short words after the prefix belong to it: 'sk-proj-', 'tskey-api-', 'VF.DM.'
_EXTENSION_MAX = 5
_HEX_MARKED_ENTROPY = 3.0
_ULID = lazy_regex(r"[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}")
_KSUID = lazy_regex(r"[0-4][0-9A-Za-z]{26}")
_SHORT_PREFIX = 3
_HEX_PREFIX = 5  # a prefix this long of hex digits with a digit is a hash's head (an etag's)
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BODY_PLAIN = 26  # bodies this long need no secret word in the prefix
_BODY_MARKED = 16  # after a prefix that says secret (``sk_``, ``key-``, ``api_``)
_LONG_SEGMENT = 12
_BODY_MODE = 14  # after 'live'/'test' (a key's mode: 'rzp_live_…')
_BODY_TWO_LETTERS = 32  # after two letters that do not say secret ('NF-…')
_BODY_ONE_LETTER = 40  # after one letter ('k_…')
_HEX_BODY = 30  # a hex body after a prefix that does not say secret (a hash's is 32, 40, 64)
_HEX_DIGITS = "0123456789abcdef"
_DIGEST_HEX = (40, 64)  # after '-', a git SHA or a sha256 digest: 'main-<sha>', 'blob-<sha256>'
_PLACEHOLDER_CHARS = 2  # a body of at most this many distinct characters is a placeholder
_MANY_PARTS = 8
_MODE_WORDS = frozenset({"live", "test"})
_ID_STEMS = (NOT_CREDENTIAL_STEMS | ID_WORDS) - _MODE_WORDS
_SEQUENTIAL_AT_MOST = 0.4  # 'abcdefgh…', '12345678…': a placeholder


def _base62(n: int, width: int) -> str:
    out = []
    while n:
        n, d = divmod(n, 62)
        out.append(_BASE62[d])
    return "".join(reversed(out)).rjust(width, "0")


def checksum_valid(token: str) -> bool:
    """Whether ``token`` carries a checksum its vendor publishes, and it holds: GitHub's and
    npm's (``<prefix>_`` + 30 base62 characters + the base62 CRC32 of those 30, 6 characters)
    and Grafana's service account tokens (``glsa_`` + 32 characters + ``_`` + the CRC32 of all
    before it, 8 hex digits, little-endian). A random string passes by chance once in 10^10."""
    prefix, sep, body = token.partition("_")
    if not sep or not prefix:
        return False
    if len(body) == 36 and body.isalnum() and body.isascii():
        import binascii  # (imported here: most tokens never get this far)

        return _base62(binascii.crc32(body[:30].encode()), 6) == body[30:]
    head, sep2, tail = token.rpartition("_")
    if sep2 and len(tail) == 8 and len(head) > len(prefix) + 20:
        try:
            raw = bytes.fromhex(tail)
        except ValueError:
            return False
        import binascii

        return int.from_bytes(raw, "little") == binascii.crc32(head.encode())
    return False


def prefixed_secret(token: str) -> bool:
    """Whether ``token``, a one-case prefix of letters (a digit may end it) joined by ``_``,
    ``-`` or ``.`` to a body (``sk-proj-…``, ``xkeysib-…``, ``PMAK-…``, ``rubygems_…``), is a
    vendor's secret rather than an identifier.

    Yes when its checksum holds (:func:`checksum_valid`). Otherwise the prefix is its first
    part and the short words of letters that follow it (``sk-proj-``, ``tskey-api-``,
    ``VF.DM.``), the body the rest; the token *says secret* when a word of its prefix (or a
    short word of letters further on: ``pi_…_secret_…``) holds ``key``, ``secret``, ``token``,
    ``tkn``, ``cred``, ``pass`` or ``auth``, ends with ``tok``, ``pat``, ``api`` or ``pwd``, or
    is two letters ending in ``k`` (``sk_``, ``pk_``, ``ak_``, ``rk_``), or is ``live`` or
    ``test`` (a key's mode: ``rzp_live_…``, ``test_…``) where no word of the prefix names an id
    (:data:`~.pairs.NOT_CREDENTIAL_STEMS`: ``task_test_…``, ``order_live_…``). Then:

    * the prefix is no hash name (``sha256-``, ``md5_``), no version (``v1-``), not hex with
      digits (an etag's head) and, unless it says secret, one letter only before a body of 40
      characters or more (``k_…``), two before a ``.``, another short word (``bb_pr_``) or a
      body of 32 or more (``NF-…``: two letters and ``-`` or ``_`` are as often the head of a
      random base64url id, an S3 ``versionId``); unless it says secret no word of it is
      ``test``, ``example``, ``sample``, ``dummy``, ``fake``, ``mock`` or ``demo`` (a
      fixture's id);
    * the body holds 26 letters and digits or more (16 when the prefix says secret, 14 after
      ``live``/``test``: shorter are Stripe object ids, ``pi_…``, ``evt_…``), does not end like
      a file or host name (``.js``, ``.com``);
    * a body that is a placeholder — all digits, one or two characters repeated, or a run of
      consecutive characters (``0000…``, ``aaaa…``, ``abcdef…``, ``123456…``) — of 26
      characters or more is a secret's stand-in after a prefix that says secret
      (``sk-…-0000…``) or, in one part, after a prefix of one word of three letters or more that
      names no id (``qzgr_aaaa…``): redacting it costs nothing; otherwise it is kept (``API-4444…``
      of 16), and so is a body of letters of one case;
    * a hex body (hashes, UUIDs) after a prefix that says secret (``key-…``, ``rh-api-…``), or
      one part of 30 hex digits or more of one case with the entropy of random hex, after ``_``
      (``qzx_<32 hex>``) or after ``-`` unless of a git SHA's or a sha256's length
      (``main-<sha>``), where no word of the prefix names an id (``commit_<sha>``,
      ``req_<hex>``, ``order-<uuid>`` are kept);
    * a body of one part is no ULID (a TypeID) nor KSUID;
    * each part of the body of 12 characters or more (there must be one) does not read as words
      (:func:`wordy`: ``DetectorType_PandaScore``) and has the entropy of random characters of
      its alphabet (:func:`random_enough`); a body of eight short parts or more
      (``sk.ab1.Cd2.…``) after a prefix that says secret is judged joined."""
    token = token.rstrip("=")  # base64 padding
    if checksum_valid(token):
        return True
    segments = [part for part in token.translate(_TO_UNDERSCORE).split("_") if part]
    prefix = segments[0]
    digits = sum(c.isdigit() for c in prefix)
    if len(segments) < 2 or digits > 2 or sum(map(len, segments)) - len(prefix) < _BODY_MODE:
        return False  # (string operations first: most candidates end here, no expression compiled)
    words = 1
    while (
        words < len(segments) - 1 and segments[words].isalpha() and len(segments[words]) <= _PREFIX_WORD_MAX
    ):
        words += 1
    if sum(map(len, segments[words:])) < _BODY_MODE:
        return False
    if (digits and len(prefix) >= _HEX_PREFIX and not prefix.strip(_HEX)) or _HASH_NAME.fullmatch(prefix):
        return False
    named = [word.lower() for word in segments[:words]]
    idish = any(word in _ID_STEMS for word in named)
    mode = not idish and any(word in _MODE_WORDS for word in named)
    marked = mode or any(
        _SECRET_MARKER.fullmatch(word)
        for i, word in enumerate(segments)
        if i < words or (word.isalpha() and len(word) <= _PREFIX_WORD_MAX)  # 'pi_…_secret_…'
    )
    body = segments[words:]
    core = "".join(body)
    if len(prefix) == 1 and not marked and len(core) < _BODY_ONE_LETTER:
        return False  # one letter: as often the head of a random string ('M.GSE…', 'a-Kk…')
    if len(prefix) < _SHORT_PREFIX and not marked and token[len(prefix)] != ".":
        # two letters: the head of a random base64url id, unless a short word follows
        # ('bb_pr_…') or the body is long ('NF-' and 32)
        if not (words > 1 or len(core) >= _BODY_TWO_LETTERS):
            return False
    if not marked and any(_FIXTURE_WORD.fullmatch(word) for word in segments[:words]):
        return False  # 'task_test_…', 'demo_…': a fixture's id, unless a word says secret
    if len(core) < (_BODY_MODE if mode else _BODY_MARKED if marked else _BODY_PLAIN):
        return False
    dotted = marked and len(body) >= _MANY_PARTS and all(len(part) < _LONG_SEGMENT for part in body)
    if body[-1].isalpha() and len(body[-1]) <= _EXTENSION_MAX and token[-1 - len(body[-1])] == ".":
        if not dotted:
            return False  # a file or host name: 'bundle-….min.js', '….example.com'
    if core.isdigit() or len(set(core)) <= _PLACEHOLDER_CHARS or sequential(core):
        # a placeholder: a stand-in after a prefix that says secret or names a vendor
        return len(core) >= _BODY_PLAIN and (
            marked or (words == 1 and len(body) == 1 and len(prefix) >= _SHORT_PREFIX and not idish)
        )
    if core.isalpha() and (core.islower() or core.isupper()):
        return False
    if sum(c not in _HEX for c in core) <= 1:  # hex, or hex with one slip ('…F2Cee9G…'): hashes
        if marked:
            return shannon_entropy(core) >= _HEX_MARKED_ENTROPY
        return (
            len(body) == 1
            and len(core) >= _HEX_BODY
            and not idish
            and (token[len(token) - len(core) - 1] == "_" or len(core) not in _DIGEST_HEX)
            and alphabet_size(core) == len(_HEX_DIGITS)  # one case, no slip
            and random_enough(core)
        )
    if len(body) == 1 and (
        _ULID.fullmatch(core) or (_KSUID.fullmatch(core) and not core.islower() and not core.isupper())
    ):
        return False  # a prefixed ULID (a TypeID) or KSUID: 'user_01h…', 'msg_2Kw…'
    if dotted:  # many short parts ('sk.ab1.Cd2.eF3.…'): judged joined
        return not wordy(core) and random_enough(core)
    long = [part for part in body if len(part) >= _LONG_SEGMENT]
    return bool(long) and all(not wordy(part) and random_enough(part) for part in long)


def sequential(s: str) -> bool:
    """Whether ``s`` is mostly runs of consecutive characters (``abcdefghijklmnopqrstuvwxyz123``,
    ``12345678ABCDEFGH``): a placeholder, not a key. Random strings hardly have one such pair."""
    steps = sum(map(str.__eq__, s[:-1].translate(_NEXT_CHARACTER), s[1:]))  # C-level, no loop here
    return steps > _SEQUENTIAL_AT_MOST * (len(s) - 1)


_NEXT_CHARACTER = {i: i + 1 for i in range(128)}


_COMMON_BIGRAMS = frozenset(
    "th he in er an re nd on en at ou ed ha to or it is hi es ng ve al ar st te le se nt ea ne as "
    "me ti ri ro co de ic ra li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac "
    "ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa "
    "im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex "
    "ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da yo cr "
    "cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew".split()
)
"""The 150 most frequent letter pairs of English (and so of names made of English words): they
make up four in five pairs of such a name, and one in five of random letters."""
_WORDY_BIGRAMS = 0.6
_LETTER_RUNS = lazy_regex(r"[A-Za-z]{2,}")
_MIN_PAIRS = 6
_MANY_PAIRS = 10
_WORDY_BIGRAMS_ALONE = 0.75


def wordy(s: str) -> bool:
    """Whether ``s`` reads as words run together (``DetectorType``, ``ClockworkSMS2``,
    ``partnerstack``, ``ThisI5NtTheTok3n``) rather than random characters, by the pairs of
    adjacent letters (case aside) among English's 150 most frequent pairs (in words about 80%
    of them, in random letters about 20%): 60% of them when its letter and digit pieces (split
    at case changes and digits) average more than three characters (random characters of both
    cases, under two), 75% of ten pairs or more whatever its pieces (words spelt with digits)."""
    pairs = common = 0
    for run in _LETTER_RUNS.findall(s.lower()):
        for i in range(len(run) - 1):
            pairs += 1
            common += run[i : i + 2] in _COMMON_BIGRAMS
    if pairs < _MIN_PAIRS or common < _WORDY_BIGRAMS * pairs:
        return False
    if pairs >= _MANY_PAIRS and common >= _WORDY_BIGRAMS_ALONE * pairs:
        return True
    pieces = _PIECES.findall(s)
    return sum(map(len, pieces)) > _PIECES_AT_MOST * len(pieces)


def alphabet_size(s: str) -> int:
    """The size of the alphabet ``s`` is drawn from: 16 for hex (one case), else 10 for digits
    plus 26 for each case of letters it holds."""
    if not s.strip("0123456789abcdef") or not s.strip("0123456789ABCDEF"):
        return 16
    digit = not s.isalpha()  # (``s`` holds letters and digits only)
    lower = s.upper() != s
    upper = s.lower() != s
    return 10 * digit + 26 * lower + 26 * upper


def random_enough(s: str) -> bool:
    """Whether ``s`` has the Shannon entropy of random characters of its alphabet
    (:func:`alphabet_size`): at most 0.75 bits per character below what such a string of its
    length holds on average (``log2(A) - (A - 1) / (2 n ln 2)``, Miller and Madow's estimate);
    fewer than one in a thousand random strings fall below."""
    size = alphabet_size(s)
    n = len(s)
    if n < 2 or size < 2:
        return False
    expected = math.log2(size) - (size - 1) / (2 * n * math.log(2))
    return shannon_entropy(s) >= expected - _ENTROPY_SLACK


_ENTROPY_SLACK = 0.75


PREFIXED_REGEX = (
    r"(?<![A-Za-z0-9_.+/-])(?:[a-z]{1,11}|[A-Z]{1,11})[0-9]?(?:[_.-]++[A-Za-z0-9]++)++[_-]*+={0,2}+"
    r"(?![A-Za-z0-9+/=]|[_.-][A-Za-z0-9])"
)
"""The default policy's ``prefixed-token`` expression (:meth:`PrefixedTokenRule.__call__` knows
where its candidates can start)."""
_JUDGED_MAX = 4096
_prefixed_verdict = functools.lru_cache(maxsize=_JUDGED_MAX)(prefixed_secret)
"""prefixed_secret, remembered per candidate (the same token comes back in many messages)."""


class PrefixedTokenRule:
    """Vendor-prefixed tokens of any vendor: the candidates ``regex`` finds (runs of the
    ``prefix_body`` shape, 20 characters or more), each weighed by :func:`prefixed_secret`
    (:meth:`judge`). The candidates lie inside one run of token characters (``contained``): the
    scanner runs the rule on each distinct run long enough and caches the verdict."""

    __slots__ = ("_facts", "_regex", "name", "pattern")

    contained = True
    joinable = True
    run = _PREFIXED_MIN
    min_len = _PREFIXED_MIN

    def __init__(self, name: str, regex: str) -> None:
        self.name = name
        self.pattern = regex
        self._regex = lazy_regex(regex)
        self._facts = Facts(min_len=_PREFIXED_MIN, run=_PREFIXED_MIN, blob_safe=True, contained=True)

    @property
    def regex(self) -> re.Pattern[str]:
        """The candidates' expression (compiled on first use)."""
        return self._regex

    @property
    def needles(self) -> tuple[str, ...]:
        return ()

    @staticmethod
    def judge(candidate: str) -> bool:
        """Whether a candidate the expression found is a secret (remembered per candidate: the
        same token comes back in many messages and channels)."""
        return len(candidate) >= _PREFIXED_MIN and _prefixed_verdict(candidate)

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < _PREFIXED_MIN or not text.has_run(_PREFIXED_MIN):
            return []
        name, judge = self.name, self.judge
        if self.pattern != PREFIXED_REGEX:  # a policy's own expression: searched as it is
            return [(m.start(), m.end(), name) for m in self._regex.finditer(s) if judge(m[0])]
        # The default expression's candidates are made of token characters only, and start where
        # its look-behind lets them: at the start of a run of token characters or right after a
        # ``=`` in one (the one token character the look-behind does not refuse). So only those
        # places are tried, in the runs long enough for a secret (a shorter candidate is no secret
        # and cannot hide another: no such place lies inside a candidate but at its end or on its
        # ``=`` padding). The same hits as a search of the whole text, in a fraction of the time.
        match = self._regex.match
        hits: list[Hit] = []
        for start, end in text.runs(_PREFIXED_MIN):
            at = start
            while end - at >= _PREFIXED_MIN:
                m = match(s, at, end)
                if m is not None and judge(m[0]):
                    hits.append((at, m.end(), name))
                at = s.find("=", at, end) + 1
                if at == 0:
                    break
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))
