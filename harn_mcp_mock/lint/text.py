"""What the poisoning rules read: a text as a model would understand it, whatever a reviewer sees.

:func:`skeleton` is a Unicode TR39-style skeleton: hidden characters (format characters:
zero-width, bidirectional controls, tag characters U+E0000..U+E007F, soft hyphen, word joiner)
are dropped, compatibility forms folded (NFKD: fullwidth forms, mathematical alphanumerics,
ligatures, circled letters), combining marks dropped (so ``é`` reads as ``e`` and Arabic
vowel marks vanish), Cyrillic, Greek, Armenian and small-capital look-alikes of Latin letters
mapped to those letters, case folded and whitespace runs collapsed. The phrase patterns of
:mod:`harn_mcp_mock.lint.phrases` are put through the same mapping, so a Russian or Greek
pattern still matches Russian or Greek text.

:func:`views` gives the texts to scan for one string: the skeleton itself, the text the Unicode
tag characters spell, and whatever base64, hex, URL-encoded (``%xx``), HTML-entity or
``\\uXXXX`` runs decode to (two levels deep), each with a label that says how it was found.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from urllib.parse import unquote_plus

__all__ = ["HIDDEN_CATEGORIES", "skeleton", "skeleton_offsets", "skeleton_pattern", "tag_text", "views"]

HIDDEN_CATEGORIES = frozenset({"Cf"})
"""Unicode categories that are dropped: format characters (zero-width, bidi, tags...)."""

_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d",
    "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y", "ɡ": "g", "ꙇ": "i",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "μ": "u",
    "ν": "v", "ο": "o", "ρ": "p", "σ": "o", "ς": "c", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c",
    "ϳ": "j", "ϱ": "p",
    # Armenian
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ք": "p", "զ": "q",
    # Latin variants and small capitals
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ʋ": "u", "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d",
    "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n",
    "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y",
    "ᴢ": "z",
    # punctuation look-alikes
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"', "\u2044": "/",
    "\u2215": "/", "\u29f8": "/", "\uff0f": "/", "\u02dc": "~", "\u223c": "~", "\uff5e": "~",
}  # fmt: skip


class _Fold(dict[int, str]):
    """``str.translate`` table computed per character on first sight."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if unicodedata.category(char) in HIDDEN_CATEGORIES or 0xE0100 <= code <= 0xE01EF:
            out = ""
        elif 0xAC00 <= code <= 0xD7A3:  # Hangul syllables stay whole (NFKD would split them)
            out = char
        else:
            parts = []
            for part in unicodedata.normalize("NFKD", char):
                if unicodedata.category(part) == "Mn":
                    continue
                part = _LOOKALIKES.get(part, part)
                part = _LOOKALIKES.get(part.casefold(), part.casefold())
                parts.append(part)
            out = "".join(parts)
        self[code] = out
        return out


_FOLD = _Fold()
_SPACES = re.compile(r"\s+")


def skeleton(text: str) -> str:
    """``text`` as the rules match it (see the module's docstring)."""
    if text.isascii():
        return _SPACES.sub(" ", text.lower())
    return _SPACES.sub(" ", text.translate(_FOLD))


def skeleton_offsets(text: str) -> list[int]:
    """For each character of ``skeleton(text)``, the index in ``text`` it comes from (so a
    finding can point at the phrase inside the original string)."""
    folded: list[tuple[str, int]] = []
    for i, char in enumerate(text):
        out = char.lower() if char.isascii() else char.translate(_FOLD)
        folded.extend((c, i) for c in out)
    offsets: list[int] = []
    space = False
    for char, i in folded:
        if char.isspace():
            if not space:
                offsets.append(i)
            space = True
        else:
            offsets.append(i)
            space = False
    return offsets


def skeleton_pattern(source: str) -> str:
    """A regular expression's source with its literal characters mapped as :func:`skeleton`
    maps text (escapes such as ``\\S`` and ``\\b`` are kept as written)."""
    out = []
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            out.append(source[i : i + 2])
            i += 2
            continue
        out.append(char if char.isascii() else char.translate(_FOLD))
        i += 1
    return "".join(out)


def tag_text(text: str) -> str:
    """What Unicode tag characters (U+E0020..U+E007E) in ``text`` spell, or ``""``."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){8,}|(?:\\x[0-9a-fA-F]{2}){6,}|(?:0x[0-9a-fA-F]{2}[ ,]*){6,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
_UESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_MAX_RUN = 1 << 20


def _readable(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 that reads as words (not a binary blob)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 6:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    letters = sum(1 for c in text if c.isalpha())
    if printable < 0.9 * len(text) or letters < 0.4 * len(text.replace(" ", "")):
        return None
    if " " not in text.strip() and not any(ord(c) >= 0x2E80 for c in text):  # words, or CJK text
        return None
    return text


def _decodings(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for match in _HEX.finditer(text):
        digits = re.sub(r"\\x|0x|[ ,]", "", match.group(0))
        try:
            readable = _readable(binascii.unhexlify(digits[: _MAX_RUN & ~1]))
        except (binascii.Error, ValueError):
            readable = None
        if readable:
            found.append(("hex", readable))
    for match in _B64.finditer(text):
        run = match.group(0)
        if len(run) > _MAX_RUN or re.fullmatch(r"[0-9a-fA-F]+", run.rstrip("=")):
            continue
        padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
        try:
            data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            continue
        readable = _readable(data)
        if readable:
            found.append(("base64", readable))
    if len(_PERCENT.findall(text)) >= 2:
        unquoted = unquote_plus(text)
        if unquoted != text:
            found.append(("URL-encoded", unquoted))
    if _ENTITY.search(text):
        unescaped = html.unescape(text)
        if unescaped != text:
            found.append(("HTML entities", unescaped))
    if len(_UESCAPE.findall(text)) >= 3:
        found.append(("\\u escapes", _UESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)))
    return found


def views(text: str, depth: int = 2) -> list[tuple[str, str]]:
    """(label, skeleton) of every reading of ``text``: ``""`` for the text itself, ``"Unicode
    tag characters"``, ``"base64"``, ``"hex"``, ``"URL-encoded"``... for decoded runs
    (``"base64 in URL-encoded"`` two levels deep)."""
    out = [("", skeleton(text))]
    tags = tag_text(text)
    if tags:
        out.append(("Unicode tag characters", skeleton(tags)))
    if depth > 0 and len(text) >= 16:
        for how, decoded in _decodings(text):
            for inner, seen in views(decoded, depth - 1):
                out.append((f"{inner} in {how}" if inner else how, seen))
    return out
