"""Rules that know a secret by its context rather than its looks (issue 37).

* :class:`XmlSecretRule`: the text of an XML element, or the ``value``/``content`` attribute of a
  start tag, whose name reads like a secret's: the element's own name (``<password>``,
  ``<ns:apiKey>``, ``<secret>``) or its ``name``/``key`` attribute (``<add key="ApiKey"
  value="…"/>``, ``<entry name="token">…</entry>``, ``<setting name="ApiToken"><value>…``), with
  CDATA, quotes and values over several lines.
* :class:`ProseSecretRule`: a value a few words after a secret word in free text or a log line
  (``Your API key is …``, ``token … was rejected``, ``password for admin - …``).

Both judge a name the way the ``secret-assignment`` rule does (see :class:`NameJudge`): a name the
policy's key rules take is *strong* (any plausible value), one that only reads like a secret's
(:func:`~.rules.weak_secret_name`: a bare ``key``, ``mailgun key``) is *weak* (the value must look
like a credential, :func:`~.rules.credential_like`); an ``allow``-ed name is neither. In prose the
value must look like a credential either way (:func:`prose_value`): long enough, random-looking,
not a word, a path, a URL, a date, a version or an identifier; a hash or a UUID only right after
the secret word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from harn_mcp_mock.redact.gates import Facts, Text, lazy_regex
from harn_mcp_mock.redact.pairs import ID_WORDS, NOT_CREDENTIAL_STEMS, name_words
from harn_mcp_mock.redact.rules import (
    HARMLESS_KINDS,
    Hit,
    credential_like,
    plausible_value,
    random_key,
    sequential,
    shannon_entropy,
    weak_secret_name,
    wordy,
)

NONE, WEAK, STRONG = 0, 1, 2
"""How secret a name reads (see :class:`NameJudge`)."""

_JUDGED_MAX = 4096


class NameJudge:
    """How secret a name reads: :data:`STRONG` when the policy's key rules take it
    (``secret_name``), :data:`WEAK` when it only reads like a secret's name
    (:func:`~.rules.weak_secret_name`; only when ``weak``), :data:`NONE` otherwise and for a name
    an ``allow`` key rule lets through (``next_page_token``). Cached per name."""

    __slots__ = ("_allowed", "_judged", "_secret", "_weak", "allowed")

    def __init__(
        self, secret_name: Callable[[str], bool], allowed_name: Callable[[str], bool], *, weak: bool
    ) -> None:
        self._secret = secret_name
        self._allowed = self.allowed = allowed_name
        self._weak = weak
        self._judged: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        judged = self._judged.get(name)
        if judged is None:
            if self._allowed(name):
                judged = NONE
            elif self._secret(name):
                judged = STRONG
            elif self._weak and weak_secret_name(name):
                judged = WEAK
            else:
                judged = NONE
            if len(self._judged) >= _JUDGED_MAX:
                self._judged.clear()
            self._judged[name] = judged
        return judged


# --- values -------------------------------------------------------------------------------------

_NUMERIC = "0123456789-.:_/+TZ"  # numbers, dates, times, versions
_DATE = lazy_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_UUID = lazy_regex(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_HEX = lazy_regex(r"[0-9A-Fa-f]+")
_DOTTED = lazy_regex(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+")
_PIECES = lazy_regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_PIECE_RANDOM = 3.0
_CONSONANT_RUN = lazy_regex(r"[bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ]{4}")
_PIECE_WORDS = 6.0
_VOWELS_WORDS = 0.3
_PROSE_MIN = 16
_ADJACENT_MIN = 12
_PASSWORD_MIN = 8
_VALUE_MAX = 256
_ENTROPY_MIN = 3.0


def credential_word(word: str) -> bool:
    """Whether one word under a strong secret name looks like a credential rather than a word of
    text: 8+ characters, plausible (:func:`~.rules.plausible_value`), not a URL, path or date,
    with letters and a digit, or 12+ letters of both cases."""
    n = len(word)
    if n < _PASSWORD_MIN or n > 4 * _VALUE_MAX or "://" in word or word[0] in "/~.":
        return False
    if not plausible_value(word) or _DATE.match(word):
        return False
    letters = [c for c in word if c.isalpha()]
    if len(letters) < 2:
        return False
    if any(c.isdigit() for c in word):
        return True
    return n >= 12 and any(c.isupper() for c in letters) and any(c.islower() for c in letters)


def made_of_words(value: str) -> bool:
    """Whether ``value`` is made of words (``tokenizer_v2_final``, ``getUserNameFromSession``)
    rather than random: its letter and digit pieces (split at case changes and separators) run
    longer than 3 characters on average, no four consonants stand in a row (``y`` aside; random
    letters have such runs, words seldom), and its letters hold vowels as words do (30% or more;
    about 19% in random letters) or the pieces are very long (6)."""
    pieces = _PIECES.findall(value)
    if not pieces:
        return True
    average = sum(map(len, pieces)) / len(pieces)
    if average <= _PIECE_RANDOM:
        return False
    if _CONSONANT_RUN.search(value):
        return False  # 'ttplsbr': random letters, not words
    letters = [c for c in value if c.isalpha()]
    vowels = sum(1 for c in letters if c in "aeiouAEIOU")
    return average > _PIECE_WORDS or vowels >= _VOWELS_WORDS * len(letters)


def prose_value(value: str, *, adjacent: bool, password: bool) -> bool:
    """Whether a word of free text after a secret word looks like a credential: 16 to 256
    characters (12 when ``adjacent``: right after the secret word, ``is`` or a dash between at
    most; 8 after a password word, then with three kinds of characters), not a template, URL,
    path, e-mail address, host or file name, number, date or version, not made of words
    (:func:`made_of_words`), with letters and a digit or letters of both cases, random enough
    (3 bits a character); hex (a hash) and UUIDs only when ``adjacent``."""
    n = len(value)
    if n < _PASSWORD_MIN or n > _VALUE_MAX or "://" in value or value[0] in "/~.\\":
        return False
    if not plausible_value(value) or not value.strip(_NUMERIC):
        return False
    if _UUID.fullmatch(value) or _HEX.fullmatch(value):
        return adjacent and n >= _PROSE_MIN
    if "@" in value:
        local, _, domain = value.rpartition("@")
        if "." in domain and ":" not in local:
            return False  # an e-mail address
    if value.count("/") >= 2 and sum(1 for seg in value.split("/") if seg.isalpha()) >= 2:
        return False  # a path
    if _DOTTED.fullmatch(value) and not any(c.isdigit() for c in value.rpartition(".")[2]):
        return False  # a host or file name, a dotted reference
    if n < (_ADJACENT_MIN if adjacent else _PROSE_MIN):
        return password and credential_like(value)
    if made_of_words(value):
        return False
    digit = any(c.isdigit() for c in value)
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    if not (digit and (upper or lower)) and not (upper and lower):
        return False
    return shannon_entropy(value) >= _ENTROPY_MIN


def random_letters(word: str, *, adjacent: bool) -> bool:
    """Whether a word of letters only is random letters of both cases rather than a word of text
    (``ZZyJiuetkiqFRusceIWV``, not ``AuthenticationFailed``): 16 letters or more, not words run
    together by their letter pairs (:func:`~.rules.wordy`), and a credential by
    :func:`prose_value`."""
    return (
        len(word) >= _PROSE_MIN
        and word.isalpha()
        and not wordy(word)
        and prose_value(word, adjacent=adjacent, password=False)
    )


# --- XML ------------------------------------------------------------------------------------------

_ATTR = lazy_regex(r"""([A-Za-z_][\w.:-]*)[ \t\r\n]*=[ \t\r\n]*(?:"([^"]*)"|'([^']*)')""")
_CDATA = lazy_regex(r"[ \t\r\n]*<!\[CDATA\[(.*?)\]\]>[ \t\r\n]*\Z", re.DOTALL)
_START_TAG = lazy_regex(r"<([A-Za-z_][\w.:-]*)[ \t\r\n]*>")
_VALUE_ATTRS = frozenset({"value", "content"})
_NAME_ATTRS = ("name=", "key=")
_TEMPLATES = ("${", "{{", "#{", "%{", "<%", "@@")
_BODY_MAX = 4096
_TAG_MAX = 2048
_NAME_MAX = 120
_SPACE = " \t\r\n"


