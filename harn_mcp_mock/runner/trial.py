"""One trial: the runner opens the trial's world (:mod:`harn_mcp_mock.runner.hub`), runs the agent
command against it under a timeout, then holds the trial's record (:class:`~harn_mcp_mock.runner.folder.TrialRecord`)
with the world's state and report as the runner saw them, and writes its files from it.

The agent contract (docs/runner.md): the agent is started with ``HARN_MCP_CONFIG`` (an
``{"mcpServers": {...}}`` file whose one server is a stdio bridge to this trial's world; a world of
several servers names each, its own bridge to the one world), ``HARN_WORLD_COMMAND`` (the bridge
as a JSON array), ``HARN_WORLD_URL``, ``HARN_WORLD_SERVERS`` (a world of several servers only), ``HARN_TASK_ID``, ``HARN_TASK_PROMPT``, ``HARN_RUN_ID``, ``HARN_SEED``,
``HARN_TRIAL_DIR`` and ``HARN_SPEC``. Every session it opens reaches the one world of the trial.

Exit 75 (EX_TEMPFAIL) while the world is untouched (no call changed its state), an agent that
cannot start, or one that fails with no session, no tool call and no change in its world is an
infrastructure error: retried, then kept out of n (``infra_error``); an agent that exits 75 after
changing the world is scored as it stands (a ``message`` says so), never retried. Past the
timeout the agent's processes are ended and the trial is scored ``timeout`` (never a pass, never
retried). A stop of the run (Ctrl-C) ends the agent and records nothing: the trial runs again on
resume. The agent's usage comes through a channel the runner reads (``HARN_USAGE_FILE``,
:class:`~harn_mcp_mock.runner.budget.UsageChannel`), into the record. The agent runs in the
trial's sandbox (:mod:`harn_mcp_mock.runner.sandbox`, ``--sandbox``).

Nothing the agent writes is read back: the world's documents are made from the world the runner
held, the tape is written to a private file of the runner's, and the trial's folder is opened
again from the run's root, without following a link, when the agent's processes are gone.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.errors import HarnError
from harn_mcp_mock.runner._files import Folder, open_folder
from harn_mcp_mock.runner.budget import (
    USAGE_FILE,
    Budget,
    Usage,
    UsageChannel,
    channel_path,
    endpoint_base,
    llm_usage,
    read_usage,
    route_of,
)
from harn_mcp_mock.runner.folder import TrialRecord, WorldReport, write_trial
from harn_mcp_mock.runner.leftovers import record_processes
from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial
from harn_mcp_mock.runner.process import DEFAULT_OUTPUT_CAP, AgentProcess, Control
from harn_mcp_mock.runner.sandbox import Isolation, TrialSandbox, hubs_root, resolve_isolation

if TYPE_CHECKING:
    from harn_mcp_mock.runner.hub import TrialWorld, WorldHub
    from harn_mcp_mock.world.run import SharedWorld
    from harn_mcp_mock.world.spec import WorldSpec

__all__ = [
    "DEFAULT_GRACE_S",
    "DEFAULT_TIMEOUT_S",
    "EX_TEMPFAIL",
    "TrialSettings",
    "agent_env",
    "infra_state",
    "mcp_config",
    "private_path",
    "record_trial",
    "run_trial",
    "take",
    "trial_record",
    "trial_usage",
    "world_report",
]

EX_TEMPFAIL = 75
DEFAULT_TIMEOUT_S = 600.0
"""A trial's time limit unless ``--timeout`` says otherwise (``--timeout none``: no limit)."""
DEFAULT_GRACE_S = 5.0
"""Between SIGTERM and SIGKILL when a trial's processes are ended."""


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """How each trial runs (the same for every trial of a run)."""

    timeout: float | None = DEFAULT_TIMEOUT_S
    grace: float = DEFAULT_GRACE_S
    max_retries: int = 1
    output_cap: int = DEFAULT_OUTPUT_CAP
    """Bytes of the agent's stdout and of its stderr kept (the last ones)."""
    preload: tuple[str, ...] = ()
    """Modules a Python agent's fork server imports once (``--preload``; docs/runner.md)."""
    budget: Budget | None = None
    """``--max-tokens``/``--max-cost``: a trial's ``over_budget`` is judged when it ends."""
    strict_exit: bool = False
    """``--strict-exit``: a trial whose agent exited non-zero is never a pass (``exit_failed``)."""
    hide: tuple[str, ...] = ()
    """Folders and files no sandboxed agent sees besides its own run folder, spec and effect
    modules (on Ray: the driver's ``--out``, specs and effect modules)."""
    llm: str | None = None
    """``--llm URL``: a ``harn mcp mock llm`` serving every trial, each on a route of its own
    (``HARN_LLM_URL``), whose usage the runner takes into the trial's when its agent has ended."""
    sandbox: str = "auto"
    """``--sandbox``: ``auto`` (bubblewrap where it runs, else none), ``bwrap`` or ``none``
    (:mod:`harn_mcp_mock.runner.sandbox`). A ``--preload`` agent is forked, never sandboxed."""

    def isolation(self) -> Isolation:
        """The isolation this process gives the trials (probed once per process)."""
        if self.preload:
            return Isolation("none", "--preload forks each agent from a shared server")
        return resolve_isolation(self.sandbox)


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=2).encode() + b"\n"


