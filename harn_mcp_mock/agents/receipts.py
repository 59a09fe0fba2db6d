"""Receipt hashing, chaining, redaction and verification (spec "Receipt wire format").

* ``chain.receipt_hash`` is ``"sha256:" + hex(SHA-256(JCS(receipt)))`` where the receipt is
  taken *without* ``chain.receipt_hash`` and without ``signatures`` (RFC 8785 via
  :func:`~harn_mcp_mock.agents.jcs.jcs_bytes`).
* ``chain.previous_receipt_hash`` holds the prior receipt's ``chain.receipt_hash`` (``null``
  for the first receipt of a stream); the field names follow the receipt-format sibling
  artifact, which also names ``chain.merkle_root`` (carried, not checked here).
* Redaction replaces a value by a descriptor that says something was there, and records the
  path, reason and (optionally) a proof hash of the removed value in ``redactions``. Redact
  *before* sealing: a redacted copy of a sealed receipt has no hash until it is sealed again.

Everything works on plain JSON dicts, never on :class:`~.models.Receipt`, so what is hashed
is exactly what was on the wire.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harn_mcp_mock.agents.envelopes import ProtocolError
from harn_mcp_mock.agents.jcs import JcsError, jcs_bytes
from harn_mcp_mock.store import pointer as jsonptr

__all__ = [
    "HASH_PREFIX",
    "RECEIPT_SCHEMA",
    "ChainReport",
    "receipt_hash",
    "redact",
    "seal",
    "sha256_ref",
    "verify_chain",
]

RECEIPT_SCHEMA = "receipt-2026-04-25"
HASH_PREFIX = "sha256:"

#: Paths redaction may not touch: they identify the receipt or carry its proof.
_PROTECTED = ("/schema", "/receipt_id", "/chain", "/signatures", "/redactions")


def sha256_ref(value: Any) -> str:
    """``sha256:<hex>`` of the RFC 8785 bytes of a JSON value."""
    return HASH_PREFIX + hashlib.sha256(jcs_bytes(value)).hexdigest()


def receipt_hash(receipt: Mapping[str, Any]) -> str:
    """The ``chain.receipt_hash`` a receipt must carry."""
    body = {k: v for k, v in receipt.items() if k != "signatures"}
    chain = body.get("chain")
    if isinstance(chain, Mapping):
        body["chain"] = {k: v for k, v in chain.items() if k != "receipt_hash"}
    return sha256_ref(body)


def seal(receipt: Mapping[str, Any], previous: Mapping[str, Any] | str | None = None) -> dict[str, Any]:
    """A copy of ``receipt`` chained after ``previous`` (a receipt or its hash) and hashed.

    Signatures, if any, are dropped: they sign the old hash.
    """
    out = copy.deepcopy(dict(receipt))
    out.pop("signatures", None)
    if isinstance(previous, Mapping):
        previous = previous["chain"]["receipt_hash"]
    chain = dict(out.get("chain") or {})
    chain.pop("receipt_hash", None)
    chain["previous_receipt_hash"] = previous
    out["chain"] = chain
    chain["receipt_hash"] = receipt_hash(out)
    return out


@dataclass(frozen=True, slots=True)
class ChainReport:
    """The result of :func:`verify_chain`: ``ok``, or the first broken link."""

    ok: bool
    checked: int  # receipts verified before the break (all of them when ok)
    index: int | None = None  # position of the first broken receipt
    receipt_id: str | None = None
    problem: Literal["malformed", "missing_hash", "hash_mismatch", "previous_mismatch"] | None = None
    expected: str | None = None
    found: str | None = None

    def describe(self) -> str:
        if self.ok:
            return f"{self.checked} receipt(s) verified"
        return (
            f"receipt #{self.index} ({self.receipt_id}): {self.problem}"
            f" (expected {self.expected}, found {self.found})"
        )


def verify_chain(receipts: Sequence[Any], *, anchor: str | None = None) -> ChainReport:
    """Check each receipt's hash and its link to the one before; stop at the first break.

    The first receipt's ``previous_receipt_hash`` is checked against ``anchor`` when one is
    given (the hash of the receipt just before this segment); otherwise it is not checked.
    """
    prior: str | None = anchor
    for i, receipt in enumerate(receipts):
        rid = receipt.get("receipt_id") if isinstance(receipt, Mapping) else None
        rid = rid if isinstance(rid, str) else None

        def broken(
            problem: Any, expected: str | None, found: Any, i: int = i, rid: str | None = rid
        ) -> ChainReport:
            return ChainReport(
                False, i, i, rid, problem, expected, found if isinstance(found, str) else repr(found)
            )

        if not isinstance(receipt, Mapping) or not isinstance(receipt.get("chain"), Mapping):
            return broken("malformed", "an object with a chain object", receipt)
        stored = receipt["chain"].get("receipt_hash")
        if not isinstance(stored, str):
            return broken("missing_hash", "chain.receipt_hash", stored)
        try:
            computed = receipt_hash(receipt)
        except JcsError as err:
            return broken("malformed", "JSON RFC 8785 can canonicalise", err.render())
        if stored != computed:
            return broken("hash_mismatch", computed, stored)
        previous = receipt["chain"].get("previous_receipt_hash")
        if (i > 0 or anchor is not None) and previous != prior:
            return broken("previous_mismatch", prior, previous)
        prior = stored
    return ChainReport(True, len(receipts))


# --------------------------------------------------------------------------- redaction


def _split_pointer(pointer: str) -> list[str]:
    if not pointer.startswith("/"):
        raise ProtocolError.invalid(f"redaction path {pointer!r} is not a JSON pointer", param="path")
    return [jsonptr.unescape(part) for part in pointer[1:].split("/")]


def _descend(doc: Any, token: str, pointer: str) -> tuple[Any, str | int]:
    if isinstance(doc, dict) and token in doc:
        return doc, token
    if isinstance(doc, list) and token.isdigit() and int(token) < len(doc):
        return doc, int(token)
    raise ProtocolError.invalid(f"redaction path {pointer} does not exist", param="path")


def redact(
    receipt: Mapping[str, Any], paths: Iterable[str], *, reason: str, proof: bool = True
) -> dict[str, Any]:
    """A copy with each JSON pointer's value replaced by a redacted descriptor.

    The descriptor (``{"redacted": true, "reason": ..., "proof_hash": ...}``) keeps the key or
    the array slot, so the structure shows that content existed; ``redactions`` gets one
    ``{path, reason, proof_hash}`` entry per path. ``proof=False`` leaves out the proof hash
    (use it for low-entropy secrets, whose hash could be guessed). The copy is unsealed.
    """
    out = copy.deepcopy(dict(receipt))
    entries: list[dict[str, Any]] = list(out.get("redactions") or [])
    for pointer in paths:
        if any(pointer == p or pointer.startswith(p + "/") for p in _PROTECTED) or pointer == "":
            raise ProtocolError.invalid(f"redaction path {pointer} may not be redacted", param="path")
        tokens = _split_pointer(pointer)
        node: Any = out
        for token in tokens[:-1]:
            parent, key = _descend(node, token, pointer)
            node = parent[key]
        parent, key = _descend(node, tokens[-1], pointer)
        descriptor: dict[str, Any] = {"redacted": True, "reason": reason}
        entry: dict[str, Any] = {"path": pointer, "reason": reason}
        if proof:
            descriptor["proof_hash"] = entry["proof_hash"] = sha256_ref(parent[key])
        parent[key] = descriptor
        entries.append(entry)
    out["redactions"] = entries
    out.pop("signatures", None)
    if isinstance(out.get("chain"), dict):
        out["chain"].pop("receipt_hash", None)
    return out