class XmlSecretRule:
    """The text of an XML element, or the value of a start tag, whose name reads like a secret's.

    Two passes, each behind a cheap gate (``</`` or ``name=``/``key=`` in the text, then one of the
    secret names' ``needles``): the closing tags whose name holds a needle (one regular
    expression with ``</`` as its literal prefix), each judged by :class:`NameJudge` (the local
    name of ``ns:name``) and matched with its start tag; then each ``name="…"``/``key="…"``
    attribute, judged the same way, whose tag's ``value``/``content`` attribute, text, or single
    child element's text (.NET ``<setting name="…"><value>…</value>``) is the value.

    The value is the element's text trimmed of white space, quotes and a CDATA section. One word:
    replaced whole when plausible (a strong name) or credential-like (a weak one). Several words
    (Jenkins' ``{vendor AQAAABAAA …}``, a base64 value over lines): each word that looks like a
    credential (:func:`credential_word`), or the whole text when every word does. Templates
    (``${X}``, ``{{ x }}``, ``%X%``) and plain words are kept."""

    __slots__ = ("_close", "_judge", "_needles")

    name = "xml-secret-element"
    contained = False
    run = 0
    min_len = 12
    _facts = Facts(min_len=12, needles=("<",))  # the scanner asks for a '<' before calling the rule

    def __init__(self, judge: NameJudge, needles: Sequence[str]) -> None:
        self._judge = judge
        self._needles = tuple(needles)
        ordered = sorted(set(needles), key=lambda n: (-len(n), n))
        alternatives = "|".join(map(re.escape, ordered)) or "(?!)"
        self._close = lazy_regex(r"</([\w.:-]*?(?i:" + alternatives + r")[\w.:-]*)[ \t\r\n]*>")

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len or "<" not in s:
            return []
        closing = "</" in s
        named = "=" in s
        if not (closing or named):
            return []
        folded = text.ascii_fold
        if not any(n in folded for n in self._needles):
            return []
        spans: list[tuple[int, int]] = []
        if closing:
            for m in self._close.finditer(s):
                strength = self._judge(m.group(1).rpartition(":")[2])
                if strength:
                    spans += self._element(s, m.group(1), m.start(), strength)
        if named and len(folded) == len(s):
            for attr in _NAME_ATTRS:
                at = folded.find(attr)
                while at >= 0:
                    spans += self._named(s, at, len(attr))
                    at = folded.find(attr, at + len(attr))
        return [(a, b, self.name) for a, b in spans]

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _element(self, s: str, tag: str, close_at: int, strength: int) -> list[tuple[int, int]]:
        """The value of the element ``tag`` whose closing tag starts at ``close_at``."""
        at = close_at
        floor = max(0, close_at - _BODY_MAX - _TAG_MAX)
        while True:
            open_at = s.rfind("<" + tag, floor, at)
            if open_at < 0:
                return []
            after = open_at + 1 + len(tag)
            if s[after] in _SPACE or s[after] in ">/":
                break
            at = open_at  # '<passwordHint' when looking for '<password'
        gt = s.find(">", after, close_at)
        if gt < 0 or s[gt - 1] == "/":
            return []
        return self._body(s, gt + 1, close_at, strength)

    def _named(self, s: str, at: int, length: int) -> list[tuple[int, int]]:
        """The value named by the ``name=``/``key=`` attribute at ``at``, if it names a secret."""
        if at == 0 or s[at - 1] not in _SPACE:
            return []
        quote_at = at + length
        if quote_at >= len(s) or s[quote_at] not in "\"'":
            return []
        end = s.find(s[quote_at], quote_at + 1, quote_at + 1 + _NAME_MAX)
        name = s[quote_at + 1 : end] if end > quote_at else ""
        if not name or "<" in name or ">" in name:
            return []
        strength = self._judge(name) or self._judge(re.split(r"[:/]", name)[-1])
        if not strength:
            return []
        lt = s.rfind("<", max(0, at - _TAG_MAX), at)
        if lt < 0 or s.find(">", lt, at) >= 0:
            return []  # not inside a start tag
        gt = s.find(">", end + 1, end + 1 + _TAG_MAX)
        if gt < 0:
            return []
        for m in _ATTR.finditer(s, lt, gt):
            if m.group(1).lower() in _VALUE_ATTRS:
                group = 2 if m.group(2) is not None else 3
                return self._value(s, m.start(group), m.end(group), strength)
        if s[gt - 1] == "/":
            return []
        nxt = s.find("<", gt + 1, gt + 1 + _BODY_MAX)
        if nxt < 0:
            return []
        if s.startswith("</", nxt) or s.startswith("<![CDATA[", nxt):
            close = s.find("</", nxt, nxt + _BODY_MAX) if s.startswith("<![", nxt) else nxt
            return self._body(s, gt + 1, close, strength) if close >= 0 else []
        child = _START_TAG.match(s, nxt)  # <setting name="ApiToken"><value>…</value></setting>
        if child is None or s[gt + 1 : nxt].strip(_SPACE):
            return []
        close = s.find("</" + child.group(1), child.end(), child.end() + _BODY_MAX)
        return self._body(s, child.end(), close, strength) if close >= 0 else []

    def _body(self, s: str, start: int, end: int, strength: int) -> list[tuple[int, int]]:
        """The value in an element's text ``s[start:end]`` (a leaf: no element inside)."""
        if end - start > _BODY_MAX:
            return []
        if "<" in s[start:end]:
            cdata = _CDATA.match(s, start, end)
            if cdata is None:
                return []
            start, end = cdata.span(1)
        while start < end and s[start] in _SPACE:
            start += 1
        while end > start and s[end - 1] in _SPACE:
            end -= 1
        if end - start >= 2 and s[start] in "\"'" and s[end - 1] == s[start]:
            start, end = start + 1, end - 1
        return self._value(s, start, end, strength)

    def _value(self, s: str, start: int, end: int, strength: int) -> list[tuple[int, int]]:
        value = s[start:end]
        if not value or value.startswith(_TEMPLATES):
            return []
        words = [m.span() for m in re.finditer(r"\S+", value)]
        if len(words) == 1:
            inner = value
            if len(value) > 2 and value[0] == "{" and value[-1] == "}" and "{" not in value[1:-1]:
                inner = value[1:-1]  # Jenkins' {AQAAABAAAAAQ…}
            ok = plausible_value(inner) if strength == STRONG else credential_like(inner)
            return [(start, end)] if ok else []
        found: list[tuple[int, int]] = []
        for a, b in words:
            while a < b and value[a] in "{(\"'.,;:":
                a += 1
            while b > a and value[b - 1] in "})\"'.,;:":
                b -= 1
            word = value[a:b]
            if word and (credential_word(word) if strength == STRONG else credential_like(word)):
                found.append((start + a, start + b))
        if found and len(found) == len(words):
            return [(found[0][0], found[-1][1])]  # one value over several lines
        return found


