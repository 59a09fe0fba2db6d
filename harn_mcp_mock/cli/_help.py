"""Help text in plain words: ``--cassette PATH``, not typer's Python type reprs.

typer 0.29 prints each value's Python type in ``--help`` (``--cassette <path>``,
``--header <list[str]>``, ``command... <list[str]>``). Our groups are built with
:class:`HarnGroup` (``typer.Typer(cls=HarnGroup)``), which gives every option of its commands
without a metavar of its own the name of its click type (``PATH``, ``TEXT``, ``INTEGER``,
``FLOAT``, ``[a|b]`` for a choice) and lists arguments by their name alone. Options that
deserve a more telling name set it where they are declared (``metavar="NAME:VALUE"``).
"""

from __future__ import annotations

from typing import Any, get_args

import typer.core

__all__ = ["HarnGroup", "plain_metavars"]

_NAMES = {str: "TEXT", int: "INTEGER", float: "FLOAT", bool: "BOOLEAN"}


class _PlainArgument(typer.core.TyperArgument):
    """An argument listed in help by its name (or metavar) alone, without its type."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def _metavar(param: typer.core.TyperOption) -> str:
    """The click-style name of what ``param`` takes (of one value, for a repeatable option)."""
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices or ()) + "]"
    if desc.is_path:
        return desc.path_type.upper()
    kind = get_args(desc.annotation)[0] if desc.is_list else desc.annotation
    return _NAMES.get(kind, getattr(kind, "__name__", "VALUE").upper())


def plain_metavars(command: Any) -> None:
    """Give ``command``'s options (and, for a group, its commands', recursively) plain metavars."""
    for param in command.params:
        if isinstance(param, typer.core.TyperOption):
            if param.metavar is None and not param.is_flag and not param.count:
                param.metavar = _metavar(param)
        elif type(param) is typer.core.TyperArgument:
            param.__class__ = _PlainArgument
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)


class HarnGroup(typer.core.TyperGroup):
    """typer's group, its commands' help in plain words (:func:`plain_metavars`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_metavars(self)
