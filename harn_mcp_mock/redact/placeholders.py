"""Placeholders: what a redacted secret is replaced with.

A secret becomes ``[REDACTED:n]``, where ``n`` numbers the distinct secrets one
:class:`~harn_mcp_mock.redact.Redactor` has seen, in order of first sight: the same secret
always gets the same number, so a reader can still tell that two messages carried the same
value. Replay matching does not care which number a secret got, only that one stood there:
:func:`normalize_placeholders` turns every placeholder into the number-free ``[REDACTED]``.
"""

from __future__ import annotations

from harn_mcp_mock.redact.gates import lazy_regex

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

PLACEHOLDER_RE = lazy_regex(r"\[REDACTED(?::[0-9]+)?\]")
"""Matches every placeholder this package writes: ``[REDACTED:12]`` and ``[REDACTED]``."""

REDACTED = "[REDACTED]"
"""The number-free placeholder :func:`normalize_placeholders` writes."""

_MARK = "[REDACTED"


def placeholder(number: int) -> str:
    """The placeholder for the ``number``-th distinct secret."""
    return f"[REDACTED:{number}]"


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is exactly one placeholder (already redacted: never redact it again)."""
    return text.startswith(_MARK) and PLACEHOLDER_RE.fullmatch(text) is not None


def normalize_placeholders(value: Any) -> Any:
    """A copy of the JSON value ``value`` with every placeholder replaced by ``[REDACTED]``.

    Strings (object keys included) are rewritten wherever a placeholder occurs in them; the
    containers are always new objects, so the caller may change the result freely.
    """
    cls = value.__class__
    if cls is str:
        return PLACEHOLDER_RE.sub(REDACTED, value) if _MARK in value else value
    if cls is dict:
        return {normalize_placeholders(k): normalize_placeholders(v) for k, v in value.items()}
    if cls is list or cls is tuple:
        return [normalize_placeholders(v) for v in value]
    if isinstance(value, str):
        return normalize_placeholders(str(value))
    if isinstance(value, dict):
        return normalize_placeholders(dict(value))
    if isinstance(value, list | tuple):
        return normalize_placeholders(list(value))
    return value
