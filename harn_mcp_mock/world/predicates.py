"""The predicate language of worlds: ``requires``, task goals, forbidden states and fault ``when``.

Pure functions over a JSON state (nested dicts, lists and scalars), shared by the engine and by
``harn_mcp_mock.scoring``. The language is the table in ``docs/worlds.md``:

==========================================  =====================================================
``{"exists": "/p"}`` / ``{"missing": ..}``  the path has / has no value (``null`` is a value)
``{"path": p, "equals": v}``                deep equality, numbers by value (25 == 25.0, True != 1)
``{"path": p, "not_equals": v}``            not ``equals`` (so it holds when the path is missing)
``{"path": p, "in": [v, ...]}``             the value equals one of them
``{"path": p, "gte"|"lte"|"gt"|"lt": n}``   numeric comparison; false unless both are numbers
``{"path": p, "any": pattern}``             some item of the collection subset-matches pattern
``{"path": p, "none": pattern}``            not ``any`` (so it holds when there is no collection)
``{"path": p, "count": n, "where": {..}}``  the collection has exactly n (matching) items; false
                                            when there is no collection at ``p``
``{"all": [...]}`` / ``{"any_of": [...]}``  composition (``all: []`` holds, ``any_of: []`` not)
``{"not": predicate}``
==========================================  =====================================================

A collection is an object (its items are the values, each carrying its key as ``id`` unless it
has an ``id`` field) or an array (its items). Paths are RFC 6901 JSON pointers. Evaluation never
raises on state data: a path into nothing is simply missing, and a comparison of a non-number is
false. :func:`validate_predicate` is where malformed predicates are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache

from harn_mcp_mock.store import pointer as jsonptr

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "FORMS",
    "META_KEYS",
    "MISSING",
    "PATH_OPERATORS",
    "PredicateError",
    "get_path",
    "holds",
    "items_of",
    "json_equal",
    "predicate_paths",
    "split_pointer",
    "subset_match",
    "validate_predicate",
]

MISSING: Final = object()
"""What :func:`get_path` returns when a path has no value (``None`` is JSON ``null``, a value)."""

FORMS: Final = ("exists", "missing", "path", "all", "any_of", "not")
"""The keys that decide a predicate's form; a predicate has exactly one of them."""

PATH_OPERATORS: Final = ("equals", "not_equals", "in", "gte", "lte", "gt", "lt", "any", "none", "count")
"""The operators of a ``{"path": ...}`` predicate; it has exactly one of them."""

META_KEYS: Final = frozenset({"error", "description"})
"""Fields a predicate may carry that do not take part in evaluation (``error`` is the tool error
text of a failing ``requires`` entry)."""

_NUMERIC: Final = ("gte", "lte", "gt", "lt")

if TYPE_CHECKING:
    Resolve = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


class PredicateError(ValueError):
    """A malformed predicate. ``str(err)`` is the one-line message; ``where`` the field path
    (e.g. ``tasks[0].goal[1].gte``) that the spec loader puts in front of it."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.where = where


# --- paths -----------------------------------------------------------------------------------


def split_pointer(path: str) -> list[str]:
    """The unescaped segments of an RFC 6901 pointer (``~1`` is ``/``, ``~0`` is ``~``).

    ``""`` (the whole document) is ``[]`` and ``"/"`` is ``[""]``. A pointer that does not start
    with ``/``, or has a ``~`` not followed by 0 or 1, raises :class:`PredicateError`.
    """
    if not isinstance(path, str):
        raise PredicateError(f"a JSON pointer must be empty or start with '/': {path!r}")
    try:
        return jsonptr.split(path)
    except ValueError as exc:
        raise PredicateError(f"{exc}: {path!r}") from None


@lru_cache(maxsize=8192)
def _segments(path: str) -> tuple[str, ...]:
    """:func:`split_pointer`, cached (the same few paths are looked up in every state)."""
    if not isinstance(path, str):
        raise TypeError("not a JSON pointer")
    return tuple(split_pointer(path))


def get_path(state: Any, path: str) -> Any:
    """The value at ``path`` in ``state``, or :data:`MISSING`.

    Array items are addressed by decimal indexes without leading zeros (``/tags/0``); ``-`` and
    anything else address nothing. A malformed pointer addresses nothing too.
    """
    try:
        segments = _segments(path)
    except (PredicateError, TypeError):  # TypeError: not a string (unhashable or not a pointer)
        return MISSING
    value = state
    for seg in segments:
        if isinstance(value, dict):
            if seg not in value:
                return MISSING
            value = value[seg]
        elif isinstance(value, list):
            if not seg.isdecimal() or (len(seg) > 1 and seg[0] == "0"):
                return MISSING
            index = int(seg)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value


# --- values ----------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: numbers by value (``25 == 25.0``), but a boolean is not a number
    (``True != 1``); objects by key set and values, arrays by length and items in order."""
    if a is b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False  # True and False are singletons: ``a is b`` already said yes
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b or not json_equal(value, b[key]):
                return False
        return True
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, dict | list):
        return False
    return bool(a == b)


