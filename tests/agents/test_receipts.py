"""Receipts hash over RFC 8785 bytes, chain to their predecessor, and redact without losing shape."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harn_mcp_mock.agents.envelopes import ProtocolError
from harn_mcp_mock.agents.jcs import jcs_bytes
from harn_mcp_mock.agents.models import Receipt
from harn_mcp_mock.agents.receipts import receipt_hash, redact, seal, sha256_ref, verify_chain
from tests.agents.protocol_data import SAMPLES, deterministic


def receipt(n: int, **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(SAMPLES["receipt"])
    out["receipt_id"] = f"rcpt_{n}"
    out.update(changes)
    return out


def chain_of(count: int) -> list[dict[str, Any]]:
    sealed: list[dict[str, Any]] = []
    for n in range(count):
        sealed.append(seal(receipt(n), sealed[-1] if sealed else None))
    return sealed


def test_the_receipt_hash_is_sha256_of_the_jcs_bytes_without_the_hash_and_signatures() -> None:
    body = receipt(1, signatures=[{"alg": "ed25519", "kid": "k1", "sig": "abc"}])
    by_hand = copy.deepcopy(body)
    del by_hand["signatures"]
    del by_hand["chain"]["receipt_hash"]
    expected = "sha256:" + hashlib.sha256(jcs_bytes(by_hand)).hexdigest()
    assert receipt_hash(body) == expected


def test_the_hash_ignores_signatures_and_the_stored_hash_but_nothing_else() -> None:
    base = receipt(1)
    assert receipt_hash(base) == receipt_hash({**base, "signatures": [{"sig": "x"}]})
    assert receipt_hash(base) == receipt_hash(
        {**base, "chain": {**base["chain"], "receipt_hash": "sha256:" + "1" * 64}}
    )
    assert receipt_hash(base) != receipt_hash({**base, "cost": {"total_usd": 0.26, "providers": {}}})
    assert receipt_hash(base) != receipt_hash({**base, "chain": {**base["chain"], "merkle_root": "m"}})


def test_the_hash_does_not_depend_on_key_order_or_float_spelling() -> None:
    base = receipt(1, cost={"total_usd": 0.25, "providers": {"b": 1.0, "a": 2}})
    reordered = dict(reversed(list(base.items())))
    reordered["cost"] = {"providers": {"a": 2.0, "b": 1}, "total_usd": 0.250}
    assert receipt_hash(base) == receipt_hash(reordered)


def test_seal_links_each_receipt_to_the_previous_hash_and_the_chain_verifies() -> None:
    sealed = chain_of(4)
    assert sealed[0]["chain"]["previous_receipt_hash"] is None
    assert [r["chain"]["previous_receipt_hash"] for r in sealed[1:]] == [
        r["chain"]["receipt_hash"] for r in sealed[:-1]
    ]
    assert all(r["chain"]["receipt_hash"].startswith("sha256:") for r in sealed)
    report = verify_chain(sealed)
    assert (report.ok, report.checked, report.describe()) == (True, 4, "4 receipt(s) verified")


def test_sealed_receipts_parse_as_the_receipt_model() -> None:
    assert Receipt.from_dict(chain_of(1)[0]).chain["receipt_hash"].startswith("sha256:")


def test_the_verifier_reports_the_first_tampered_receipt() -> None:
    sealed = chain_of(5)
    sealed[2]["cost"] = {"total_usd": 9.99, "providers": {}}
    sealed[4]["cost"] = {"total_usd": 1.0, "providers": {}}
    report = verify_chain(sealed)
    assert (report.ok, report.index, report.receipt_id, report.problem, report.checked) == (
        False, 2, "rcpt_2", "hash_mismatch", 2,
    )  # fmt: skip
    assert report.found == sealed[2]["chain"]["receipt_hash"]


def test_the_verifier_reports_a_receipt_resealed_onto_the_wrong_predecessor() -> None:
    sealed = chain_of(4)
    sealed[3] = seal(sealed[3], sealed[1])  # a valid hash, but the link skips receipt 2
    report = verify_chain(sealed)
    assert (report.index, report.problem, report.expected) == (
        3,
        "previous_mismatch",
        sealed[2]["chain"]["receipt_hash"],
    )


def test_removing_a_receipt_from_the_middle_breaks_the_next_link() -> None:
    sealed = chain_of(4)
    report = verify_chain([sealed[0], sealed[2], sealed[3]])
    assert (report.index, report.receipt_id, report.problem) == (1, "rcpt_2", "previous_mismatch")


def test_a_segment_is_checked_against_an_anchor_when_one_is_given() -> None:
    sealed = chain_of(3)
    assert verify_chain(sealed[1:]).ok
    assert verify_chain(sealed[1:], anchor=sealed[0]["chain"]["receipt_hash"]).ok
    assert verify_chain(sealed[1:], anchor="sha256:" + "0" * 64).problem == "previous_mismatch"


@pytest.mark.parametrize(
    ("bad", "problem"),
    [("not a receipt", "malformed"), ({"receipt_id": "r"}, "malformed"), ({"chain": {}}, "missing_hash")],
)
def test_malformed_receipts_are_reported_not_raised(bad: Any, problem: str) -> None:
    report = verify_chain([*chain_of(1), bad])
    assert (report.ok, report.index, report.problem) == (False, 1, problem)


def test_redaction_replaces_values_with_descriptors_and_records_them() -> None:
    body = receipt(
        1,
        side_effects={"network_egress": [{"host": "api.example", "token": "sk-secret-123"}], "tool_calls": 3},
    )
    redacted = redact(body, ["/side_effects/network_egress/0/token", "/model_route"], reason="secret")
    assert redacted["side_effects"]["network_egress"][0] == {
        "host": "api.example",
        "token": {"redacted": True, "reason": "secret", "proof_hash": sha256_ref("sk-secret-123")},
    }
    assert set(redacted["model_route"]) == {"redacted", "reason", "proof_hash"}
    assert redacted["redactions"] == [
        {
            "path": "/side_effects/network_egress/0/token",
            "reason": "secret",
            "proof_hash": sha256_ref("sk-secret-123"),
        },
        {"path": "/model_route", "reason": "secret", "proof_hash": sha256_ref(body["model_route"])},
    ]
    assert "sk-secret-123" not in jcs_bytes(redacted).decode()
    assert body["side_effects"]["network_egress"][0]["token"] == "sk-secret-123"  # the input is untouched


def test_redaction_can_leave_out_the_proof_hash_for_guessable_secrets() -> None:
    redacted = redact(
        receipt(1, issuer={"name": "h", "pin": "1234"}), ["/issuer/pin"], reason="pin", proof=False
    )
    assert redacted["issuer"]["pin"] == {"redacted": True, "reason": "pin"}
    assert redacted["redactions"] == [{"path": "/issuer/pin", "reason": "pin"}]


def test_a_redacted_receipt_must_be_resealed_and_then_verifies() -> None:
    first = seal(receipt(0))
    redacted = redact(seal(receipt(1), first), ["/identifiers/task_id"], reason="private")
    assert "receipt_hash" not in redacted["chain"]
    resealed = seal(redacted, first)
    assert verify_chain([first, resealed]).ok
    assert Receipt.from_dict(resealed).optional["redactions"][0]["path"] == "/identifiers/task_id"


@pytest.mark.parametrize(
    "path", ["/chain", "/chain/receipt_hash", "/signatures", "/schema", "/receipt_id", "/redactions", ""]
)
def test_redaction_refuses_the_fields_that_identify_or_prove_the_receipt(path: str) -> None:
    with pytest.raises(ProtocolError, match="may not be redacted"):
        redact(receipt(1), [path], reason="x")


@pytest.mark.parametrize("path", ["/nope", "/final_artifacts/5", "cost", "/cost/providers/x"])
def test_redaction_refuses_a_path_that_does_not_exist(path: str) -> None:
    with pytest.raises(ProtocolError):
        redact(receipt(1), [path], reason="x")


def test_json_pointer_escapes_are_honoured() -> None:
    redacted = redact(
        receipt(1, metadata={"a/b": 1, "c~d": 2}), ["/metadata/a~1b", "/metadata/c~0d"], reason="x"
    )
    assert redacted["metadata"]["a/b"]["redacted"] and redacted["metadata"]["c~d"]["redacted"]


@deterministic
@given(st.integers(min_value=1, max_value=6), st.data())
def test_changing_any_one_receipt_in_a_chain_is_caught_at_that_receipt(
    count: int, data: st.DataObject
) -> None:
    sealed = chain_of(count)
    victim = data.draw(st.integers(min_value=0, max_value=count - 1))
    sealed[victim]["lifecycle"] = {**sealed[victim]["lifecycle"], "final_state": "FAILED"}
    report = verify_chain(sealed)
    assert (report.ok, report.index, report.problem) == (False, victim, "hash_mismatch")
