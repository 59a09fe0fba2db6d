"""The other half of a credential pair: the id, user or account that stands beside a secret.

Many services authenticate with a pair (a client id and a client secret, a key id and a key, a
user and a password, an account and a token), and the id half is as much a credential as the
secret half when it is random: with the secret it opens the account, and services that show the
two together treat both as confidential. Standing alone, an id is not redacted (MCP traffic is
full of ids a replaying client needs: JSON-RPC ids, ``userId``, resource ids, request ids,
cursors). This module finds the id half **only next to a secret another rule found**:

* in text, a value under an id-like name (``client_id``, ``ID=``, ``bulksmsID :=``, ``box id =``,
  ``<username>{…}</username>``, ``"accessId": "…"``) in the same structure as a secret hit: on the
  same line with no bracket between them, or within two lines with no blank line and no object
  boundary between them (:func:`pair_hits`);
* in a JSON object, a string under an id-like key whose sibling value the redactor replaced
  whole (:func:`pair_keys`). A bare ``"id"`` (``_id``) key names the object's own id (a resource
  id a replaying client sends back), never a credential's half, in an object as in JSON text.

The value must look random (:func:`random_id`): 8 to 256 characters with a piece that mixes
letters and digits (not a word followed by digits, ``alice2024``) or letters in chaotic case;
never a number, a date, a version, a path, a URL, a host or an e-mail address, a template
(``$USER``, ``${…}``, ``<id>``), a UUID or a run of one character. A hex string (a hash's
shape) counts only when clearly paired: its name and the secret's share a word (``CLIENT_ID``
with ``CLIENT_SECRET``, ``caspio_id`` with ``caspio_secret``) or both are sibling XML elements.
Names of ids that are no credential's (``request_id``, ``trace_id``, ``message_id``, …) never
count.
"""

from __future__ import annotations

import functools
import itertools
import re

from harn_mcp_mock.redact.gates import lazy_regex
from harn_mcp_mock.redact.placeholders import is_placeholder

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

    from harn_mcp_mock.redact.rules import Hit

PAIR_RULE = "credential-pair"
"""The finding name of an id redacted as the other half of a credential pair."""

_ID_WORDS = frozenset({"id", "user", "username", "login", "account", "org", "organization", "ikey", "uid"})
_NOT_CREDENTIAL_STEMS = frozenset(
    "request req trace span message msg event thread run job task order item product page"
    " parent correlation transaction txn commit build file doc document row record node"
    " process chat conversation image container instance resource object tool call response"
    " step version revision snapshot cursor entity invoice payment upload download batch query"
    " execution workflow pipeline deployment release issue ticket comment post video track"
    " album playlist region zone locale device hardware machine host vpc subnet volume disk"
    " bucket blob block tx hash content model element widget component schema table column"
    " field index group team channel guild room meeting calendar folder space workspace sheet"
    " cell layer frame sequence seq rpc json jsonrpc progress operation op action activity"
    " attempt check test case sample experiment trial stream segment chunk part line word"
    "".split()
)
NOT_CREDENTIAL_STEMS = _NOT_CREDENTIAL_STEMS
"""Words that name an id that is no credential (``request``, ``trace``, ``commit``, ``order``…)."""
ID_WORDS = _ID_WORDS
_PAIRED_STEMS = frozenset({"client", "app", "application", "consumer", "integration"})
_STOP_WORDS = frozenset(
    "the and for using use with debug info warn error set get var const let export your this that from".split()
)

