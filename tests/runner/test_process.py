"""Every trial's processes end with it: a ``setsid`` grandchild included; a stopped run ends its
running agents (SIGTERM, then SIGKILL after the grace; at once on a second stop) and records
nothing for them; agents' output is capped; a fork server that died is replaced. Real processes
throughout."""

from __future__ import annotations

import os
import select
import sys
import threading
from pathlib import Path

import pytest

from harn_mcp_mock.runner import run_episodes
from harn_mcp_mock.runner.process import AgentProcess, Control, Tail

WAIT = 60.0

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc and the subreaper are Linux's"
)


def agent_script(folder: Path, name: str, body: str) -> list[str]:
    path = folder / f"{name}.py"
    path.write_text("import json, os, signal, subprocess, sys\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


class Fifo:
    """A channel an agent writes a line to (opened read-write here, so reads wait for data)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "ready.fifo"
        os.mkfifo(self.path)
        self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)

    def lines(self, n: int) -> list[str]:
        got = ""
        while got.count("\n") < n:
            readable, _, _ = select.select([self.fd], [], [], WAIT)
            assert readable, "the agent never said it was ready"
            got += os.read(self.fd, 4096).decode()
        return got.splitlines()


def test_a_setsid_grandchild_does_not_outlive_its_trial(tmp_path: Path) -> None:
    fifo = Fifo(tmp_path)
    body = (
        "child = subprocess.Popen([sys.executable, '-c', 'import signal; signal.signal(signal.SIGTERM, "
        "signal.SIG_IGN); signal.pause()'], start_new_session=True)\n"
        f"open({str(fifo.path)!r}, 'w').write(str(child.pid) + '\\n')\n"
        "sys.exit(0)\n"  # leaves it behind, in a session of its own, deaf to SIGTERM
    )
    outcome = run_episodes(
        ["bank"], agent_script(tmp_path, "daemon", body), out=tmp_path / "out", tasks=["pay-rent"]
    )
    (pid,) = map(int, fifo.lines(1))
    assert outcome.trials[0]["status"] == "scored"
    assert not _alive(pid)


def test_output_is_capped_to_its_last_bytes_and_marked(tmp_path: Path) -> None:
    body = (
        "sys.stdout.write('x' * 3_000_000 + 'END'); sys.stderr.write('e' * 10 + 'last words'); sys.exit(0)\n"
    )
    run_episodes(
        ["bank"],
        agent_script(tmp_path, "loud", body),
        out=tmp_path / "out",
        tasks=["pay-rent"],
        output_cap=1000,
    )
    folder = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / "1"
    stdout = (folder / "agent.stdout").read_bytes()
    assert stdout.startswith(b"[harn: the first 2999003 bytes were cut; the last 1000 are kept]\n")
    assert stdout.endswith(b"xEND") and len(stdout.split(b"\n", 1)[1]) == 1000
    assert (folder / "agent.stderr").read_bytes() == b"eeeeeeeeeelast words"


def test_the_tail_keeps_the_last_bytes() -> None:
    tail = Tail(5)
    for chunk in (b"abc", b"defgh", b"ij"):
        tail.add(chunk)
    assert tail.value() == b"[harn: the first 5 bytes were cut; the last 5 are kept]\nfghij"
    assert Tail(5).value() == b""


@pytest.mark.parametrize("second", [False, True])
def test_a_stop_ends_running_agents_records_nothing_for_them_and_never_retries(
    tmp_path: Path, second: bool
) -> None:
    fifo = Fifo(tmp_path)
    body = (
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"  # a hung agent that ignores SIGTERM
        f"fifo = open({str(fifo.path)!r}, 'w'); fifo.write(str(os.getpid()) + '\\n'); fifo.close()\n"
        "signal.pause()\n"
    )
    control = Control()
    outcomes = []
    grace = 600.0 if second else 0.5  # with a second stop, the grace is never waited out
    run = threading.Thread(
        target=lambda: outcomes.append(
            run_episodes(
                ["bank"], agent_script(tmp_path, "hung", body), out=tmp_path / "out", tasks=["pay-rent"], k=3,
                workers=2, timeout=None, grace=grace, max_retries=3, stop=control,
            )
        )
    )  # fmt: skip
    run.start()
    pids = [int(line) for line in fifo.lines(2)]
    control.stop()
    if second:
        control.kill_now()
    run.join(WAIT)
    assert not run.is_alive()
    (outcome,) = outcomes
    assert outcome.stopped and outcome.trials == [] and outcome.pending == 3
    assert not any(_alive(pid) for pid in pids)
    folders = list((tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none").iterdir())
    assert not any((folder / "trial.json").exists() for folder in folders)
    assert len(folders) == 2  # the third trial never started


def test_an_infra_cause_is_one_clean_line_without_exception_group_borders(tmp_path: Path) -> None:
    body = (
        "sys.stderr.write('  + Exception Group Traceback (most recent call last):\\n"
        "  |   ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\\n"
        "  +-+---------------- 1 ----------------\\n"
        "    | ConnectionError: the model endpoint refused us\\n"
        "    +------------------------------------\\n')\n"
        "sys.exit(1)\n"
    )
    outcome = run_episodes(
        ["bank"],
        agent_script(tmp_path, "group", body),
        out=tmp_path / "out",
        tasks=["pay-rent"],
        max_retries=0,
    )
    (record,) = outcome.trials
    assert record["infra_error"] == (
        "the agent exited 1 before opening a session with the world; "
        "its stderr ended: ConnectionError: the model endpoint refused us"
    )


def test_a_fork_server_that_died_is_replaced_at_the_next_trial(tmp_path: Path) -> None:
    from harn_mcp_mock.runner import process

    def one_trial(marker: str) -> tuple[int, int | None, bytes]:
        """A trial's agent; its supervisor's pid, exit code and stdout."""
        agent = AgentProcess(
            [
                sys.executable,
                "-c",
                "import os; print(os.getcwd(), os.environ['HARN_TRIAL_MARKER']); raise SystemExit(3)",
            ],
            env=dict(os.environ),
            cwd=str(tmp_path),
            marker=marker,
        )
        ended = agent.wait(WAIT, None)
        assert ended.how == "exited"
        return agent.supervisor_pid, agent.end(0.0, None), agent.stdout.value()

    _, code, out = one_trial("first")
    assert code == 3 and out == f"{tmp_path} first\n".encode()
    server = process._SERVER._proc
    assert server is not None
    server.kill()
    server.wait(WAIT)
    _, code, out = one_trial("second")
    assert code == 3 and out == f"{tmp_path} second\n".encode()
    assert process._SERVER._proc is not None and process._SERVER._proc.pid != server.pid
