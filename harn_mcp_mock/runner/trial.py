"""One trial: a fresh world for the agent command, the agent run under a timeout, the record.

The agent contract (docs/runner.md): the agent is started with ``HARN_MCP_CONFIG`` (an
``{"mcpServers": {...}}`` file whose one server starts this trial's world over stdio),
``HARN_WORLD_COMMAND`` (the same command as a JSON array), ``HARN_TASK_ID``,
``HARN_TASK_PROMPT``, ``HARN_RUN_ID``, ``HARN_SEED``, ``HARN_TRIAL_DIR`` and ``HARN_SPEC``. It
starts the world itself, as any MCP host does; the world writes its state when the agent closes
it. Exit 75 (EX_TEMPFAIL), or no state written, is an infrastructure error: retried, then kept
out of n (``infra_error``). Over the timeout the agent's process group gets SIGTERM (the world
in it writes its state and exits), then SIGKILL; the trial is scored as it stands.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harn_mcp_mock.runner.matrix import NO_FAULTS, Trial
from harn_mcp_mock.store.cas import atomic_write

__all__ = ["EX_TEMPFAIL", "TRIAL_FILES", "run_trial", "trial_record", "write_infra_state"]

EX_TEMPFAIL = 75
TRIAL_FILES = ("state.json", "report.json", "tape.ndjson", "agent.stdout", "agent.stderr", "mcp.json")
STOP_GRACE_S = 5.0


def world_command(trial: Trial, folder: Path) -> list[str]:
    command = [sys.executable, "-m", "harn_mcp_mock", "world", "--spec", str(trial.spec), "--task", trial.task,
               "--seed", str(trial.seed), "--run-id", trial.run_id,
               "--state-out", str(folder / "state.json"), "--report", str(folder / "report.json"),
               "--emit-tape", str(folder / "tape.ndjson")]  # fmt: skip
    if trial.profile != NO_FAULTS:
        command += ["--faults", trial.profile]
    return command


def agent_env(trial: Trial, folder: Path, command: list[str], base: Mapping[str, str]) -> dict[str, str]:
    config = folder / "mcp.json"
    servers = {"mcpServers": {trial.world: {"command": command[0], "args": command[1:]}}}
    config.write_text(json.dumps(servers, indent=2) + "\n", encoding="utf-8")
    return {
        **base,
        "HARN_MCP_CONFIG": str(config),
        "HARN_WORLD_COMMAND": json.dumps(command),
        "HARN_TASK_ID": trial.task,
        "HARN_TASK_PROMPT": trial.prompt,
        "HARN_RUN_ID": trial.run_id,
        "HARN_SEED": str(trial.seed),
        "HARN_TRIAL_DIR": str(folder),
        "HARN_SPEC": str(trial.spec),
    }


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the agent's process group (the world with it), then SIGKILL after a grace."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _attempt(
    trial: Trial,
    folder: Path,
    agent: Sequence[str],
    timeout: float | None,
    base: Mapping[str, str],
    cwd: str | None,
) -> dict[str, Any]:
    for name in TRIAL_FILES:
        (folder / name).unlink(missing_ok=True)
    command = world_command(trial, folder)
    env = agent_env(trial, folder, command, base)
    started = time.monotonic()
    with open(folder / "agent.stdout", "wb") as out, open(folder / "agent.stderr", "wb") as err:
        try:
            proc = subprocess.Popen(
                list(agent),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            return {
                "status": "infra_error",
                "infra_error": f"the agent command could not start: {exc}",
                "exit_code": None,
            }
        timed_out = False
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(proc)
            code = proc.returncode
        finally:
            if proc.poll() is None:
                _stop(proc)
        try:  # a world the agent left running (it never closed it) ends with the group
            os.killpg(proc.pid, signal.SIGTERM)
            left = True
        except (ProcessLookupError, PermissionError):
            left = False
    if left:  # that world writes its state as it stops: give it a bounded moment
        deadline = time.monotonic() + STOP_GRACE_S
        while not (folder / "state.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    record: dict[str, Any] = {"exit_code": code, "duration_ms": round((time.monotonic() - started) * 1000)}
    if code == EX_TEMPFAIL:
        return {**record, "status": "infra_error", "infra_error": "the agent exited 75 (EX_TEMPFAIL)"}
    if not (folder / "state.json").exists():
        why = "the world wrote no state (did the agent start it from HARN_MCP_CONFIG and close it?)"
        if code:
            why = f"the agent exited {code} and {why}{_last_line(folder / 'agent.stderr')}"
        return {**record, "status": "infra_error", "infra_error": why}
    return {**record, "status": "timeout" if timed_out else "scored"}


def _last_line(path: Path) -> str:
    """``; its stderr ended: <last line>`` (cut to 200 characters), or ''."""
    try:
        lines = path.read_bytes()[-4096:].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    if not lines:
        return ""
    last = lines[-1].strip()
    return f"; its stderr ended: {last[:200]}{'...' if len(last) > 200 else ''}"


def write_infra_state(trial: Trial, folder: Path, why: str) -> None:
    """The state file of a trial that could not run: eval keeps it out of n."""
    state = {
        "format": "harn-mcp-mock/world-state",
        "version": 1,
        "world": trial.world,
        "task": trial.task,
        "seed": trial.seed,
        "run_id": trial.run_id,
        "faults": None if trial.profile == NO_FAULTS else trial.profile,
        "infra_error": why,
    }
    (folder / "report.json").unlink(missing_ok=True)
    atomic_write(folder / "state.json", json.dumps(state, indent=2).encode() + b"\n")


def trial_record(
    trial: Trial,
    *,
    status: str,
    exit_code: int | None,
    infra_error: str | None,
    attempts: int,
    duration_ms: int | None,
) -> dict[str, Any]:
    """``trial.json``: where the trial sits in the matrix and how it ended."""
    return {
        "world": trial.world,
        "task": trial.task,
        "profile": trial.profile,
        "trial": trial.index,
        "run_id": trial.run_id,
        "seed": trial.seed,
        "status": status,
        "exit_code": exit_code,
        "infra_error": infra_error,
        "attempts": attempts,
        "duration_ms": duration_ms,
    }


def run_trial(
    trial: Trial,
    agent: Sequence[str],
    out: Path,
    *,
    timeout: float | None = None,
    max_retries: int = 1,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """Run ``trial`` (retrying infrastructure errors) and write its ``trial.json``; returns it.
    The agent runs in ``cwd`` (default: this process's folder) with ``env`` (default: ours)."""
    folder = trial.folder(out.resolve())
    folder.mkdir(parents=True, exist_ok=True)
    base = dict(os.environ if env is None else env)
    attempts: list[dict[str, Any]] = []
    for _ in range(max_retries + 1):
        result = _attempt(trial, folder, agent, timeout, base, cwd)
        attempts.append(result)
        if result["status"] != "infra_error":
            break
    final = attempts[-1]
    if final["status"] == "infra_error":  # kept out of n by eval
        write_infra_state(trial, folder, final["infra_error"])
    record = trial_record(
        trial,
        status=final["status"],
        exit_code=final.get("exit_code"),
        infra_error=final.get("infra_error"),
        attempts=len(attempts),
        duration_ms=final.get("duration_ms"),
    )
    atomic_write(folder / "trial.json", json.dumps(record, indent=2).encode() + b"\n")
    return record