# --- free text ------------------------------------------------------------------------------------

_PROSE_NEEDLES = ("key", "token", "secret", "pass", "pwd", "credential")
_WORD_STR = "abcdefghijklmnopqrstuvwxyz0123456789_-"
_WORD_CHARS = frozenset(_WORD_STR)
_WORD_TAIL = lazy_regex(r"[a-z0-9_-]*")  # (the case-folded text's word characters, as _WORD_CHARS)
_WORD_REACH = 64


def _word_start(folded: str, at: int) -> int:
    """Where the run of word characters (:data:`_WORD_CHARS`) that ends at ``at`` starts."""
    while at > 0:
        floor = max(0, at - _WORD_REACH)
        kept = folded[floor:at].rstrip(_WORD_STR)
        if kept:
            return floor + len(kept)
        at = floor
    return 0


_BEFORE_WORD = frozenset(" \t\r\n\"'`([{,;|*>")
_OPENERS = "\"'`([{<"
_CLOSERS = "\"'`)]}>.,;:!?"
_LINKS = frozenset({"is", "was", "are", "were", "be", "now", "equals", "=", ":", "-", "--", "|", "=>", "->"})
_PLAIN = lazy_regex(r"[A-Za-z][A-Za-z'-]*")
_TOKEN = lazy_regex(r"\S+")
_VALUE_HINT = lazy_regex(r"[0-9]|[a-z][A-Z]")  # every value prose_value takes holds one
_HINT_REACH = 32
_SETTINGS = lazy_regex(r"[,;&][ \t]*[A-Za-z_][\w.-]*=")  # a list of name=value settings
_NAMED = lazy_regex(r"[A-Za-z][A-Za-z_.-]*[:=]")
_MARKUP = lazy_regex(r"[\"'<>`]")  # quotes or markup inside: no value of prose
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_STOP_WORDS = frozenset(
    {
        "algorithm",
        "alias",
        "checksum",
        "count",
        "digest",
        "endpoint",
        "expired",
        "expires",
        "expiry",
        "field",
        "file",
        "fingerprint",
        "format",
        "hash",
        "header",
        "id",
        "ids",
        "index",
        "length",
        "name",
        "path",
        "policy",
        "prefix",
        "reset",
        "scope",
        "size",
        "type",
        "uri",
        "url",
        "version",
    }
)
"""A word right after the secret word that says the value is about the secret, not the secret
(``key id …``, ``token type …``, ``password hash …``)."""
_GAPS_MAX = 3
_TOKENS_MAX = 7
_WINDOW = 96


