"""The fidelity oracle: every mode against every category it can produce, on hand-built tapes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.store import canonical_bytes
from harn_mcp_mock.tape import Tape, load_tape, load_tape_pair
from harn_mcp_mock.tape.fidelity import CATEGORIES, FidelityMode, FidelityReport, compare

H1 = "1" * 64
H2 = "2" * 64
H3 = "3" * 64

_counter = {"n": 0}


def rec(kind: str, seq: int, **fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": "record",
        "seq": seq,
        "phase": fields.pop("phase", "user_script"),
        "virtual_time_ms": fields.pop("vt", 1000 + seq),
        "monotonic_ms": fields.pop("mono", seq),
        "kind": kind,
    }
    doc.update(fields)
    return doc


def tape(tmp_path: Path, records: list[dict[str, Any]], name: str | None = None) -> Tape:
    _counter["n"] += 1
    path = tmp_path / (name or f"t{_counter['n']}.tape")
    lines = [canonical_bytes({"type": "header", "version": 1})] + [canonical_bytes(r) for r in records]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return load_tape(path)


def cats(report: FidelityReport) -> list[str]:
    return [d.category for d in report.divergences]


def base() -> list[dict[str, Any]]:
    return [
        rec("clock_read", 0, source="wall", value_ms=1000),
        rec("clock_sleep", 1, duration_ms=250),
        rec("llm_call", 2, request_digest=H1, response={"content_hash": H2, "text": "hi"}),
        rec("file_write", 3, path="out.txt", content_hash=H1, len_bytes=3),
        rec("process_spawn", 4, program="git", args=["status"], cwd="/r", exit_code=0, duration_ms=12),
        rec(
            "mcp_json_rpc",
            5,
            server="s",
            method="tools/call",
            direction="client->server",
            request_digest=H1,
            response_digest=H2,
            latency_ms=1.5,
        ),
        rec("file_delete", 6, path="tmp.txt", phase="runtime_finalize"),
        rec("clock_read", 7, source="monotonic", value_ms=7, phase="runtime_finalize"),
    ]


ALL_MODES = [m.value for m in FidelityMode]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_identical_tapes_have_no_divergence(tmp_path: Path, mode: str) -> None:
    report = compare(tape(tmp_path, base()), tape(tmp_path, base()), mode)
    assert report.identical and report.divergences == []
    doc = report.to_json()
    assert doc["version"] == 1 and doc["mode"] == mode and doc["identical"] is True
    assert doc["records"] == [8, 8] and doc["divergences"] == []


def test_report_json_shape(tmp_path: Path) -> None:
    b = base()
    b[1]["duration_ms"] = 300
    report = compare(tape(tmp_path, base(), "a.tape"), tape(tmp_path, b, "b.tape"), "byte-identical")
    doc = report.to_json()
    assert set(doc) == {"version", "mode", "a", "b", "records", "divergences", "identical"}
    assert doc["a"].endswith("a.tape") and doc["b"].endswith("b.tape")
    assert doc["divergences"] == [
        {
            "category": "field_mismatch",
            "seq_a": 1,
            "seq_b": 1,
            "kind": "clock_sleep",
            "detail": "duration_ms 250 vs 300",
        }
    ]
    assert doc["identical"] is False


def test_every_category_is_documented_with_modes() -> None:
    assert set(CATEGORIES) == {
        "length_mismatch",
        "seq_mismatch",
        "kind_mismatch",
        "phase_mismatch",
        "payload_mismatch",
        "field_mismatch",
        "timing_mismatch",
        "unknown_kind",
        "fs_write_set_mismatch",
        "exit_status_mismatch",
        "llm_call_count_mismatch",
        "mcp_mismatch",
    }
    for modes in CATEGORIES.values():
        assert set(modes) <= set(ALL_MODES)
    doc = (Path(__file__).parents[2] / "docs" / "tape.md").read_text()
    for category in CATEGORIES:
        assert f"`{category}`" in doc


# --- byte-identical ---------------------------------------------------------------------------


def test_byte_identical_timing(tmp_path: Path) -> None:
    b = base()
    b[0]["virtual_time_ms"] += 5
    b[1]["monotonic_ms"] += 1
    b[4]["duration_ms"] = 13
    b[5]["latency_ms"] = 2.0
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical")
    assert cats(report) == ["timing_mismatch"] * 4
    assert "virtual_time_ms 1000 vs 1005" in report.divergences[0].detail
    assert report.divergences[2].kind == "process_spawn"


def test_byte_identical_length_kind_phase_seq(tmp_path: Path) -> None:
    b = base()
    b[1] = rec("clock_read", 1, source="wall", value_ms=1001)
    b[3]["phase"] = "runtime_finalize"
    b[4]["seq"] = 40
    b.append(rec("llm_call", 8, request_digest=H1, response={"content_hash": H2, "text": "hi"}))
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical")
    assert cats(report) == ["kind_mismatch", "phase_mismatch", "seq_mismatch", "length_mismatch"]
    length = report.divergences[-1]
    assert (length.seq_a, length.seq_b, length.kind) == (None, 8, "llm_call")
    assert "a has 8 records, b has 9" in length.detail
    # and the other way round
    report = compare(tape(tmp_path, b), tape(tmp_path, base()), "byte-identical")
    assert report.divergences[-1].seq_a == 8 and report.divergences[-1].seq_b is None


def test_payload_and_field_mismatch(tmp_path: Path) -> None:
    b = base()
    b[2]["response"] = {"content_hash": H3, "text": "ho"}
    b[3]["content_hash"] = H2
    b[3]["len_bytes"] = 4
    b[5]["response_digest"] = H3
    b[4]["args"] = ["log"]
    for mode in ("byte-identical", "semantic", "phase-aware"):
        report = compare(tape(tmp_path, base()), tape(tmp_path, b), mode)
        assert cats(report) == [
            "payload_mismatch",
            "payload_mismatch",
            "field_mismatch",
            "field_mismatch",
            "payload_mismatch",
        ], mode
        assert report.divergences[0].detail == f"response {H2[:12]} vs {H3[:12]}"


def test_hashes_only_inline_vs_spilled_is_same_content(tmp_path: Path) -> None:
    b = base()
    b[2]["response"] = {"content_hash": H2, "len_bytes": 2}  # same hash, stored in the sidecar
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical")
    assert report.identical
    # the text is never re-hashed: a (tampered) text with the same hash is not a divergence
    b[2]["response"] = {"content_hash": H2, "text": "something else"}
    assert compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical").identical


def test_missing_field_is_field_mismatch(tmp_path: Path) -> None:
    b = base()
    del b[1]["duration_ms"]
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "semantic")
    assert cats(report) == ["field_mismatch"]
    assert "(absent)" in report.divergences[0].detail


@pytest.mark.parametrize("mode", ALL_MODES)
def test_unknown_kind_in_every_mode(tmp_path: Path, mode: str) -> None:
    a = [*base(), rec("http_request", 8, url="u")]
    b = [*base(), rec("http_request", 8, url="u")]
    report = compare(tape(tmp_path, a), tape(tmp_path, b), mode)
    assert "unknown_kind" in cats(report)
    d = next(d for d in report.divergences if d.category == "unknown_kind")
    assert d.kind == "http_request"


def test_unknown_kind_shared_record(tmp_path: Path) -> None:
    records = [*base(), rec("http_request", 8, url="u")]
    a = tape(tmp_path, records)
    b = tape(tmp_path, records)
    ta, tb = load_tape_pair(a.path, b.path)
    assert ta.records[8] is tb.records[8]
    assert cats(compare(ta, tb, "byte-identical")) == ["unknown_kind"]


# --- semantic ---------------------------------------------------------------------------------


def test_semantic_ignores_time_drift_and_seq(tmp_path: Path) -> None:
    b = base()
    for r in b:
        r["virtual_time_ms"] += 86_400_000
        r["monotonic_ms"] *= 3
        r["seq"] += 100
    b[0]["value_ms"] += 86_400_000  # a clock read of the drifted clock
    b[4]["duration_ms"] = 99
    b[5]["latency_ms"] = 20.25
    a_tape, b_tape = tape(tmp_path, base()), tape(tmp_path, b)
    assert compare(a_tape, b_tape, "semantic").identical
    assert set(cats(compare(a_tape, b_tape, "byte-identical"))) == {"timing_mismatch", "seq_mismatch"}


def test_semantic_still_gates_content_kind_phase_length(tmp_path: Path) -> None:
    b = base()
    b[1]["duration_ms"] = 1  # a sleep the script asked for is not timing noise
    b[2]["response"] = {"content_hash": H3, "text": "x"}
    b[3]["phase"] = "runtime_finalize"
    b[4] = rec("file_read", 4, path="x", content_hash=H1, len_bytes=1)
    del b[7]
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "semantic")
    assert cats(report) == [
        "field_mismatch",
        "payload_mismatch",
        "phase_mismatch",
        "kind_mismatch",
        "length_mismatch",
    ]


# --- outcome ----------------------------------------------------------------------------------


def test_outcome_ignores_intermediate_records(tmp_path: Path) -> None:
    b = base()
    b[2]["response"] = {"content_hash": H3, "text": "a different completion"}
    b[0]["value_ms"] = 5
    b.insert(1, rec("file_read", 1, path="in.txt", content_hash=H3, len_bytes=9))
    b.insert(2, rec("file_write", 2, path="out.txt", content_hash=H3, len_bytes=1))  # later overwritten
    b.insert(6, rec("process_spawn", 6, program="ls", exit_code=1))  # not the last one
    assert compare(tape(tmp_path, base()), tape(tmp_path, b), "outcome").identical


def test_outcome_categories(tmp_path: Path) -> None:
    b = base()
    b[3]["content_hash"] = H2  # out.txt ends with other content
    b.append(rec("file_write", 8, path="new.txt", content_hash=H1, len_bytes=1))
    b.append(rec("file_write", 9, path="tmp.txt", content_hash=H1, len_bytes=1))  # written after delete
    b.append(rec("process_spawn", 10, program="make", exit_code=2))
    b.append(rec("llm_call", 11, request_digest=H1, response={"content_hash": H2, "text": "hi"}))
    b.append(
        rec(
            "mcp_json_rpc",
            12,
            server="s",
            method="tools/call",
            direction="client->server",
            request_digest=H2,
            response_digest=H3,
            latency_ms=1.0,
        )
    )
    b.append(
        rec(
            "mcp_json_rpc",
            13,
            server="s",
            method="notifications/progress",
            notification=True,
            direction="server->client",
            request_digest=H3,
        )
    )
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "outcome")
    assert cats(report) == ["fs_write_set_mismatch"] * 3 + [
        "exit_status_mismatch",
        "llm_call_count_mismatch",
        "mcp_mismatch",
        "mcp_mismatch",
    ]
    fs = report.divergences
    assert fs[0].detail == "new.txt: a did not touch it, b wrote 111111111111"
    assert (fs[0].seq_a, fs[0].seq_b) == (None, 8)
    assert fs[1].detail == f"out.txt: a wrote {H1[:12]}, b wrote {H2[:12]}"
    assert fs[2].detail == f"tmp.txt: a deleted it, b wrote {H1[:12]}"
    assert report.divergences[3].detail == "last subprocess exit status 0 vs 2"
    assert report.divergences[3].seq_b == 10
    assert report.divergences[4].detail == "1 vs 2 LLM calls"
    assert report.divergences[5].detail == "1 vs 2 MCP calls"  # the notification is not a call
    assert report.divergences[6].detail == "MCP response digest sets differ: 0 only in a, 1 only in b"


def test_outcome_mcp_response_set_only(tmp_path: Path) -> None:
    b = base()
    b[5]["response_digest"] = H3
    b[5]["request_digest"] = H2  # requests are not part of the outcome
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "outcome")
    assert cats(report) == ["mcp_mismatch"]
    assert "1 only in a, 1 only in b" in report.divergences[0].detail


def test_outcome_unknown_kinds_listed_per_tape(tmp_path: Path) -> None:
    a = [*base(), rec("gpu_kernel", 8)]
    report = compare(tape(tmp_path, a), tape(tmp_path, base()), "outcome")
    assert cats(report) == ["unknown_kind"]
    assert (report.divergences[0].seq_a, report.divergences[0].seq_b) == (8, None)


def test_outcome_no_process(tmp_path: Path) -> None:
    a = [r for r in base() if r["kind"] != "process_spawn"]
    report = compare(tape(tmp_path, a), tape(tmp_path, base()), "outcome")
    assert cats(report) == ["exit_status_mismatch"]
    assert report.divergences[0].detail == "last subprocess exit status None vs 0"


# --- phase-aware ------------------------------------------------------------------------------


def test_phase_aware_ignores_finalize_clock_reads(tmp_path: Path) -> None:
    b = base()
    b.append(rec("clock_read", 8, source="wall", value_ms=5, phase="runtime_finalize"))
    b[7]["value_ms"] = 99
    b[6]["virtual_time_ms"] += 500  # finalize records are compared semantically
    b[6]["monotonic_ms"] += 500
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "phase-aware")
    assert report.identical
    assert not compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical").identical


def test_phase_aware_user_script_is_byte_identical(tmp_path: Path) -> None:
    b = base()
    b[0]["virtual_time_ms"] += 1
    b[4]["duration_ms"] = 13
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "phase-aware")
    assert cats(report) == ["timing_mismatch", "timing_mismatch"]
    assert compare(tape(tmp_path, base()), tape(tmp_path, b), "semantic").identical


def test_phase_aware_finalize_effects_still_count(tmp_path: Path) -> None:
    b = base()
    b[6]["path"] = "other.txt"
    b.append(
        rec(
            "llm_call",
            8,
            phase="runtime_finalize",
            request_digest=H1,
            response={"content_hash": H2, "text": "hi"},
        )
    )
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "phase-aware")
    assert cats(report) == ["field_mismatch", "length_mismatch"]
    assert report.divergences[1].kind == "llm_call"


def test_phase_aware_user_script_length(tmp_path: Path) -> None:
    b = base()
    b.insert(6, rec("clock_sleep", 6, duration_ms=1))
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "phase-aware")
    assert cats(report) == ["length_mismatch"]
    assert report.divergences[0].kind == "clock_sleep"


def test_mode_must_be_known(tmp_path: Path) -> None:
    t = tape(tmp_path, base())
    with pytest.raises(ValueError):
        compare(t, t, "fuzzy")
    assert compare(t, t).mode == "byte-identical"


def test_counts(tmp_path: Path) -> None:
    b = base()
    b[0]["virtual_time_ms"] = 1
    b[1]["virtual_time_ms"] = 1
    report = compare(tape(tmp_path, base()), tape(tmp_path, b), "byte-identical")
    assert report.counts() == {"timing_mismatch": 2}
