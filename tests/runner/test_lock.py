"""One run per run folder (``DIR/.harn-run.lock``): a second run into a busy ``--out`` is refused
at once naming the holder's pid, and leaves the first run's agents alone; a run whose runner was
SIGKILLed leaves no lock behind, even while an agent it started still runs.

Agents here hang until the test releases them through a FIFO (no sleeping): the first agent of
a test says its pid on one FIFO and waits on another; every later agent plays the scripted
agent's good plan at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from harn_mcp_mock.errors import OutputError, UsageError
from harn_mcp_mock.runner import Trial, run_episodes
from harn_mcp_mock.runner.lock import HOLDER, LOCK, hold_run_folder

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 120.0

linux = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")),
    reason="pidfds and /proc are Linux's",
)

HANGING = (
    "import os, sys\n"
    "here = sys.argv[1]\n"
    "try:\n"  # the first agent of the test only: the claim is made once
    "    os.close(os.open(os.path.join(here, 'claimed'), os.O_CREAT | os.O_EXCL | os.O_WRONLY))\n"
    "except FileExistsError:\n"
    "    pass\n"
    "else:\n"
    "    with open(os.path.join(here, 'said.fifo'), 'w') as f:\n"
    "        f.write(str(os.getpid()) + '\\n')\n"
    "    with open(os.path.join(here, 'go.fifo')) as f:\n"  # blocks until the test opens it to write
    "        f.read()\n"
    f"os.execv(sys.executable, [sys.executable, {str(SCRIPTED)!r}, '--harn-trial', 'good'])\n"
)


@contextlib.contextmanager
def hanging_agent(tmp_path: Path) -> Iterator[tuple[list[str], int]]:
    """The agent command, and the read end of the FIFO its first run says its pid on."""
    script = tmp_path / "hanging.py"
    script.write_text(HANGING, encoding="utf-8")
    os.mkfifo(tmp_path / "said.fifo")
    os.mkfifo(tmp_path / "go.fifo")
    said = os.open(tmp_path / "said.fifo", os.O_RDWR | os.O_NONBLOCK)  # a reader before any writer
    try:
        yield [sys.executable, str(script), str(tmp_path)], said
    finally:
        os.close(said)


def agent_pid(said: int) -> int:
    got = b""
    while not got.endswith(b"\n"):
        readable, _, _ = select.select([said], [], [], WAIT)
        assert readable, "the agent never said it started"
        got += os.read(said, 64)
    return int(got)


def release(tmp_path: Path) -> None:
    """Let the waiting agent go on (ENXIO, at once, if it is gone: nobody reads the FIFO)."""
    fd = os.open(tmp_path / "go.fifo", os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)


def alive(pidfd: int) -> bool:
    readable, _, _ = select.select([pidfd], [], [], 0)  # a pidfd turns readable when its process ends
    return not readable


def ended(pidfd: int) -> bool:
    readable, _, _ = select.select([pidfd], [], [], WAIT)
    return bool(readable)


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


def run_args(agent: list[str]) -> list[str]:
    return [
        "run",
        "--spec",
        "bank",
        "--task",
        "pay-rent",
        "--out",
        "out",
        "--timeout",
        str(WAIT),
        "--sandbox",
        "none",  # the agent claims a file in the test's folder and says its host pid
        "--",
        *agent,
    ]


def passed(tmp_path: Path) -> int:
    results: dict[str, Any] = json.loads((tmp_path / "out" / "results.json").read_text())
    passes: int = results["summary"]["passed"]
    return passes


@linux
def test_a_second_run_into_a_busy_folder_is_refused_and_the_first_run_finishes(tmp_path: Path) -> None:
    with hanging_agent(tmp_path) as (agent, said):
        first = subprocess.Popen(
            [*HARN, *run_args(agent)], cwd=tmp_path, stdout=subprocess.DEVNULL, text=True
        )
        try:
            pidfd = os.pidfd_open(agent_pid(said))
            second = subprocess.run(
                [*HARN, *run_args(agent)], cwd=tmp_path, capture_output=True, text=True, timeout=WAIT
            )
            assert second.returncode == 2, second.stderr
            assert second.stderr == (
                f"harn mcp mock run: error: out: another run (pid {first.pid}) is using this folder; "
                "wait for it or use another --out\n"
            )
            assert alive(pidfd)  # the first run's agent was not taken for a leftover
            release(tmp_path)
            assert first.wait(timeout=WAIT) == 0
            assert ended(pidfd)
            os.close(pidfd)
        finally:
            first.kill()
            first.wait()
    trial = json.loads(
        (tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1" / "trial.json").read_text()
    )
    assert trial["status"] == "scored" and trial["exit_code"] == 0 and trial["attempts"] == 1
    assert passed(tmp_path) == 1
    assert not (tmp_path / "out" / HOLDER).exists()  # removed with the lock


@linux
def test_a_runner_killed_while_its_agent_runs_leaves_no_lock(tmp_path: Path) -> None:
    """The agent outlives its runner (its supervisor killed first, the runner frozen meanwhile):
    it holds no descriptor of the lock, so the next run takes the folder at once and ends it."""
    with hanging_agent(tmp_path) as (agent, said):
        runner = subprocess.Popen(
            [*HARN, *run_args(agent)], cwd=tmp_path, stdout=subprocess.DEVNULL, text=True
        )
        pid = agent_pid(said)
        pidfd = os.pidfd_open(pid)
        try:
            lock = os.stat(tmp_path / "out" / LOCK)
            for proc in (pid, parent(pid)):  # the agent and its supervisor
                for fd in os.listdir(f"/proc/{proc}/fd"):
                    with contextlib.suppress(OSError):
                        held = os.stat(f"/proc/{proc}/fd/{fd}")
                        assert not os.path.samestat(held, lock), f"process {proc} holds the lock's fd {fd}"
            runner.send_signal(signal.SIGSTOP)  # frozen, it cannot end the trial once the supervisor is gone
            os.waitpid(runner.pid, os.WUNTRACED)
            supervisor = os.pidfd_open(parent(pid))
            signal.pidfd_send_signal(supervisor, signal.SIGKILL)
            assert ended(supervisor)
            os.close(supervisor)
            runner.kill()
            runner.wait(timeout=WAIT)
            assert alive(pidfd)  # still running, out of anyone's reach
            again = subprocess.run(
                [*HARN, *run_args(agent)], cwd=tmp_path, capture_output=True, text=True, timeout=WAIT
            )
            assert again.returncode == 0, again.stderr
            assert "resume: ended 1 process(es) left by the previous runner" in again.stderr
            assert not alive(pidfd)
        finally:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)
            runner.kill()
            runner.wait()
    assert passed(tmp_path) == 1


def test_an_in_process_run_holds_its_folder_as_a_command_run_does(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused: list[str] = []

    async def agent(session: ClientSession, trial: Trial) -> None:
        with pytest.raises(UsageError) as busy:  # from this very process: run_episodes
            run_episodes(["bank"], ["true"], out=out, tasks=["pay-rent"])
        refused.append(str(busy.value))

    run_episodes(["bank"], agent, out=out, tasks=["pay-rent"])
    assert refused == [
        f"{out}: another run (pid {os.getpid()}) is using this folder; wait for it or use another --out"
    ]
    assert not (out / HOLDER).exists()
    run_episodes(["bank"], ["true"], out=out, tasks=["pay-rent"], force=True)  # free again


def test_the_lock_is_taken_at_once_or_refused_and_never_through_a_symlink(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "bank"
    with hold_run_folder(out) as root:  # the folder is made
        assert root == out.resolve() and (out / LOCK).is_file()
        assert json.loads((out / HOLDER).read_text())["pid"] == os.getpid()
        with pytest.raises(UsageError, match=r"another run \(pid \d+\) is using this folder"):
            with hold_run_folder(out):
                pass
        (out / HOLDER).write_text("not json")  # whoever wrote it: the refusal still holds
        with pytest.raises(UsageError, match=r"bank: another run is using this folder; wait for it"):
            with hold_run_folder(out):
                pass
    assert not (out / HOLDER).exists()
    precious = tmp_path / "precious"
    precious.write_text("keep")
    (out / LOCK).unlink()
    (out / LOCK).symlink_to(precious)  # left by an agent of an earlier run
    with hold_run_folder(out):
        assert not (out / LOCK).is_symlink() and (out / LOCK).is_file()
    assert precious.read_text() == "keep"
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="it is a file, not a folder"):  # refused as before
        with hold_run_folder(tmp_path / "file"):
            pass


def test_a_run_refused_under_the_lock_leaves_what_it_made_undone(tmp_path: Path) -> None:
    """Before: the folders and the lock file stayed behind a refusal."""
    out = tmp_path / "runs" / "bank"
    with pytest.raises(UsageError, match="refused"):
        with hold_run_folder(out):
            raise UsageError("refused")
    assert list(tmp_path.iterdir()) == []  # runs/ and runs/bank made by it, removed
    out.mkdir(parents=True)
    (out / LOCK).write_text("")  # an earlier run's
    (out / "run.json").write_text("{}")
    with pytest.raises(UsageError, match="refused"):
        with hold_run_folder(out):
            raise UsageError("refused")
    assert sorted(p.name for p in out.iterdir()) == [LOCK, "run.json"]  # nothing of this run's removed
    with pytest.raises(RuntimeError):  # not a refusal: the folder stays as any failed run leaves it
        with hold_run_folder(tmp_path / "other"):
            raise RuntimeError("a crash")
    assert (tmp_path / "other" / LOCK).exists()


def test_run_plan_writes_nothing_and_takes_no_lock(tmp_path: Path) -> None:
    with hold_run_folder(tmp_path / "out"):
        done = subprocess.run(
            [*HARN, "run", "--spec", "bank", "--out", "out", "--plan"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [LOCK]
