"""The run folder (``harn mcp mock run --out``) as typed records, written once by the runner and
read back through one loader, as Inspect's ``Recorder`` writes and reads its ``EvalLog``.

``run.json`` is :class:`RunInfo` (what the run is); ``trials/<world>/<task>/<profile>/<n>/``
holds a trial: :class:`TrialRecord` (``trial.json``, how it ended, written last: it marks the
trial finished), its :class:`WorldReport` (``state.json`` and ``report.json``, the world as the
runner held it) and the agent's output; ``results.json`` is eval's result
(:class:`~harn_mcp_mock.scoring.eval.EvalResult`, format ``harn-mcp-mock/eval``, docs/eval.md).

The runner scores each trial from the world it held in memory, never from a file (an agent may
have written there): :func:`write_trial` writes a record's files (after the agent's processes are
gone, reopening the folder from the run's root without following a link) and puts each file's
digest in ``trial.json``; :func:`read_trial` (resume, the report) takes a finished trial only
with the files the runner wrote. ``docs/run-folder.schema.json`` is generated from these types
(:mod:`harn_mcp_mock.runner.schema`).

Extensible: a reader keeps fields it does not know (``extra``) and ignores them; a newer
``version`` than this one reads is refused. Another layer's additions go in their own fields.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harn_mcp_mock.errors import EvalError, HarnError, UsageError
from harn_mcp_mock.runner._files import Folder, open_folder
from harn_mcp_mock.runner.budget import Budget, Usage

if TYPE_CHECKING:
    from harn_mcp_mock.scoring.eval import EvalResult

__all__ = [
    "OUTPUT_FILES",
    "RESULTS_FORMAT",
    "RUN_FORMAT",
    "TRIAL_FORMAT",
    "TRIAL_STATUSES",
    "VERSION",
    "WRITTEN_FILES",
    "RunFolder",
    "RunInfo",
    "SpecRef",
    "StaleTrial",
    "TrialRecord",
    "WorldReport",
    "load_results",
    "load_run_folder",
    "read_trial",
    "write_trial",
]

RUN_FORMAT: Final = "harn-mcp-mock/run"
TRIAL_FORMAT: Final = "harn-mcp-mock/trial"
RESULTS_FORMAT: Final = "harn-mcp-mock/eval"
STATE_FORMAT: Final = "harn-mcp-mock/world-state"
REPORT_FORMAT: Final = "harn-mcp-mock/world-report"
VERSION: Final = 1
"""The run folder's version (``run.json`` and ``trial.json``); results.json has eval's own."""
TRIAL_STATUSES: Final = ("scored", "timeout", "infra_error")
OUTPUT_FILES: Final = ("agent.stdout", "agent.stderr", "mcp.json", "tape.ndjson")
"""What a trial produced besides its world, carried by its record as bytes and written as files."""
AGENT_FOLDER: Final = "agent"
"""The trial folder's subfolder of the agent's own files (its ``HARN_TRIAL_DIR``)."""
WRITTEN_FILES: Final = (*OUTPUT_FILES, "state.json", "report.json", "trial.json")
"""Every file :func:`write_trial` writes (what was at those names before is removed first)."""


def _doc(text: str, **schema: Any) -> dict[str, Any]:
    """A field's metadata: its description and JSON Schema keywords beyond its type."""
    return {"doc": text, "schema": schema}


def _read(path: Path, what: str) -> Any:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"missing ({what})", path=path) from None
    except IsADirectoryError:
        raise UsageError(f"is a folder, not {what}", path=path) from None
    except OSError as exc:
        raise UsageError(f"cannot read it: {exc.strerror or exc}", path=path) from None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise UsageError(f"not JSON ({exc})", path=path) from None


def _check_format(doc: Any, path: Path, fmt: str, version: int | None = VERSION) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise UsageError(f"not a {fmt} document (expected an object)", path=path)
    if doc.get("format") != fmt:
        raise UsageError(f"expected {fmt!r}, found {doc.get('format')!r}", path=path, where="format")
    got = doc.get("version")
    if not isinstance(got, int) or isinstance(got, bool) or got < 1:
        raise UsageError("expected a positive integer", path=path, where="version")
    if version is not None and got > version:
        raise UsageError(
            f"written by a newer harn-mcp-mock (version {got}; this one reads up to {version})",
            path=path,
            where="version",
        )
    return doc


