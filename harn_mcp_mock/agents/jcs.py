"""RFC 8785 JSON Canonicalization Scheme (JCS): the bytes receipts are hashed over.

``store.canonical.canonical_bytes`` (orjson, sorted keys) is *not* JCS and must not be used
for receipts. It differs in three places, each pinned by a test in ``tests/agents/test_jcs.py``:

* numbers: JCS writes every number the way ECMAScript's ``Number.prototype.toString`` does,
  so ``100.0`` is ``100``, ``-0.0`` is ``0`` and ``9007199254740992.0`` is ``9007199254740992``
  (orjson keeps ``.0`` and the sign of zero);
* key order: JCS sorts object keys by UTF-16 code units, orjson by UTF-8 bytes, which disagree
  for keys holding characters above U+FFFF next to characters in U+E000..U+FFFF;
* both escape strings the same way (only ``"``, ``\\`` and C0 controls, lower-case ``\\u00xx``),
  which this module does by hand to stay independent of the encoder.

Inputs are the JSON data model as Python values: ``dict`` with ``str`` keys, ``list``/``tuple``,
``str``, ``int``, ``float``, ``bool`` and ``None``. RFC 8785 knows only IEEE 754 doubles, so an
integer beyond +-2**53 is written as the nearest double (as a JavaScript or I-JSON parser reads
it); producers should keep integers inside that range. Integers beyond the double range, NaN,
the infinities, lone surrogates and non-string keys are refused with :class:`JcsError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from harn_mcp_mock.errors import HarnError

__all__ = ["JcsError", "jcs_bytes", "jcs_number"]

_MAX_SAFE_INT = 2**53

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class JcsError(HarnError):
    """A value outside the JSON data model RFC 8785 can canonicalise."""

    exit_code = 2


def jcs_number(value: float | int) -> str:
    """The RFC 8785 (ECMAScript ``Number.prototype.toString``) form of a number."""
    if isinstance(value, bool):
        raise JcsError("a boolean is not a number")
    if isinstance(value, int):
        if abs(value) <= _MAX_SAFE_INT:
            return str(value)
        try:
            exact = float(value)
        except OverflowError:
            exact = math.inf
        if math.isinf(exact):
            raise JcsError(f"integer {value} is beyond the range of an IEEE 754 double")
        return jcs_number(exact)  # rounded to the nearest double, as any RFC 8785 parser reads it
    if math.isnan(value) or math.isinf(value):
        raise JcsError(f"{value!r} is not a JSON number")
    if value == 0:
        return "0"  # also -0.0
    sign = "-" if value < 0 else ""
    # repr() is the shortest round-tripping decimal, as ECMAScript requires.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exponent, int)
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    k = len(digits)
    n = k + exponent  # value = 0.digits * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _string(value: str) -> str:
    out = ['"']
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _emit(value: Any, out: list[str], where: str) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int | float):
        try:
            out.append(jcs_number(value))
        except JcsError as err:
            raise JcsError(err.message, where=where) from None
    elif isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise JcsError(f"object key {key!r} is not a string", where=where)
        out.append("{")
        for i, key in enumerate(sorted(value, key=_utf16_key)):
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _emit(value[key], out, f"{where}/{key}")
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _emit(item, out, f"{where}/{i}")
        out.append("]")
    else:
        raise JcsError(f"{type(value).__name__} is not part of the JSON data model", where=where)


def jcs_bytes(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``value``."""
    out: list[str] = []
    _emit(value, out, "$")
    text = "".join(out)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise JcsError("string holds a lone surrogate, which is not valid Unicode") from None
