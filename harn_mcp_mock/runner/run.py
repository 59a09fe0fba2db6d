"""``harn mcp mock run``: every trial of the matrix, ``workers`` at a time, resumable, scored by eval.

``DIR/run.json`` pins what the run is (specs' digests, tasks, k, seed, profiles, the agent
command); the same command with the same ``--out`` runs only the trials without a finished
``trial.json``, and a different one is refused unless ``force``. A stop signal stops scheduling;
running trials finish (each is bounded by ``timeout``) and the partial run is scored.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial, build_matrix
from harn_mcp_mock.runner.trial import run_trial
from harn_mcp_mock.store.cas import atomic_write

__all__ = [
    "RUN_FORMAT",
    "Gate",
    "RunOutcome",
    "parse_gates",
    "profile_label",
    "run_episodes",
    "summarise_failures",
]

RUN_FORMAT = "harn-mcp-mock/run"


@dataclass(frozen=True, slots=True)
class Gate:
    """``--min-pass-k K=V`` (``k`` set) or ``--min-pass-rate V``."""

    value: float
    k: int | None = None

    @property
    def name(self) -> str:
        return (
            f"--min-pass-k {self.k}={self.value}" if self.k is not None else f"--min-pass-rate {self.value}"
        )


def parse_gates(min_pass_k: Sequence[str] = (), min_pass_rate: float | None = None) -> list[Gate]:
    gates = []
    for text in min_pass_k:
        k, sep, value = text.partition("=")
        try:
            gate = Gate(float(value), int(k))
        except ValueError:
            gate = None
        if not sep or gate is None or gate.k is None or gate.k < 1 or not 0 <= gate.value <= 1:
            raise UsageError(f"bad gate {text!r}: use K=V with K >= 1 and 0 <= V <= 1", where="--min-pass-k")
        gates.append(gate)
    if min_pass_rate is not None:
        if not 0 <= min_pass_rate <= 1:
            raise UsageError(f"bad pass rate {min_pass_rate!r}: use 0 <= V <= 1", where="--min-pass-rate")
        gates.append(Gate(min_pass_rate))
    return gates


@dataclass(slots=True)
class RunOutcome:
    trials: list[dict[str, Any]]
    """Every finished trial's record (this run's and earlier runs' with the same ``out``)."""
    result: Any
    """The :class:`~harn_mcp_mock.scoring.eval.EvalResult` of all finished trials."""
    failed_gates: list[str] = field(default_factory=list)
    stopped: bool = False
    """A stop signal ended scheduling: some trials did not run (run again to resume)."""
    pending: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.failed_gates else 0


def _fingerprint(
    specs: list[tuple[Path, dict[str, Any]]], agent: Sequence[str], options: dict[str, Any]
) -> dict[str, Any]:
    from blake3 import blake3

    from harn_mcp_mock.store.canonical import canonical_bytes

    return {
        "format": RUN_FORMAT,
        "version": 1,
        "specs": [{"path": str(p), "blake3": blake3(canonical_bytes(doc)).hexdigest()} for p, doc in specs],
        "agent": list(agent),
        "options": options,
    }


def _check_resume(out: Path, pinned: dict[str, Any], force: bool) -> None:
    path = out / "run.json"
    if path.exists() and not force:
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = None
        if before != pinned:
            what = "the run's specs, agent command or options"
            if isinstance(before, dict):
                for key in ("specs", "agent", "options"):
                    if before.get(key) != pinned.get(key):
                        what = {"specs": "a spec", "agent": "the agent command", "options": "the options"}[
                            key
                        ]
                        break
            raise UsageError(
                f"{out} holds a run with other settings ({what} changed): use another --out, or --force to rerun it"
            )
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(pinned, indent=2).encode() + b"\n")


def _finished(trial: Trial, out: Path) -> dict[str, Any] | None:
    path = trial.folder(out) / "trial.json"
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (
        record
        if record.get("run_id") == trial.run_id and (trial.folder(out) / "state.json").exists()
        else None
    )


