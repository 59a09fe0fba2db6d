"""Every trial's processes end with it: a ``setsid`` grandchild included; a stopped run ends its
running agents (SIGTERM, then SIGKILL after the grace; at once on a second stop) and records
nothing for them; agents' output is capped; a fork server that died is replaced. A Python agent
started warm (``--preload``: forked from a server that imported the modules once) sees what a
fresh interpreter sees and ends the same way; a module that does not import, one that starts a
thread, or a command that is not a Python one is refused before any trial. Real processes
throughout."""

from __future__ import annotations

import json
import os
import select
import sys
import threading
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import run_episodes
from harn_mcp_mock.runner.process import AgentProcess, Control, Tail

WAIT = 60.0
WARM = [(), ("json", "subprocess")]
"""No preload (a fresh interpreter per trial) and a warm start (forked from a preloading server)."""

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


@pytest.mark.parametrize("preload", WARM)
def test_a_setsid_grandchild_does_not_outlive_its_trial(tmp_path: Path, preload: tuple[str, ...]) -> None:
    fifo = Fifo(tmp_path)
    body = (
        "child = subprocess.Popen([sys.executable, '-c', 'import signal; signal.signal(signal.SIGTERM, "
        "signal.SIG_IGN); signal.pause()'], start_new_session=True)\n"
        f"open({str(fifo.path)!r}, 'w').write(str(child.pid) + '\\n')\n"
        "sys.exit(0)\n"  # leaves it behind, in a session of its own, deaf to SIGTERM
    )
    outcome = run_episodes(
        ["bank"],
        agent_script(tmp_path, "daemon", body),
        out=tmp_path / "out",
        tasks=["pay-rent"],
        preload=preload,
        sandbox="none",
    )
    (pid,) = map(int, fifo.lines(1))
    assert outcome.trials[0]["status"] == "scored"
    assert not _alive(pid)


