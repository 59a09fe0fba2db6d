"""No process of a trial outlives a runner killed with SIGKILL, and none touches a resumed run's
files: real runner processes, an agent deaf to SIGTERM with a ``setsid`` grandchild, both writing
into the trial folder until they are killed.

- the runner alone is SIGKILLed: the trial's supervisor sees its life pipe reach EOF and kills
  the whole tree at once (waited on through pidfds, never by polling);
- the runner and the supervisor are both SIGKILLed: the resumed run ends the leftovers (pid and
  start time recorded; the grandchild by its marker) before any trial, and says so;
- the record is a file any process of the user can append to: a line naming an unrelated
  process (with its right start time) kills nothing, since a process is ended only when it shows
  it is a trial's (the trial's marker in its environment, or a recorded supervisor's command line).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.runner.leftovers import LEDGER, end_leftovers, record_processes, start_time
from harn_mcp_mock.runner.process import MARKER_ENV, SUPERVISOR

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 120.0

pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")),
    reason="pidfds and /proc are Linux's",
)

WRITER = (
    "import os, select, signal, sys\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "name, fifo = sys.argv[1], sys.argv[2]\n"
    "folder = os.environ['HARN_TRIAL_DIR']\n"
    "said = False\n"
    "while True:\n"  # writes into its trial folder, by path, until killed
    "    with open(os.path.join(folder, 'junk-' + name), 'a') as f:\n"
    "        f.write('x')\n"
    "    with open(os.environ['HARN_USAGE_FILE'], 'a') as f:\n"
    "        f.write('{\"cost_usd\": 1000}\\n')\n"
    "    if not said:\n"
    "        with open(fifo, 'w') as f:\n"
    "            f.write(name + ' ' + str(os.getpid()) + '\\n')\n"
    "        said = True\n"
    "    select.select([], [], [], 0.05)\n"
)


def _agent(tmp_path: Path, fifo: Path) -> list[str]:
    """While ``tmp_path/evil`` exists: an agent deaf to SIGTERM that starts a ``setsid``
    grandchild and both write into the trial folder forever; else the scripted SDK agent."""
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER, encoding="utf-8")
    path = tmp_path / "agent.py"
    path.write_text(
        "import os, subprocess, sys\n"
        f"if os.path.exists({str(tmp_path / 'evil')!r}):\n"
        f"    subprocess.Popen([sys.executable, {str(writer)!r}, 'grandchild', {str(fifo)!r}],"
        " start_new_session=True)\n"
        f"    os.execv(sys.executable, [sys.executable, {str(writer)!r}, 'agent', {str(fifo)!r}])\n"
        f"os.execv(sys.executable, [sys.executable, {str(SCRIPTED)!r}, '--harn-trial', 'good'])\n",
        encoding="utf-8",
    )
    return [sys.executable, str(path)]


def _said(fd: int, n: int) -> dict[str, int]:
    got = ""
    while got.count("\n") < n:
        readable, _, _ = select.select([fd], [], [], WAIT)
        assert readable, "the agent never said it was writing"
        got += os.read(fd, 4096).decode()
    return {line.split()[0]: int(line.split()[1]) for line in got.splitlines()}


def _ended(pidfds: list[int], timeout: float) -> bool:
    """Whether every process ended within ``timeout`` (a pidfd turns readable when it ends)."""
    for fd in pidfds:
        readable, _, _ = select.select([fd], [], [], timeout)
        if not readable:
            return False
    return True


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


def _start(
    tmp_path: Path, preload: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], list[str], dict[str, int], list[int]]:
    fifo = tmp_path / "said.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    (tmp_path / "evil").touch()
    warm = [arg for name in preload for arg in ("--preload", name)]
    # --sandbox none: these are the nets of a run without isolation (the agents say their host pids;
    # under bubblewrap a PID namespace ends the tree as well: tests/runner/test_sandbox.py)
    args = ["--spec", "bank", "--task", "pay-rent", "--out", "out", "--timeout", "none", "--sandbox", "none",
            *warm, "--", *_agent(tmp_path, fifo)]  # fmt: skip
    runner = subprocess.Popen([*HARN, "run", *args], cwd=tmp_path, stdout=subprocess.DEVNULL, text=True)
    pids = _said(fd, 2)
    os.close(fd)
    pidfds = [os.pidfd_open(pid) for pid in pids.values()]
    return runner, args, pids, pidfds


def _kill(pidfds: list[int]) -> None:
    """Whatever happened, leave nothing running."""
    for fd in pidfds:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        os.close(fd)


def _resume(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "evil").unlink()
    return subprocess.run([*HARN, "run", *args], cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)


def _check_resumed(tmp_path: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    trial = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"
    assert not any(p.name.startswith("junk-") for p in trial.iterdir())  # a fresh folder, untouched
    assert not (trial / "usage.ndjson").exists()
    results: dict[str, Any] = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["summary"]["runs"] == 1 and results["summary"]["passed"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("preload", [(), ("json",)])  # a fresh agent; a warm one (--preload)
def test_a_sigkilled_runners_agent_and_its_setsid_grandchild_end_with_it(
    tmp_path: Path, preload: tuple[str, ...]
) -> None:
    runner, args, pids, pidfds = _start(tmp_path, preload)
    try:
        supervisor = _parent(pids["agent"])
        assert _parent(pids["grandchild"]) == pids["agent"]  # then it becomes the supervisor's
        pidfds.append(os.pidfd_open(supervisor))
        runner.kill()
        runner.wait(timeout=WAIT)
        assert _ended(pidfds, WAIT), "a trial's process outlived its runner"
    finally:
        _kill(pidfds)
    done = _resume(tmp_path, args)
    assert "resume: ended" not in done.stderr  # nothing was left to end
    _check_resumed(tmp_path, done)


@pytest.mark.slow
@pytest.mark.parametrize("preload", [(), ("json",)])
def test_a_resume_ends_what_a_runner_killed_with_its_supervisor_left(
    tmp_path: Path, preload: tuple[str, ...]
) -> None:
    runner, args, pids, pidfds = _start(tmp_path, preload)
    try:
        runner.send_signal(signal.SIGSTOP)  # frozen, it cannot end the trial once its supervisor is gone
        os.waitpid(runner.pid, os.WUNTRACED)  # returns once it is stopped
        supervisor = os.pidfd_open(_parent(pids["agent"]))
        signal.pidfd_send_signal(supervisor, signal.SIGKILL)
        assert _ended([supervisor], WAIT)
        os.close(supervisor)
        runner.kill()  # the agent, the runner's orphan for a moment, goes out of anyone's reach
        runner.wait(timeout=WAIT)
        assert not _ended(pidfds, 0.0)  # still running, still writing: only a resume can end them
        done = _resume(tmp_path, args)
        assert "resume: ended 2 process(es) left by the previous runner" in done.stderr, done.stderr
        assert _ended(pidfds, 0.0)  # ended before any trial of the resume ran
    finally:
        _kill(pidfds)
    _check_resumed(tmp_path, done)


PAUSE = [sys.executable, "-c", "import signal; signal.pause()"]


@contextlib.contextmanager
def _fork_server() -> Iterator[subprocess.Popen[bytes]]:
    """A real fork server of the runner, idle: the command line every supervisor (and warm agent)
    it forks shows. It exits when its socket closes."""
    mine, theirs = socket.socketpair()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", SUPERVISOR, "--serve", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        stdin=subprocess.DEVNULL,
    )
    theirs.close()
    try:
        yield proc
    finally:
        mine.close()
        proc.kill()
        proc.wait()


def _forge(out: Path, marker_digest: str, procs: list[list[int]]) -> None:
    """Append a line to the run folder's record, as anything that can write there could."""
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    with open(out / LEDGER, "a") as f:
        f.write(json.dumps({"boot": boot, "marker": marker_digest, "procs": procs}) + "\n")