def run_episodes(
    specs: Sequence[str | Path],
    agent: Sequence[str],
    *,
    out: str | Path,
    tasks: Sequence[str] = (),
    k: int = 1,
    seed: int = 0,
    faults: Sequence[str] = (),
    workers: int | None = None,
    timeout: float | None = None,
    max_retries: int = 1,
    gates: Sequence[Gate] = (),
    force: bool = False,
    on_trial: Callable[[dict[str, Any], int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> RunOutcome:
    """Run the matrix (see the module docstring); ``on_trial(record, done, total)`` after each."""
    import os

    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import read_spec_json

    if not agent:
        raise UsageError("give the agent command after `--`")
    import shutil

    if shutil.which(agent[0]) is None:
        raise UsageError(f"the agent command {agent[0]!r} was not found (or is not executable)")
    loaded = []
    for spec in specs:
        path = resolve_spec(spec)
        loaded.append((path.resolve(), read_spec_json(path)))
    if not loaded:
        raise UsageError("give at least one --spec", where="--spec")
    matrix = build_matrix(loaded, tasks=list(tasks) or None, k=k, seed=seed, faults=list(faults))
    out = Path(out).resolve()
    options = {"tasks": sorted(tasks), "k": k, "seed": seed, "faults": list(faults)}
    _check_resume(out, _fingerprint(loaded, agent, options), force)

    records: dict[str, dict[str, Any]] = {}
    todo: list[Trial] = []
    for trial in matrix:
        done = None if force else _finished(trial, out)
        if done is not None:
            records[trial.key] = done
        else:
            todo.append(trial)
    total, count = len(matrix), len(records)
    stopped = False
    max_workers = max(1, workers or os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        running: dict[Future[dict[str, Any]], Trial] = {}
        queue = list(reversed(todo))
        while queue or running:
            while queue and len(running) < max_workers and not (stop is not None and stop.is_set()):
                trial = queue.pop()
                running[
                    pool.submit(run_trial, trial, agent, out, timeout=timeout, max_retries=max_retries)
                ] = trial
            if stop is not None and stop.is_set() and queue:
                stopped, queue = True, []
            if not running:
                break
            finished, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
            for future in finished:
                trial = running.pop(future)
                record = future.result()
                records[trial.key] = record
                count += 1
                if on_trial is not None:
                    on_trial(record, count, total)
    ordered = [records[t.key] for t in matrix if t.key in records]
    result = _score(loaded, [t for t in matrix if t.key in records], out)
    atomic_write(out / "results.json", json.dumps(result.to_dict(), indent=2).encode() + b"\n")
    outcome = RunOutcome(ordered, result, stopped=stopped, pending=total - len(ordered))
    outcome.failed_gates = _judge(result, gates)
    return outcome


def _score(loaded: list[tuple[Path, dict[str, Any]]], trials: list[Trial], out: Path) -> Any:
    from harn_mcp_mock.scoring.eval import run_eval

    inputs = []
    for trial in trials:
        folder = trial.folder(out)
        report = folder / "report.json"
        inputs.append(report if report.exists() else folder / "state.json")
    return run_eval([doc for _, doc in loaded], inputs)


def _judge(result: Any, gates: Sequence[Gate]) -> list[str]:
    failed = []
    for gate in gates:
        for group in result.groups:
            label = f"{group.world} ({'faults ' + group.faults if group.faults else 'no faults'})"
            if gate.k is None:
                value = group.pass_rate
            else:
                value = group.pass_power_k.get(gate.k)
                if value is None:
                    failed.append(f"{gate.name}: {label} has fewer than {gate.k} scored runs per task")
                    continue
            if value is None or value < Fraction(gate.value).limit_denominator(10**6):
                shown = "none" if value is None else f"{float(value):.3f}"
                failed.append(f"{gate.name}: {label} is {shown}")
    return failed


def summarise_failures(trials: Sequence[dict[str, Any]], result: Any) -> dict[str, int]:
    """Failed trials by kind: goal missed, collateral, forbidden, timeout, infra."""
    kinds = {"goal": 0, "collateral": 0, "forbidden": 0, "timeout": 0, "infra": 0}
    for record in trials:
        if record["status"] == "infra_error":
            kinds["infra"] += 1
        elif record["status"] == "timeout":
            kinds["timeout"] += 1
    for run in result.runs:
        score = run.score
        if not score.goal_match:
            kinds["goal"] += 1
        if score.collateral:
            kinds["collateral"] += 1
        if score.forbidden_hit:
            kinds["forbidden"] += 1
    return kinds


def profile_label(profile: str) -> str:
    return "no faults" if profile == NO_FAULTS else f"faults {profile}"