def _typed(doc: dict[str, Any], key: str, kinds: tuple[type, ...], path: Path, what: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise UsageError(f"expected {what}", path=path, where=key)
    return value


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, indent=2).encode() + b"\n"


def _digest(data: bytes) -> str:
    from blake3 import blake3

    return "blake3:" + blake3(data).hexdigest()


# --- run.json --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpecRef:
    """A world spec of the run: its path and the BLAKE3 of its canonical JSON."""

    path: str = field(metadata=_doc("the spec's path"))
    blake3: str = field(metadata=_doc("BLAKE3 of the spec's canonical JSON", pattern="^[0-9a-f]{64}$"))


@dataclass(frozen=True, slots=True)
class RunInfo:
    """``run.json``: what the run is (resume compares it whole and names what changed)."""

    specs: list[SpecRef] = field(metadata=_doc("the world specs"))
    agent: list[str] = field(
        metadata=_doc('the agent command, or ["python:module.function"] for an in-process agent')
    )
    options: dict[str, Any] = field(
        metadata=_doc(
            "the options that decide which trials run and how they are seeded",
            properties={
                "tasks": {"type": "array", "items": {"type": "string"}},
                "k": {"type": "integer", "minimum": 1},
                "seed": {"type": "integer"},
                "faults": {"type": "array", "items": {"type": "string"}},
            },
        )
    )
    version: int = VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT,
            "version": self.version,
            "specs": [{"path": s.path, "blake3": s.blake3} for s in self.specs],
            "agent": list(self.agent),
            "options": self.options,
            **self.extra,
        }

    @classmethod
    def from_json(cls, doc: Any, path: Path) -> RunInfo:
        doc = _check_format(doc, path, RUN_FORMAT)
        specs = []
        for i, entry in enumerate(_typed(doc, "specs", (list,), path, "a list of specs")):
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                raise UsageError("expected {path, blake3}", path=path, where=f"specs[{i}]")
            specs.append(SpecRef(entry["path"], str(entry.get("blake3", ""))))
        agent = _typed(doc, "agent", (list,), path, "the agent command as a list of strings")
        options = _typed(doc, "options", (dict,), path, "an object")
        known = {"format", "version", "specs", "agent", "options"}
        return cls(
            specs,
            [str(a) for a in agent],
            options,
            doc["version"],
            {k: v for k, v in doc.items() if k not in known},
        )


# --- a trial's world: state.json and report.json ---------------------------------------------

_SCORED_KEYS: Final = frozenset(
    {"format", "version", "world", "task", "seed", "run_id", "faults", "infra_error", "state",
     "final_state", "forbidden_hits", "timed_out", "usage", "over_budget", "usage_invalid",
     "usage_unknown", "exit_failed"}
)  # fmt: skip
"""What eval reads of a state or report document."""
_USAGE_KEYS: Final = ("usage", "over_budget", "usage_invalid", "usage_unknown")
"""What the runner stamps into a trial's world documents from its usage and budget."""


@dataclass(frozen=True, slots=True)
class WorldReport:
    """A trial's world at its end, as the world engine made it (in the runner's process, or the
    Ray worker's): the state document (``state.json``, format ``harn-mcp-mock/world-state``) and
    the report (``report.json``, ``harn-mcp-mock/world-report``: the score, the forbidden hits,
    the faults fired, the calls; None for a trial that could not run). docs/eval.md has their
    fields; the runner adds ``sessions`` and ``tool_calls`` to the report, ``timed_out``, and
    ``usage``, ``over_budget``, ``usage_invalid`` and ``usage_unknown`` to both."""

    state: dict[str, Any]
    report: dict[str, Any] | None = None

    @property
    def scored(self) -> dict[str, Any]:
        """The document eval scores: the report when there is one (it has the forbidden hits)."""
        return self.report if self.report is not None else self.state

    def judged(
        self,
        usage: Usage | None,
        over_budget: str | None,
        usage_unknown: str | None = None,
        exit_failed: str | None = None,
    ) -> WorldReport:
        """The same world with the trial's usage, whether it was invalid (``usage_invalid``:
        never a pass), its budget verdicts (``over_budget``; ``usage_unknown``: a budget and no
        usage reported, never a pass) and ``--strict-exit``'s (``exit_failed``) in both documents."""
        problem = usage.problem if usage is not None else None

        def stamp(doc: dict[str, Any]) -> dict[str, Any]:
            doc = {k: v for k, v in doc.items() if k not in _USAGE_KEYS and k != "exit_failed"}
            if exit_failed is not None:
                doc["exit_failed"] = exit_failed
            if usage is not None and usage.reported:
                doc["usage"] = usage.to_dict()
            if problem is not None:
                doc["usage_invalid"] = problem
            if over_budget is not None:
                doc["over_budget"] = over_budget
            if usage_unknown is not None:
                doc["usage_unknown"] = usage_unknown
            return doc

        return WorldReport(stamp(self.state), None if self.report is None else stamp(self.report))

    def slim(self) -> WorldReport:
        """Only what eval reads (no call log, no faults fired): what a finished trial keeps in
        memory until the run is scored."""
        report = self.report
        if report is not None:
            report = {k: v for k, v in report.items() if k in _SCORED_KEYS}
        return WorldReport(self.state if report is None else {}, report)  # the report is what is scored

    def files(self) -> dict[str, bytes]:
        """``state.json`` (and ``report.json``) as the runner writes them (sorted keys, indented)."""
        import orjson

        option = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        out = {"state.json": orjson.dumps(self.state, option=option) + b"\n"}
        if self.report is not None:
            out["report.json"] = orjson.dumps(self.report, option=option) + b"\n"
        return out


