"""``--mode new_episodes`` (X07 ``record_missing``): replay hits, forward misses, append them.

Requests the cassette answers are replayed. The first request it cannot answer starts the live
server, which is given the client's own ``initialize`` (and ``notifications/initialized``)
first; then every miss is forwarded to it byte for byte, and everything the live server sends
is relayed to the client (its server-to-client request ids are mapped to ``live:<id>`` so they
never collide with the replay's own) and recorded, redacted, through the usual
:class:`~harn_mcp_mock.record.recorder.Recorder`. At the end the new messages are appended to
the cassette in one atomic write. A cassette with no handshake yet is simply recorded.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.cassette.model import Cassette, cas_dir, journal_path, load_cassette, save_cassette
from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter
from harn_mcp_mock.jsonrpc.stdio import exit_status, reap_group, spawn_server, stop_process
from harn_mcp_mock.record.recorder import Recorder
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.replay.engine import ReplayReport
from harn_mcp_mock.replay.session import open_engine

CHUNK = 1 << 16
HANDSHAKE_ID = "harn-new-episodes-initialize"
LIVE_PREFIX = "live:"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Live:
    """The live server, started on the first miss."""

    def __init__(
        self, command: list[str], recorder: Recorder, handshake: dict[str, Any], grace: float
    ) -> None:
        self.recorder = recorder
        self.grace = grace
        self.proc: subprocess.Popen[bytes] = spawn_server(command, display=" ".join(recorder.command))
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin.fileno()
        self.stdout = self.proc.stdout.fileno()
        self.splitter = LineSplitter()
        self._handshake(handshake)

    def _handshake(self, initialize: dict[str, Any]) -> None:
        request = {**initialize, "id": HANDSHAKE_ID}
        self.send(deepjson.dumps(request) + b"\n")
        while True:
            ready, _, _ = select.select([self.stdout], [], [], 30.0)
            chunk = os.read(self.stdout, CHUNK) if ready else b""
            if not chunk:
                raise ServerError("the live server did not answer `initialize` (new_episodes)")
            for line in self.splitter.feed(chunk):
                frame = parse_frame(line, SERVER)
                if frame.kind in ("response", "error") and frame.id == HANDSHAKE_ID:
                    if frame.kind == "error":
                        raise ServerError("the live server refused `initialize` (new_episodes)")
                    self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
                    return

    def send(self, data: bytes) -> None:
        try:
            _write_all(self.stdin, data)
        except OSError:
            raise ServerError("the live server stopped reading its stdin (new_episodes)") from None

    def stop(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        code = stop_process(self.proc, grace=self.grace)
        reap_group(self.proc)
        _, signame = exit_status(code)
        return {"code": code if code >= 0 else None, "signal": signame, "reason": "client-eof"}


def serve_new_episodes(
    cassette: str | Path,
    command: list[str],
    *,
    policy_path: str | Path | None = None,
    ignore_paths: Iterable[str] = (),
    on_event: Callable[[str], None] | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    grace: float = 5.0,
    stop_fd: int | None = None,
) -> ReplayReport:
    """Serve until the client's EOF (or ``stop_fd`` turns readable: a stop signal); append
    what the live server recorded."""
    path = Path(cassette)
    engine = open_engine(path, policy_path=policy_path, ignore_paths=ignore_paths, on_event=on_event)
    policy = RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()
    scratch = path.with_name(path.name.removesuffix(".cassette.json") + ".new-episodes.cassette.json")
    # The recording's env secrets, known by their fingerprints, are redacted from new episodes too.
    known = (engine.cassette.meta.get("redaction") or {}).get("fingerprints")
    redactor = policy.redactor(argv=list(command), env=dict(os.environ), fingerprints=known)
    recorder: Recorder | None = None
    live: _Live | None = None
    handshake: dict[str, Any] | None = None
    client_lines = LineSplitter()
    live_ids: set[bytes] = set()

    def start_live() -> _Live:
        nonlocal recorder
        recorder = Recorder(
            scratch,
            redactor,
            command=redactor.redact_argv(list(command)),
            policy_name=policy.name,
            policy_digest=policy.digest,
        )
        if handshake is None:
            raise ServerError("new_episodes needs the client's `initialize` before the first miss")
        if on_event is not None:
            on_event(f"starting the live server to record a miss: {' '.join(recorder.command)}")
        return _Live(command, recorder, handshake, grace)

    def to_client(data: bytes) -> None:
        with contextlib.suppress(OSError):
            _write_all(stdout_fd, data)

    eof = False
    try:
        while not eof or (live is not None and live_ids):
            fds = ([] if eof else [stdin_fd]) + ([live.stdout] if live is not None else [])
            fds += [] if stop_fd is None else [stop_fd]
            # After the client's EOF, wait (bounded) for the answers to forwarded requests.
            readable, _, _ = select.select(fds, [], [], grace if eof else None)
            if stop_fd is not None and stop_fd in readable:
                break  # a stop signal: finish as at the client's EOF, without waiting
            if eof and not readable:
                raise ServerError(
                    f"the live server did not answer {len(live_ids)} forwarded request(s) within {grace}s"
                )
            if live is not None and live.stdout in readable:
                chunk = os.read(live.stdout, CHUNK)
                if not chunk:
                    raise ServerError("the live server exited while recording new episodes")
                for line in live.splitter.feed(chunk):
                    frame = parse_frame(line, SERVER)
                    assert recorder is not None
                    recorder.feed_frame(frame)
                    if frame.kind in ("response", "error"):
                        live_ids.discard(deepjson.dumps(frame.id))
                    if frame.kind == "request" and isinstance(frame.obj, dict):
                        to_client(
                            deepjson.dumps(
                                {**frame.obj, "id": f"{LIVE_PREFIX}{deepjson.dumps(frame.id).decode()}"}
                            )
                            + b"\n"
                        )
                    else:
                        to_client(line + b"\n")
            if stdin_fd not in readable:
                continue
            chunk = os.read(stdin_fd, CHUNK)
            lines = (
                client_lines.feed(chunk) if chunk else [x for x in [client_lines.flush()] if x is not None]
            )
            eof = not chunk
            out: list[bytes] = []
            for line in lines:
                frame = parse_frame(line, CLIENT)
                obj = frame.obj
                if frame.kind == "request" and isinstance(obj, dict):
                    if obj.get("method") == "initialize":
                        handshake = obj
                    if engine.has_match(obj):
                        out.extend(deepjson.dumps(o.message) + b"\n" for o in engine.receive(obj))
                        continue
                    if live is None:
                        live = start_live()
                    assert recorder is not None
                    recorder.feed_frame(frame)
                    live_ids.add(deepjson.dumps(frame.id))
                    engine.report.recorded += 1
                    live.send(line + b"\n")
                elif (
                    frame.kind in ("response", "error")
                    and isinstance(frame.id, str)
                    and frame.id.startswith(LIVE_PREFIX)
                ):
                    assert live is not None and recorder is not None
                    answer = {**obj, "id": orjson.loads(frame.id.removeprefix(LIVE_PREFIX))}
                    data = deepjson.dumps(answer)
                    recorder.feed_frame(parse_frame(data, CLIENT))
                    live.send(data + b"\n")
                elif frame.is_message:
                    out.extend(deepjson.dumps(o.message) + b"\n" for o in engine.receive(obj))
            if out:
                to_client(b"".join(out))
    except BaseException:
        if live is not None:
            live.proc.kill()
            live.proc.wait()
        if recorder is not None:
            recorder.abandon()
        raise
    report = engine.finish()
    if live is not None and recorder is not None:
        new = recorder.finish(live.stop())
        _append(path, new)
        for leftover in (scratch, journal_path(scratch)):
            leftover.unlink(missing_ok=True)
        blobs = cas_dir(scratch)
        if blobs.is_dir():
            for blob in blobs.iterdir():
                blob.unlink()
            blobs.rmdir()
        if on_event is not None:
            on_event(f"appended {len(new.messages)} new messages to {path}")
    return report


def _append(path: Path, new: Cassette) -> None:
    old = load_cassette(path)
    offset = max((m.seq for m in old.messages), default=-1) + 1
    for msg in new.messages:
        msg.seq += offset
        if isinstance(msg.reply_to, int):
            msg.reply_to += offset
        elif isinstance(msg.reply_to, list):
            msg.reply_to = [None if r is None else r + offset for r in msg.reply_to]
    merged = Cassette([*old.messages, *new.messages], old.meta, path)
    save_cassette(merged, path)