class ProseSecretRule:
    """A value a few words after a secret word in free text (``Your API key is …``, ``token …
    was rejected``, ``password for admin - …``, ``the mailgun key …``).

    The secret words are the words holding the rule's needle (one of ``key``, ``token``,
    ``secret``, ``pass``, ``pwd``, ``credential``: one rule each; found by C-speed substring
    searches) that :class:`NameJudge` takes, alone or
    with the word before them (``API key``, ``client secret``); not when that word makes them
    harmless (``public key``, ``primary key``, ``next page token``), nor when a ``:`` or ``=``
    follows (``name: value`` is the ``secret-assignment`` rule's). Then, on the same line and
    within a few words (three at most that are neither a link such as ``is``, ``-``, ``:`` nor
    the value), the first word that is not a plain word must pass :func:`prose_value`; a word
    such as ``id``, ``type`` or ``hash`` right after the secret word ends the search."""

    __slots__ = ("_facts", "_judge", "_needle")

    name = "secret-in-prose"
    contained = False
    run = 0
    min_len = 12

    def __init__(self, judge: NameJudge, needle: str) -> None:
        self._judge = judge
        self._needle = needle
        # The scanner looks for the needle (case-folded) before calling the rule: one instance
        # per secret word, so that a text with none of them costs a few C-speed searches.
        self._facts = Facts(min_len=self.min_len, fold_needles=(needle,))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        folded = text.ascii_fold
        needle = self._needle
        if len(folded) != len(s) or needle not in folded:
            return []
        hits: list[Hit] = []
        at = folded.find(needle)
        tail = _WORD_TAIL.match
        while at >= 0:
            # The word around the needle (C-speed: a match forward, a strip backward).
            b = at + len(needle)
            rest = tail(folded, b)  # (always a match, perhaps empty)
            if rest is not None:
                b = rest.end()
            a = _word_start(folded, at)
            hit = self._after(s, a, b)
            if hit is not None:
                hits.append(hit)
            at = folded.find(needle, b)
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _strength(self, s: str, a: int, word: str) -> int:
        """How secret the word ``s[a:…]`` reads, with the word before it (``API key``,
        ``public key``, ``next page token``)."""
        strength = self._judge(word)
        if not strength:
            return NONE
        i = a
        while i > 0 and s[i - 1] in " \t":
            i -= 1
        j = i
        while j > 0 and s[j - 1] in _NAME_CHARS:
            j -= 1
        if i == a or j == i or not s[j].isalpha():
            return strength
        joined, spaced = s[j:i] + "_" + word, s[j:i] + " " + word
        if self._judge.allowed(joined):
            return NONE  # 'next page token'
        spaced_strength = self._judge(spaced)
        if strength == WEAK and spaced_strength == NONE:
            return NONE  # 'public key', 'primary key', 'sort key'
        return max(strength, self._judge(joined), spaced_strength)

    def _after(self, s: str, a: int, b: int) -> Hit | None:
        """The value after the secret word ``s[a:b]``, if one looks like a credential."""
        if a > 0 and s[a - 1] not in _BEFORE_WORD:
            return None  # inside a path, a URL, a dotted name
        n = len(s)
        if b >= n or (s[b] in "\"'" and a > 0 and s[a - 1] == s[b]):
            return None  # a quoted name: an attribute's or a string's value, not prose
        j = b + 1 if s[b] in "\"'" else b
        if j >= n or s[j] in ":=" or s[b] not in _SPACE + "\"')":
            return None  # 'name: value', 'name=value': the assignment rule's; or no space after
        if not self._judge(s[a:b]):
            return None  # no secret's name (asked first: cached per word, cheaper than what follows)
        reach = b + _WINDOW + _VALUE_MAX  # a value starts within the window and may run past it
        line_end = s.find("\n", b, reach)
        limit = min(n, reach) if line_end < 0 else line_end
        if _VALUE_HINT.search(s, b, min(limit, b + _WINDOW + _HINT_REACH)) is None:
            return None  # no digit and no camelCase ahead: no value (most prose stops here)
        word = s[a:b]
        strength = self._strength(s, a, word)
        if not strength:
            return None
        folded_word = word.lower()
        password = "pass" in folded_word or "pwd" in folded_word
        gaps = 0
        pos = b
        for _ in range(_TOKENS_MAX):
            m = _TOKEN.search(s, pos, limit)
            if m is None or m.start() > b + _WINDOW:
                return None
            ta, tb = m.span()
            pos = tb
            ca, cb = ta, tb
            while ca < cb and s[ca] in _OPENERS:
                ca += 1
            while cb > ca and s[cb - 1] in _CLOSERS:
                cb -= 1
            core = s[ca:cb]
            low = core.lower()
            if not core or low in _LINKS or not core.strip("-=:|>\u2013\u2014"):
                continue
            if _PLAIN.fullmatch(core) and not random_letters(core, adjacent=gaps == 0):
                if gaps == 0 and low in _STOP_WORDS:
                    return None
                gaps += 1
                if gaps > _GAPS_MAX or s[tb - 1] in ".;!?":
                    return None
                continue
            if gaps == 0 and s[ta] in "'\"":
                literal = _quoted_literal(s, ta, tb)
                if (
                    literal is not None
                    and _MARKUP.search(s, *literal)
                    and credential_like(s[slice(*literal)])
                ):
                    return (*literal, self.name)  # "sirv token - 'Ivus86]AJDk:rg…'": quoted, symbols inside
            if _NAMED.match(core) is not None:
                return None  # 'KEY:value', 'pass=value': a name and its value, the assignment rule's
            if _SETTINGS.search(core) is not None:
                return None  # 'host:6380,password=…,ssl=True': settings, each judged by its name
            if _MARKUP.search(core) is None and prose_value(core, adjacent=gaps == 0, password=password):
                return (ca, cb, self.name)
            return None
        return None


