"""JSON Pointer (RFC 6901): the one place that escapes, unescapes, joins and splits them.

``~`` is written ``~0`` and ``/`` is written ``~1`` inside a segment; ``""`` is the whole
document and ``"/"`` its key ``""``. Callers that need their own error type catch
:class:`ValueError` from :func:`split` and re-raise it with the file and field at fault.
"""

from __future__ import annotations

__all__ = ["escape", "join", "split", "unescape"]


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