@pytest.mark.parametrize("preload", WARM)
def test_output_is_capped_to_its_last_bytes_and_marked(tmp_path: Path, preload: tuple[str, ...]) -> None:
    body = (
        "sys.stdout.write('x' * 3_000_000 + 'END'); sys.stderr.write('e' * 10 + 'last words'); sys.exit(0)\n"
    )
    run_episodes(
        ["bank"],
        agent_script(tmp_path, "loud", body),
        out=tmp_path / "out",
        tasks=["pay-rent"],
        output_cap=1000,
        preload=preload,
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


@pytest.mark.parametrize(("second", "preload"), [(False, ()), (True, ()), (False, WARM[1]), (True, WARM[1])])
def test_a_stop_ends_running_agents_records_nothing_for_them_and_never_retries(
    tmp_path: Path, second: bool, preload: tuple[str, ...]
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
                workers=2, timeout=None, grace=grace, max_retries=3, stop=control, preload=preload, sandbox="none",
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


SEEN = (
    "import atexit, threading\n"
    "atexit.register(lambda: sys.stdout.write('atexit ran\\n'))\n"
    "r, w = os.pipe()\n"  # a thread that ends after the agent's last line: joined before atexit runs
    "threading.Thread(target=lambda: (os.read(r, 1), sys.stdout.write('thread joined\\n'))).start()\n"
    "import __main__\n"
    "print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), 'path0': sys.path[0], 'file': __file__,\n"
    "    'name': __name__, 'main': __main__.__dict__ is globals(), 'marker': os.environ['HARN_TRIAL_MARKER'],\n"
    "    'only': os.environ.get('ONLY_HERE'), 'stdin': sys.stdin.read(), 'pgid': os.getpgid(0) == os.getpid(),\n"
    "    'sid': os.getsid(0) == os.getpid(), 'helper': __import__('helper').WHERE,\n"
    "    'signals': [signal.getsignal(s) == d for s, d in ((signal.SIGINT, signal.default_int_handler),\n"
    "        (signal.SIGTERM, signal.SIG_DFL), (signal.SIGCHLD, signal.SIG_DFL), (signal.SIGHUP, signal.SIG_DFL),\n"
    "        (signal.SIGPIPE, signal.SIG_IGN))]}))\n"
    "sys.stderr.write('to stderr\\n')\n"
    "os.write(w, b'x')\n"
    "if sys.argv[1] == 'raise':\n"
    "    raise ValueError('bad agent')\n"
    "sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])\n"
)


def _one(
    argv: list[str], cwd: Path, preload: tuple[str, ...], env: dict[str, str]
) -> tuple[int | None, str, str]:
    """A trial's agent through :class:`AgentProcess`: its exit code, stdout and stderr."""
    agent = AgentProcess(argv, env=env, cwd=str(cwd), marker="m1", preload=preload)
    assert agent.wait(WAIT, None).how == "exited"
    code = agent.end(0.0, None)
    err = agent.stderr.value().decode().splitlines(keepends=True)
    # a traceback from its own frames (python -m shows two of runpy's first)
    return code, agent.stdout.value().decode(), "".join(line for line in err if "<frozen runpy>" not in line)


@pytest.mark.parametrize("how", ["3", "0", "a message", "raise"])
def test_a_warm_agent_sees_and_ends_as_a_fresh_one_does(tmp_path: Path, how: str) -> None:
    """argv, folder, environment, sys.path[0] and PYTHONPATH, __main__, stdin, session, signals,
    stdout/stderr, atexit and threads joined, exit code: the same with and without preload."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text("WHERE = 'lib'\n", encoding="utf-8")
    folder = tmp_path / "work"
    folder.mkdir()
    argv = agent_script(tmp_path, "seen", SEEN)
    script = [*argv, how, "two words"]
    module = [sys.executable, "-m", "seen", how, "two words"]
    env = {
        **os.environ,
        "ONLY_HERE": "yes",
        "PYTHONPATH": os.pathsep.join([str(lib), os.environ.get("PYTHONPATH", "")]),
    }
    firsts = []
    for command in (script, module):
        if command is module:
            env["PYTHONPATH"] += os.pathsep + str(tmp_path)
        cold = _one(command, folder, (), env)
        warm = _one(command, folder, WARM[1], env)
        assert warm == cold
        firsts.append(json.loads(warm[1].splitlines()[0])["path0"])
    assert firsts == [str(tmp_path), str(folder)]  # the script's folder; with -m, the agent's folder
    code, out, err = warm
    assert code == {"3": 3, "0": 0, "a message": 1, "raise": 1}[how]
    seen = json.loads(out.splitlines()[0])
    assert seen["argv"] == [how, "two words"] and seen["cwd"] == str(folder) and seen["only"] == "yes"
    assert seen["name"] == "__main__" and seen["main"] and seen["marker"] == "m1" and seen["stdin"] == ""
    assert seen["helper"] == "lib" and seen["pgid"] and seen["sid"] and all(seen["signals"])
    assert seen["file"] == str(tmp_path / "seen.py")
    assert out.splitlines()[1:] == ["thread joined", "atexit ran"]
    assert err.startswith("to stderr\n")
    if how == "raise":
        assert "Traceback" in err and err.endswith("ValueError: bad agent\n")
    if how == "a message":
        assert err.endswith("a message\n")


def test_a_warm_agent_past_its_timeout_is_ended_and_scored_timeout(tmp_path: Path) -> None:
    fifo = Fifo(tmp_path)
    body = (
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"fifo = open({str(fifo.path)!r}, 'w'); fifo.write(str(os.getpid()) + '\\n'); fifo.close()\n"
        "signal.pause()\n"
    )
    outcome = run_episodes(
        ["bank"], agent_script(tmp_path, "slow", body), out=tmp_path / "out", tasks=["pay-rent"],
        timeout=0.5, grace=0.1, preload=WARM[1], sandbox="none",
    )  # fmt: skip
    (pid,) = map(int, fifo.lines(1))
    assert outcome.trials[0]["status"] == "timeout"
    assert not _alive(pid)


def test_a_preloaded_module_is_imported_once_for_all_trials(tmp_path: Path) -> None:
    """The module sits beside the agent's script (found as the agent would find it) and appends a
    line to a file each time it is imported: once for the run, not once per trial."""
    log = tmp_path / "imports.log"
    (tmp_path / "heavy.py").write_text(
        f"with open({str(log)!r}, 'a') as f:\n    f.write('imported\\n')\n", encoding="utf-8"
    )
    agent = agent_script(tmp_path, "uses_heavy", "import heavy\nsys.exit(0)\n")
    outcome = run_episodes(
        ["bank"], agent, out=tmp_path / "out", tasks=["pay-rent"], k=3, preload=["heavy"], sandbox="none"
    )
    assert [t["exit_code"] for t in outcome.trials] == [0, 0, 0]
    assert log.read_text() == "imported\n"
    log.unlink()
    run_episodes(["bank"], agent, out=tmp_path / "cold", tasks=["pay-rent"], k=3, sandbox="none")
    assert log.read_text() == "imported\n" * 3  # the check: without preload, each trial imports it


@pytest.mark.parametrize(
    ("module", "agent", "said"),
    [
        ("no_such_module_here", None, "--preload: cannot import no_such_module_here (ModuleNotFoundError: "),
        ("threads_at_import", None, "--preload: after importing threads_at_import the server runs 2 threads"),
        ("json", ["sh", "-c", "true"], "--preload: runs a Python agent only"),
        ("json", [sys.executable, "-c", "pass"], "the interpreter option '-c' is not supported"),
    ],
)
def test_preload_refuses_before_any_trial(
    tmp_path: Path, module: str, agent: list[str] | None, said: str
) -> None:
    (tmp_path / "threads_at_import.py").write_text(
        "import threading\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n",
        encoding="utf-8",
    )
    command = agent or agent_script(tmp_path, "agent", "sys.exit(0)\n")
    with pytest.raises(UsageError) as caught:
        run_episodes(["bank"], command, out=tmp_path / "out", tasks=["pay-rent"], preload=[module])
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "out" / "trials").exists()


@pytest.mark.parametrize(
    ("argv", "kind", "target"),
    [
        ([sys.executable, "agent.py", "--flag"], "script", "agent.py"),
        ([sys.executable, "-m", "pkg.agent", "x"], "module", "pkg.agent"),
        (["python3", "sub/agent.py"], "script", "sub/agent.py"),
    ],
)
def test_a_python_agent_command_is_told_apart(argv: list[str], kind: str, target: str) -> None:
    from harn_mcp_mock.runner.process import python_agent

    found = python_agent(argv)
    assert (found.kind, found.target) == (kind, target) and os.path.isabs(found.python)


def test_preload_refuses_the_ray_backend_and_an_in_process_agent(tmp_path: Path) -> None:
    async def agent(session: object, trial: object) -> None:
        pass

    command = agent_script(tmp_path, "agent", "sys.exit(0)\n")
    for how, backend in ((command, "ray"), (agent, "local")):
        with pytest.raises(UsageError, match=r"^--preload: "):
            run_episodes(["bank"], how, out=tmp_path / "out", preload=["json"], backend=backend)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_a_module_that_does_not_import_in_one_line(tmp_path: Path) -> None:
    import subprocess

    agent = agent_script(tmp_path, "agent", "sys.exit(0)\n")
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--out", str(tmp_path / "out"),
         "--preload", "no_such_module_here", "--", *agent],
        capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "--preload: cannot import no_such_module_here" in done.stderr
