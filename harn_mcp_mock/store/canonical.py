"""Canonical JSON: the one definition of "same content".

Sorted keys, no insignificant white space, UTF-8, integers as integers. Two values are the
same content exactly when their canonical bytes are equal, and a digest is always the BLAKE3
of canonical bytes (or of raw bytes the caller already holds).
"""

from __future__ import annotations

import functools

import orjson

from harn_mcp_mock import deepjson

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


sorted_json = functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)
"""The canonical bytes of a value already known to be plain JSON (string keys, nesting orjson
takes), without :func:`canonical_bytes`' exact-size copy and deep-input fallback: for hot
comparisons, such as scoring's differ comparing thousands of subtrees (a partial of the C
function: no Python frame per call)."""


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON bytes of ``value`` (sorted keys, compact), sized to fit.

    orjson's result keeps its whole output buffer (at least 4 KiB, however short the JSON), and
    canonical bytes are often kept (match keys: one per recorded request in every replay
    session's engine). The exact-size copy costs ~65 ns; a 100-byte key then holds 130 bytes.
    """
    return b"%b" % (deepjson.dumps(value, _OPTS),)


_blake3: Any = None


def blake3_hasher() -> Any:
    """The ``blake3`` hasher class, imported on first use (start-up speed) and kept: an import
    statement in a hot function costs about as much as hashing a short message."""
    global _blake3
    if _blake3 is None:
        from blake3 import blake3

        _blake3 = blake3
    return _blake3


def digest(data: bytes) -> str:
    """BLAKE3 hex digest of raw bytes."""
    return (_blake3 or blake3_hasher())(data).hexdigest()  # type: ignore[no-any-return]


def digest_json(value: Any) -> str:
    """BLAKE3 hex digest of the canonical JSON of ``value``."""
    return (_blake3 or blake3_hasher())(deepjson.dumps(value, _OPTS)).hexdigest()  # type: ignore[no-any-return]
