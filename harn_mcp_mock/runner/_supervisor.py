"""A trial's supervisor: the process between the runner and its agent, so that no process of the
trial outlives the runner, even one killed with SIGKILL (docs/runner.md, "Every process of a
trial ends with it").

Supervisors are forked by a **fork server**, one per runner process, started once (``python -I -S
_supervisor.py --serve SOCK_FD``, standard library only): the runner sends each trial's request
on a Unix socket (the agent's argv, environment and folder, with the fds of its stdout, stderr,
the life pipe and the status pipe) and the server answers the supervisor's pid. A fork costs about
a millisecond where starting a Python per trial cost ~10 ms of CPU. The server exits when the
runner closes the socket or dies; supervisors it forked go on alone.

Each supervisor makes itself a child subreaper (Linux), starts the agent in a new session, and
tells the runner on ``STATUS_FD`` the agent's pid (``P<pid>``) or why it could not start
(``E<errno> <message>``), then its exit code (``X<code>``, negative for a signal) when it exits.
Every orphan of the trial (a ``setsid`` or double-forked grandchild) is reparented to the
supervisor, not to init. When ``LIFE_FD`` (the read end of a pipe only the runner writes) turns
readable or reaches EOF (the runner asks for the end, or died: the kernel closed its end), the
supervisor kills every descendant with SIGKILL, reaps them all, and exits: the status pipe reaches
EOF then, which is how the runner (not its parent) knows it is gone.

**Warm starts** (``--preload``, docs/runner.md): a Python agent's own interpreter runs this file as
a *preloading* fork server (``PY _supervisor.py --serve SOCK_FD --path DIR --preload MODULE...``,
with its site-packages), which imports the modules once and says ``ok`` (or ``E<why>`` and exits)
on the socket. A request then names the script (or ``-m`` module) to run: each supervisor forks
the agent instead of spawning it, and the child runs it with :mod:`runpy` as a fresh interpreter
would (:func:`_run_python`).

:func:`descendants` is also the runner's own walk of its process tree.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum: ~10 ms more start-up
import os
import select
import socket
import sys

PR_SET_CHILD_SUBREAPER = 36


def children(pid: int) -> list[int] | None:
    """``pid``'s children from ``/proc/PID/task/*/children`` (None where the kernel has none)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.extend(int(p) for p in f.read().split())
        except FileNotFoundError:
            return None if tid == tasks[0] and not found else found
        except OSError:
            continue
    return found


def descendants(root: int) -> list[int]:
    """Live descendants of ``root``: by each process's children file where the kernel has one
    (cheap), else from the parent of every process in ``/proc``; empty where there is no /proc."""
    if children(root) is not None:
        result: list[int] = []
        todo = [root]
        while todo:
            for child in children(todo.pop()) or ():
                result.append(child)
                todo.append(child)
        return result
    parents: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            parents.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


_libc: object = None
"""libc through ctypes, loaded once by the server (~4 ms), before it forks any supervisor."""


def _load_libc() -> None:
    global _libc
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            pass


def _become_subreaper() -> None:
    """Not inherited through fork: each supervisor sets it itself."""
    try:
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # type: ignore[attr-defined]
    except AttributeError:
        pass


def _kill_tree(agent: int) -> None:
    """SIGKILL every descendant and reap until none is left: each reap is an event (no polling);
    a process forked while the tree was being killed is found on the next round."""
    try:
        os.killpg(agent, signal.SIGKILL)
    except OSError:
        pass
    me = os.getpid()
    while True:
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _reap_ended() -> None:
    """Reap every child that has ended, without waiting for the others."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _deaf_and_woken() -> tuple[int, int]:
    """Ignore the terminal's signals and wake on SIGCHLD: a pipe (read end, write end) that a
    byte reaches at each signal, for ``select``."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    return wake_r, wake_w


