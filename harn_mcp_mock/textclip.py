"""Shortening a value for a one-line message without cutting it mid-word.

Every message that shows a value the user did not write (a recorded answer, a schema error,
arguments) goes through :func:`clip`: it keeps the text whole when it fits, and otherwise cuts
at the last word or field boundary before the limit and says how much was left out
(``{"a": 1, "b": … (+1234 chars)``). A value with no boundary is never cut.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


BOUNDARIES = " ,;\t\n"
"""A cut goes right after one of these: between words, JSON fields and list items."""


def clip(text: str, limit: int = 200) -> str:
    """``text`` if it has at most ``limit`` characters, else its head cut at a boundary + ``… (+N chars)``."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(ch, 0, limit) for ch in BOUNDARIES)
    if cut < 1:
        return text  # no boundary before the limit: never cut mid-word
    head = text[: cut + 1].rstrip()
    return f"{head} … (+{len(text) - len(head)} chars)"


def clip_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, clipped."""
    return clip(repr(value), limit)
