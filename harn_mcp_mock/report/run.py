"""The data of a run report: every trial of a runner folder (or of eval inputs) with its outcome,
the faults that fired, its tool-call timeline and its state diff; pass^k per group; the baseline.

The page (:mod:`harn_mcp_mock.report.page`) draws it; this module only reads files and scores.
Long values are cut (:data:`VALUE_LIMIT`) so that a page of 10,000 trials stays a few MB.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.world.predicates import MISSING, get_path

__all__ = ["OUTCOMES", "VALUE_LIMIT", "eval_report_data", "outcome_of", "run_report_data"]

OUTCOMES = ("pass", "goal", "collateral", "forbidden", "timeout", "over_budget", "usage_invalid",
            "usage_unknown", "infra")  # fmt: skip
"""Cell colours, in the order a trial's outcome is picked (the first that holds, from the right)."""
VALUE_LIMIT = 600
"""Characters of a shown value (arguments, results, state values) before it is cut."""


def _short(value: Any) -> Any:
    """``value`` as it is shown: compact JSON text cut at :data:`VALUE_LIMIT`."""
    text = value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    if len(text) > VALUE_LIMIT:
        return f"{text[:VALUE_LIMIT]}… (+{len(text) - VALUE_LIMIT} chars)"
    return text


def outcome_of(status: str | None, score: dict[str, Any] | None) -> tuple[str, list[str]]:
    """(the cell's outcome, every kind of failure) of one trial."""
    kinds = []
    if status == "infra_error":
        kinds.append("infra")
    if status == "timeout":
        kinds.append("timeout")
    if score is not None:
        if score.get("forbidden_hit"):
            kinds.append("forbidden")
        if score.get("collateral"):
            kinds.append("collateral")
        if not score.get("goal_match", True):
            kinds.append("goal")
        if score.get("over_budget"):  # --max-tokens/--max-cost: never a pass
            kinds.append("over_budget")
        if score.get("usage_invalid"):  # a malformed usage line: never a pass
            kinds.append("usage_invalid")
        if score.get("usage_unknown"):  # a budget and no usage reported: never a pass
            kinds.append("usage_unknown")
    if "infra" in kinds:
        return "infra", kinds
    if "timeout" in kinds:
        return "timeout", kinds
    for kind in ("usage_invalid", "usage_unknown", "over_budget"):
        if kind in kinds:
            return kind, kinds
    for kind in ("forbidden", "goal", "collateral"):
        if kind in kinds:
            return kind, kinds
    return "pass", kinds


def _diff(initial: Any, final: Any, score: dict[str, Any]) -> list[dict[str, Any]]:
    """Each changed leaf with its old and new value and its role (required, allowed, collateral)."""
    required, allowed, collateral = (
        set(score.get(key) or ()) for key in ("required", "allowed", "collateral")
    )
    rows = []
    for change in score.get("changed") or ():
        path = change["path"]
        old, new = get_path(initial, path), get_path(final, path)
        role = (
            "collateral" if path in collateral
            else "required" if path in required
            else "allowed" if path in allowed
            else "changed"
        )  # fmt: skip
        rows.append(
            {
                "path": path,
                "kind": change.get("kind", "changed"),
                "old": None if old is MISSING else _short(old),
                "new": None if new is MISSING else _short(new),
                "role": role,
            }
        )
    return rows


def _calls_from_tape(tape: Path) -> list[dict[str, Any]] | None:
    """tools/call exchanges of a world's tape: arguments, result or error, fault, virtual time."""
    from harn_mcp_mock.errors import HarnError
    from harn_mcp_mock.tape.model import load_tape

    try:
        loaded = load_tape(tape)
    except (HarnError, OSError):
        return None
    start = None
    calls = []
    for record in loaded:
        fields = record.fields
        if start is None:
            start = record.virtual_time_ms
        if record.kind != "mcp_json_rpc" or fields.get("method") != "tools/call":
            continue
        try:
            request = orjson.loads(record.payload("request"))
            response = orjson.loads(record.payload("response")) if "response" in fields else {}
        except (HarnError, KeyError, ValueError):
            continue
        params = request.get("params") or {}
        call: dict[str, Any] = {
            "t_ms": record.virtual_time_ms - start,
            "tool": params.get("name"),
            "args": _short(params.get("arguments") or {}),
            "fault": fields.get("fault"),
        }
        if "error" in response:
            call["error"] = _short(response["error"])
        else:
            result = response.get("result") or {}
            shown = result.get("structuredContent")
            if shown is None:
                texts = [c.get("text", "") for c in result.get("content") or () if isinstance(c, dict)]
                shown = " ".join(t for t in texts if t)
            call["result"] = _short(shown)
            if result.get("isError"):
                call["tool_error"] = True
        calls.append(call)
    return calls