def _quoted_literal(s: str, ta: int, tb: int) -> tuple[int, int] | None:
    """The inside of the quoted literal that the word ``s[ta:tb]`` is (its quote at ``ta``, the
    same quote at its end, before trailing punctuation, and none inside), or None."""
    end = tb
    while end > ta + 1 and s[end - 1] in ".,;:!?)":
        end -= 1
    if end - ta < 3 or s[end - 1] != s[ta] or s[ta] in s[ta + 1 : end - 1]:
        return None
    return (ta + 1, end - 1)


def context_rules(
    secret_name: Callable[[str], bool],
    allowed_name: Callable[[str], bool],
    needles: Sequence[str] | None,
) -> list[object]:
    """The context rules for a policy whose key rules are ``secret_name`` (with ``allowed_name``
    the ``allow`` key rules), and ``needles`` the substrings one of which every secret name holds
    (``None``: the key rules do not tell; ``()``: there are no key rules, and no rule)."""
    if needles is not None and not needles:
        return []
    judge = NameJudge(secret_name, allowed_name, weak=True)
    xml_needles = tuple(needles) if needles is not None else ("",)
    prose = [ProseSecretRule(judge, needle) for needle in _PROSE_NEEDLES]
    return [XmlSecretRule(judge, (*xml_needles, "access", "api")), *prose, NamedRandomRule(judge)]