def supervise(life: int, status: int, argv: list[str], run: list[str] | None = None) -> int:
    """The supervisor's life (see the module docstring), in a process forked for it; ``run``
    (``["script", PATH]`` or ``["module", NAME]``): fork a Python agent (warm start), not spawn it."""
    for fd in (life, status):
        os.set_inheritable(fd, False)
    _become_subreaper()
    wake_r, wake_w = _deaf_and_woken()
    # the agent starts with every signal at its default, as subprocess's restore_signals does
    # (Python ignores SIGPIPE and SIGXFSZ; this process ignores the terminal's signals)
    defaults = {signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ}
    try:
        if run is None:
            agent = os.posix_spawnp(argv[0], argv, dict(os.environ), setsid=True, setsigdef=defaults)
        else:
            agent = os.fork()
            if agent == 0:
                code = 1
                try:
                    for fd in (life, status, wake_r, wake_w):
                        os.close(fd)
                    code = _run_python(run, argv)
                finally:
                    os._exit(code)
    except OSError as exc:
        os.write(status, f"E{exc.errno or 0} {exc.strerror or exc}\n".encode())
        return 127
    os.write(status, f"P{agent}\n".encode())
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # hold no end of the runner's output pipes: they reach EOF with the trial's
        os.dup2(null, fd)
    os.close(null)
    reported = False
    while True:
        if not reported:
            while True:
                try:
                    pid, wstatus = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid == agent:
                    reported = True
                    try:
                        os.write(status, f"X{os.waitstatus_to_exitcode(wstatus)}\n".encode())
                    except OSError:
                        pass
        else:  # orphans reparented here: reap them as they end
            _reap_ended()
        try:
            readable, _, _ = select.select([life, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
        if life in readable:
            break  # the runner asked for the end, or is gone
    _kill_tree(agent)
    return 0


_SERVER_PYTHONPATH: list[str] = []
"""The preloading server's own ``PYTHONPATH`` entries (on its ``sys.path`` from its start)."""


def _pythonpath(value: str | None) -> list[str]:
    return [os.path.abspath(p) for p in (value or "").split(os.pathsep) if p]


def _run_python(run: list[str], argv: list[str]) -> int:
    """In the agent's process, forked from a preloading server's supervisor: become what
    ``PY script.py ARGS`` / ``PY -m module ARGS`` would be (session, signals, ``sys.argv``,
    ``sys.path``), run it as ``__main__``, and end as the interpreter ends (threads joined,
    atexit, streams flushed); the exit code."""
    import runpy

    os.setsid()
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as Python sets them at its start
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)
    kind, target = run
    if kind == "script":
        target = os.path.abspath(target)
        first = os.path.dirname(os.path.realpath(target))
    else:
        first = os.getcwd()
    # sys.path: the script's folder (-m: the folder), then the trial's PYTHONPATH, then the rest
    # of the server's path less the server's own PYTHONPATH entries the trial does not have
    wanted = _pythonpath(os.environ.get("PYTHONPATH"))
    dropped = set(_SERVER_PYTHONPATH) - set(wanted)
    rest = [p for p in sys.path[1:] if p not in wanted and os.path.abspath(p) not in dropped]
    sys.path[:] = [first, *wanted, *rest]
    import importlib

    importlib.invalidate_caches()  # the server's listings of folders may predate the trial's files
    sys.argv[:] = [target if kind == "script" else "-m", *argv[3 if kind == "module" else 2 :]]
    code = 0
    interrupted = False
    try:
        if kind == "script":
            runpy.run_path(target, run_name="__main__")
        else:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:  # as the interpreter: the traceback on stderr, exit 1
        interrupted = isinstance(exc, KeyboardInterrupt)
        tb = exc.__traceback__  # from the agent's first frame: not this file's, not runpy's
        while tb is not None and tb.tb_next is not None and _ours(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code = 1
    return _finalize(code, interrupted)


def _ours(filename: str) -> bool:
    return filename in (__file__, "<frozen runpy>") or os.path.basename(filename) == "runpy.py"


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    try:
        sys.stderr.write(f"{value}\n")
    except Exception:
        pass
    return 1


def _finalize(code: int, interrupted: bool) -> int:
    """What the interpreter does at its end: join non-daemon threads, run atexit, flush."""
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            if stream is sys.stdout and code == 0:
                code = 120  # as Python: stdout could not be flushed
    if interrupted:  # an uncaught KeyboardInterrupt: die of SIGINT, as Python does
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    return code


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        threading = sys.modules.get("threading")
        return 1 if threading is None else int(threading.active_count())


def _preload(sock: socket.socket, modules: list[str], first: str | None) -> bool:
    """Import ``modules`` as the agent would find them (``first``: its ``sys.path[0]``); tell the
    runner ``ok`` or ``E<why>`` on ``sock``. False when it failed."""
    import importlib
    import runpy  # noqa: F401  (each agent runs through it)

    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]  # this file's folder: not the agent's
    sys.path.insert(0, first or os.getcwd())
    _SERVER_PYTHONPATH[:] = _pythonpath(os.environ.get("PYTHONPATH"))
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            why = f"{type(exc).__name__}: {exc}".replace("\n", " ")
            sock.sendall(f"Ecannot import {name} ({why})\n".encode())
            return False
    threads = _threads()
    if threads > 1:
        hint = "preload other modules"
        if "numpy" in sys.modules:  # OpenBLAS starts its pool of threads when numpy is imported
            hint += " (numpy's OpenBLAS threads: set OPENBLAS_NUM_THREADS=1)"
        sock.sendall(
            f"Eafter importing {', '.join(modules)} the server runs {threads} threads, and forking "
            f"a process with threads is unsafe: {hint}\n".encode()
        )
        return False
    sock.sendall(b"ok\n")
    return True


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _start(request: dict[str, object], fds: list[int]) -> int:
    """In the forked child: the trial's session, folder, stdio and environment; then supervise."""
    out, err, life, status = fds
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (null, out, err):
        os.close(fd)
    cwd = request["cwd"]
    try:
        if isinstance(cwd, str):
            os.chdir(cwd)
    except OSError as exc:
        os.write(status, f"E{exc.errno or 0} {exc.strerror or exc}: {cwd}\n".encode())
        return 127
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)  # posix_spawnp looks the agent up in this PATH
    argv = request["argv"]
    assert isinstance(argv, list)
    run = request.get("run")
    assert run is None or isinstance(run, list)
    return supervise(life, status, argv, run)