def mcp_config(trial: Trial, world: TrialWorld) -> bytes:
    """The ``HARN_MCP_CONFIG`` file: the plain form every host reads (the URL: the env). The
    trial's record keeps it as ``mcp.json``. A world of several servers names each (its own
    bridge), all reaching the trial's one world."""
    endpoints = world.endpoints() or {trial.world: (world.command, world.url)}
    servers = {name: {"command": command[0], "args": command[1:]} for name, (command, _) in endpoints.items()}
    return _dump({"mcpServers": servers})


def world_servers(world: TrialWorld) -> str | None:
    """``HARN_WORLD_SERVERS`` for a world of several servers: each server's name, bridge command
    and URL as JSON (None for a world of one server)."""
    endpoints = world.endpoints()
    if not endpoints:
        return None
    return json.dumps(
        {
            name: {"command": command, **({"url": url} if url is not None else {})}
            for name, (command, url) in endpoints.items()
        }
    )


def agent_env(trial: Trial, world: TrialWorld, base: Mapping[str, str], box: TrialSandbox) -> dict[str, str]:
    """The agent's environment, and its ``HARN_MCP_CONFIG`` file (at the trial's
    :attr:`~harn_mcp_mock.runner.hub.TrialWorld.config_path`; the trial's record keeps a copy,
    ``mcp.json``, written when the trial has ended: while it runs its token is in no other file).
    ``box``: the trial's scratch folder (``HARN_TRIAL_DIR``, ``HARN_SPEC``, and under a sandbox
    ``HOME`` and ``TMPDIR``)."""
    command = world.command
    config = mcp_config(trial, world)
    fd = os.open(world.config_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(config)
    env = {
        **base,
        "HARN_MCP_CONFIG": world.config_path,
        "HARN_WORLD_COMMAND": json.dumps(command),
        "HARN_TASK_ID": trial.task,
        "HARN_TASK_PROMPT": trial.prompt,
        "HARN_RUN_ID": trial.run_id,
        "HARN_SEED": str(trial.seed),
        "HARN_USAGE_FILE": channel_path(world.config_dir, world.token),  # read as it arrives
        **box.env(base),  # HARN_TRIAL_DIR, HARN_SPEC (the agent's view), HOME, TMPDIR
    }
    if world.url is not None:
        env["HARN_WORLD_URL"] = world.url
    servers = world_servers(world)
    if servers is not None:
        env["HARN_WORLD_SERVERS"] = servers
    return env


def world_report(shared: SharedWorld, *, timed_out: bool = False) -> WorldReport:
    """The world's final state and report as the runner holds them (with its session and tool
    call counts); a timed-out trial's are marked ``timed_out`` (never a pass)."""
    from harn_mcp_mock.scoring.world_report import world_report as engine_report

    engine = shared.world
    state = engine.state_document()
    report = engine_report(engine)
    report["sessions"] = shared.sessions
    report["tool_calls"] = shared.tool_calls
    if timed_out:
        state["timed_out"] = report["timed_out"] = True
        report["passed"] = False
    return WorldReport(state, report)


def trial_usage(where: Folder) -> Usage | None:
    """What an in-process trial's agent reported spending (its usage file: trusted code in the
    runner's process, read with the channel's strict rules), read once, when the trial has ended."""
    return read_usage(where.path / USAGE_FILE)


_PRIVATE: list[str] = []
_PRIVATE_LOCK = threading.Lock()


def private_path(name: str) -> Path:
    """A fresh path in this process's private folder (made once, mode 0700, removed at exit):
    where a trial's tape is written while it runs, away from the agent's folder."""
    with _PRIVATE_LOCK:
        if not _PRIVATE:
            import atexit
            import shutil

            folder = tempfile.mkdtemp(prefix="runner-", dir=hubs_root())  # hidden from every sandbox
            atexit.register(shutil.rmtree, folder, True)
            _PRIVATE.append(folder)
    return Path(_PRIVATE[0], f"{secrets.token_hex(8)}-{name}")


def take(path: Path) -> bytes | None:
    """A private file's bytes, the file removed (None when it was never written)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    path.unlink(missing_ok=True)
    return data


def _attempt(
    trial: Trial,
    agent: Sequence[str],
    settings: TrialSettings,
    base: Mapping[str, str],
    cwd: str | None,
    hub: WorldHub,
    spec: WorldSpec | None,
    control: Control | None,
    run_root: Path | None,
    tape: Path,
) -> dict[str, Any]:
    started = time.monotonic()  # (the runner writes the trial's folder once, at the end: write_trial)
    isolation = settings.isolation()
    world = hub.open(trial, spec, tape=tape)  # a private file of the runner's, not the agent's folder
    box: TrialSandbox | None = None
    found: dict[str, bytes] = {}
    left_out: str | None = None
    channel = UsageChannel(channel_path(world.config_dir, world.token))  # HARN_USAGE_FILE, read as it arrives
    llm_secret = secrets.token_urlsafe(24) if settings.llm else None  # its route: HARN_LLM_URL
    try:
        channel.open()  # before the sandbox: the FIFO must exist to be bound into it
        box = TrialSandbox.create(
            isolation,
            parent=world.config_dir,
            spec=trial.spec,
            hide=[*([] if run_root is None else [run_root]), *settings.hide],
            binds=[(world.socket_path, False), (world.config_path, False), (channel.path, False)],
        )
        env = agent_env(trial, world, base, box)
        if settings.llm and llm_secret is not None:
            env["HARN_LLM_URL"] = f"{endpoint_base(settings.llm)}/t/{route_of(llm_secret)}/v1"
        try:
            process = AgentProcess(
                box.wrap(agent),
                env=env,
                cwd=cwd,
                marker=world.token,
                cap=settings.output_cap,
                preload=settings.preload,
            )
        except OSError as exc:
            return {
                "status": "infra_error",
                "infra_error": f"the agent command could not start: {exc.strerror or exc}",
                "exit_code": None,
                "isolation": isolation.mode,
            }
        if run_root is not None:
            record_processes(run_root, [process.supervisor_pid, process.pid], world.token)
        try:
            ended = process.wait(settings.timeout, control)
        except BaseException:  # cancelled (a Ray task, an interrupt): the agent ends with it
            process.end(0.0, None)
            raise
        code = process.end(settings.grace, control)
    finally:
        usage = channel.close()  # the agent's processes are gone: what it reported, summed
        if settings.llm and llm_secret is not None:  # and what its model calls spent there
            usage = usage.plus(llm_usage(settings.llm, llm_secret))
        hub.close(world)
        if box is not None:
            found, left_out = box.collect()  # the agent's own files, for a person: never read back
            box.remove()
    outputs = {
        "agent.stdout": process.stdout.value(),
        "agent.stderr": process.stderr.value(),
        "mcp.json": mcp_config(trial, world),  # its token is dead now
    }
    record: dict[str, Any] = {
        "exit_code": code,
        "duration_ms": round((time.monotonic() - started) * 1000),
        "sessions": world.shared.sessions,
        "tool_calls": world.shared.tool_calls,
        "outputs": outputs,
        "agent_outputs": found,
        "isolation": isolation.mode,
        "usage": usage,
    }
    if left_out is not None:
        record["agent_files"] = left_out
    if ended.how == "stopped":
        return {**record, "status": "stopped"}
    if ended.how == "timeout":
        record["world_report"] = world_report(world.shared, timed_out=True)
        return {**record, "status": "timeout", "message": f"timed out after {settings.timeout:g} s"}
    changes = world.shared.state_changes  # retried only if untouched: any change is scored
    if code == EX_TEMPFAIL and not changes:
        return {**record, "status": "infra_error", "infra_error": "the agent exited 75 (EX_TEMPFAIL)"}
    if code and not (world.shared.sessions or world.shared.tool_calls or changes):
        why = f"the agent exited {code} before opening a session with the world"
        return {**record, "status": "infra_error", "infra_error": why + _last_line(process.stderr.value())}
    if code == EX_TEMPFAIL:
        record["message"] = (
            f"the agent exited 75 (EX_TEMPFAIL) after {changes} call(s) changed the world's state: "
            "scored as it stands, not retried"
        )
    return {
        **record,
        "status": "scored",
        "world_report": world_report(world.shared),
    }


def _last_line(data: bytes) -> str:
    """``; its stderr ended: <last line>`` (its last line with words in it, not a border such as
    an exception group's ``+------``; cut to 200 characters), or ''."""
    lines = [line.strip(" |+-=─│┌└") for line in data[-4096:].decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if any(ch.isalnum() for ch in line)]
    if not lines:
        return ""
    last = lines[-1]
    return f"; its stderr ended: {last[:200]}{'...' if len(last) > 200 else ''}"


def infra_state(trial: Trial, why: str) -> dict[str, Any]:
    """The state document of a trial that could not run: eval keeps it out of n."""
    return {
        "format": "harn-mcp-mock/world-state",
        "version": 1,
        "world": trial.world,
        "task": trial.task,
        "seed": trial.seed,
        "run_id": trial.run_id,
        "faults": None if trial.profile == NO_FAULTS else trial.profile,
        "infra_error": why,
    }


def trial_record(
    trial: Trial,
    *,
    status: str,
    exit_code: int | None,
    infra_error: str | None,
    attempts: int,
    duration_ms: int | None,
) -> TrialRecord:
    """The record of ``trial``: where it sits in the matrix and how it ended (an infrastructure
    error's with :func:`infra_state` as its world)."""
    record = TrialRecord(
        trial.world, trial.task, trial.profile, trial.index, trial.run_id, trial.seed, status,
        exit_code=exit_code, infra_error=infra_error, attempts=attempts, duration_ms=duration_ms,
    )  # fmt: skip
    if status == "infra_error":  # kept out of n by eval
        record.world_report = WorldReport(infra_state(trial, infra_error or "an infrastructure error"))
    return record


def record_trial(out: Path, trial: Trial, record: TrialRecord) -> TrialRecord:
    """Write ``record``'s files under ``out`` (:func:`~harn_mcp_mock.runner.folder.write_trial`).
    Files that cannot be written make the trial an infrastructure error (its files written if
    they can be), never the run's failure."""
    try:
        return write_trial(out, record)
    except (OSError, HarnError) as exc:
        why = f"the runner could not write the trial's files: {exc}"
        failed = trial_record(
            trial, status="infra_error", exit_code=record.exit_code, infra_error=why,
            attempts=record.attempts, duration_ms=record.duration_ms,
        )  # fmt: skip
        failed.usage = record.usage
        try:
            return write_trial(out, failed)
        except (OSError, HarnError):
            return failed


def run_trial(
    trial: Trial,
    agent: Sequence[str],
    out: Path,
    *,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    max_retries: int = 1,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    settings: TrialSettings | None = None,
    hub: WorldHub | None = None,
    spec: WorldSpec | None = None,
    control: Control | None = None,
    write: bool = True,
) -> TrialRecord:
    """Run ``trial`` (retrying infrastructure errors); returns its record, with its world's
    state and report as the runner held them, its usage and budget verdict, and (``write``) its
    files written under ``out``, ``trial.json`` last (``status`` ``stopped`` when the run
    stopped it: nothing is written then). Without ``write`` the record carries the files' bytes
    (:attr:`~harn_mcp_mock.runner.folder.TrialRecord.outputs`) for the caller to write.

    ``settings`` (default: from ``timeout`` and ``max_retries``); ``hub``: where its world is
    served (default: this process's, :func:`~harn_mcp_mock.runner.hub.process_hub`); ``spec``:
    the compiled spec (default: loaded from the trial's path); ``control``: the run's stop state.
    The agent runs in ``cwd`` (default: this process's folder) with ``env`` (default: ours)."""
    if settings is None:
        settings = TrialSettings(timeout=timeout, max_retries=max_retries)
    if hub is None:
        from harn_mcp_mock.runner.hub import process_hub

        hub = process_hub()
    base = dict(os.environ if env is None else env)
    root = out.resolve()
    with open_folder(root, trial.parts):  # the trial's folder exists while its agent runs
        attempts: list[dict[str, Any]] = []
        tapes: list[Path] = []
        for _ in range(settings.max_retries + 1):
            tapes.append(private_path("tape.ndjson"))
            result = _attempt(trial, agent, settings, base, cwd, hub, spec, control, root, tapes[-1])
            attempts.append(result)
            if result["status"] != "infra_error" or (control is not None and control.stopping):
                break
        tape_bytes = [take(tape) for tape in tapes][-1]  # every attempt's removed, the last one's kept
        final = attempts[-1]
        record = trial_record(
            trial,
            status=final["status"],
            exit_code=final.get("exit_code"),
            infra_error=final.get("infra_error"),
            attempts=len(attempts),
            duration_ms=final.get("duration_ms"),
        )
        if final["status"] == "stopped":
            return record  # nothing is recorded: the trial runs again on resume
        record.sessions = final.get("sessions", 0)
        record.tool_calls = final.get("tool_calls", 0)
        record.message = final.get("message")
        record.isolation = final.get("isolation")
        record.agent_files = final.get("agent_files")
        if "world_report" in final:
            record.world_report = final["world_report"]
        record.outputs = dict(final.get("outputs", {}))
        record.agent_outputs = dict(final.get("agent_outputs", {}))
        if tape_bytes is not None:
            record.outputs["tape.ndjson"] = tape_bytes
        usage = final.get("usage")  # read from the channel as it arrived, summed when the agent ended
        record.usage = usage if usage is not None and usage.reported else None
        record.usage_invalid = usage.problem if usage is not None else None
    record.judge(settings.budget, settings.strict_exit)
    return record_trial(root, trial, record) if write else record