# --- a random value in a name's place -------------------------------------------------------------

NAMED_RANDOM = "random-after-name"
"""The finding name of :class:`NamedRandomRule`."""

_KEYED_MIN = 16
_KEYED_MAX = 128
_KEYED_HEX_MIN = 32
_HEX_HEAD = 5
_KEYED_ONE_CASE_MIN = 20  # letters of one case only: 26 symbols, a longer run before it tells
_KEYED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_WORD_BEFORE = lazy_regex(r"([A-Za-z][A-Za-z0-9_-]*)[ \t]+\Z")
_NAME_WINDOW = 48
_KEYED_NAME = lazy_regex(r"[A-Za-z][A-Za-z0-9_-]{0,47}\Z")
_LETTERS_MIN = 3
_WORD_NAME = lazy_regex(
    r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+|(?:[A-Z][a-z0-9]+)+"
    r"|[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)*"
)
"""A name written as words: ``snake_case``, ``kebab-case``, ``camelCase``, ``PascalCase``,
``UPPER_CASE`` (not ``TR2h1a7pc``, the head of a value with ``=`` inside)."""
_WORDED = lazy_regex(r"(?:[a-z]{2,}|[A-Z]{2,})[0-9]?[_-]")  # 'web-7c9f…', 'msg_01…': a name and a suffix
_ULID_SHAPE = lazy_regex(r"[0-7][0-9A-HJKMNP-TV-Z]{25}|[0-7][0-9a-hjkmnp-tv-z]{25}")
_BEFORE_NAME = frozenset(" \t\r\n{([,;\"'`")
_BEFORE_SETTING = frozenset(" \t\r\n,;\"'`")  # before 'name=value' written as one run
_WORD = lazy_regex("[A-Za-z]{3}")
_AFTER_VALUE = frozenset(" \t\r\n,;)]}")
_QUOTES = "\"'`"
_LINE_MARKS = " \t#/*->"
_NOT_KEY_WORDS = frozenset(
    # what a random value under such a name is: an id, a hash, a position, a public value
    "id ids uid uuid guid oid cid ulid ref refs cursor marker offset after before next prev previous"
    " etag sha sha1 sha256 sha512 hash hashes md5 digest checksum crc commit rev revision version ver"
    " tree parent blob object head base merge fingerprint thumbprint serial signature sig nonce salt"
    " integrity iv tag mac address owner mint wallet pubkey public name path file url uri link host"
    " domain type spreadsheet presentation drive project repo repository branch customer subscription"
    " plan price charge tenant slug alias handle label reference number num from recipient sender"
    " destination source target program contract avatar icon banner"
    " data content body payload raw text image encoded"
    # a pair's slot whose meaning a sibling names ({"name": "APP_NAME", "value": …}): the
    # name-value-pair rule judges it by that name
    " value values val".split()
)
_NOT_RANDOM, _RANDOM, _RANDOM_HEX = 0, 1, 2


@functools.lru_cache(maxsize=_JUDGED_MAX)
def named_random_value(value: str) -> int:
    """How a value standing in a name's place reads (cached): ``_RANDOM`` for a random key,
    ``_RANDOM_HEX`` for a hex one (taken only after an explicit separator and a name that names
    no hash), ``_NOT_RANDOM`` otherwise. A random key: 16 to 128 letters, digits, ``_`` and
    ``-`` (no ``/``, ``+``, ``.``: paths, hosts, versions and base64 data), starting with a
    letter or digit, not a UUID or ULID, not a name with a suffix (``web-7c9f…``, ``msg_01…``:
    prefixed ids are :func:`~.rules.prefixed_secret`'s), and random by length and entropy
    (:func:`~.rules.random_key`), 20 letters at least when of one case only; hex: 32 digits or
    more, one case."""
    return _judge_named_value(value)


