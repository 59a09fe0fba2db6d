"""``harn mcp mock run``: every trial of the matrix, ``workers`` at a time, resumable, scored by eval.

``DIR/run.json`` pins what the run is (specs' digests, tasks, k, seed, profiles, the agent
command); the same command with the same ``--out`` runs only the trials without a finished
``trial.json``, and a different one is refused unless ``force``. Every spec is compiled before
any trial runs. A stop (:class:`~harn_mcp_mock.runner.process.Control`) stops scheduling and
ends the running trials' processes (SIGTERM, SIGKILL after the grace); the finished trials are
scored.

Every finished trial is a :class:`~harn_mcp_mock.runner.folder.TrialRecord` holding its world
as the runner held it: this run's come back from the backend, the resumed ones are read through
the one loader (:func:`~harn_mcp_mock.runner.folder.read_trial`) before any agent starts. Each
is scored from that world when it is kept (:meth:`Plan.keep`; the score stays, the world goes)
and the run from these scores, never from a file read back after an agent ran.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.backend import BACKENDS, BackendOptions, backend_info, backends_with, get_backend
from harn_mcp_mock.runner.baseline import matrix_detectable
from harn_mcp_mock.runner.folder import RUN_FORMAT, RunInfo, SpecRef, StaleTrial, TrialRecord, read_trial
from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial, build_matrix
from harn_mcp_mock.runner.process import Control
from harn_mcp_mock.runner.sandbox import SANDBOX_MODES, Isolation, resolve_isolation
from harn_mcp_mock.runner.trial import EX_TEMPFAIL, TrialSettings

if TYPE_CHECKING:
    from harn_mcp_mock.options import ClientCallbacks
    from harn_mcp_mock.runner.baseline import Baseline, Comparison
    from harn_mcp_mock.runner.budget import Budget
    from harn_mcp_mock.runner.inprocess import AgentFunction
    from harn_mcp_mock.scoring.eval import EvalResult, ScoredRun, Scorer
    from harn_mcp_mock.world.spec import WorldSpec
from harn_mcp_mock.store.cas import atomic_write

__all__ = [
    "BACKENDS",
    "EX_CAPPED",
    "RUN_FORMAT",
    "Gate",
    "Plan",
    "RunOptions",
    "RunOutcome",
    "check_gates",
    "conclude",
    "load_plan",
    "parse_gates",
    "plan_run",
    "profile_label",
    "resume_plan",
    "run_episodes",
    "run_episodes_async",
    "summarise_failures",
]


@dataclass(frozen=True, slots=True)
class Gate:
    """``--min-pass-k K=V`` (``k`` set) or ``--min-pass-rate V``."""

    value: float
    k: int | None = None
    on: str = "point"
    """``point`` (the estimate must reach the value) or ``lower`` (its interval's lower bound must)."""

    @property
    def name(self) -> str:
        name = (
            f"--min-pass-k {self.k}={self.value}" if self.k is not None else f"--min-pass-rate {self.value}"
        )
        return name + (" (lower bound)" if self.on == "lower" else "")


GATE_ON = ("point", "lower")

EX_CAPPED = 3
"""``run``'s exit code when ``--run-max-cost`` stopped it with trials left (docs/runner.md)."""


def parse_gates(
    min_pass_k: Sequence[str] = (), min_pass_rate: float | None = None, gate_on: str = "point"
) -> list[Gate]:
    if gate_on not in GATE_ON:
        raise UsageError(f"unknown {gate_on!r}: use point or lower", where="--gate-on")
    gates = []
    for text in min_pass_k:
        k, sep, value = text.partition("=")
        try:
            gate = Gate(float(value), int(k), gate_on)
        except ValueError:
            gate = None
        if not sep or gate is None or gate.k is None or gate.k < 1 or not 0 <= gate.value <= 1:
            raise UsageError(f"bad gate {text!r}: use K=V with K >= 1 and 0 <= V <= 1", where="--min-pass-k")
        gates.append(gate)
    if min_pass_rate is not None:
        if not 0 <= min_pass_rate <= 1:
            raise UsageError(f"bad pass rate {min_pass_rate!r}: use 0 <= V <= 1", where="--min-pass-rate")
        gates.append(Gate(min_pass_rate, None, gate_on))
    return gates


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a run runs, one value, built once where the input arrives (``harn mcp mock run``'s
    flags, :func:`~harn_mcp_mock.runner.api.run_eval`'s keywords) and passed whole to
    :func:`run_episodes`: the matrix (``tasks``, ``k``, ``seed``, ``faults``), how each trial runs
    (``trial``, a :class:`~harn_mcp_mock.runner.trial.TrialSettings`: its timeout, retries,
    sandbox, budget...), the backend (by name) with its options
    (:class:`~harn_mcp_mock.runner.backend.BackendOptions`: ``workers``, Ray's ``address``), the
    gates and the comparison."""

    tasks: tuple[str, ...] = ()
    k: int = 1
    seed: int = 0
    faults: tuple[str, ...] = ()
    trial: TrialSettings = field(default_factory=TrialSettings)
    gates: tuple[Gate, ...] = ()
    force: bool = False
    backend: str = "local"
    backend_options: BackendOptions = field(default_factory=BackendOptions)
    baseline: str | Path | Baseline | None = None
    alpha: float = 0.05

    @property
    def workers(self) -> int | None:
        return self.backend_options.workers

    @classmethod
    def build(cls, options: RunOptions | None = None, /, **keywords: Any) -> RunOptions:
        """From the keyword forms (``tasks=``, ``timeout=``, ``workers=``, ``ray_address=`` ... as
        :func:`run_episodes` took them: a field of this, of its ``trial`` or of its backend
        options), laid over ``options`` (default: the defaults); lists become tuples. An unknown
        keyword is a TypeError, as for any function."""
        base = options if options is not None else cls()
        if not keywords:
            return base
        for name in ("tasks", "faults", "gates", "preload"):
            if name in keywords:
                keywords[name] = tuple(keywords[name])
        trial = {name: keywords.pop(name) for name in TrialSettings.__dataclass_fields__ if name in keywords}
        renamed = (("workers", "workers"), ("address", "ray_address"))
        backend = {name: keywords.pop(key) for name, key in renamed if key in keywords}
        unknown = sorted(
            set(keywords) - set(cls.__dataclass_fields__) | {"trial", "backend_options"} & set(keywords)
        )
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
        return replace(
            base,
            trial=replace(base.trial, **trial),
            backend_options=replace(base.backend_options, **backend),
            **keywords,
        )


@dataclass(slots=True)
class RunOutcome:
    trials: list[TrialRecord]
    """Every finished trial's record (this run's and earlier runs' with the same ``out``)."""
    result: EvalResult
    """Eval's result for all finished trials."""
    failed_gates: list[str] = field(default_factory=list)
    stopped: bool = False
    """A stop signal ended scheduling: some trials did not run (run again to resume)."""
    pending: int = 0
    comparison: Comparison | None = None
    """The comparison with ``--baseline`` (when one was given)."""
    capped: tuple[float, float] | None = None
    """``(cap, spent)`` when ``--run-max-cost`` stopped the run with trials left."""

    @property
    def cap_advice(self) -> str | None:
        """What to do about a run the cap stopped: the cap to raise, and the trials left."""
        if self.capped is None:
            return None
        cap, spent = self.capped
        return (
            f"stopped by --run-max-cost {cap:g}: the run has spent ${spent:.4f}; raise --run-max-cost "
            f"above {spent:.4f} to run the {self.pending} trial(s) left (exit {EX_CAPPED})"
        )

    @property
    def infra_errors(self) -> int:
        return sum(1 for record in self.trials if record.status == "infra_error")

    @property
    def scored(self) -> int:
        return sum(1 for record in self.trials if record.status in ("scored", "timeout"))

    @property
    def exit_code(self) -> int:
        """75 when a trial ended as an infrastructure error (the figures cannot be trusted: retry
        later), else 3 when ``--run-max-cost`` stopped the run with trials left (raise the cap),
        else 75 when none was scored, else 1 when a gate failed, else 0."""
        if self.infra_errors:
            return EX_TEMPFAIL
        if self.capped is not None:
            return EX_CAPPED
        if not self.scored:
            return EX_TEMPFAIL
        return 1 if self.failed_gates else 0


def _fingerprint(
    specs: list[tuple[Path, dict[str, Any]]], agent: Sequence[str], options: dict[str, Any]
) -> RunInfo:
    from blake3 import blake3

    from harn_mcp_mock.store.canonical import canonical_bytes

    refs = [SpecRef(str(p), blake3(canonical_bytes(doc)).hexdigest()) for p, doc in specs]
    return RunInfo(refs, list(agent), options)


_OPTION_FLAGS = {"tasks": "--task", "k": "--k", "seed": "--seed", "faults": "--faults"}


def _changed(before: Any, pinned: dict[str, Any]) -> str:
    """Every difference between an earlier run.json and this run, as the user would name it."""
    if not isinstance(before, dict):
        return "its run.json is not a run's"
    found: list[str] = []
    if before.get("specs") != pinned["specs"]:
        old = {s.get("path"): s.get("blake3") for s in before.get("specs") or [] if isinstance(s, dict)}
        named = len(found)
        for spec in pinned["specs"]:
            if spec["path"] not in old:
                found.append(f"--spec {spec['path']} is new")
            elif old[spec["path"]] != spec["blake3"]:
                found.append(f"the spec {spec['path']} changed")
        gone = sorted(set(old) - {spec["path"] for spec in pinned["specs"]}, key=str)
        found += [f"--spec {path} is gone" for path in gone]
        if len(found) == named:
            found.append("--spec changed")
    if before.get("agent") != pinned["agent"]:
        found.append(f"the agent command changed: {before.get('agent')!r} then, {pinned['agent']!r} now")
    got = before.get("options")
    options: dict[str, Any] = got if isinstance(got, dict) else {}
    for key, flag in _OPTION_FLAGS.items():
        if options.get(key) != pinned["options"].get(key):
            found.append(f"{flag} changed: {options.get(key)!r} then, {pinned['options'].get(key)!r} now")
    return "; ".join(found) or "its format changed"


def _check_resume(out: Path, info: RunInfo, force: bool) -> bytes:
    """Refuse (UsageError, naming every difference) a run folder holding a run with other
    settings, unless ``force``; the bytes of this run's ``run.json``, written by :func:`_pin` once
    every check passed (a refused run writes nothing)."""
    from harn_mcp_mock.runner._files import open_folder

    pinned = info.to_json()
    if not force:
        with open_folder(out, ()) as where:  # made by the run's lock
            data = where.read_regular("run.json")
        if data is None and (out / "run.json").is_symlink():
            raise UsageError("is not a regular file: refusing to resume from it", path=out / "run.json")
        if data is not None:
            try:
                before = json.loads(data)
            except ValueError:
                raise UsageError("is not JSON: refusing to resume from it", path=out / "run.json") from None
            if before != pinned:
                raise UsageError(
                    f"holds a run with other settings ({_changed(before, pinned)}): "
                    "use another --out, or --force to rerun it",
                    path=out,
                )
    return json.dumps(pinned, indent=2).encode() + b"\n"


def _pin(out: Path, data: bytes) -> None:
    """Write ``run.json``: the run is under way."""
    from harn_mcp_mock.runner._files import open_folder

    with open_folder(out, ()) as where:
        where.write("run.json", data, atomic=True, sync=True)


def _finished(trial: Trial, out: Path) -> TrialRecord | None:
    """The record of a trial finished by an earlier run, with its world, read through the one
    loader; or None to run it (not finished, or its files are not the ones the runner wrote for
    it). Raises UsageError naming a trial file that is not a regular file or does not parse."""
    from harn_mcp_mock.runner._files import open_folder

    try:
        where = open_folder(out, trial.parts, create=False)
    except FileNotFoundError:
        return None
    with where:
        try:
            record = read_trial(where, expect=(trial.run_id, trial.seed))
        except StaleTrial:
            return None  # not this trial's world as the runner wrote it: run it again
    return record


@dataclass(slots=True)
class Plan:
    """A run about to start: the loaded specs, the whole matrix, what is left to do."""

    loaded: list[tuple[Path, dict[str, Any]]]
    matrix: list[Trial]
    out: Path
    records: dict[str, TrialRecord]
    """Finished trials' records by :attr:`Trial.key` (resumed ones first, then this run's)."""
    todo: list[Trial]
    on_trial: Callable[[TrialRecord, int, int], None] | None = None
    compiled: dict[Path, WorldSpec] = field(default_factory=dict)
    """Each spec compiled (by path), before any trial ran."""
    scores: dict[str, ScoredRun] = field(default_factory=dict)
    """Each finished trial's world, scored when its record was kept (by :attr:`Trial.key`)."""
    scorer: Scorer | None = None
    capped: tuple[float, float] | None = None
    """``(cap, spent)`` once ``--run-max-cost`` stopped scheduling."""

    def keep(self, trial: Trial, record: TrialRecord) -> None:
        """Keep a finished trial's record, its world scored (under the path of the file the
        runner wrote it to) and then let go: memory holds scores, not worlds."""
        from harn_mcp_mock.scoring.eval import RunDocument, Scorer

        world = record.world_report
        if world is None:  # never: backends and read_trial give every finished record its world
            raise RuntimeError(f"the record of {trial.key} holds no world")
        if self.scorer is None:
            self.scorer = Scorer([doc for _, doc in self.loaded])
        name = "report.json" if world.report is not None else "state.json"
        self.scores[trial.key] = self.scorer.score(
            RunDocument(str(trial.folder(self.out) / name), world.scored)
        )
        record.world_report = None
        self.records[trial.key] = record

    def finished(self, trial: Trial, record: TrialRecord) -> None:
        if record.status == "stopped":
            return  # ended by a stop of the run: it runs again on resume
        self.keep(trial, record)
        if self.on_trial is not None:
            self.on_trial(record, len(self.records), len(self.matrix))


def plan_run(
    specs: Sequence[str | Path],
    agent: Sequence[str],
    *,
    out: str | Path,
    tasks: Sequence[str] = (),
    k: int = 1,
    seed: int = 0,
    faults: Sequence[str] = (),
    force: bool = False,
) -> Plan:
    """Load and compile the specs, build the matrix, pin (or check) ``run.json`` and find the
    trials to run."""
    plan = load_plan(specs, out=out, tasks=tasks, k=k, seed=seed, faults=faults)
    resume_plan(plan, agent, tasks=tasks, k=k, seed=seed, faults=faults, force=force)
    return plan


def load_plan(
    specs: Sequence[str | Path],
    *,
    out: str | Path,
    tasks: Sequence[str] = (),
    k: int = 1,
    seed: int = 0,
    faults: Sequence[str] = (),
) -> Plan:
    """Load, compile and check the specs and build the matrix, writing nothing: everything a run
    is refused for that does not need its folder, before the folder is made or locked."""
    from harn_mcp_mock.scoring.world_check import check_before_run
    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import load_spec, read_spec_json

    loaded = []
    compiled: dict[Path, WorldSpec] = {}
    for spec in specs:
        path = resolve_spec(spec).resolve()
        loaded.append((path, read_spec_json(path)))
        compiled[path] = load_spec(path)  # every spec compiles before any trial runs
        check_before_run(compiled[path], tasks)  # and would score no agent for its own faults
    if not loaded:
        raise UsageError("give at least one --spec", where="--spec")
    matrix = build_matrix(loaded, tasks=list(tasks) or None, k=k, seed=seed, faults=list(faults))
    return Plan(loaded, matrix, Path(out).resolve(), {}, [], compiled=compiled)


def resume_plan(
    plan: Plan,
    agent: Sequence[str],
    *,
    tasks: Sequence[str] = (),
    k: int = 1,
    seed: int = 0,
    faults: Sequence[str] = (),
    force: bool = False,
) -> None:
    """Under the run's lock: check ``run.json`` against this run (refused naming what differs),
    read the trials an earlier run finished, then pin ``run.json`` (only once nothing refused)."""
    options = {"tasks": sorted(tasks), "k": k, "seed": seed, "faults": list(faults)}
    pinned = _check_resume(plan.out, _fingerprint(plan.loaded, agent, options), force)
    for trial in plan.matrix:
        done = None if force else _finished(trial, plan.out)
        if done is not None:
            plan.keep(trial, done)  # read and scored before any agent of this run starts
        else:
            plan.todo.append(trial)
    _pin(plan.out, pinned)


def check_gates(gates: Sequence[Gate], k: int) -> None:
    """A gate the run cannot meet whatever its agents do is refused before any agent starts:
    ``--min-pass-k K=V`` needs K trials per task (``--k``)."""
    for gate in gates:
        if gate.k is not None and gate.k > k:
            raise UsageError(
                f"{gate.name.split(' (')[0]}: pass^{gate.k} needs at least {gate.k} trials per task, "
                f"and --k is {k} (raise --k to {gate.k}, or gate on pass^{k})",
                where="--min-pass-k",
            )


def conclude(
    plan: Plan,
    *,
    stopped: bool,
    gates: Sequence[Gate] = (),
    baseline: str | Path | Baseline | None = None,
    alpha: float = 0.05,
    budget: Budget | None = None,
    strict_exit: bool = False,
) -> RunOutcome:
    """Score every finished trial into ``results.json`` from the score of its world (this run's
    budget judging each one's recorded usage again), judge the gates, compare with a baseline."""
    finished = [t for t in plan.matrix if t.key in plan.records]
    ordered = [plan.records[t.key] for t in finished]
    scored = []
    for trial, record in zip(finished, ordered, strict=True):
        record.judge(budget, strict_exit)  # this run's budget and --strict-exit, on what the trial recorded
        score = (
            plan.scores[trial.key].judged(record.over_budget, record.usage_unknown).exited(record.exit_failed)
        )
        scored.append(score.isolated(record.isolation))
    result = _score(plan, scored)
    result = replace(result, detectable=matrix_detectable(plan.matrix, alpha))  # what --baseline can see
    document = result.to_dict()
    atomic_write(plan.out / "results.json", json.dumps(document, indent=2).encode() + b"\n")
    outcome = RunOutcome(ordered, result, stopped=stopped, pending=len(plan.matrix) - len(ordered))
    if plan.capped is not None and outcome.pending:
        outcome.capped = (plan.capped[0], sum(_cost(record) for record in ordered))
    outcome.failed_gates = _judge(result, gates)
    if baseline is not None:
        from harn_mcp_mock.runner.baseline import Baseline, compare, load_baseline

        outcome.comparison = compare(
            baseline if isinstance(baseline, Baseline) else load_baseline(baseline), result, alpha=alpha
        )
        atomic_write(
            plan.out / "baseline.json", json.dumps(outcome.comparison.to_dict(), indent=2).encode() + b"\n"
        )
    return outcome


def _early_baseline(baseline: str | Path | Baseline | None) -> Baseline | None:
    """A bad ``--baseline`` is refused before any trial runs."""
    from harn_mcp_mock.runner.baseline import Baseline, load_baseline

    if baseline is None or isinstance(baseline, Baseline):
        return baseline
    return load_baseline(baseline)


def _check_sandbox(sandbox: str, preload: Sequence[str], here: bool) -> Isolation | None:
    """``--sandbox``, before any trial: an unknown mode, or ``bwrap`` where bubblewrap cannot run
    or with ``--preload`` (its agents are forked, not started), is a UsageError. The isolation the
    trials of this machine get (None when the backend's trials run elsewhere, ``here`` False:
    each node probes its own)."""
    if sandbox not in SANDBOX_MODES:
        resolve_isolation(sandbox)  # refused, naming the modes
    if not here and not preload:
        return None
    if preload:
        if sandbox == "bwrap":
            raise UsageError(
                "--preload forks each agent from a shared server, which cannot be sandboxed: "
                "use --sandbox auto or none",
                where="--sandbox",
            )
        return Isolation("none", "--preload forks each agent from a shared server")
    return resolve_isolation(sandbox)


def _check_in_process(options: RunOptions) -> None:
    """An in-process agent runs only on a backend that can run one (this machine's)."""
    if not backend_info(options.backend).in_process:
        raise UsageError(f"an in-process agent runs on {backends_with('in_process')} only", where="--backend")


def _check_llm(url: str) -> None:
    """``--llm``: an http(s) URL whose endpoint answers ``GET .../v1/models`` now, before any
    trial (an endpoint that is down would make every trial's usage invalid after its work)."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"expected the http:// URL harn mcp mock llm printed, got {url!r}", where="--llm")
    import urllib.error
    import urllib.request

    from harn_mcp_mock.runner.budget import endpoint_base

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # straight to it, no proxy
    try:
        with opener.open(f"{endpoint_base(url)}/v1/models", timeout=10) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        with exc:
            raise UsageError(
                f"{url} answered HTTP {exc.code}: is it harn mcp mock llm?", where="--llm"
            ) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UsageError(
            f"cannot reach {url} ({reason}): start harn mcp mock llm first", where="--llm"
        ) from None


def _check_agent(agent: Sequence[str]) -> None:
    import shutil

    if not agent:
        raise UsageError("give the agent command after `--`")
    if shutil.which(agent[0]) is None:
        raise UsageError(f"the agent command {agent[0]!r} was not found (or is not executable)")


def _check_preload(agent: Sequence[str], preload: Sequence[str]) -> None:
    """``--preload``: a Python agent command whose modules import (its fork server is started
    now, before any trial); else a UsageError."""
    if any(not isinstance(name, str) or not name or name.strip() != name for name in preload):
        raise UsageError(f"give module names; got {list(preload)!r}", where="--preload")
    from harn_mcp_mock.runner.process import start_preload

    start_preload(agent, preload)


def check_settings(
    *, timeout: float | None, grace: float, max_retries: int, workers: int | None, output_cap: int
) -> None:
    """Refuse option values no run can use (exit 2), before anything starts."""
    import math

    def bad(value: Any) -> bool:
        return isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value)

    if timeout is not None and (bad(timeout) or not 0 < timeout < math.inf):
        raise UsageError(
            f"must be a number of seconds above 0, or none for no limit; got {timeout!r}", where="--timeout"
        )
    if bad(grace) or not 0 <= grace < math.inf:
        raise UsageError(f"must be a number of seconds, 0 or more; got {grace!r}", where="--grace")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise UsageError(f"must be an integer, 0 or more; got {max_retries!r}", where="--max-retries")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"must be a positive integer; got {workers!r}", where="--workers")
    if isinstance(output_cap, bool) or not isinstance(output_cap, int) or output_cap < 0:
        raise UsageError(f"must be a number of bytes, 0 or more; got {output_cap!r}", where="--output-cap")


def run_episodes(
    specs: Sequence[str | Path],
    agent: Sequence[str] | AgentFunction,
    *,
    out: str | Path,
    options: RunOptions | None = None,
    on_trial: Callable[[TrialRecord, int, int], None] | None = None,
    stop: threading.Event | Control | None = None,
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
    on_note: Callable[[str], None] | None = None,
    **keywords: Any,
) -> RunOutcome:
    """Run the matrix (see the module docstring); ``on_trial(record, done, total)`` after each.

    ``agent`` is a command (argv) or an ``async def agent(session, trial)`` run in-process
    (:mod:`harn_mcp_mock.runner.inprocess`; from inside an event loop use
    :func:`run_episodes_async`). ``options``: a :class:`RunOptions`; the keyword forms
    (``tasks=``, ``k=``, ``workers=``, ``ray_address=`` ..., its fields) are laid over it.
    ``options.backend``: a name of :data:`~harn_mcp_mock.runner.backend.BACKENDS`
    (``local``: ``workers`` trials at a time on this machine; ``ray``: Ray tasks, on its
    ``address`` or a local Ray for the run). ``timeout``: each trial's limit in seconds (None:
    none). ``stop``: set it (an Event) or call ``stop()`` / ``kill_now()`` (a
    :class:`~harn_mcp_mock.runner.process.Control`) to stop the run. ``on_note`` hears what
    resume does ("all N trials already finished"). ``preload``: modules a Python agent command's
    fork server imports once, each trial forked from it (docs/runner.md, "Warm starts").
    ``sandbox``: ``auto``, ``bwrap`` or ``none``, each agent command's isolation (docs/runner.md,
    "Threat model"); ``auto`` says on ``on_note`` when it finds none. ``llm``: the URL of a
    ``harn mcp mock llm`` serving every trial, each on its own route (``HARN_LLM_URL``), its
    usage counted into the trial's (docs/runner.md, "The agent contract"). ``strict_exit``: a trial whose
    agent exited non-zero (or raised) is a FAIL, ``exit_failed`` in its record and score."""
    o = RunOptions.build(options, **keywords)
    backend = backend_info(o.backend)
    check_settings(
        timeout=o.trial.timeout,
        grace=o.trial.grace,
        max_retries=o.trial.max_retries,
        workers=o.workers,
        output_cap=o.trial.output_cap,
    )
    if o.trial.preload and not backend.preload:
        raise UsageError(f"runs on {backends_with('preload')} only", where="--preload")
    if callable(agent):
        if o.trial.preload or o.trial.llm:
            raise UsageError(
                "is for an agent command, not an in-process agent",
                where="--preload" if o.trial.preload else "--llm",
            )
        _check_in_process(o)
        import asyncio

        import anyio

        event = stop if isinstance(stop, threading.Event) or stop is None else None

        def in_a_new_loop() -> RunOutcome:
            return anyio.run(
                lambda: run_episodes_async(
                    specs, agent, out=out, options=o, on_trial=on_trial, stop=event, callbacks=callbacks
                )
            )

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return in_a_new_loop()
        # Called from code that runs an event loop in this thread (an async test, Playwright's
        # sync API): the trials get their own loop in a worker thread; `run_episodes_async`
        # runs them in the caller's loop instead.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harn-run") as one:
            return one.submit(in_a_new_loop).result()
    if callbacks is not None:
        raise UsageError("callbacks are for an in-process agent; a command agent makes its own session")
    _check_agent(agent)
    if o.trial.llm is not None:
        _check_llm(o.trial.llm)
    isolation = _check_sandbox(o.trial.sandbox, o.trial.preload, backend.isolation_here)
    chosen = get_backend(o.backend, o.backend_options)
    baseline_doc = _early_baseline(o.baseline)
    check_gates(o.gates, o.k)
    plan = load_plan(specs, out=out, tasks=o.tasks, k=o.k, seed=o.seed, faults=o.faults)
    if o.trial.preload:
        _check_preload(agent, o.trial.preload)
    from harn_mcp_mock.runner.lock import hold_run_folder

    # Everything above refuses without a file written; the lock (which makes the folder) is
    # undone when the resume check refuses, so a refused run leaves nothing behind.
    with hold_run_folder(out):  # one run per folder, from run.json to results.json
        resume_plan(plan, agent, tasks=o.tasks, k=o.k, seed=o.seed, faults=o.faults, force=o.force)
        plan.on_trial = on_trial
        if on_note is not None:
            done = len(plan.matrix) - len(plan.todo)
            if not plan.todo:
                on_note(f"all {len(plan.matrix)} trials already finished (use --force to run them again)")
            elif done:
                on_note(
                    f"resuming: {done} of {len(plan.matrix)} trials already finished, running {len(plan.todo)}"
                )
        if on_note is not None and isolation is not None and isolation.note() is not None:
            on_note(str(isolation.note()))
        control = stop if isinstance(stop, Control) else Control(o.trial.grace)
        control.grace = o.trial.grace
        watcher = _watch(stop, control) if isinstance(stop, threading.Event) else None
        if o.trial.budget is not None and o.trial.budget.run_max_cost is not None:
            _cap_spending(plan, o.trial.budget.run_max_cost, control, on_note)
        from harn_mcp_mock.runner.process import become_subreaper

        become_subreaper()
        _clear_the_way(plan, on_note)
        try:
            chosen.run(plan, list(agent), o.trial, control)
        finally:
            if watcher is not None:
                watcher.set()
        stopped = control.stopping and len(plan.records) < len(plan.matrix)
        return conclude(
            plan, stopped=stopped, gates=o.gates, baseline=baseline_doc, alpha=o.alpha, budget=o.trial.budget,
            strict_exit=o.trial.strict_exit,
        )  # fmt: skip


def _clear_the_way(plan: Plan, on_note: Callable[[str], None] | None) -> None:
    """Before any trial: end the processes a previous runner of this folder left (a runner killed
    with SIGKILL), then remove the folders of the trials about to run, so that an old agent's
    open files and folder are unlinked ones and a new trial's files are all its own."""
    from harn_mcp_mock.runner._files import open_folder
    from harn_mcp_mock.runner.leftovers import end_leftovers

    ended = end_leftovers(plan.out)
    if ended and on_note is not None:
        on_note(f"resume: ended {ended} process(es) left by the previous runner")
    for trial in plan.todo:
        try:
            parent = open_folder(plan.out, trial.parts[:-1], create=False)
        except FileNotFoundError:
            continue
        with parent:
            parent.remove(trial.parts[-1])


def _cap_spending(plan: Plan, cap: float, control: Control, on_note: Callable[[str], None] | None) -> None:
    """``--run-max-cost``: stop scheduling once the finished trials (resumed ones too) spent it,
    by the usage each trial's record holds."""
    total = [sum(_cost(record) for record in plan.records.values())]
    told = [False]
    after = plan.on_trial

    def stop() -> None:
        if not told[0] and on_note is not None:
            on_note(f"--run-max-cost {cap:g}: the run has spent ${total[0]:.4f}; no further trial starts")
        told[0] = True
        plan.capped = (cap, total[0])
        control.stop()

    def counted(record: TrialRecord, done: int, count: int) -> None:
        total[0] += _cost(record)
        if total[0] >= cap:
            stop()
        if after is not None:
            after(record, done, count)

    if total[0] >= cap:
        stop()
    plan.on_trial = counted


def _cost(record: TrialRecord) -> float:
    return record.usage.cost_usd if record.usage is not None else 0.0


def _watch(event: threading.Event, control: Control) -> threading.Event:
    """Relay a stop asked through ``event`` to ``control``; set the returned event to end it."""
    done = threading.Event()

    def relay() -> None:
        while not done.is_set():
            if event.wait(0.25):
                control.stop()
                return

    threading.Thread(target=relay, name="harn-stop-relay", daemon=True).start()
    return done


async def run_episodes_async(
    specs: Sequence[str | Path],
    agent: Sequence[str] | AgentFunction,
    *,
    out: str | Path,
    options: RunOptions | None = None,
    on_trial: Callable[[TrialRecord, int, int], None] | None = None,
    stop: threading.Event | None = None,
    callbacks: ClientCallbacks | Callable[[Trial], ClientCallbacks] | None = None,
    **keywords: Any,
) -> RunOutcome:
    """:func:`run_episodes` from inside an event loop. An in-process agent's trials run in this
    loop, ``workers`` at a time (default 8: they wait on each other, not on cores); a command
    agent's run goes to a worker thread. (Its backend is the local one; ``options`` and the
    keyword forms as for :func:`run_episodes`.)"""
    import anyio

    o = RunOptions.build(options, **keywords)
    if not callable(agent):
        command = list(agent)
        return await anyio.to_thread.run_sync(
            lambda: run_episodes(specs, command, out=out, options=o, on_trial=on_trial, stop=stop)
        )
    from harn_mcp_mock.runner.inprocess import agent_name, run_trial_inprocess

    _check_in_process(o)
    baseline_doc = _early_baseline(o.baseline)
    check_gates(o.gates, o.k)
    plan = load_plan(specs, out=out, tasks=o.tasks, k=o.k, seed=o.seed, faults=o.faults)
    from harn_mcp_mock.runner.lock import hold_run_folder

    with hold_run_folder(out):  # one run per folder, from run.json to results.json
        resume_plan(
            plan, [agent_name(agent)], tasks=o.tasks, k=o.k, seed=o.seed, faults=o.faults, force=o.force
        )
        plan.on_trial = on_trial
        limiter = anyio.CapacityLimiter(max(1, o.workers or 8))
        stopped = False

        async def one(trial: Trial) -> None:
            nonlocal stopped
            async with limiter:
                if stop is not None and stop.is_set():
                    stopped = True
                    return
                record = await run_trial_inprocess(
                    trial,
                    agent,
                    plan.out,
                    timeout=o.trial.timeout,
                    callbacks=callbacks,
                    budget=o.trial.budget,
                )
                plan.finished(trial, record)

        async with anyio.create_task_group() as tg:
            for trial in plan.todo:
                tg.start_soon(one, trial)
        return conclude(
            plan, stopped=stopped, gates=o.gates, baseline=baseline_doc, alpha=o.alpha, budget=o.trial.budget,
            strict_exit=o.trial.strict_exit,
        )  # fmt: skip


def _score(plan: Plan, scored: list[ScoredRun]) -> EvalResult:
    """Eval's result of the scored trials (none: every group empty)."""
    from harn_mcp_mock.scoring.eval import Scorer

    scorer = plan.scorer or Scorer([doc for _, doc in plan.loaded])
    return scorer.result(scored)


def _judge(result: Any, gates: Sequence[Gate]) -> list[str]:
    failed = []
    for gate in gates:
        for group in result.groups:
            label = f"{group.world} ({'faults ' + group.faults if group.faults else 'no faults'})"
            if gate.k is None:
                value = group.pass_rate
                interval = group.pass_rate_interval
            else:
                value = group.pass_power_k.get(gate.k)
                interval = group.pass_power_k_interval.get(gate.k)
                if value is None:
                    failed.append(f"{gate.name}: {label} has fewer than {gate.k} scored runs per task")
                    continue
            if gate.on == "lower" and value is not None and interval is not None:
                if interval[0] < gate.value:
                    failed.append(
                        f"{gate.name}: {label} is {float(value):.3f}, its lower bound {interval[0]:.3f}"
                    )
                continue
            if value is None or value < Fraction(gate.value).limit_denominator(10**6):
                shown = "none" if value is None else f"{float(value):.3f}"
                failed.append(f"{gate.name}: {label} is {shown}")
    return failed


def summarise_failures(trials: Sequence[TrialRecord], result: Any) -> dict[str, int]:
    """Failed trials by kind: goal missed, collateral, forbidden, timeout, infra, over budget,
    invalid usage, unknown usage (a budget and none reported), crash (a failed trial whose agent
    exited non-zero; its other kinds count too)."""
    kinds = {"goal": 0, "collateral": 0, "forbidden": 0, "timeout": 0, "infra": 0, "over_budget": 0,
             "usage_invalid": 0, "usage_unknown": 0, "crash": 0}  # fmt: skip
    runs = {(run.world, run.run_id): run for run in result.runs}
    for record in trials:
        if record.status == "infra_error":
            kinds["infra"] += 1
        elif record.status == "timeout":
            kinds["timeout"] += 1
        elif record.exit_code not in (0, None) or record.agent_error:
            run = runs.get((record.world, record.run_id))
            if run is not None and not run.score.passed:
                kinds["crash"] += 1
    for run in result.runs:
        score = run.score
        if score.timed_out:
            continue  # counted once, as a timeout
        if score.over_budget is not None:
            kinds["over_budget"] += 1
        if score.usage_invalid is not None:
            kinds["usage_invalid"] += 1
        if score.usage_unknown is not None:
            kinds["usage_unknown"] += 1
        if not score.goal_match:
            kinds["goal"] += 1
        if score.collateral:
            kinds["collateral"] += 1
        if score.forbidden_hit:
            kinds["forbidden"] += 1
    return kinds


def profile_label(profile: str) -> str:
    return "no faults" if profile == NO_FAULTS else f"faults {profile}"
