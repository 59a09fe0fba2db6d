"""The trial matrix: specs x tasks x fault profiles x k trials, each with a deterministic run id
and seed derived from the run's ``--seed`` (keyed BLAKE3, so a trial's faults and coins are the
same on every machine and every resume)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.store.canonical import canonical_bytes

__all__ = ["NO_FAULTS", "Trial", "build_matrix", "derive_seed", "folder_name", "trial_parts"]

NO_FAULTS = "none"
"""The profile name of the trials run without faults (its folder name too)."""

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
"""What a folder name that is the id itself may hold (what every id was limited to before)."""
_MAX_PLAIN = 255
"""The longest id kept as its own folder name, in bytes (NAME_MAX on Linux and macOS)."""
_SLUG_MAX = 48
_MARK = "~"
"""Only in the folder names made for other ids, so they never equal a plain id's name."""


def folder_name(name: str) -> str:
    """The folder name of a world name, task id or fault profile name in a run folder.

    A path-safe id (letters, digits, ``.``, ``_``, ``-``, no ``..``, not ``.``) of at most 255
    bytes is its own folder name, as it always was. Any other id (too long, ``/``, spaces, other
    alphabets, ``..``) gets ``<slug>~<digest>``: a readable ASCII slug of at most 48 characters
    (``id`` when nothing of the id is ASCII), ``~``, and the first 128 bits of the BLAKE3 of the
    id's UTF-8 bytes in hex. Deterministic (the same on every machine and every resume), at most
    81 bytes, and collision-free: a plain name never holds ``~``, and two other ids share a name
    only if their digests collide. The ids themselves are in each ``trial.json``; the folder
    names only order the trials.
    """
    if _PLAIN.issuperset(name) and name not in ("", ".") and ".." not in name and len(name) <= _MAX_PLAIN:
        return name
    import unicodedata

    from blake3 import blake3

    raw = name.encode("utf-8", "surrogatepass")
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = "".join(ch if ch in _PLAIN and ch != "." else "-" for ch in folded)
    slug = "-".join(part for part in slug.split("-") if part)[:_SLUG_MAX].strip("-") or "id"
    return f"{slug}{_MARK}{blake3(raw).hexdigest(length=16)}"


def trial_parts(world: str, task: str, profile: str, index: int) -> tuple[str, ...]:
    """A trial's folder below ``--out``, one name per level (see :func:`folder_name`)."""
    return ("trials", folder_name(world), folder_name(task), folder_name(profile), str(index))


@dataclass(frozen=True, slots=True)
class Trial:
    world: str
    spec: Path
    task: str
    prompt: str
    """The task's description: what the agent is asked to do."""
    profile: str
    """A fault profile of the spec, or :data:`NO_FAULTS`."""
    index: int
    """1-based, within (world, task, profile)."""
    run_id: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.world}/{self.task}/{self.profile}/{self.index}"

    @property
    def parts(self) -> tuple[str, ...]:
        """The trial's folder below ``--out``, one name per level (:func:`trial_parts`)."""
        return trial_parts(self.world, self.task, self.profile, self.index)

    def folder(self, out: Path) -> Path:
        return out.joinpath(*self.parts)


def derive_seed(seed: int, world: str, task: str, profile: str, index: int) -> int:
    """A trial's seed: BLAKE3 of the run's seed and the trial's place, as a 32-bit integer."""
    from blake3 import blake3

    digest = blake3(canonical_bytes([seed, world, task, profile, index])).digest(length=4)
    return int.from_bytes(digest, "big")


def build_matrix(
    specs: list[tuple[Path, dict[str, Any]]],
    *,
    tasks: list[str] | None = None,
    k: int = 1,
    seed: int = 0,
    faults: list[str] | None = None,
) -> list[Trial]:
    """Every trial, in a stable order. ``specs``: (path, spec JSON) pairs; ``tasks``: the task ids
    to run (default: every task of every spec; a spec without one of them skips it, but a task no
    spec has is an error); ``faults``: the profiles to run besides no faults."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"must be a positive integer, got {k!r}", where="--k")
    wanted = set(tasks or ())
    found: set[str] = set()
    trials: list[Trial] = []
    for path, spec in specs:
        world = str(spec.get("name"))
        known = {t["id"]: t for t in spec.get("tasks", []) if isinstance(t, dict) and "id" in t}
        profiles = [NO_FAULTS, *(faults or [])]
        for profile in profiles[1:]:
            if profile not in (spec.get("fault_profiles") or {}):
                have = ", ".join(spec.get("fault_profiles") or {}) or "none"
                raise UsageError(f"{path}: no fault profile {profile!r} (profiles: {have})", where="--faults")
        for task_id, task in known.items():
            if wanted and task_id not in wanted:
                continue
            found.add(task_id)
            for profile in profiles:
                for index in range(1, k + 1):
                    trials.append(
                        Trial(
                            world,
                            path,
                            task_id,
                            str(task.get("description", "")),
                            profile,
                            index,
                            f"{task_id}.{profile}.t{index}",
                            derive_seed(seed, world, task_id, profile, index),
                        )
                    )
    missing = sorted(wanted - found)
    if missing:
        raise UsageError(f"no spec has task {missing[0]!r}", where="--task")
    if not trials:
        raise UsageError("the specs have no tasks to run", where="--spec")
    return trials
