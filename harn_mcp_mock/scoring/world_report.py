"""The world's end-of-run report: the engine's run log scored against its task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harn_mcp_mock.scoring.run import score_run
from harn_mcp_mock.store.canonical import digest_json
from harn_mcp_mock.world.engine import WorldEngine


def write_world_files(
    engine: WorldEngine, *, state_out: Path | None = None, report: Path | None = None
) -> None:
    """``--state-out`` and ``--report`` as ``harn mcp mock world`` writes them (sorted keys,
    indented, atomic), wherever the world ran (a process, or in memory for the runner)."""
    import orjson

    from harn_mcp_mock.store.cas import atomic_write

    dump = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    if state_out is not None:
        atomic_write(state_out, orjson.dumps(engine.state_document(), option=dump) + b"\n")
    if report is not None:
        atomic_write(report, orjson.dumps(world_report(engine), option=dump) + b"\n")


def world_report(engine: WorldEngine, *, infra_error: str | None = None) -> dict[str, Any]:
    """Goal match, collateral changes, forbidden states hit, faults fired and the call log.

    Deterministic: the same spec, seed, run id and calls give the same bytes (no wall clock).
    """
    score = None
    if engine.task is not None:
        score = score_run(
            engine.task.raw, engine.initial, engine.state, forbidden_hits=engine.forbidden_hits
        ).to_dict()
    return {
        "format": "harn-mcp-mock/world-report",
        "version": 1,
        "world": engine.spec.name,
        "task": engine.task.id if engine.task else None,
        "seed": engine.seed,
        "run_id": engine.run_id,
        "faults": engine.profile,
        "infra_error": infra_error,
        "passed": bool(score and score["passed"]),
        "score": score,
        "forbidden_hits": engine.forbidden_hits,
        "faults_fired": engine.faults_fired,
        "virtual_ms": engine.now_ms - engine.spec.start_ms,
        "calls": engine.calls,
        "initial_digest": "blake3:" + digest_json(engine.initial),
        "final_digest": "blake3:" + digest_json(engine.state),
        "final_state": engine.state,
    }
