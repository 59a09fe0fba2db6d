"""Lazy package exports (PEP 562), so that importing a package costs nothing until a name in
its ``__all__`` is used: replay's start-up imports only the modules it runs, and a package
whose modules import starlette or the MCP SDK stays cheap to import."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that loads ``name`` from ``homes[name]`` (a module path
    relative to ``package``, or absolute when it starts with ``harn_mcp_mock.``)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = home if home.startswith("harn_mcp_mock.") else f"{package}.{home}"
        return getattr(importlib.import_module(module), name)

    return __getattr__