def _calls_from_report(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "t_ms": c.get("t_ms"),
            "tool": c.get("tool"),
            "args": _short(c.get("arguments") or {}),
            "fault": c.get("fault"),
            "outcome": c.get("outcome"),
        }
        for c in report.get("calls") or ()
    ]


MAX_CALLS = 200
"""Tool calls shown per trial: the first and last half of this many; the rest stay in the trial's
``report.json`` and ``tape.ndjson`` (the page stays small for a 100,000-call trial)."""
MAX_DIFF = 500
"""State changes shown per trial (the rest: the trial's ``state.json``)."""
STDERR_TAIL = 4096
"""Bytes of the end of the agent's stderr shown in a trial's panel."""


def _tail(source: Path | bytes) -> str | None:
    """The last :data:`STDERR_TAIL` bytes of a file or of bytes (from a line start), or None
    when empty."""
    if isinstance(source, bytes):
        size, data = len(source), source[-STDERR_TAIL:]
    else:
        try:
            with source.open("rb") as fh:
                size = fh.seek(0, 2)
                fh.seek(max(0, size - STDERR_TAIL))
                data = fh.read()
        except OSError:
            return None
    if size > STDERR_TAIL and b"\n" in data:
        data = data[data.index(b"\n") + 1 :]
    text = data.decode("utf-8", "replace").rstrip()
    return text or None


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


