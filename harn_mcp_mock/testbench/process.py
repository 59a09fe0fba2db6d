"""The subprocess axis: record or replay ``(program, args, cwd) -> (stdout, stderr, exit, duration)``.

Tape (JSON)::

    {"version": 1, "entries": [
      {"program": "echo", "args": ["hi"], "cwd": null,
       "stdout": "hi\\n", "stderr": "", "exit_code": 0, "duration_ms": 3}
    ]}

``cwd`` is the ``cwd=`` the caller passed (``null`` when none); on replay a ``null`` cwd matches
any. Output that is not UTF-8 is stored as ``stdout_b64``/``stderr_b64``. Replay hands entries out
in order and raises :class:`ProcessTapeDivergenceError` on the first call that differs; each replayed
``duration_ms`` advances the virtual clock (record mode advances it by the measured duration, so
both runs observe the same virtual time).

Patched: ``subprocess.Popen`` (so ``run``, ``call``, ``check_output`` too) and
``asyncio.create_subprocess_exec``/``create_subprocess_shell``. Not: ``os.system``, ``os.spawn*``,
``os.posix_spawn``, ``pty``.
"""

from __future__ import annotations

import asyncio
import asyncio.subprocess
import base64
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harn_mcp_mock.errors import CassetteFormatError, ProcessTapeDivergenceError
from harn_mcp_mock.testbench import _guard

Emit = Callable[..., None]
Mode = Literal["record", "replay"]
TAPE_VERSION = 1

_REAL_POPEN = subprocess.Popen
_REAL_EXEC = asyncio.create_subprocess_exec
_REAL_SHELL = asyncio.create_subprocess_shell


@dataclass(frozen=True, slots=True)
class ProcessEntry:
    program: str
    args: tuple[str, ...]
    cwd: str | None
    stdout: bytes
    stderr: bytes
    exit_code: int
    duration_ms: int

    def key(self) -> str:
        return json.dumps({"program": self.program, "args": list(self.args), "cwd": self.cwd})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"program": self.program, "args": list(self.args), "cwd": self.cwd}
        for name, data in (("stdout", self.stdout), ("stderr", self.stderr)):
            try:
                out[name] = data.decode("utf-8")
            except UnicodeDecodeError:
                out[name + "_b64"] = base64.b64encode(data).decode("ascii")
        out["exit_code"] = self.exit_code
        out["duration_ms"] = self.duration_ms
        return out

    @classmethod
    def from_json(cls, obj: Any, where: str) -> ProcessEntry:
        if not isinstance(obj, dict) or not isinstance(obj.get("program"), str):
            raise CassetteFormatError('each entry needs a "program" string', where=where)

        def _bytes(name: str) -> bytes:
            if name + "_b64" in obj:
                return base64.b64decode(obj[name + "_b64"])
            return str(obj.get(name, "")).encode("utf-8")

        return cls(
            program=obj["program"],
            args=tuple(str(a) for a in obj.get("args", [])),
            cwd=obj.get("cwd"),
            stdout=_bytes("stdout"),
            stderr=_bytes("stderr"),
            exit_code=int(obj.get("exit_code", 0)),
            duration_ms=int(obj.get("duration_ms", 0)),
        )


