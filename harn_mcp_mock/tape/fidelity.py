"""The fidelity oracle: compare two tapes under one of four modes and list every divergence.

Comparison looks at content hashes only and never re-hashes a payload. Records are aligned by
position (per phase group in ``phase-aware`` mode). Each divergence carries one stable
category (see :data:`CATEGORIES` and ``docs/tape.md``).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harn_mcp_mock.tape.model import UNKNOWN_KIND, Tape, TapeRecord, is_payload_ref
from harn_mcp_mock.textclip import clip_repr

REPORT_VERSION = 1


class FidelityMode(enum.StrEnum):
    BYTE_IDENTICAL = "byte-identical"
    SEMANTIC = "semantic"
    OUTCOME = "outcome"
    PHASE_AWARE = "phase-aware"


CATEGORIES: dict[str, tuple[str, ...]] = {
    # category: the modes that can produce it
    "length_mismatch": ("byte-identical", "semantic", "phase-aware"),
    "seq_mismatch": ("byte-identical", "phase-aware"),
    "kind_mismatch": ("byte-identical", "semantic", "phase-aware"),
    "phase_mismatch": ("byte-identical", "semantic"),
    "payload_mismatch": ("byte-identical", "semantic", "phase-aware"),
    "field_mismatch": ("byte-identical", "semantic", "phase-aware"),
    "timing_mismatch": ("byte-identical", "phase-aware"),
    "unknown_kind": ("byte-identical", "semantic", "outcome", "phase-aware"),
    "fs_write_set_mismatch": ("outcome",),
    "exit_status_mismatch": ("outcome",),
    "llm_call_count_mismatch": ("outcome",),
    "mcp_mismatch": ("outcome",),
}
"""Every divergence category and the modes that produce it. Stable: tools gate on these names."""

TIMING_FIELDS: dict[str, frozenset[str]] = {
    "clock_read": frozenset({"value_ms"}),
    "process_spawn": frozenset({"duration_ms"}),
    "mcp_json_rpc": frozenset({"latency_ms"}),
}
"""Kind-specific fields that measure time: ``timing_mismatch`` when strict, ignored when semantic.
(``clock_sleep.duration_ms`` is what the script asked for, so it is an ordinary field.)"""

_MISSING: Any = object()


@dataclass(slots=True)
class Divergence:
    category: str
    seq_a: int | None
    seq_b: int | None
    kind: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "seq_a": self.seq_a,
            "seq_b": self.seq_b,
            "kind": self.kind,
            "detail": self.detail,
        }


@dataclass(slots=True)
class FidelityReport:
    mode: str
    a: str
    b: str
    records: tuple[int, int]
    divergences: list[Divergence] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.divergences

    def counts(self) -> dict[str, int]:
        return dict(Counter(d.category for d in self.divergences))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "mode": self.mode,
            "a": self.a,
            "b": self.b,
            "records": list(self.records),
            "divergences": [d.to_json() for d in self.divergences],
            "identical": self.identical,
        }


# --- per-record comparison --------------------------------------------------------------------


def _is_digest_field(name: str) -> bool:
    return name == "content_hash" or name.endswith("_digest")


def _diff_pair(ra: TapeRecord, rb: TapeRecord, strict: bool, out: list[Divergence]) -> None:
    """Append the divergences between two aligned records (``strict``: seq and timing count)."""
    sa, sb = ra.seq, rb.seq
    if ra.kind == UNKNOWN_KIND or rb.kind == UNKNOWN_KIND:
        unknown = sorted({r.raw_kind for r in (ra, rb) if r.kind == UNKNOWN_KIND})
        out.append(
            Divergence(
                "unknown_kind",
                sa,
                sb,
                ra.raw_kind,
                f"record kind {', '.join(map(repr, unknown))} is unknown to this version; cannot judge it",
            )
        )
        return
    kind = ra.kind
    if ra.raw_kind != rb.raw_kind:
        out.append(Divergence("kind_mismatch", sa, sb, kind, f"a has {ra.raw_kind}, b has {rb.raw_kind}"))
        return
    if strict and sa != sb:
        out.append(Divergence("seq_mismatch", sa, sb, kind, f"seq {sa} vs {sb}"))
    if ra.phase != rb.phase:
        out.append(Divergence("phase_mismatch", sa, sb, kind, f"a in {ra.phase}, b in {rb.phase}"))
    timing: list[str] = []
    if strict:
        if ra.virtual_time_ms != rb.virtual_time_ms:
            timing.append(f"virtual_time_ms {ra.virtual_time_ms} vs {rb.virtual_time_ms}")
        if ra.monotonic_ms != rb.monotonic_ms:
            timing.append(f"monotonic_ms {ra.monotonic_ms} vs {rb.monotonic_ms}")
    fa, fb = ra.fields, rb.fields
    if fa != fb:
        timing_names = TIMING_FIELDS.get(kind, frozenset())
        payload: list[str] = []
        fields: list[str] = []
        for name in sorted(fa.keys() | fb.keys()):
            va, vb = fa.get(name, _MISSING), fb.get(name, _MISSING)
            if va == vb:
                continue
            if is_payload_ref(va) or is_payload_ref(vb):
                ha = va.get("content_hash") if type(va) is dict else None
                hb = vb.get("content_hash") if type(vb) is dict else None
                if ha is not None and ha == hb:
                    continue  # same content, stored differently (inline vs sidecar)
                payload.append(f"{name} {_short(ha)} vs {_short(hb)}")
            elif _is_digest_field(name):
                payload.append(f"{name} {_short(va)} vs {_short(vb)}")
            elif name in timing_names:
                if strict:
                    timing.append(f"{name} {_show(va)} vs {_show(vb)}")
            else:
                fields.append(f"{name} {_show(va)} vs {_show(vb)}")
        if payload:
            out.append(Divergence("payload_mismatch", sa, sb, kind, "; ".join(payload)))
        if fields:
            out.append(Divergence("field_mismatch", sa, sb, kind, "; ".join(fields)))
    if timing:
        out.append(Divergence("timing_mismatch", sa, sb, kind, "; ".join(timing)))


def _short(value: Any) -> str:
    if value is _MISSING or value is None:
        return "(none)"
    text = str(value)
    return text[:12] if len(text) == 64 else _show(value)


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    return clip_repr(value, 80)


def _compare_seq(
    a: Sequence[TapeRecord], b: Sequence[TapeRecord], strict: bool, out: list[Divergence]
) -> None:
    """Positional comparison of two record sequences."""
    unknown = UNKNOWN_KIND
    for ra, rb in zip(a, b, strict=False):
        if ra is rb:  # shared by load_tape_pair: the lines were byte-equal
            if ra.kind != unknown:
                continue
        elif (
            ra.fields == rb.fields
            and ra.raw_kind == rb.raw_kind
            and ra.phase == rb.phase
            and ra.kind != unknown
            and (
                not strict
                or (
                    ra.seq == rb.seq
                    and ra.virtual_time_ms == rb.virtual_time_ms
                    and ra.monotonic_ms == rb.monotonic_ms
                )
            )
        ):
            continue
        _diff_pair(ra, rb, strict, out)
    if len(a) != len(b):
        n = min(len(a), len(b))
        longer, name = (a, "a") if len(a) > len(b) else (b, "b")
        extra = longer[n:]
        kinds = Counter(r.raw_kind for r in extra)
        first = extra[0]
        out.append(
            Divergence(
                "length_mismatch",
                first.seq if name == "a" else None,
                first.seq if name == "b" else None,
                first.raw_kind,
                f"a has {len(a)} records, b has {len(b)}; {len(extra)} extra in {name} from seq {first.seq} "
                f"({', '.join(f'{k} x{c}' for k, c in sorted(kinds.items()))})",
            )
        )


# --- outcome ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Outcome:
    files: dict[str, tuple[str | None, int]]  # path -> (content hash or None when deleted, seq)
    exit_code: Any
    exit_seq: int | None
    llm_calls: int
    mcp_calls: int
    mcp_responses: Counter[str]
    unknown: list[TapeRecord]


def _outcome(records: Iterable[TapeRecord]) -> _Outcome:
    files: dict[str, tuple[str | None, int]] = {}
    exit_code: Any = None
    exit_seq: int | None = None
    llm = mcp = 0
    responses: Counter[str] = Counter()
    unknown: list[TapeRecord] = []
    for r in records:
        kind = r.kind
        if kind == "file_write":
            content = r.fields.get("content_hash")
            if content is None:
                ref = r.fields.get("content")
                content = ref.get("content_hash") if isinstance(ref, dict) and is_payload_ref(ref) else None
            files[str(r.fields.get("path"))] = (content, r.seq)
        elif kind == "file_delete":
            files[str(r.fields.get("path"))] = (None, r.seq)
        elif kind == "process_spawn":
            exit_code, exit_seq = r.fields.get("exit_code"), r.seq
        elif kind == "llm_call":
            llm += 1
        elif kind == "mcp_json_rpc":
            if not r.fields.get("notification"):
                mcp += 1
                response = r.fields.get("response_digest")
                if response is not None:
                    responses[str(response)] += 1
        elif kind == UNKNOWN_KIND:
            unknown.append(r)
    return _Outcome(files, exit_code, exit_seq, llm, mcp, responses, unknown)


def _compare_outcome(a: Tape, b: Tape, out: list[Divergence]) -> None:
    oa, ob = _outcome(a.records), _outcome(b.records)
    for r in oa.unknown:
        out.append(
            Divergence("unknown_kind", r.seq, None, r.raw_kind, f"a: record kind {r.raw_kind!r} is unknown")
        )
    for r in ob.unknown:
        out.append(
            Divergence("unknown_kind", None, r.seq, r.raw_kind, f"b: record kind {r.raw_kind!r} is unknown")
        )
    for path in sorted(oa.files.keys() | ob.files.keys()):
        ha, sa = oa.files.get(path, (_MISSING, None))
        hb, sb = ob.files.get(path, (_MISSING, None))
        if ha == hb:
            continue
        out.append(
            Divergence(
                "fs_write_set_mismatch",
                sa,
                sb,
                "file_write",
                f"{path}: a {_fs_state(ha)}, b {_fs_state(hb)}",
            )
        )
    if oa.exit_code != ob.exit_code:
        out.append(
            Divergence(
                "exit_status_mismatch",
                oa.exit_seq,
                ob.exit_seq,
                "process_spawn",
                f"last subprocess exit status {_show(oa.exit_code)} vs {_show(ob.exit_code)}",
            )
        )
    if oa.llm_calls != ob.llm_calls:
        out.append(
            Divergence(
                "llm_call_count_mismatch",
                None,
                None,
                "llm_call",
                f"{oa.llm_calls} vs {ob.llm_calls} LLM calls",
            )
        )
    if oa.mcp_calls != ob.mcp_calls:
        out.append(
            Divergence(
                "mcp_mismatch", None, None, "mcp_json_rpc", f"{oa.mcp_calls} vs {ob.mcp_calls} MCP calls"
            )
        )
    if set(oa.mcp_responses) != set(ob.mcp_responses):
        only_a = len(set(oa.mcp_responses) - set(ob.mcp_responses))
        only_b = len(set(ob.mcp_responses) - set(oa.mcp_responses))
        out.append(
            Divergence(
                "mcp_mismatch",
                None,
                None,
                "mcp_json_rpc",
                f"MCP response digest sets differ: {only_a} only in a, {only_b} only in b",
            )
        )


def _fs_state(value: Any) -> str:
    if value is _MISSING:
        return "did not touch it"
    if value is None:
        return "deleted it"
    return f"wrote {_short(value)}"


# --- entry point ------------------------------------------------------------------------------


def compare(a: Tape, b: Tape, mode: FidelityMode | str = FidelityMode.BYTE_IDENTICAL) -> FidelityReport:
    """Compare tape ``a`` (e.g. the recording) with ``b`` (e.g. the replay) under ``mode``."""
    mode = FidelityMode(mode)
    report = FidelityReport(str(mode), str(a.path), str(b.path), (len(a.records), len(b.records)))
    out = report.divergences
    if mode is FidelityMode.BYTE_IDENTICAL:
        _compare_seq(a.records, b.records, True, out)
    elif mode is FidelityMode.SEMANTIC:
        _compare_seq(a.records, b.records, False, out)
    elif mode is FidelityMode.OUTCOME:
        _compare_outcome(a, b, out)
    else:
        user_a = [r for r in a.records if r.phase != "runtime_finalize"]
        user_b = [r for r in b.records if r.phase != "runtime_finalize"]
        _compare_seq(user_a, user_b, True, out)
        fin_a = [r for r in a.records if r.phase == "runtime_finalize" and r.kind != "clock_read"]
        fin_b = [r for r in b.records if r.phase == "runtime_finalize" and r.kind != "clock_read"]
        _compare_seq(fin_a, fin_b, False, out)
    return report
