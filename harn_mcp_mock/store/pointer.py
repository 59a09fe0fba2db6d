"""JSON Pointer (RFC 6901): the one place that escapes, unescapes, joins and splits them.

``~`` is written ``~0`` and ``/`` is written ``~1`` inside a segment; ``""`` is the whole
document and ``"/"`` its key ``""``. Callers that need their own error type catch
:class:`ValueError` from :func:`split` and re-raise it with the file and field at fault.

**Patterns** (:func:`compile_pattern`) are the one wildcard dialect every reader of pointer
patterns shares: a redaction policy's ``redact.pointers``, ``allow.pointers`` and
``entropy.skip_pointers``, a world task's ``may_change``, a ``verify`` ignore file's ``pointer``
and a lint allowlist entry's. A segment ``*`` matches any one key or array index, a segment
``**`` any number of segments (none included), a ``*`` inside a segment any run of characters
within that segment; everything else is literal. An old spelling a reader still accepts is announced once by
:func:`warn_old_spelling`. docs/cli.md ("JSON pointer patterns") is the reference.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

__all__ = [
    "ANY",
    "ANY_DEPTH",
    "Pattern",
    "compile_pattern",
    "escape",
    "join",
    "matches",
    "pattern_matches",
    "segment_matches",
    "split",
    "unescape",
    "warn_old_spelling",
]


def escape(segment: str | int) -> str:
    """One segment, escaped (``~`` -> ``~0``, ``/`` -> ``~1``); an int is an array index."""
    text = segment if isinstance(segment, str) else str(segment)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def unescape(segment: str) -> str:
    """One segment as written in a pointer, unescaped (``~1`` -> ``/``, then ``~0`` -> ``~``)."""
    if "~" in segment:
        return segment.replace("~1", "/").replace("~0", "~")
    return segment


def join(pointer: str, segment: str | int) -> str:
    """``pointer`` extended by one (escaped) segment."""
    return f"{pointer}/{escape(segment)}"


def split(pointer: str) -> list[str]:
    """The unescaped segments of ``pointer``: ``""`` is ``[]``, ``"/"`` is ``[""]``.

    :class:`ValueError` when it does not start with ``/`` or a ``~`` is not followed by 0 or 1.
    """
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError("a JSON pointer must be empty or start with '/'")
    segments = pointer[1:].split("/")
    if "~" not in pointer:
        return segments
    out = []
    for seg in segments:
        if "~" in seg:
            if "~" in seg.replace("~0", "").replace("~1", ""):
                raise ValueError("a '~' in a JSON pointer must be followed by 0 or 1")
            seg = seg.replace("~1", "/").replace("~0", "~")
        out.append(seg)
    return out


# --- patterns: the one wildcard dialect (docs/cli.md, "JSON pointer patterns") ------------------

ANY = "*"
"""A whole segment ``*``: any one key or array index."""
ANY_DEPTH = "**"
"""A whole segment ``**``: any number of segments, none included."""

Pattern = tuple[str | re.Pattern[str], ...]
"""A compiled pattern: literal segments, :data:`ANY`, :data:`ANY_DEPTH`, globs within a segment."""


def compile_pattern(text: str) -> Pattern:
    """The parts of a pointer pattern: RFC 6901 (``~1``, ``~0``) plus ``*`` and ``**``.

    A segment ``*`` matches any one key or index, a segment ``**`` any number of segments (none
    included), and a ``*`` inside a segment any run of characters within it (``log-*``); every
    other character is literal. :class:`ValueError` (the reason) when it is malformed.
    """
    if not isinstance(text, str):
        raise ValueError("must be a string")
    return _compile(text)


@lru_cache(maxsize=1024)
def _compile(text: str) -> Pattern:
    parts: list[str | re.Pattern[str]] = []
    for seg in split(text):
        if seg == ANY_DEPTH:
            if not parts or parts[-1] != ANY_DEPTH:  # /a/**/**/b is /a/**/b
                parts.append(ANY_DEPTH)
        elif seg == ANY:
            parts.append(ANY)
        elif "*" in seg:
            parts.append(re.compile(".*".join(re.escape(p) for p in seg.split("*")), re.S))
        else:
            parts.append(seg)
    return tuple(parts)


def segment_matches(part: str | re.Pattern[str], segment: str) -> bool:
    """Whether one compiled part (not :data:`ANY_DEPTH`) matches one unescaped segment."""
    if isinstance(part, str):
        return part == ANY or part == segment
    return part.fullmatch(segment) is not None


def pattern_matches(parts: Pattern, segments: tuple[str, ...] | list[str]) -> bool:
    """Whether compiled ``parts`` match the whole of ``segments`` (a pointer's, unescaped)."""
    return _match(parts, tuple(segments), 0, 0)


def _match(parts: Pattern, segs: tuple[str, ...], i: int, j: int) -> bool:
    while i < len(parts):
        part = parts[i]
        if part == ANY_DEPTH:
            if i == len(parts) - 1:
                return True
            return any(_match(parts, segs, i + 1, k) for k in range(j, len(segs) + 1))
        if j >= len(segs) or not segment_matches(part, segs[j]):
            return False
        i += 1
        j += 1
    return j == len(segs)


def matches(pattern: str, pointer: str) -> bool:
    """Whether ``pointer`` matches ``pattern``; a malformed pointer matches nothing."""
    try:
        segments = split(pointer)
    except ValueError:
        return False
    return pattern_matches(compile_pattern(pattern), segments)


_WARNED: set[str] = set()


def warn_old_spelling(where: str, old: str, new: str) -> None:
    """One stderr line saying ``old`` (read at ``where``: a file and field) is an old spelling of
    a pointer pattern and ``new`` what to write now; once per spelling a process (the first
    place it was read names it)."""
    if old in _WARNED:
        return
    _WARNED.add(old)
    sys.stderr.write(
        f"harn-mcp-mock: deprecated: {where}: pointer pattern {old!r} is an old spelling; "
        f"{new} (docs/cli.md#json-pointer-patterns)\n"
    )