class _Builder:
    def __init__(self, specs: Sequence[dict[str, Any]]) -> None:
        self.initial = {str(spec.get("name")): spec.get("state") for spec in specs}
        self.trials: list[dict[str, Any]] = []
        self.details: list[dict[str, Any]] = []

    def add(
        self,
        *,
        world: str,
        task: str,
        profile: str,
        index: int,
        record: dict[str, Any] | None,
        report: dict[str, Any] | None,
        state: dict[str, Any] | None,
        tape: Path | None,
        file: str | None,
        stderr: Path | bytes | None = None,
    ) -> None:
        score = (report or {}).get("score") if report else None
        status = (record or {}).get("status") or (
            "infra_error" if (state or {}).get("infra_error") else "scored"
        )
        outcome, kinds = outcome_of(status, score)
        fired = [f.get("fault") for f in (report or {}).get("faults_fired") or ()]
        self.trials.append(
            {
                "world": world,
                "task": task,
                "profile": profile,
                "index": index,
                "seed": (report or state or {}).get("seed"),
                "run_id": (report or state or {}).get("run_id"),
                "outcome": outcome,
                "kinds": kinds,
                "faults": sorted({f for f in fired if f}),
                "status": status,
                "exit_code": (record or {}).get("exit_code"),
                "duration_ms": (record or {}).get("duration_ms"),
                "infra_error": (record or {}).get("infra_error") or (state or {}).get("infra_error"),
                "agent_error": (record or {}).get("agent_error"),
                "message": (record or {}).get("message"),
                "sessions": (record or {}).get("sessions"),
                "isolation": (record or {}).get("isolation"),
                "stderr_tail": _tail(stderr) if stderr is not None else None,
                "file": file,
            }
        )
        logged = _calls_from_report(report) if report else []
        long = len(logged) > MAX_CALLS  # a long timeline: the world's log, summarised; no tape read
        calls = (
            _calls_from_tape(tape) if tape is not None and not long and tape.exists() else None
        ) or logged
        if calls is not logged and len(calls) == len(logged):
            for call, entry in zip(calls, logged, strict=True):  # the world's log knows the faults
                call["fault"] = call.get("fault") or entry.get("fault")
                call["outcome"] = entry.get("outcome")
        final = (report or {}).get("final_state", (state or {}).get("state"))
        total = len(calls)
        if total > MAX_CALLS:
            calls = calls[: MAX_CALLS // 2] + calls[-(MAX_CALLS // 2) :]
        diff = _diff(self.initial.get(world), final, score) if score else []
        self.details.append(
            {
                "calls": calls,
                "calls_total": total,
                "calls_omitted": total - len(calls),
                "diff": diff[:MAX_DIFF],
                "diff_omitted": max(0, len(diff) - MAX_DIFF),
                "failed_goals": [_short(g.get("predicate")) for g in (score or {}).get("failed_goals") or ()],
                "forbidden": [_short(h) for h in (report or {}).get("forbidden_hits") or ()],
                "virtual_ms": (report or {}).get("virtual_ms"),
            }
        )


def _groups(result: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    groups = [
        {
            "world": g["world"],
            "profile": g.get("faults") or "none",
            "pass_rate": g["pass_rate"]["value"],
            "pass_rate_interval": g["pass_rate"].get("interval"),  # eval results of version 2 on
            "pass_k": [[p["k"], p["value"], p.get("interval")] for p in g.get("pass_power_k") or ()],
            "tasks": g.get("tasks") or [],
            "usage": g.get("usage"),
        }
        for g in result.get("groups") or ()
    ]
    robustness = [
        {
            "world": r["world"],
            "profile": r["faults"],
            "points": [
                [p["k"], p["baseline"]["value"], p["faults"]["value"], p["delta"]["value"]]
                for p in r["pass_power_k"]
            ],
        }
        for r in result.get("robustness") or ()
    ]
    return groups, robustness


def run_report_data(run_dir: str | Path, *, baseline: str | Path | None = None) -> dict[str, Any]:
    """The report of a ``harn mcp mock run --out`` folder (its ``run.json``, ``results.json`` and
    trials, read through the run folder's one loader: a trial's world and output only as the
    runner wrote them); ``baseline``: an earlier run's folder to compare with."""
    import tempfile

    from harn_mcp_mock.runner.folder import load_run_folder

    root = Path(run_dir)
    try:
        folder = load_run_folder(root)
    except UsageError as exc:
        raise UsageError(str(exc), where="RUN_DIR") from None
    run, result = folder.run, folder.results
    specs = []
    for entry in run.specs:
        doc = _read_json(Path(entry.path))
        if isinstance(doc, dict):
            specs.append(doc)
    builder = _Builder(specs)
    with tempfile.TemporaryDirectory(prefix="harn-report-") as tmp:
        for trial_folder, record in folder.trials():
            world = record.world_report
            tape = folder.read_file(trial_folder, record, "tape.ndjson")
            copy = None
            if tape is not None:  # the tape as the runner wrote it, read from a copy of those bytes
                copy = Path(tmp, "tape.ndjson")
                copy.write_bytes(tape)
            builder.add(
                world=record.world,
                task=record.task,
                profile=record.profile,
                index=record.trial,
                record=record.to_json(),
                report=world.report if world is not None else None,
                state=world.state if world is not None else None,
                tape=copy,
                file=str(trial_folder.relative_to(root)),
                stderr=folder.read_file(trial_folder, record, "agent.stderr") or b"",
            )
    document = result.to_dict() if result is not None else {}
    groups, robustness = _groups(document)
    comparison = None
    if baseline is not None and result is not None:
        from harn_mcp_mock.runner.baseline import compare, load_baseline

        comparison = compare(load_baseline(baseline), result).to_dict()
    return {
        "kind": "run",
        "title": f"harn mcp mock run: {root.name}",
        "source": str(root),
        "agent": run.agent,
        "options": run.options,
        "outcomes": list(OUTCOMES),
        "trials": builder.trials,
        "details": builder.details,
        "groups": groups,
        "robustness": robustness,
        "baseline": comparison,
    }


def eval_report_data(specs: Sequence[str | Path], inputs: Sequence[str | Path]) -> dict[str, Any]:
    """The report of eval inputs (``--spec ... --state ...``): state or report files of world runs."""
    from harn_mcp_mock.scoring.eval import score_runs
    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import read_spec_json

    docs = [read_spec_json(resolve_spec(spec)) for spec in specs]
    result = score_runs(docs, inputs)
    builder = _Builder(docs)
    counters: dict[tuple[str, str, str], int] = {}
    for run in result.runs:
        path = Path(run.file)
        doc = _read_json(path)
        report = doc if isinstance(doc, dict) and doc.get("format") == "harn-mcp-mock/world-report" else None
        if report is None:  # a state file: its report may lie beside it
            twin = path.with_name(path.name.replace(".state.json", ".report.json"))
            report = _read_json(twin) if twin != path else None
        key = (run.world, run.score.task, run.faults or "none")
        counters[key] = counters.get(key, 0) + 1
        builder.add(
            world=run.world,
            task=run.score.task,
            profile=run.faults or "none",
            index=counters[key],
            record=None,
            report=report if isinstance(report, dict) else {"score": run.score.to_dict()},
            state=doc if report is None else None,
            tape=None,
            file=str(path),
        )
    for excluded in result.excluded:
        key = (excluded.world, excluded.task, excluded.faults or "none")
        counters[key] = counters.get(key, 0) + 1
        builder.add(
            world=excluded.world,
            task=excluded.task,
            profile=excluded.faults or "none",
            index=counters[key],
            record={"status": "infra_error", "infra_error": excluded.infra_error},
            report=None,
            state=None,
            tape=None,
            file=excluded.file,
        )
    groups, robustness = _groups(result.to_dict())
    return {
        "kind": "run",
        "title": "harn mcp mock eval",
        "source": ", ".join(str(s) for s in specs),
        "agent": None,
        "options": None,
        "outcomes": list(OUTCOMES),
        "trials": builder.trials,
        "details": builder.details,
        "groups": groups,
        "robustness": robustness,
        "baseline": None,
    }