def serve(sock_fd: int, preload: list[str] | None = None, first: str | None = None) -> int:
    """The fork server (see the module docstring): one request at a time, answered with the
    forked supervisor's pid (``<pid>\\n``); its children are reaped as they end. ``preload``:
    import these first (``first``: the agent's ``sys.path[0]``), exit 2 if one fails."""
    import json

    sock = socket.socket(fileno=sock_fd)
    if preload is not None and not _preload(sock, preload, first):
        return 2
    _load_libc()
    wake_r, wake_w = _deaf_and_woken()
    while True:
        try:
            readable, _, _ = select.select([sock_fd, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
            _reap_ended()
        if sock_fd not in readable:
            continue
        try:
            head, fds, _, _ = socket.recv_fds(sock, 8, 4)
            if not head:
                return 0  # the runner closed the socket, or died
            head += _recv_exactly(sock, 8 - len(head))
            request = json.loads(_recv_exactly(sock, int.from_bytes(head, "big")))
        except (EOFError, ConnectionError):
            return 0
        pid = os.fork()
        if pid == 0:
            code = 127
            try:
                sock.close()
                signal.set_wakeup_fd(-1)
                os.close(wake_r)
                os.close(wake_w)
                code = _start(request, fds)
            except BaseException as exc:  # told to the runner, whatever it is
                try:
                    os.write(fds[3], f"E0 {exc}\n".encode())
                except (OSError, IndexError):
                    pass
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        try:
            sock.sendall(f"{pid}\n".encode())
        except OSError:
            return 0


def _main(args: list[str]) -> int:
    if args[:1] != ["--serve"] or len(args) < 2:
        sys.exit("usage: python -I -S _supervisor.py --serve SOCK_FD [--path DIR] [--preload MODULE]...")
    if len(args) == 2:
        return serve(int(args[1]))
    modules: list[str] = []
    first = None
    rest = args[2:]
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--path":
            first = value
        else:
            modules.append(value)
    return serve(int(args[1]), modules, first)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