def _judge_named_value(value: str) -> int:
    core = value.rstrip("=")
    n = len(core)
    if n < _KEYED_MIN or n > _KEYED_MAX or not core[0].isalnum() or not _KEYED_CHARS.issuperset(core):
        return _NOT_RANDOM
    if _UUID.fullmatch(core) or _WORDED.match(core) or _ULID_SHAPE.fullmatch(core):
        return _NOT_RANDOM
    parts = [p for p in core.replace("_", "-").split("-") if p]
    head = parts[0]
    if len(parts) > 1 and len(head) >= _HEX_HEAD and _HEX.fullmatch(head) and not head.isalpha():
        return _NOT_RANDOM  # '28dcbc6d-gc-INURq…': a hash's head, an etag's (as prefixed_secret reads one)
    longest = max(parts, key=len)
    if _HEX.fullmatch(longest) and (longest.islower() or longest.isupper() or longest.isdigit()):
        if len(parts) > 1 or n < _KEYED_HEX_MIN or core.isdigit() or sequential(core):
            return _NOT_RANDOM  # 'cf-ray'-like hex with a tail, short hashes, numbers
        return _RANDOM_HEX if random_key(core) else _NOT_RANDOM
    if _encoded_text(core):
        return _NOT_RANDOM  # base64 of text: a cursor's '{"page":…}', a JWT's header
    letters = core.replace("_", "").replace("-", "")
    if letters.isalpha() and (letters.islower() or letters.isupper()) and len(letters) < _KEYED_ONE_CASE_MIN:
        return _NOT_RANDOM
    return _RANDOM if random_key(core) and not sequential(core) else _NOT_RANDOM


def _encoded_text(value: str) -> bool:
    """Whether ``value`` is base64 (or base64url) of printable ASCII text."""
    import base64
    import binascii

    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return False
    return raw.isascii() and raw.decode("ascii").isprintable()


@functools.lru_cache(maxsize=_JUDGED_MAX)
def keyed_name(name: str, *, alone: bool = True) -> bool:
    """Whether ``name`` may stand before a random key: an identifier with three letters or more,
    none of whose words (``name_words``) says what the value is instead: an id, a hash, a cursor,
    a path, a public or cryptographic value that is no secret (:data:`_NOT_KEY_WORDS`: ``id``,
    ``sha``, ``etag``, ``cursor``, ``signature``, ``iv``…), or one of the ids that are no
    credential's or the id half of a pair (``request``, ``trace``, ``message``, ``user``,
    ``account``…: the ``credential-pair`` rule's lists), or a kind of key that is no secret
    (``public``, ``primary``, ``sort``…: ``weak_secret_name``'s). With ``alone`` false, the word
    before a name (``PUBLIC KEY``): only its words are looked at."""
    if alone and (_KEYED_NAME.match(name) is None or sum(c.isalpha() for c in name) < _LETTERS_MIN):
        return False
    return not any(
        w in _NOT_KEY_WORDS or w in NOT_CREDENTIAL_STEMS or w in ID_WORDS or w in HARMLESS_KINDS
        for w in name_words(name)
    )