def load_tape(path: str | Path) -> list[ProcessEntry]:
    with _guard.quiet(), _guard.REAL_OPEN(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise CassetteFormatError(f"not JSON: {exc.msg}", path=path) from None
    if (
        not isinstance(data, dict)
        or data.get("version") != TAPE_VERSION
        or not isinstance(data.get("entries"), list)
    ):
        raise CassetteFormatError(f'expected {{"version": {TAPE_VERSION}, "entries": [...]}}', path=path)
    return [ProcessEntry.from_json(e, f"{path}:entries[{i}]") for i, e in enumerate(data["entries"])]


def dump_tape(entries: Sequence[ProcessEntry]) -> str:
    body = {"version": TAPE_VERSION, "entries": [e.to_json() for e in entries]}
    return json.dumps(body, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def _command(args: Any, shell: bool, executable: Any = None) -> tuple[str, tuple[str, ...]]:
    if shell:
        cmd = args if isinstance(args, (str, bytes)) else " ".join(os.fsdecode(a) for a in args)
        return os.fsdecode(executable) if executable else "/bin/sh", ("-c", os.fsdecode(cmd))
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args), ()
    parts = [os.fsdecode(a) for a in args]
    return parts[0], tuple(parts[1:])


class ProcessAxis:
    def __init__(self, mode: Mode, tape: str | Path, *, emit: Emit, advance: Callable[[float], None]) -> None:
        self.mode = mode
        self.tape = Path(tape)
        self._emit = emit
        self._advance = advance
        self.entries: list[ProcessEntry] = load_tape(tape) if mode == "replay" else []
        self.recorded: list[ProcessEntry] = []
        self._cursor = 0
        self._patcher = _guard.Patcher()

    # -- the core: one call in, one entry out ------------------------------------------------
    def run(
        self,
        program: str,
        args: tuple[str, ...],
        cwd: str | None,
        spawn: Callable[[], tuple[bytes, bytes, int]],
        measured_ms: int | None = None,
    ) -> ProcessEntry:
        if self.mode == "replay":
            if self._cursor >= len(self.entries):
                raise ProcessTapeDivergenceError(
                    f"no process entry left for {program} {list(args)} (tape holds {len(self.entries)})",
                    path=self.tape,
                )
            entry = self.entries[self._cursor]
            if entry.program != program or entry.args != args or (entry.cwd is not None and entry.cwd != cwd):
                raise ProcessTapeDivergenceError(
                    f"process call #{self._cursor + 1} diverged: tape has "
                    f"({entry.program!r}, {list(entry.args)!r}, cwd={entry.cwd!r}), script ran "
                    f"({program!r}, {list(args)!r}, cwd={cwd!r})",
                    path=self.tape,
                )
            self._cursor += 1
        else:
            start = _guard.REAL_MONOTONIC_NS()
            with _guard.quiet():
                out, err, code = spawn()
            duration_ms = (_guard.REAL_MONOTONIC_NS() - start) // 1_000_000
            if measured_ms is not None:
                duration_ms = measured_ms
            entry = ProcessEntry(program, args, cwd, out, err, code, duration_ms)
            self.recorded.append(entry)
        self._advance(entry.duration_ms / 1000)
        self._emit(
            "process_spawn",
            program=entry.program,
            args=list(entry.args),
            cwd=entry.cwd,
            exit_code=entry.exit_code,
            duration_ms=entry.duration_ms,
            payloads={"stdout_payload": entry.stdout, "stderr_payload": entry.stderr},
        )
        return entry

    def unused(self) -> list[ProcessEntry]:
        return self.entries[self._cursor :] if self.mode == "replay" else []

    def save(self) -> Path | None:
        if self.mode != "record":
            return None
        with _guard.quiet(), _guard.REAL_OPEN(self.tape, "w", encoding="utf-8") as fh:
            fh.write(dump_tape(self.recorded))
        return self.tape

    # -- patches ------------------------------------------------------------------------------
    def install(self) -> None:
        axis = self

        class TapedPopen(_FakePopen):
            _axis = axis

        async def create_subprocess_exec(program: Any, *args: Any, **kwargs: Any) -> _FakeAsyncProcess:
            return await _async_spawn(axis, [program, *args], False, kwargs)

        async def create_subprocess_shell(cmd: Any, **kwargs: Any) -> _FakeAsyncProcess:
            return await _async_spawn(axis, cmd, True, kwargs)

        self._patcher.set(subprocess, "Popen", TapedPopen)
        for mod in (asyncio, asyncio.subprocess):
            self._patcher.set(mod, "create_subprocess_exec", create_subprocess_exec)
            self._patcher.set(mod, "create_subprocess_shell", create_subprocess_shell)

    def restore(self) -> None:
        self._patcher.restore()


def _cwd(kwargs: dict[str, Any]) -> str | None:
    cwd = kwargs.get("cwd")
    return None if cwd is None else os.fsdecode(os.fspath(cwd))


class _FakePopen:
    """Stands in for ``subprocess.Popen``: the whole process runs (or replays) in ``__init__``."""

    _axis: ProcessAxis
    _next_pid = 40_000

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _guard.is_quiet():  # the testbench's own spawns (record mode, asyncio's transport)
            return _REAL_POPEN(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self, args: Any, bufsize: int = -1, executable: Any = None, stdin: Any = None,
                 stdout: Any = None, stderr: Any = None, *posargs: Any, **kwargs: Any) -> None:  # fmt: skip
        shell = bool(kwargs.get("shell", False))
        program, argv = _command(args, shell, executable)
        self.args = args
        text = bool(
            kwargs.get("text")
            or kwargs.get("universal_newlines")
            or kwargs.get("encoding")
            or kwargs.get("errors")
        )
        self._encoding = kwargs.get("encoding") or "utf-8"
        self._errors = kwargs.get("errors") or "strict"
        self._text = text
        self._stdin_data: bytes | None = None
        merge = stderr == subprocess.STDOUT

        def spawn() -> tuple[bytes, bytes, int]:
            real_kwargs = dict(kwargs)
            for name in ("text", "universal_newlines", "encoding", "errors"):
                real_kwargs.pop(name, None)
            proc = _REAL_POPEN(
                args, bufsize, executable, subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                subprocess.PIPE, subprocess.STDOUT if merge else subprocess.PIPE, *posargs, **real_kwargs,
            )  # fmt: skip
            out, err = proc.communicate(self._stdin_data)
            return out or b"", err or b"", proc.returncode

        self._spawn = spawn
        self._want_out = stdout == subprocess.PIPE
        self._want_err = stderr == subprocess.PIPE
        self._entry: ProcessEntry | None = None
        self.returncode: int | None = None
        self.pid = _FakePopen._next_pid
        _FakePopen._next_pid += 1
        self._program, self._argv, self._cwdv = program, argv, _cwd(kwargs)
        self.stdin: Any = io.BytesIO() if stdin == subprocess.PIPE else None
        self.stdout: Any = None
        self.stderr: Any = None
        if stdin != subprocess.PIPE:
            self._finish()

    def _wrap(self, data: bytes) -> Any:
        return (
            io.TextIOWrapper(io.BytesIO(data), encoding=self._encoding, errors=self._errors)
            if self._text
            else io.BytesIO(data)
        )

    def _finish(self, input_data: Any = None) -> None:
        if self._entry is not None:
            return
        if isinstance(input_data, str):
            input_data = input_data.encode(self._encoding, self._errors)
        self._stdin_data = input_data
        entry = self._axis.run(self._program, self._argv, self._cwdv, self._spawn)
        self._entry = entry
        self.returncode = entry.exit_code
        if self._want_out:
            self.stdout = self._wrap(entry.stdout)
        elif entry.stdout:
            sys.stdout.write(entry.stdout.decode("utf-8", "replace"))
        if self._want_err:
            self.stderr = self._wrap(entry.stderr)
        elif entry.stderr:
            sys.stderr.write(entry.stderr.decode("utf-8", "replace"))

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        self._finish(input)
        out = self.stdout.read() if self.stdout is not None else None
        err = self.stderr.read() if self.stderr is not None else None
        return out, err

    def wait(self, timeout: float | None = None) -> int:
        self._finish()
        assert self.returncode is not None
        return self.returncode

    def poll(self) -> int | None:
        self._finish()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        pass

    def terminate(self) -> None:
        pass

    def kill(self) -> None:
        pass

    def __enter__(self) -> _FakePopen:
        return self

    def __exit__(self, *exc: object) -> None:
        self._finish()

    def __class_getitem__(cls, item: Any) -> Any:
        return cls


class _FakeAsyncProcess:
    def __init__(self, entry: ProcessEntry, want_out: bool, want_err: bool, pid: int) -> None:
        self.returncode = entry.exit_code
        self.pid = pid
        self.stdin = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        if want_out:
            self.stdout = asyncio.StreamReader()
            self.stdout.feed_data(entry.stdout)
            self.stdout.feed_eof()
        elif entry.stdout:
            sys.stdout.write(entry.stdout.decode("utf-8", "replace"))
        if want_err:
            self.stderr = asyncio.StreamReader()
            self.stderr.feed_data(entry.stderr)
            self.stderr.feed_eof()
        elif entry.stderr:
            sys.stderr.write(entry.stderr.decode("utf-8", "replace"))

    async def communicate(self, input: bytes | None = None) -> tuple[bytes | None, bytes | None]:
        out = await self.stdout.read() if self.stdout is not None else None
        err = await self.stderr.read() if self.stderr is not None else None
        return out, err

    async def wait(self) -> int:
        return self.returncode

    def send_signal(self, sig: int) -> None:
        pass

    def terminate(self) -> None:
        pass

    def kill(self) -> None:
        pass


async def _async_spawn(axis: ProcessAxis, cmd: Any, shell: bool, kwargs: dict[str, Any]) -> _FakeAsyncProcess:
    program, argv = _command(cmd, shell, kwargs.get("executable"))
    merge = kwargs.get("stderr") == subprocess.STDOUT
    result: list[tuple[bytes, bytes, int]] = []
    if axis.mode == "record":
        real_kwargs: dict[str, Any] = {
            k: v for k, v in kwargs.items() if k not in ("stdin", "stdout", "stderr")
        }
        real_kwargs.update(
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        )
        spawn_fn = _REAL_SHELL if shell else _REAL_EXEC
        spawn_args = [cmd] if shell else [cmd[0], *cmd[1:]]
        start = _guard.REAL_MONOTONIC_NS()
        with _guard.quiet():
            proc = await spawn_fn(*spawn_args, **real_kwargs)
            out, err = await proc.communicate()
        elapsed = _guard.REAL_MONOTONIC_NS() - start
        result.append((out or b"", err or b"", proc.returncode or 0))

        def spawn() -> tuple[bytes, bytes, int]:
            return result[0]

        # the duration is the awaited wall time, not the instant spawn() replaying the result
        entry = axis.run(program, argv, _cwd(kwargs), spawn, measured_ms=elapsed // 1_000_000)
    else:
        entry = axis.run(program, argv, _cwd(kwargs), lambda: (b"", b"", 0))
    pid = _FakePopen._next_pid
    _FakePopen._next_pid += 1
    return _FakeAsyncProcess(
        entry, kwargs.get("stdout") == subprocess.PIPE, kwargs.get("stderr") == subprocess.PIPE, pid
    )