# --- trial.json ------------------------------------------------------------------------------

_SAFE_NAME: Final = {"$ref": "#/$defs/safe_name"}


@dataclass(slots=True)
class TrialRecord:
    """A trial: where it sits in the matrix and how it ended (``trial.json``), with, in memory,
    its world (:attr:`world_report`) and the agent's output (:attr:`outputs`) until the runner
    has written them."""

    world: str = field(metadata=_doc("the spec's name", **_SAFE_NAME))
    task: str = field(metadata=_doc("the task's id", **_SAFE_NAME))
    profile: str = field(metadata=_doc('a fault profile of the spec, or "none"', **_SAFE_NAME))
    trial: int = field(metadata=_doc("1-based, within (world, task, profile)", minimum=1))
    run_id: str = field(metadata=_doc("the trial's run id, task.profile.tN"))
    seed: int = field(metadata=_doc("the trial's seed, derived from the run's --seed", minimum=0))
    status: str = field(
        metadata=_doc(
            "timeout: scored as it stood, never a pass; infra_error: kept out of n",
            enum=list(TRIAL_STATUSES),
        )
    )
    exit_code: int | None = field(
        default=None, metadata=_doc("the agent's exit code (negative: the signal that ended it)")
    )
    infra_error: str | None = field(default=None, metadata=_doc("why the trial could not run"))
    attempts: int = field(
        default=1, metadata=_doc("runs of the agent (infrastructure errors retried)", minimum=1)
    )
    duration_ms: int | None = field(default=None, metadata=_doc("wall time of the last attempt", minimum=0))
    sessions: int | None = field(
        default=None, metadata=_doc("MCP sessions the agent opened with the trial's world", minimum=0)
    )
    tool_calls: int | None = field(default=None, metadata=_doc("tool calls the world answered", minimum=0))
    message: str | None = field(
        default=None, metadata=_doc('what happened, in words ("timed out after 600 s")')
    )
    agent_error: str | None = field(default=None, metadata=_doc("an in-process agent's exception"))
    usage: Usage | None = field(
        default=None, metadata=_doc("what the agent reported spending, summed when the trial ended")
    )
    over_budget: str | None = field(
        default=None,
        metadata=_doc("why the trial is over --max-tokens/--max-cost (judged again by each run's budget)"),
    )
    usage_invalid: str | None = field(
        default=None,
        metadata=_doc(
            "why the agent's usage could not be trusted (a malformed, negative or torn line): never a pass"
        ),
    )
    usage_unknown: str | None = field(
        default=None,
        metadata=_doc(
            "--max-tokens/--max-cost was given and the trial reported no usage at all, so its "
            "spending cannot be judged (judged again by each run's budget): never a pass"
        ),
    )
    exit_failed: str | None = field(
        default=None,
        metadata=_doc(
            "run --strict-exit: the agent exited non-zero, so the trial is never a pass (judged again "
            "by each run's --strict-exit)"
        ),
    )
    isolation: str | None = field(
        default=None,
        metadata=_doc("the isolation the agent had (run --sandbox): bwrap or none", enum=["bwrap", "none"]),
    )
    agent_files: str | None = field(
        default=None, metadata=_doc("the agent's own files (HARN_TRIAL_DIR) left out of agent/, in words")
    )
    ray_node: str | None = field(
        default=None, metadata=_doc("the Ray node that ran the trial (--backend ray)")
    )
    files: dict[str, str] | None = field(
        default=None,
        metadata=_doc(
            "each file the runner wrote for the trial and the BLAKE3 of its bytes: a resume and the "
            "report take the trial only with these files",
            additionalProperties={"type": "string", "pattern": "^blake3:[0-9a-f]{64}$"},
        ),
    )
    version: int = VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    world_report: WorldReport | None = field(
        default=None, compare=False, repr=False, metadata={"memory": True}
    )
    """The world at the trial's end (in memory; ``state.json`` and ``report.json`` on disk)."""
    outputs: dict[str, bytes] = field(
        default_factory=dict, compare=False, repr=False, metadata={"memory": True}
    )
    """:data:`OUTPUT_FILES` by name (in memory until written)."""
    agent_outputs: dict[str, bytes] = field(
        default_factory=dict, compare=False, repr=False, metadata={"memory": True}
    )
    """The agent's own files (``HARN_TRIAL_DIR``) by relative path, written under ``agent/``
    for a person to read (never read back)."""

    _ALWAYS = frozenset({"exit_code", "infra_error", "duration_ms", "attempts"})
    """Written even when null."""

    @classmethod
    def json_fields(cls) -> list[dataclasses.Field[Any]]:
        """The fields ``trial.json`` holds, in its order."""
        return [
            f
            for f in dataclasses.fields(cls)
            if f.name not in ("version", "extra") and not f.metadata.get("memory")
        ]

    @property
    def parts(self) -> tuple[str, ...]:
        """The trial's folder below ``--out``, one name per level."""
        from harn_mcp_mock.runner.matrix import trial_parts

        return trial_parts(self.world, self.task, self.profile, self.trial)  # odd ids: made path-safe

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": TRIAL_FORMAT, "version": self.version}
        for f in self.json_fields():
            value = getattr(self, f.name)
            if value is not None or f.name in self._ALWAYS:
                doc[f.name] = value.to_dict() if isinstance(value, Usage) else value
        return {**doc, **self.extra}

    def __getitem__(self, key: str) -> Any:
        """``record["status"]``: the record as ``trial.json`` has it (for callbacks written
        against the records of earlier versions, which were dicts)."""
        return self.to_json()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)

    def __contains__(self, key: object) -> bool:
        """``"usage_invalid" in record``: whether ``trial.json`` has that field."""
        return key in self.to_json()

    def judge(self, budget: Budget | None, strict_exit: bool = False) -> None:
        """Set :attr:`over_budget` and :attr:`usage_unknown` from the recorded usage and
        ``budget`` (None: no limit), and :attr:`exit_failed` from the agent's exit and
        ``strict_exit`` (``run --strict-exit``), and stamp them into the world's documents."""
        self.over_budget = budget.over(self.usage) if budget is not None else None
        counted = budget is not None and self.status != "infra_error"  # an infra error is out of n
        self.usage_unknown = budget.unknown(self.usage) if counted and budget is not None else None
        self.usage_invalid = self.usage.problem if self.usage is not None else None
        crashed = self.exit_code not in (0, None) or self.agent_error is not None
        self.exit_failed = None
        if strict_exit and self.status == "scored" and crashed:
            how = f"exited {self.exit_code}" if self.exit_code not in (0, None) else "raised"
            self.exit_failed = f"the agent {how} (--strict-exit)"
        if self.world_report is not None:
            self.world_report = self.world_report.judged(
                self.usage, self.over_budget, self.usage_unknown, self.exit_failed
            )

    @classmethod
    def from_json(cls, doc: Any, path: Path) -> TrialRecord:
        if isinstance(doc, dict) and "format" not in doc:  # written before the format was named
            doc = {"format": TRIAL_FORMAT, "version": 1, **doc}
        doc = _check_format(doc, path, TRIAL_FORMAT)
        for key in ("world", "task", "profile", "run_id", "status"):
            _typed(doc, key, (str,), path, "a string")
        _typed(doc, "trial", (int,), path, "an integer")
        _typed(doc, "seed", (int,), path, "an integer")
        if doc["status"] not in TRIAL_STATUSES:
            raise UsageError(f"expected one of {', '.join(TRIAL_STATUSES)}", path=path, where="status")
        for key in ("exit_code", "duration_ms", "sessions", "tool_calls", "attempts"):
            if doc.get(key) is not None:
                _typed(doc, key, (int,), path, "an integer or null")
        for key in ("infra_error", "message", "agent_error", "over_budget", "ray_node", "usage_invalid",
                    "usage_unknown", "isolation", "agent_files", "exit_failed"):  # fmt: skip
            if doc.get(key) is not None:
                _typed(doc, key, (str,), path, "a string or null")
        names = [f.name for f in cls.json_fields()]
        values = {name: doc.get(name) for name in names if name in doc}
        if values.get("attempts") is None:
            values["attempts"] = 1
        if doc.get("usage") is not None:
            values["usage"] = _usage(doc["usage"], path, "usage")
        files = doc.get("files")
        if files is not None and (
            not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values())
        ):
            raise UsageError("expected an object of file names and digests", path=path, where="files")
        known = {"format", "version", *names}
        return cls(**values, version=doc["version"], extra={k: v for k, v in doc.items() if k not in known})