def _started(pid: int) -> int:
    started = start_time(pid)
    assert started is not None
    return started


def test_only_what_proves_it_is_a_trials_is_killed(tmp_path: Path) -> None:
    """Recorded with their start time: a supervisor (its command line) is ended, the same with
    another start time (a reused pid) and a plain process (no proof) are left alone. Not recorded:
    a process carrying a recorded trial's marker (an agent's ``setsid`` grandchild) is ended."""
    marker = f"marker-{secrets.token_hex(8)}"  # its own: tests running beside it carry none of it
    marked_env = {**os.environ, MARKER_ENV: marker}
    with _fork_server() as supervisor, _fork_server() as reused:
        plain = subprocess.Popen(PAUSE)
        marked = subprocess.Popen(PAUSE, env=marked_env)
        try:
            record_processes(tmp_path, [supervisor.pid, plain.pid], marker)
            recorded = json.loads((tmp_path / LEDGER).read_text())
            assert sorted(recorded["procs"]) == sorted([[supervisor.pid, _started(supervisor.pid)],
                                                        [plain.pid, _started(plain.pid)]])  # fmt: skip
            _forge(tmp_path, "other", [[reused.pid, _started(reused.pid) + 1]])
            assert end_leftovers(tmp_path) == 2
            assert supervisor.wait(timeout=WAIT) == -signal.SIGKILL
            assert marked.wait(timeout=WAIT) == -signal.SIGKILL
            assert plain.poll() is None and reused.poll() is None
            assert not (tmp_path / LEDGER).exists() and end_leftovers(tmp_path) == 0
        finally:
            for proc in (plain, marked):
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_a_forged_record_line_kills_no_process_outside_the_run(tmp_path: Path) -> None:
    """After a run, a line naming a live process of the test (its right start time, the digest of
    a marker it does not carry) is appended to the record; the ``--force`` rerun leaves it running."""
    bystander = subprocess.Popen(PAUSE)
    pidfd = os.pidfd_open(bystander.pid)
    try:
        args = ["--spec", "bank", "--task", "pay-rent", "--out", "out", "--", sys.executable, str(SCRIPTED),
                "--harn-trial", "good"]  # fmt: skip
        first = subprocess.run(
            [*HARN, "run", *args], cwd=tmp_path, capture_output=True, text=True, timeout=WAIT
        )
        assert first.returncode == 0, first.stderr
        assert (tmp_path / "out" / LEDGER).exists()  # this run's supervisor and agent, ended since
        _forge(tmp_path / "out", "0" * 32, [[bystander.pid, _started(bystander.pid)]])
        again = subprocess.run(
            [*HARN, "run", "--force", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert again.returncode == 0, again.stderr
        assert "resume: ended" not in again.stderr
        assert not _ended([pidfd], 0.0) and bystander.poll() is None
    finally:
        os.close(pidfd)
        bystander.kill()
        bystander.wait()


def _bwrap_runs() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--", "true"],
        capture_output=True,
        timeout=WAIT,
    )
    return probe.returncode == 0


def test_an_agent_in_bubblewrap_is_found_by_its_marker(tmp_path: Path) -> None:
    """Seen from outside, a sandboxed agent is ``bwrap ...``, with the trial's environment the
    runner handed it: its marker proves it, and it is ended with what runs inside."""
    if not _bwrap_runs():
        pytest.skip("bubblewrap cannot run here")
    marker = f"marker-{secrets.token_hex(8)}"
    inner = "import os, signal; os.write(1, b'in\\n'); signal.pause()"
    sandbox = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--"]
    env = {**os.environ, MARKER_ENV: marker}  # as the runner hands it to bwrap
    with subprocess.Popen(
        [*sandbox, sys.executable, "-c", inner], env=env, stdout=subprocess.PIPE
    ) as sandboxed:
        assert sandboxed.stdout is not None
        try:
            readable, _, _ = select.select([sandboxed.stdout], [], [], WAIT)
            assert readable and sandboxed.stdout.readline() == b"in\n"  # the agent inside runs
            record_processes(tmp_path, [sandboxed.pid], marker)
            assert end_leftovers(tmp_path) >= 1  # bwrap first; what it runs inside may end with it
            assert sandboxed.wait(timeout=WAIT) == -signal.SIGKILL
            readable, _, _ = select.select([sandboxed.stdout], [], [], WAIT)
            assert readable and sandboxed.stdout.read() == b""  # every holder of the pipe is gone: EOF
        finally:
            sandboxed.kill()