# A name, a separator and a value (quoted or not), or an XML element and its content.
_ASSIGN = lazy_regex(
    r"(?P<name>[A-Za-z][A-Za-z0-9_.-]*)[\"']?[ \t]*(?::=|=>|==|=|:|[ \t]-[ \t])[ \t]*"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{1,300})(?:(?P=q)|(?=\r?\n)|\Z)|(?P<v>[^\s'\"<>{}()\[\],;]{1,300}))"
    r"|<(?P<tag>[A-Za-z][A-Za-z0-9_.:-]*)(?:\s[^<>]*)?>(?P<body>[^<>\n]{1,300})</(?P=tag)>"
)
# The candidates: a separator (or the end of an XML start tag) right after an id-like name. The
# separators are found first (one cheap character class), the name is checked behind each.
_SEPARATOR = lazy_regex(r"[=:>]|[ \t]-[ \t]")
_ID_END = lazy_regex(
    r"(?i)(?:id|user|username|user_name|login|account|org|organization|ikey|uid)[\"']?[ \t]*\Z"
)
_ID_HINTS = ("id", "user", "login", "account", "org", "ikey")  # one is in every name of _ID_WORDS
_ID_TAILS = frozenset({"id", "er", "me", "in", "nt", "rg", "on", "ey"})  # how the id words end
_NEWLINE = lazy_regex(r"\n")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL = lazy_regex(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_UUID = lazy_regex(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = lazy_regex(r"[0-9a-f]{12,}|[0-9A-F]{12,}")
_NOT_ID = lazy_regex(
    r"[0-9]+(?:[.,:][0-9]+)*|v?[0-9]+(?:\.[0-9A-Za-z-]+)+"  # numbers, versions
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?"  # dates
    r"|[a-zA-Z][a-zA-Z0-9+.-]*://\S*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # URLs, e-mail addresses
    r"|(?:[A-Za-z0-9-]+\.)+[a-z]{2,}(?::[0-9]+)?(?:/\S*)?"  # hosts
    r"|(?:~|\.{1,2})?/\S*|[A-Za-z]:\\\S*"  # paths
)
_BASE64 = lazy_regex(r"[A-Za-z0-9+/]+={0,2}")
_PIECES = lazy_regex(r"[^-_.:~+/=]+")
_WORD_THEN_DIGITS = lazy_regex(r"[A-Za-z]{2,}[0-9]{1,4}|[0-9]+[A-Za-z]{1,3}")  # alice2024, 500ms
_BODY_TOKEN = lazy_regex(r"[^\s{}]+")
_WORDS = lazy_regex(r"[A-Za-z][A-Za-z0-9]*")
_BOUNDARY = lazy_regex(r"[}\]][ \t]*(?:,|$)|[{\[][ \t]*$", re.MULTILINE)
_LINE_SPAN = 2  # an id this many lines from the secret, at most
_SAME_LINE_SPAN = 200  # ... or on its line, at most this many characters away
_MIN, _MAX = 8, 256


def name_words(name: str) -> list[str]:
    """``auth0_clientID`` -> ``["auth", "0", "client", "id"]`` (lower case)."""
    return [w.lower() for w in _CAMEL.findall(name)]


def id_name(name: str) -> list[str] | None:
    """The words of ``name`` before its id word when it names an id, a user or an account
    (``client_id`` -> ``["client"]``, ``ID`` -> ``[]``); None for any other name, and for the
    ids that are no credential's (``request_id``, ``trace_id``, ``message_id``...)."""
    words = name_words(name)
    if not words:
        return None
    last = words[-1]
    if last == "name" and len(words) >= 2 and words[-2] == "user":
        words, last = words[:-1], "user"
    if last not in _ID_WORDS:
        return None
    stem = words[:-1]
    if stem and stem[-1] in ("user", "client", "app", "key", "access", "account", "api") and last == "id":
        pass
    elif stem and stem[-1] in _NOT_CREDENTIAL_STEMS:
        return None
    return stem


_id_name_cached = functools.lru_cache(maxsize=4096)(id_name)
""":func:`id_name`, remembered per name (object keys come back in every message)."""


def _own_id(name: str) -> bool:
    """Whether ``name`` is a bare ``id`` (``ID``, ``_id``, ``uid``): in JSON, the object's own."""
    return name.strip("_").lower() in ("id", "uid")


def random_id(value: str, *, paired: bool) -> bool:
    """Whether ``value`` looks like a random id (see the module's docstring); a UUID or a hex
    string only when ``paired``."""
    n = len(value)
    if n < _MIN or n > _MAX or value[0] in "$%<{[" or "${" in value or "{{" in value:
        return False
    if len(set(value)) < 6 or _NOT_ID.fullmatch(value):
        return False
    if _UUID.fullmatch(value):
        return False  # UUIDs are kept, paired or not (resource ids)
    if _HEX.fullmatch(value):
        return paired
    if not any(_random_piece(p) for p in _PIECES.findall(value)):
        return False
    return not _encoded_name(value)


def _encoded_name(value: str) -> bool:
    """Whether ``value`` is base64 of printable text that is no random id (a Kubernetes Secret's
    ``username: YWRtaW4=``, "admin")."""
    if len(value) % 4 or not _BASE64.fullmatch(value):
        return False
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return False
    return decoded.isprintable() and not random_id(decoded, paired=False)


def _random_piece(p: str) -> bool:
    if len(p) < 6:
        return False
    digits = sum(c.isdigit() for c in p)
    letters = sum(c.isalpha() for c in p)
    if digits and letters:
        # A word and a short number (alice2024), or a digit or two among letters with as many
        # vowels as words have (api2cart, base64url, oauth2client), is a name; random letters
        # hold about one vowel in five.
        vowels = sum(c in "aeiouAEIOU" for c in p)
        if _WORD_THEN_DIGITS.fullmatch(p):
            return vowels * 4 < letters
        return digits > 2 or vowels * 20 < letters * 7
    if letters == len(p) and len(p) >= 12:
        changes = sum(1 for a, b in itertools.pairwise(p) if a.isupper() != b.isupper())
        return changes * 3 >= len(p)
    return False


def _stem_words(words: list[str]) -> set[str]:
    return {
        w for w in words if len(w) >= 3 and w not in _STOP_WORDS and w not in _ID_WORDS and not w.isdigit()
    }


def pair_hits(s: str, hits: list[Hit]) -> list[Hit]:
    """Hits for the random ids under id-like names in ``s`` that stand in the same structure as
    one of ``hits`` (the secrets found in ``s``): see the module's docstring."""
    if not hits or ("=" not in s and ":" not in s and ">" not in s and " - " not in s):
        return []
    # Every id name (or tag) ends with one of the id words, in ASCII letters: a text none of
    # them is in has no pair (most texts with a secret: a few C-speed searches, not a scan).
    low = s.lower()
    if not any(word in low for word in _ID_HINTS):
        return []
    import bisect  # lazily: only a text with a secret and a separator needs it (start-up speed)

    found: list[Hit] = []
    spans = sorted((a, b) for a, b, _name in hits)
    starts = [a for a, _b in spans]
    line_starts: list[int] | None = None
    done = -1
    for c in _SEPARATOR.finditer(s):
        sep = c.start()
        if sep <= done:
            continue
        if s[sep] == ">":  # the end of a start tag: <id>, <username type="x">
            at = s.rfind("<", max(0, sep - 200), sep)
            if at < 0 or at <= done:
                continue
        else:
            tail = sep
            while tail > 0 and sep - tail < 3 and s[tail - 1] in "\"' \t":
                tail -= 1
            if s[max(0, tail - 2) : tail].lower() not in _ID_TAILS:
                continue
            behind = _ID_END.search(s, max(0, sep - 48), sep)
            if behind is None:
                continue
            at = behind.start()
            while at > 0 and s[at - 1] in _NAME_CHARS:
                at -= 1
            while at < behind.start() and not s[at].isalpha():
                at += 1  # a name starts with a letter (8x8_id: x8_id)
            if at <= done:
                continue
        m = _ASSIGN.match(s, at)
        if m is None:
            continue
        done = m.end()
        if m["tag"] is not None:
            stem = id_name(m["tag"])
            if stem is None:
                continue
            body_at = m.start("body")
            values = [(body_at + t.start(), t.group()) for t in _BODY_TOKEN.finditer(m["body"])]
            stem = stem + [w.lower() for _a, v in values for w in _WORDS.findall(v)]
            xml = True
        else:
            stem = id_name(m["name"])
            if stem is None or (_own_id(m["name"]) and m.start() > 0 and s[m.start() - 1] == '"'):
                continue  # a JSON object's own "id" is the object's, not a credential's half
            group = "qv" if m["qv"] is not None else "v"
            values = [(m.start(group), m[group])]
            xml = False
        for v_at, value in values:
            v_end = v_at + len(value)
            i = bisect.bisect_left(starts, v_end)
            if i and spans[i - 1][1] > v_at:
                continue  # already a secret
            if not random_id(value, paired=True):
                continue
            if line_starts is None:
                line_starts = [0, *(n.end() for n in _NEWLINE.finditer(s))]
            secret = _near_secret(s, v_at, v_end, spans, starts, line_starts)
            if secret is None:
                continue
            if not random_id(value, paired=False) and not _clearly_paired(s, m, stem, secret, xml):
                continue
            found.append((v_at, v_end, PAIR_RULE))
    return found


def _near_secret(
    s: str, at: int, end: int, spans: list[tuple[int, int]], starts: list[int], line_starts: list[int]
) -> tuple[int, int] | None:
    """The nearest secret span in the same structure as ``s[at:end]``, or None."""
    import bisect

    line = bisect.bisect_right(line_starts, at) - 1
    first_line, last_line = max(0, line - _LINE_SPAN), line + _LINE_SPAN + 1
    lo_at = line_starts[first_line]
    hi_at = line_starts[last_line] if last_line < len(line_starts) else len(s)
    best: tuple[int, tuple[int, int]] | None = None
    for k in range(bisect.bisect_left(starts, lo_at), bisect.bisect_left(starts, hi_at)):
        a, b = spans[k]
        other = bisect.bisect_right(line_starts, a) - 1
        lo, hi = (end, a) if a >= end else (b, at)
        if lo > hi:
            continue
        between = s[lo:hi]
        if other == line:
            if hi - lo > _SAME_LINE_SPAN or any(c in between for c in "{}[]"):
                continue
        else:
            first, last = min(line, other), max(line, other)
            block = s[line_starts[first] : line_starts[last + 1] if last + 1 < len(line_starts) else len(s)]
            if "\n\n" in block.replace("\r", "").replace(" ", "").replace("\t", ""):
                continue
            if _BOUNDARY.search(between):
                continue
        distance = hi - lo
        if best is None or distance < best[0]:
            best = (distance, (a, b))
    return None if best is None else best[1]


def _clearly_paired(s: str, m: Any, stem: list[str], secret: tuple[int, int], xml: bool) -> bool:
    """Whether a UUID or hex id is clearly the pair of the secret at ``secret``: the name before
    the secret shares a word with the id's name (or the words just before it on its line), or
    both stand in sibling XML elements."""
    line_start = s.rfind("\n", 0, secret[0]) + 1
    before = s[max(line_start, secret[0] - 60) : secret[0]]
    if xml and re.search(r"<[A-Za-z][A-Za-z0-9_.:-]*(?:\s[^<>]*)?>[^<>]*$", before):
        return True
    if stem and stem[-1] in _PAIRED_STEMS and "secret" in before.lower():
        return True  # client_id / app_id beside a secret
    id_line_start = s.rfind("\n", 0, m.start()) + 1
    context = [w.lower() for w in _WORDS.findall(s[max(id_line_start, m.start() - 30) : m.start()])]
    mine = _stem_words([*stem, *(w for c in context for w in name_words(c))])
    theirs = _stem_words([w for c in _WORDS.findall(before) for w in name_words(c)])
    return bool(mine & theirs)


def pair_keys(before: dict[Any, Any], after: dict[Any, Any]) -> list[Any]:
    """The keys of a JSON object whose values are the id half of a pair: a random-looking string
    under an id-like key (see :func:`id_name`, :func:`random_id`) left as it was, while a sibling
    value was replaced (``after`` is the object redacted, ``before`` as it came)."""
    # The candidates first (a cached look at each key name: most objects have none), then
    # whether a sibling was replaced.
    candidates: list[tuple[str, str, list[str]]] = []
    for key, value in after.items():
        if not isinstance(key, str):
            continue
        stem = _id_name_cached(key)
        if stem is None or not isinstance(value, str) or before.get(key) is not value:
            continue
        value = str(value)  # (for mypy: the identity test above narrowed it to the dict's value type)
        if _own_id(key) or not random_id(value, paired=True):
            continue  # no id name, or a bare "id" / "_id" (the object's own, a resource id)
        candidates.append((key, value, stem))
    if not candidates:
        return []
    replaced = [
        k
        for k, v in after.items()
        if v.__class__ is str and v.startswith("[REDACTED") and before.get(k) is not v and is_placeholder(v)
    ]
    if not replaced:
        return []
    out = []
    for key, value, stem in candidates:
        if not random_id(value, paired=False):
            if (
                stem
                and stem[-1] in _PAIRED_STEMS
                and any("secret" in k.lower() for k in replaced if isinstance(k, str))
            ):
                out.append(key)
                continue
            mine = _stem_words(stem)
            theirs = {w for k in replaced if k.__class__ is str for w in _stem_words(name_words(k))}
            if not mine & theirs:
                continue
        out.append(key)
    return out


ID_WORDS = _ID_WORDS
"""The words an id's, a user's or an account's name ends with (the context rules read them)."""
NOT_CREDENTIAL_STEMS = _NOT_CREDENTIAL_STEMS
"""The words before ``id`` that make an id no credential's (``request``, ``trace``…)."""