def _usage(doc: Any, path: Path, where: str) -> Usage:
    if not isinstance(doc, dict):
        raise UsageError("expected an object", path=path, where=where)
    counts = []
    for key in ("input_tokens", "output_tokens", "calls", "invalid_lines"):
        value = doc.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError("expected an integer of at least 0", path=path, where=f"{where}.{key}")
        counts.append(value)
    cost = doc.get("cost_usd", 0)
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < float("inf"):
        raise UsageError("expected a number of at least 0", path=path, where=f"{where}.cost_usd")
    reason = doc.get("invalid")
    if reason is not None and not isinstance(reason, str):
        raise UsageError("expected a string or null", path=path, where=f"{where}.invalid")
    return Usage(counts[0], counts[1], float(cost), counts[2], counts[3] or int(reason is not None), reason)


# --- writing a trial, and reading it back ----------------------------------------------------


def write_trial(out: Path, record: TrialRecord) -> TrialRecord:
    """Write ``record``'s files into its folder under ``out``: its outputs, its world's
    ``state.json`` and ``report.json``, then ``trial.json`` with every file's digest (last and
    atomically: it marks the trial finished). The folder is opened from ``out`` one level at a
    time; a level that is a symlink or not a folder (an agent's doing) is replaced by a folder,
    never followed. What was at those names is removed first. Returns the record, its outputs
    released and its world kept slim (what eval reads)."""
    with open_folder(out, record.parts, replace=True) as where:
        where.clear(WRITTEN_FILES)
        written: dict[str, bytes] = {}
        for name in OUTPUT_FILES:
            if name in record.outputs:
                written[name] = record.outputs[name]
        if record.world_report is not None:
            written.update(record.world_report.files())
        digests = {}
        for name, data in written.items():
            where.write(name, data)
            digests[name] = _digest(data)
        record.files = digests
        where.remove(AGENT_FOLDER)
        for rel, data in record.agent_outputs.items():  # the agent's own files: never read back
            *folders, name = rel.split("/")
            with open_folder(where.path, (AGENT_FOLDER, *folders), replace=True) as sub:
                sub.write(name, data)
        where.write("trial.json", _dumps(record.to_json()), atomic=True)  # whole or absent: marks it finished
    record.outputs = {}
    record.agent_outputs = {}
    if record.world_report is not None:
        record.world_report = record.world_report.slim()
    return record