def subset_match(item: Any, pattern: Any) -> bool:
    """Whether every field of ``pattern`` is in ``item`` with an equal value.

    Nested objects in the pattern match recursively (a subset of the nested object); any other
    pattern value (including an array) must be :func:`json_equal` to the item's. A pattern that is
    not an object is compared with :func:`json_equal` to the whole item.
    """
    if isinstance(pattern, dict):
        if not isinstance(item, dict):
            return False
        for key, want in pattern.items():
            if key not in item or not subset_match(item[key], want):
                return False
        return True
    return json_equal(item, pattern)


def items_of(collection: Any) -> list[Any]:
    """The items of a collection: an object's values (an object value gets its key as ``id``
    unless it has an ``id``), or an array's items; anything else has no items."""
    if isinstance(collection, dict):
        return [
            {**value, "id": key} if isinstance(value, dict) and "id" not in value else value
            for key, value in collection.items()
        ]
    if isinstance(collection, list):
        return list(collection)
    return []


def _entries(collection: Any) -> Iterator[tuple[Any, str | None]]:
    """(item, key to use as its ``id``) pairs without copying the items (see :func:`items_of`)."""
    if isinstance(collection, dict):
        for key, value in collection.items():
            yield value, (key if isinstance(value, dict) and "id" not in value else None)
    elif isinstance(collection, list):
        for value in collection:
            yield value, None


def _item_matches(item: Any, implicit_id: str | None, pattern: Any) -> bool:
    """``subset_match(items_of-style item, pattern)`` without building the item."""
    if implicit_id is None or not isinstance(pattern, dict):
        return subset_match(item, pattern)
    for key, want in pattern.items():
        if key in item:
            if not subset_match(item[key], want):
                return False
        elif key != "id" or not subset_match(implicit_id, want):
            return False
    return True


# --- evaluation ------------------------------------------------------------------------------


def holds(
    predicate: dict[str, Any], state: Any, resolve: Resolve = _identity, resolve_path: Resolve | None = None
) -> bool:
    """Whether ``predicate`` holds on ``state``.

    ``resolve`` is applied once to every path string and once to every operand value (the
    whole ``in`` list, ``any``/``none`` pattern, ``where`` object) before evaluation: the engine
    passes its template resolver, scoring the identity. ``resolve_path``, when given, resolves
    the path strings instead (the engine's escapes each templated segment, so a value with a
    ``/`` in it is one key). A predicate of no known form raises :class:`PredicateError`
    (validated specs never have one).
    """
    at = resolve_path or resolve
    if "path" in predicate:
        value = get_path(state, at(predicate["path"]))
        for op in PATH_OPERATORS:
            if op in predicate:
                return _path_op(op, value, resolve(predicate[op]), predicate, resolve)
        raise PredicateError(f"no operator: use one of {', '.join(PATH_OPERATORS)}")
    if "exists" in predicate:
        return get_path(state, at(predicate["exists"])) is not MISSING
    if "missing" in predicate:
        return get_path(state, at(predicate["missing"])) is MISSING
    if "all" in predicate:
        return all(holds(p, state, resolve, resolve_path) for p in predicate["all"])
    if "any_of" in predicate:
        return any(holds(p, state, resolve, resolve_path) for p in predicate["any_of"])
    if "not" in predicate:
        return not holds(predicate["not"], state, resolve, resolve_path)
    raise PredicateError(f"not a predicate: use one of {', '.join(FORMS)}")


def _path_op(op: str, value: Any, operand: Any, predicate: dict[str, Any], resolve: Resolve) -> bool:
    if op == "equals":
        return value is not MISSING and json_equal(value, operand)
    if op == "not_equals":
        return value is MISSING or not json_equal(value, operand)
    if op == "in":
        return (
            value is not MISSING and isinstance(operand, list) and any(json_equal(value, o) for o in operand)
        )
    if op in _NUMERIC:
        if not (_is_number(value) and _is_number(operand)):
            return False
        if op == "gte":
            return bool(value >= operand)
        if op == "lte":
            return bool(value <= operand)
        if op == "gt":
            return bool(value > operand)
        return bool(value < operand)
    if op == "any":
        return any(_item_matches(item, key, operand) for item, key in _entries(value))
    if op == "none":
        return not any(_item_matches(item, key, operand) for item, key in _entries(value))
    # count
    if not isinstance(value, dict | list) or not _is_number(operand):
        return False
    if "where" in predicate:
        where = resolve(predicate["where"])
        size = sum(1 for item, key in _entries(value) if _item_matches(item, key, where))
    else:
        size = len(value)
    return bool(size == operand)


