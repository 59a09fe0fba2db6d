"""Each trial's agent in a sandbox (``run --sandbox auto|bwrap|none``; docs/runner.md, "Threat model").

On Linux with bubblewrap (``bwrap``, Debian's ``bubblewrap``) the agent's whole process tree runs

- in a **PID namespace** of its own (``--unshare-pid``): it sees and signals only its own
  processes, never the runner, the supervisor, a sibling trial or another run; when the trial ends
  (the outer ``bwrap`` dies: the runner's SIGTERM/SIGKILL to the agent's group, or the supervisor
  dying, ``--die-with-parent``) the namespace's init dies and the kernel kills every process left
  in it, a ``setsid`` daemon included;
- on a **read-only view** of the host file system (``--ro-bind / /``), with a fresh ``/dev`` and
  ``/proc`` and a private IPC namespace;
- with **none of**: the run folder (``--out``, where the trials' files and the leftover ledger
  are), the folder of every world hub on the machine (their sockets, tokens and configs), the
  spec and the Python effect modules it names: each is hidden under an empty ``tmpfs`` or
  ``/dev/null``;
- with **what it legitimately needs** bound back in: the trial's own MCP config (read-only), the
  hub's socket (its bridge connects there; it cannot be deleted, a mount point), the usage channel,
  and a **private writable scratch** folder: ``HOME``, ``TMPDIR`` and ``HARN_TRIAL_DIR`` are in it,
  as is ``HARN_SPEC``, the *agent's view* of the spec (its tasks, tools and reference solutions,
  every fault profile's schedule emptied: an agent cannot read when its faults will come).

The network stays shared (agents call model APIs); the world is reachable only through the
trial's own bridge or its own URL and token. ``auto`` falls back to ``none`` where bubblewrap
cannot run (not Linux, not installed, or namespaces refused) and says why in one line; ``bwrap``
refuses then (exit 2). Each trial records the isolation in force (``trial.json``'s
``isolation``). With ``none`` the scratch folder, ``HARN_TRIAL_DIR`` and the agent's view of the
spec are the same, but nothing is hidden.

After the trial (its processes gone) the agent's files in ``HARN_TRIAL_DIR`` are copied into the
trial folder's ``agent/`` (regular files only, never through a link, capped), for a person to
read; nothing there is read back by the runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError

__all__ = [
    "SANDBOX_MODES",
    "Isolation",
    "TrialSandbox",
    "agent_spec_view",
    "hubs_root",
    "resolve_isolation",
]

SANDBOX_MODES = ("auto", "bwrap", "none")
COPY_CAP = 64 << 20
"""Bytes of the agent's own files copied back into ``agent/`` (the rest is left out, and said)."""
COPY_MAX_FILES = 1000
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Isolation:
    """The isolation a run's trials get: ``mode`` ``bwrap`` or ``none``, and why ``none`` when
    ``auto`` fell back (one line), with the ``bwrap`` program found."""

    mode: str
    reason: str | None = None
    bwrap: str | None = None

    @property
    def sandboxed(self) -> bool:
        return self.mode == "bwrap"

    def note(self) -> str | None:
        """The one line ``run`` prints at its start when ``auto`` found no sandbox."""
        if self.reason is None:
            return None
        return f"sandbox: none ({self.reason}); each agent can see the run folder and its siblings"


def _base_args() -> list[str]:
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--tmpfs", "/dev/shm",
        "--proc", "/proc",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
    ]  # fmt: skip


_PROBED: dict[str, Isolation] = {}
_PROBE_LOCK = threading.Lock()