class NamedRandomRule:
    """A random key standing in a name's place, whatever the name (``mixpanel M0UX…``,
    ``cloudsmith: "6fd0…"``, ``instamojo '…'``, ``apiMetrics := "…"``, ``plivo token - '…'``,
    ``confluence_b=…``, ``github = 'x', 'y'``).

    The value is a whole run of token characters (the part after ``=`` in ``name=value``) that
    :func:`named_random_value` takes. Before it, in this order (leftwards): an optional quote,
    a separator (``:``, ``=``, ``:=``, `` - ``) or white space alone, an optional quote, then a
    name :func:`keyed_name` takes, itself at the start of a word (white space, a bracket, a
    comma, a quote before it). A name followed by white space alone (``mixpanel M0UX…``,
    ``kanban '…'``) must open its line (indentation and comment marks aside), or follow a
    comma, a semicolon or the closing quote of a value before it. A hex value (a hash's shape)
    only after an explicit separator or a quote. After the value: its closing quote, or the end of
    the line, white space, ``,``, ``;`` or a closing bracket. A quoted value that follows another
    one this rule took, after a comma (``github = 'x', 'y'``), is taken the same way. Names the
    policy ``allow``-s (``next_page_token``) are left alone."""

    __slots__ = ("_judge",)

    name = NAMED_RANDOM
    contained = False
    run = 0
    min_len = _KEYED_MIN + 2
    _facts = Facts(min_len=_KEYED_MIN + 2, run=_KEYED_MIN)

    def __init__(self, judge: NameJudge) -> None:
        self._judge = judge

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len or not text.has_run(_KEYED_MIN):
            return []
        hits: list[Hit] = []
        ends: set[int] = set()
        for a, b in text.runs(_KEYED_MIN):
            eq = s.find("=", a, b)
            while 0 <= eq < b - 1 and s[eq + 1] == "=":
                eq = s.find("=", eq + 2, b)  # '==' inside: padding, or no name=value
            if eq > a and eq < b - 1:
                value_at = eq + 1  # 'name=value' in one run
            else:
                value_at = a
                if not _place_possible(s, a):
                    continue  # (cheap: most runs stand in prose, after a word and a space)
            # The place first (a few characters looked at, the name's verdict cached), then the value.
            if not self._keyed(s, value_at, b, a, False, ends):
                continue
            verdict = named_random_value(s[value_at:b])
            if verdict == _RANDOM or (verdict == _RANDOM_HEX and self._keyed(s, value_at, b, a, True, ends)):
                hits.append((value_at, b, NAMED_RANDOM))
                ends.add(b)
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _keyed(self, s: str, at: int, end: int, run_at: int, hex_value: bool, ends: set[int]) -> bool:
        """Whether the value ``s[at:end]`` stands in a name's place (see the class docstring)."""
        if at > run_at:  # 'name=value' in one run
            if hex_value:
                return False
            name_end, name_at = at - 1, run_at
            if name_at > 0 and s[name_at - 1] not in _BEFORE_SETTING:
                return False
            if _WORD_NAME.fullmatch(s, name_at, name_end) is None or not _WORD.search(s, name_at, name_end):
                return False  # 'TR2h1a7pc=vxDo…': a value with '=' inside, not a name and its value
            if not self._after(s, end, ""):
                return False
            return self._name_ok(s[name_at:name_end])
        quote = s[at - 1] if at > 0 and s[at - 1] in _QUOTES else ""
        if not self._after(s, end, quote):
            return False
        i = at - len(quote)
        j = i
        while j > 0 and s[j - 1] in " \t":
            j -= 1
        spaced = j < i
        separator = ""
        if j >= 2 and s.startswith(":=", j - 2):
            separator, j = ":=", j - 2
        elif j > 0 and s[j - 1] in ":=" and not (j >= 2 and s[j - 2] == "="):
            separator, j = s[j - 1], j - 1
        elif j > 1 and s[j - 1] == "-" and s[j - 2] in " \t" and spaced:
            separator, j = "-", j - 1
        elif quote and j > 0 and s[j - 1] == "," and _after_taken(s, j - 1, ends):
            return True  # "github = 'x', 'y'": a second value of the same name
        if hex_value:
            return False  # a hash's shape: under any name ('Alamofire: <sha1>' of a Podfile.lock)
        if not separator and (not spaced or not quote):
            return False  # 'processed 8GHQ…', 'find 5KQ…': a word of a sentence, not a name
        while j > 0 and s[j - 1] in " \t":
            j -= 1
        if separator and j > 0 and s[j - 1] in _QUOTES:
            j -= 1  # '"name": "value"'
        k = j
        while k > 0 and (s[k - 1].isalnum() or s[k - 1] in "_-") and s[k - 1].isascii():
            k -= 1
        if k == j or (k > 0 and s[k - 1] not in _BEFORE_NAME):
            return False
        if not separator and not _opens(s, k, ends):
            return False
        before = _WORD_BEFORE.search(s, max(0, k - _NAME_WINDOW), k)
        if before is not None and not keyed_name(before[1], alone=False):
            return False  # 'PUBLIC KEY: …', 'commit sha: …': the word before says what it is
        return self._name_ok(s[k:j])

    def _name_ok(self, name: str) -> bool:
        return keyed_name(name) and not self._judge.allowed(name)

    @staticmethod
    def _after(s: str, end: int, quote: str) -> bool:
        if quote:
            return s.startswith(quote, end)
        return end == len(s) or s[end] in _AFTER_VALUE


def _place_possible(s: str, at: int) -> bool:
    """Whether the run at ``at`` may stand in a name's place: a quote, ``:`` or ``=`` right
    before it, or a ``:``, ``=`` or ``-`` before the white space before it."""
    if at == 0:
        return False
    c = s[at - 1]
    if c in _QUOTES or c in ":=":
        return True
    if c not in " \t":
        return False
    j = at - 1
    while j > 0 and s[j - 1] in " \t":
        j -= 1
    return j > 0 and s[j - 1] in ":=-"


def _after_taken(s: str, at: int, ends: set[int]) -> bool:
    """Whether the comma at ``at`` follows the closing quote of a value this rule took."""
    while at > 0 and s[at - 1] in " \t":
        at -= 1
    return at > 0 and s[at - 1] in _QUOTES and (at - 1) in ends


def _opens(s: str, at: int, ends: set[int]) -> bool:
    """Whether the word at ``at`` opens its line (indentation and comment marks aside), or follows
    a comma, a semicolon or the closing quote of a value this rule took."""
    line_at = s.rfind("\n", 0, at) + 1
    before = s[line_at:at].rstrip(" \t")
    if not before.strip(_LINE_MARKS):
        return True
    if before[-1] in ",;":
        return True
    return before[-1] in _QUOTES and (line_at + len(before) - 1) in ends
