"""``@record``: slotted value classes for the start-up path, without importing :mod:`dataclasses`.

``dataclasses`` imports :mod:`inspect` (with ``ast``, ``dis`` and ``tokenize``), which costs
replay and world a fifth of their start-up. The classes a cold replay builds use this instead:
the same ``__init__`` (fields in order, defaults, ``field(default_factory=...)``), ``__repr__``
and ``__eq__`` (``__hash__`` too when ``frozen``), on a class with ``__slots__``. Type checkers
see a dataclass (``dataclass_transform``). Nothing else of dataclasses is offered: no
``replace``, ``asdict`` or ``fields``; use :mod:`dataclasses` where those are needed.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        return lambda f: f


__all__ = ["FrozenInstanceError", "field", "record"]

_MISSING = object()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is built per instance (``field(default_factory=list)``)."""
    return _Factory(default_factory)  # type: ignore[return-value]


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a ``frozen`` record."""


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False) -> Any:
    """Make ``cls`` a slotted value class from its annotated fields (see the module docstring)."""

    def build(cls: type[T]) -> type[T]:
        names = list(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063 (inspect is what we avoid)
        body = {
            k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")
        }
        defaults: dict[str, Any] = {}
        params, lines = [], []
        for name in names:
            default = cls.__dict__.get(name, _MISSING)
            if isinstance(default, _Factory):
                defaults[f"_f_{name}"] = default.make
                params.append(f"{name}=_MISSING")
                value = f"_f_{name}() if {name} is _MISSING else {name}"
            elif default is not _MISSING:
                defaults[f"_d_{name}"] = default
                params.append(f"{name}=_d_{name}")
                value = name
            else:
                params.append(name)
                value = name
            lines.append(
                f"  object.__setattr__(self, {name!r}, {value})" if frozen else f"  self.{name} = {value}"
            )
        source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(lines) or "  pass") + "\n"
        scope: dict[str, Any] = {"_MISSING": _MISSING, **defaults}
        exec(source, scope)  # the same technique as dataclasses: one compiled __init__ per class
        body["__init__"] = scope["__init__"]
        body["__slots__"] = tuple(names)
        fields = tuple(names)

        def __repr__(self: Any) -> str:
            args = ", ".join(f"{n}={getattr(self, n)!r}" for n in fields)
            return f"{type(self).__qualname__}({args})"

        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in fields)

        body["__repr__"] = __repr__
        body["__eq__"] = __eq__
        body["__match_args__"] = fields
        if frozen:
            body["__setattr__"] = _frozen_setattr
            body["__delattr__"] = _frozen_delattr
            body["__hash__"] = lambda self: hash(tuple(getattr(self, n) for n in fields))
        else:
            body["__hash__"] = None
        built: type[T] = type(cls.__name__, cls.__bases__, body)
        built.__qualname__ = cls.__qualname__
        built.__module__ = cls.__module__
        return built

    return build if cls is None else build(cls)