def _probe() -> Isolation:
    """Whether bubblewrap runs here (once per process): ``Isolation('bwrap')`` or why not."""
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"bubblewrap needs Linux, this is {sys.platform}")
    found = shutil.which("bwrap")
    if found is None:
        return Isolation("none", "bubblewrap is not installed (Debian: apt-get install bubblewrap)")
    try:
        done = subprocess.run(
            [found, *_base_args(), "--", "/bin/sh", "-c", "exit 0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation("none", f"bubblewrap could not run: {exc}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit {done.returncode}"
        return Isolation("none", f"bubblewrap cannot make namespaces here: {why}")
    return Isolation("bwrap", None, found)


def resolve_isolation(mode: str) -> Isolation:
    """The isolation ``--sandbox MODE`` gives on this machine (probed once per process).
    A UsageError (exit 2) for an unknown mode, or for ``bwrap`` where bubblewrap cannot run."""
    if mode not in SANDBOX_MODES:
        raise UsageError(f"expected one of {', '.join(SANDBOX_MODES)}, got {mode!r}", where="--sandbox")
    if mode == "none":
        return Isolation("none")
    with _PROBE_LOCK:
        probed = _PROBED.get("probe")
        if probed is None:
            probed = _PROBED["probe"] = _probe()
    if mode == "bwrap" and not probed.sandboxed:
        raise UsageError(f"cannot sandbox the agents: {probed.reason}", where="--sandbox")
    return probed


_HUBS_ROOT: list[str] = []


def hubs_root() -> str:
    """The folder every world hub of this user makes its private folder in (``0700``): one place
    a sandbox hides whole, so no agent sees another trial's or another run's socket or config.
    ``$TMPDIR/harn-hubs-UID``; where that name is taken by something that is not this user's own
    folder (another user's, a symlink), a fresh private folder for this process instead."""
    with _PROBE_LOCK:
        if _HUBS_ROOT:
            return _HUBS_ROOT[0]
        root = os.path.join(tempfile.gettempdir(), f"harn-hubs-{os.getuid()}")
        with contextlib.suppress(FileExistsError):
            os.mkdir(root, 0o700)
        info = os.lstat(root)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            if stat.S_IMODE(info.st_mode) != 0o700:
                os.chmod(root, 0o700)
        else:
            root = tempfile.mkdtemp(prefix=f"harn-hubs-{os.getuid()}-")
        _HUBS_ROOT.append(root)
        return root


_SPEC_VIEWS: dict[tuple[str, int, int], bytes] = {}
_SPEC_VIEWS_LOCK = threading.Lock()


def agent_spec_view(path: Path) -> bytes:
    """The spec as an agent may read it (``HARN_SPEC``): every fault profile kept by name with its
    rules emptied, so no agent reads its fault schedule. Cached by path, size and mtime."""
    info = os.stat(path)
    key = (str(path), info.st_size, info.st_mtime_ns)
    with _SPEC_VIEWS_LOCK:
        view = _SPEC_VIEWS.get(key)
    if view is not None:
        return view
    doc: Any = json.loads(path.read_bytes())
    if isinstance(doc, dict) and isinstance(doc.get("fault_profiles"), dict):
        doc["fault_profiles"] = {name: [] for name in doc["fault_profiles"]}
    view = json.dumps(doc, indent=2).encode() + b"\n"
    with _SPEC_VIEWS_LOCK:
        _SPEC_VIEWS[key] = view
    return view


def effect_modules(spec_path: Path, spec_doc: Any) -> list[Path]:
    """The files and packages of the Python effect modules a spec names anywhere (``"python":
    "module:function"`` on a tool or on a ``tools_changed`` replacement, imported from the
    spec's folder) that exist there."""
    names: list[str] = []
    todo = [spec_doc]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            python = node.get("python")
            if isinstance(python, str) and ":" in python:
                names.append(python.partition(":")[0].split(".")[0])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    found: list[Path] = []
    for top in names:
        if not top or "/" in top or top in (".", ".."):
            continue
        for candidate in (spec_path.parent / f"{top}.py", spec_path.parent / top):
            if os.path.lexists(candidate) and candidate not in found:
                found.append(candidate)
    return found


_MODULES: dict[tuple[str, int, int], list[Path]] = {}


def _effect_modules_of(spec: Path) -> list[Path]:
    """:func:`effect_modules` of the spec file, cached by path, size and mtime."""
    try:
        info = os.stat(spec)
    except OSError:
        return []
    key = (str(spec), info.st_size, info.st_mtime_ns)
    found = _MODULES.get(key)
    if found is None:
        try:
            found = effect_modules(spec, json.loads(spec.read_bytes()))
        except (OSError, ValueError):
            found = []
        _MODULES[key] = found
    return found


@dataclass(slots=True)
class TrialSandbox:
    """One trial's scratch folder and, under ``bwrap``, the command line that hides the rest.

    ``scratch`` (private, ``0700``) is the agent's ``HOME`` under a sandbox, and holds ``tmp/``
    (``TMPDIR``), ``files/`` (``HARN_TRIAL_DIR``) and ``.harn-<spec file>`` (the agent's view of
    the spec, ``HARN_SPEC``)."""

    isolation: Isolation
    scratch: Path
    spec_view: Path
    empty: str = "/dev/null"
    """An empty regular file bound over the files it hides (a device node would not open: the
    sandbox's binds are ``nodev``)."""
    hidden: list[str] = field(default_factory=list)
    """Folders under an empty tmpfs inside the sandbox (the run folder, the hubs' root)."""
    masked: list[str] = field(default_factory=list)
    """Files (and folders) hidden under ``/dev/null`` or an empty tmpfs (the spec, its modules)."""
    binds: list[tuple[str, bool]] = field(default_factory=list)
    """Paths bound back in at the same place, and whether writable."""

    @classmethod
    def create(
        cls,
        isolation: Isolation,
        *,
        parent: str,
        spec: Path,
        hide: Iterable[str | Path] = (),
        binds: Iterable[tuple[str | Path, bool]] = (),
    ) -> TrialSandbox:
        """A fresh scratch folder in ``parent`` (the hub's private folder) with the agent's view
        of ``spec``; ``hide``: folders the agent must not see (``parent``'s root is always one);
        ``binds``: paths it needs (the config, the socket, the usage channel) and whether writable."""
        scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=parent))
        for sub in ("tmp", "files"):  # the scratch folder itself is HOME (a mkdir costs ~0.2 ms here)
            (scratch / sub).mkdir()
        view = scratch / f".harn-{spec.name}"
        view.write_bytes(agent_spec_view(spec))
        box = cls(isolation, scratch, view)
        if isolation.sandboxed:
            box.hidden = [str(Path(p)) for p in (*hide, hubs_root()) if os.path.isdir(p)]
            masked = [spec, *(Path(p) for p in hide if os.path.isfile(p))]
            masked += _effect_modules_of(spec)
            box.masked = [str(p) for p in masked]
            box.binds = [(str(p), writable) for p, writable in binds] + [(str(scratch), True)]
            box.empty = os.path.join(parent, "empty")
            if not os.path.exists(box.empty):
                fd = os.open(box.empty, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o444)
                os.close(fd)
        return box

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The variables that point the agent into its scratch folder."""
        env = {
            "HARN_TRIAL_DIR": str(self.scratch / "files"),
            "HARN_SPEC": str(self.spec_view),
        }
        if self.isolation.sandboxed:
            env["HOME"] = str(self.scratch)
            env["TMPDIR"] = str(self.scratch / "tmp")
            if "XDG_RUNTIME_DIR" in base:
                env["XDG_RUNTIME_DIR"] = str(self.scratch / "tmp")
        return env

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` as the sandbox runs it (unchanged under ``none``)."""
        if not self.isolation.sandboxed or self.isolation.bwrap is None:
            return list(argv)
        args = [self.isolation.bwrap, *_base_args()]
        for folder in self.hidden:
            args += ["--tmpfs", folder]
        for path in self.masked:
            if os.path.isdir(path):
                args += ["--tmpfs", path]
            else:
                args += ["--ro-bind", self.empty, path]
        for path, writable in self.binds:
            args += ["--bind" if writable else "--ro-bind", path, path]
        return [*args, "--", *argv]

    def collect(self) -> tuple[dict[str, bytes], str | None]:
        """The agent's own files (``HARN_TRIAL_DIR``) by relative path, for the trial folder's
        ``agent/``: regular files only, never through a link, at most :data:`COPY_MAX_FILES`
        files and :data:`COPY_CAP` bytes; and what was left out, in words (None: nothing)."""
        source = self.scratch / "files"
        found: dict[str, bytes] = {}
        left = total = 0
        for rel, size in _regular_files(source):
            if len(found) >= COPY_MAX_FILES or total + size > COPY_CAP:
                left += 1
                continue
            data = _read_no_follow(source, rel, size)
            if data is not None:
                found[rel] = data
                total += len(data)
        if left:
            return (
                found,
                f"{left} of the agent's files were not kept (past {COPY_MAX_FILES} files or {COPY_CAP} bytes)",
            )
        return found, None

    def remove(self) -> None:
        """Delete the scratch folder (after the trial's processes are gone)."""
        shutil.rmtree(self.scratch, ignore_errors=True)


def _regular_files(root: Path, limit: int = 10 * COPY_MAX_FILES) -> list[tuple[str, int]]:
    """Regular files under ``root`` (relative paths, sizes), walked without following links."""
    found: list[tuple[str, int]] = []
    todo = [""]
    while todo and len(found) < limit:
        rel = todo.pop()
        try:
            with os.scandir(root / rel if rel else root) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            name = f"{rel}/{entry.name}" if rel else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                todo.append(name)
            elif stat.S_ISREG(info.st_mode):
                found.append((name, info.st_size))
    return found


def _read_no_follow(root: Path, rel: str, size: int) -> bytes | None:
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(size)
    finally:
        os.close(fd)
