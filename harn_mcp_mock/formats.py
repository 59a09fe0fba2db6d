"""Output formats, registered by name: verify's report formats and eval's result formats each
keep one :class:`Formats` registry, and the CLI's ``--format`` choices come from it.

``text`` is the terminal format everywhere; eval's former name for it, ``table``, stays
accepted as an alias.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from harn_mcp_mock.errors import UsageError

__all__ = ["Formats"]

R = TypeVar("R", bound=Callable[..., str])


class Formats(Generic[R]):
    """Renderers by format name (in registration order), plus aliases."""

    def __init__(self, what: str, *, aliases: dict[str, str] | None = None) -> None:
        self.what = what
        self._renderers: dict[str, R] = {}
        self._aliases = dict(aliases or {})

    def register(self, name: str) -> Callable[[R], R]:
        """Decorator: ``@formats.register("json")`` makes the function the ``json`` renderer."""

        def add(renderer: R) -> R:
            self._renderers[name] = renderer
            return renderer

        return add

    @property
    def names(self) -> tuple[str, ...]:
        """The format names, as the CLI offers them."""
        return tuple(self._renderers)

    def get(self, name: str) -> R:
        """The renderer for ``name`` (or its alias); a one-line usage error naming the choices."""
        renderer = self._renderers.get(self._aliases.get(name, name))
        if renderer is None:
            raise UsageError(f"unknown {self.what} {name!r}: use {', '.join(self.names)}", where="--format")
        return renderer