class StaleTrial(UsageError):
    """A finished trial's files are not the ones the runner wrote for it (changed since, or
    another trial's): a resume runs the trial again; the report refuses the folder."""


def read_trial(where: Folder, *, expect: tuple[str, int] | None = None) -> TrialRecord | None:
    """The finished trial in ``where`` (its ``trial.json``, with its world read from
    ``state.json`` and ``report.json``), or None when it has no ``trial.json``. ``expect``: the
    (run id, seed) it must have. Only regular files are read. Raises :class:`UsageError` naming
    a ``trial.json`` that is not a regular file or not a trial record, and :class:`StaleTrial`
    when the world's files are not those the runner wrote (their digests in ``trial.json``) or
    not the trial's."""
    path = where.path / "trial.json"
    data = where.read_regular("trial.json")
    if data is None:
        try:
            os.stat("trial.json", dir_fd=where.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        raise UsageError("is not a regular file: refusing to read it (remove it)", path=path)
    try:
        doc = json.loads(data)
    except ValueError:
        raise UsageError("is not JSON: refusing to read it (remove it)", path=path) from None
    if not isinstance(doc, dict):
        raise UsageError("is not a trial record: refusing to read it (remove it)", path=path)
    record = TrialRecord.from_json(doc, path)
    if expect is not None and (record.run_id, record.seed) != expect:
        raise StaleTrial(
            f"is the record of run {record.run_id} (seed {record.seed}), not of this trial", path=path
        )
    documents: dict[str, dict[str, Any]] = {}
    for name, fmt in (("state.json", STATE_FORMAT), ("report.json", REPORT_FORMAT)):
        file = where.path / name
        raw = where.read_regular(name)
        expected = (record.files or {}).get(name)
        if raw is None:
            if expected is not None or name == "state.json":
                raise StaleTrial("is missing or not a regular file: the runner wrote it", path=file)
            continue
        if record.files is not None and expected != _digest(raw):
            raise StaleTrial(
                "changed since the runner wrote it (its digest in trial.json differs): "
                "the same run command runs the trial again",
                path=file,
            )
        try:
            world = json.loads(raw)
        except ValueError:
            raise StaleTrial("is not JSON", path=file) from None
        if not isinstance(world, dict) or world.get("format") != fmt:
            raise StaleTrial(f"is not a {fmt} document", path=file)
        if (world.get("run_id"), world.get("seed")) != (record.run_id, record.seed):
            raise StaleTrial("is another trial's world (run id, seed)", path=file)
        documents[name] = world
    if record.usage is None and isinstance(documents["state.json"].get("usage"), dict):
        # written before trial.json held the usage: it was stamped into the world's files
        record.usage = _usage(documents["state.json"]["usage"], where.path / "state.json", "usage")
    record.world_report = WorldReport(documents["state.json"], documents.get("report.json"))
    return record


def load_results(path: str | Path, *, what: str = "results.json") -> EvalResult:
    """An eval result, typed: ``DIR/results.json`` of a run folder, or an eval ``--format json``
    file (:meth:`~harn_mcp_mock.scoring.eval.EvalResult.from_json`)."""
    from harn_mcp_mock.scoring.eval import EvalResult

    where = Path(path)
    file = where / "results.json" if where.is_dir() else where
    doc = _read(file, f"the {what} of a run: run the same command again to score it")
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise UsageError("not an eval result (format harn-mcp-mock/eval)", path=file)
    _check_format(doc, file, RESULTS_FORMAT, version=None)
    try:
        return EvalResult.from_json(doc, file)
    except EvalError as exc:
        raise UsageError(exc.message, path=file, where=exc.where) from None


@dataclass(slots=True)
class RunFolder:
    """A run folder, read: :func:`load_run_folder`."""

    root: Path
    run: RunInfo
    results: EvalResult | None

    def trials(self) -> Iterator[tuple[Path, TrialRecord]]:
        """Every finished trial (a folder with a ``trial.json``), in matrix order (world, task,
        no faults first, then profiles, trial number), with its record and world
        (:func:`read_trial`)."""
        for trial_json in sorted(self.root.glob("trials/*/*/*/*/trial.json"), key=_trial_order):
            parts = trial_json.parent.relative_to(self.root).parts
            with open_folder(self.root, parts, create=False) as where:
                record = read_trial(where)
            if record is not None:
                yield trial_json.parent, record

    def read_file(self, folder: Path, record: TrialRecord, name: str) -> bytes | None:
        """One of the trial's :data:`OUTPUT_FILES` as the runner wrote it, or None (not written,
        not a regular file, or changed since: its digest in ``trial.json`` differs)."""
        try:
            where = open_folder(self.root, folder.relative_to(self.root).parts, create=False)
        except (OSError, HarnError):
            return None
        with where:
            data = where.read_regular(name)
        if data is None or (record.files is not None and record.files.get(name) != _digest(data)):
            return None
        return data


def _trial_order(path: Path) -> tuple[str, str, str, int]:
    world, task, profile, index = path.parts[-5:-1]
    return (world, task, "" if profile == "none" else profile, int(index) if index.isdigit() else 0)


def load_run_folder(root: str | Path, *, results: bool = True) -> RunFolder:
    """Read ``root``'s ``run.json`` (and ``results.json`` when ``results``); the trials are read
    as they are iterated. Raises :class:`UsageError` naming the file and field."""
    root = Path(root)
    if not (root / "run.json").exists():
        raise UsageError("not a run folder (no run.json from harn mcp mock run --out)", path=root)
    run = RunInfo.from_json(_read(root / "run.json", "the run's run.json"), root / "run.json")
    return RunFolder(root, run, load_results(root) if results else None)
