"""The run folder (``harn mcp mock run --out``) as one typed, versioned format, and its one loader.

``run.json`` (:class:`RunInfo`: what the run is), ``trials/<world>/<task>/<profile>/<n>/trial.json``
(:class:`TrialRecord`: how each trial ended) and ``results.json`` (eval's JSON document, format
``harn-mcp-mock/eval``: docs/eval.md). docs/run-folder.schema.json describes all three. The
report (``harn mcp mock report RUN_DIR``) and ``--baseline`` read a folder through
:func:`load_run_folder` / :func:`load_results` only; a file that is not what it should be is
refused with one line naming it and the field.

Extensible: a reader keeps fields it does not know (``extra``) and ignores them; a newer
``version`` than this one reads is refused. Another layer's additions (eval's statistics in
``results.json``, budgets) go in their own fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError

__all__ = [
    "RESULTS_FORMAT",
    "RUN_FORMAT",
    "TRIAL_FORMAT",
    "TRIAL_STATUSES",
    "VERSION",
    "RunFolder",
    "RunInfo",
    "TrialRecord",
    "load_results",
    "load_run_folder",
]

RUN_FORMAT = "harn-mcp-mock/run"
TRIAL_FORMAT = "harn-mcp-mock/trial"
RESULTS_FORMAT = "harn-mcp-mock/eval"
VERSION = 1
"""The run folder's version (``run.json`` and ``trial.json``); results.json has eval's own."""
TRIAL_STATUSES = ("scored", "timeout", "infra_error")


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


@dataclass(frozen=True, slots=True)
class SpecRef:
    path: str
    blake3: str


@dataclass(frozen=True, slots=True)
class RunInfo:
    """``run.json``: what the run is (resume compares it whole)."""

    specs: list[SpecRef]
    agent: list[str]
    options: dict[str, Any]
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


@dataclass(slots=True)
class TrialRecord:
    """``trial.json``: where the trial sits in the matrix and how it ended."""

    world: str
    task: str
    profile: str
    trial: int
    run_id: str
    seed: int
    status: str
    """``scored``, ``timeout`` (never a pass) or ``infra_error`` (kept out of n)."""
    exit_code: int | None = None
    infra_error: str | None = None
    attempts: int = 1
    duration_ms: int | None = None
    sessions: int | None = None
    """MCP sessions the agent opened with the trial's world."""
    tool_calls: int | None = None
    message: str | None = None
    """What happened, in words (``timed out after 600 s``)."""
    agent_error: str | None = None
    """An in-process agent's exception."""
    version: int = VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    _FIELDS = ("world", "task", "profile", "trial", "run_id", "seed", "status", "exit_code",
               "infra_error", "attempts", "duration_ms", "sessions", "tool_calls", "message", "agent_error")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": TRIAL_FORMAT, "version": self.version}
        for name in self._FIELDS:
            value = getattr(self, name)
            if value is not None or name in ("exit_code", "infra_error", "duration_ms"):
                doc[name] = value
        return {**doc, **self.extra}

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
        for key in ("infra_error", "message", "agent_error"):
            if doc.get(key) is not None:
                _typed(doc, key, (str,), path, "a string or null")
        known = {"format", "version", *cls._FIELDS}
        values = {name: doc.get(name) for name in cls._FIELDS if name in doc}
        if values.get("attempts") is None:
            values["attempts"] = 1
        return cls(**values, version=doc["version"], extra={k: v for k, v in doc.items() if k not in known})


def load_results(path: str | Path, *, what: str = "results.json") -> dict[str, Any]:
    """An eval result: ``DIR/results.json`` of a run folder, or an eval ``--format json`` file."""
    where = Path(path)
    file = where / "results.json" if where.is_dir() else where
    doc = _read(file, f"the {what} of a run: run the same command again to score it")
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise UsageError("not an eval result (format harn-mcp-mock/eval)", path=file)
    _check_format(doc, file, RESULTS_FORMAT, version=None)
    return doc


@dataclass(slots=True)
class RunFolder:
    """A run folder, read: :func:`load_run_folder`."""

    root: Path
    run: RunInfo
    results: dict[str, Any] | None

    def trials(self) -> Iterator[tuple[Path, TrialRecord]]:
        """Every trial folder with a ``trial.json``, in matrix order (world, task, no faults
        first, then profiles, trial number), with its record."""
        for trial_json in sorted(self.root.glob("trials/*/*/*/*/trial.json"), key=_trial_order):
            yield trial_json.parent, TrialRecord.from_json(_read(trial_json, "a trial record"), trial_json)


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