def predicate_paths(predicate: dict[str, Any], resolve: Resolve = _identity) -> list[str]:
    """The state paths ``predicate`` speaks about (its ``exists``/``missing``/``path`` values,
    through ``all``/``any_of``/``not``), resolved, in order of appearance, without repeats."""
    out: list[str] = []
    _collect_paths(predicate, resolve, out)
    return out


def _collect_paths(predicate: Any, resolve: Resolve, out: list[str]) -> None:
    if not isinstance(predicate, dict):
        return
    for key in ("exists", "missing", "path"):
        if key in predicate:
            path = resolve(predicate[key])
            if isinstance(path, str) and path not in out:
                out.append(path)
    for key in ("all", "any_of"):
        for sub in predicate.get(key) or ():
            _collect_paths(sub, resolve, out)
    if "not" in predicate:
        _collect_paths(predicate["not"], resolve, out)


# --- validation ------------------------------------------------------------------------------


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and "{" in value


def _check_pointer(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise PredicateError("expected a JSON pointer string", where)
    try:
        split_pointer(value)
    except PredicateError as exc:
        raise PredicateError(exc.message, where) from None


def validate_predicate(predicate: Any, where: str) -> None:
    """Refuse a malformed predicate with a :class:`PredicateError` whose ``where`` extends
    ``where`` to the field at fault (``tasks[0].goal[1]`` -> ``tasks[0].goal[1].gte``).

    Operands may be templates (strings with ``{...}``) wherever a number, list or object is
    expected, since the engine resolves them per call.
    """
    if not isinstance(predicate, dict):
        raise PredicateError("a predicate must be an object", where)
    forms = [key for key in FORMS if key in predicate]
    if not forms:
        raise PredicateError(f"not a predicate: needs one of {', '.join(FORMS)}", where)
    if len(forms) > 1:
        raise PredicateError(f"has both {forms[0]!r} and {forms[1]!r}: a predicate has one form", where)
    form = forms[0]
    allowed = {form, *META_KEYS}
    if form in ("exists", "missing"):
        _check_pointer(predicate[form], f"{where}.{form}")
    elif form in ("all", "any_of"):
        parts = predicate[form]
        if not isinstance(parts, list) or not parts:
            raise PredicateError("expected a non-empty list of predicates", f"{where}.{form}")
        for i, part in enumerate(parts):
            validate_predicate(part, f"{where}.{form}[{i}]")
    elif form == "not":
        validate_predicate(predicate["not"], f"{where}.not")
    else:
        _check_pointer(predicate["path"], f"{where}.path")
        ops = [op for op in PATH_OPERATORS if op in predicate]
        if not ops:
            raise PredicateError(f"a path predicate needs one of {', '.join(PATH_OPERATORS)}", where)
        if len(ops) > 1:
            raise PredicateError(f"has both {ops[0]!r} and {ops[1]!r}: use all: [...] to combine", where)
        op = ops[0]
        allowed |= {op}
        _check_operand(op, predicate[op], f"{where}.{op}")
        if op == "count":
            allowed.add("where")
            if "where" in predicate and not (
                isinstance(predicate["where"], dict) or _is_template(predicate["where"])
            ):
                raise PredicateError("expected an object of field values", f"{where}.where")
    for key in predicate:
        if key not in allowed:
            hint = " (only with count)" if key == "where" else ""
            raise PredicateError(f"unknown field{hint}", f"{where}.{key}")
    if "error" in predicate and not isinstance(predicate["error"], str):
        raise PredicateError("expected a string", f"{where}.error")


def _check_operand(op: str, operand: Any, where: str) -> None:
    if _is_template(operand):
        return
    if op == "in" and not isinstance(operand, list):
        raise PredicateError("expected a list of values", where)
    if op in _NUMERIC and not _is_number(operand):
        raise PredicateError("expected a number", where)
    if op == "count" and not (isinstance(operand, int) and not isinstance(operand, bool) and operand >= 0):
        raise PredicateError("expected a non-negative integer", where)
