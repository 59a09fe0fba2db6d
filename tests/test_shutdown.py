"""The one stop shape (:func:`harn_mcp_mock.shutdown.terminate`) and the one stop-signal
mechanism (:class:`~harn_mcp_mock.shutdown.StopSignals`), and that every stopper uses them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harn_mcp_mock.jsonrpc.stdio as stdio
import harn_mcp_mock.runner.process as process
from harn_mcp_mock.record.proxy import StdioProxy
from harn_mcp_mock.record.recorder import Recorder
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.shutdown import StopSignals, terminate

FAKE = str(Path(__file__).parent / "servers" / "fake_server.py")
WAIT = 30.0  # seconds: the bound of every wait on a child process


class Fake:
    """A process that exits after ``exits_after`` signals (None: never), for :func:`terminate`."""

    def __init__(self, exits_after: int | None) -> None:
        self.exits_after = exits_after
        self.sent: list[int] = []
        self.waits: list[float] = []

    def send(self, sig: int) -> None:
        self.sent.append(sig)

    def exited(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return self.exits_after is not None and len(self.sent) >= self.exits_after


@pytest.mark.parametrize(
    ("exits_after", "sent", "waits", "ended"),
    [
        (0, [], [5.0], True),
        (1, [signal.SIGTERM], [5.0, 2.0], True),
        (None, [signal.SIGTERM, signal.SIGKILL], [5.0, 2.0], False),
    ],
)
def test_terminate_waits_then_sends_sigterm_waits_then_sends_sigkill(
    exits_after: int | None, sent: list[int], waits: list[float], ended: bool
) -> None:
    fake = Fake(exits_after)
    assert terminate(fake.send, fake.exited, grace=5.0, term_grace=2.0) is ended
    assert fake.sent == sent
    assert fake.waits == waits


def test_stdio_servers_and_runner_agents_are_ended_by_terminate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[dict[str, float]] = []

    def spy(send: Any, exited: Any, *, grace: float, term_grace: float) -> bool:
        calls.append({"grace": grace, "term_grace": term_grace})
        return terminate(send, exited, grace=grace, term_grace=term_grace)

    monkeypatch.setattr(stdio, "terminate", spy)
    monkeypatch.setattr(process, "terminate", spy)
    ignores_term = (
        "import signal, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
        "sys.stdin.read()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", ignores_term],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    assert stdio.stop_process(proc, grace=0, term_grace=0) == -signal.SIGKILL
    for pipe in (proc.stdin, proc.stdout):
        assert pipe is not None
        pipe.close()
    assert calls == [{"grace": 0, "term_grace": 0}]
    agent = process.AgentProcess(
        [sys.executable, "-c", "import threading; threading.Event().wait()"],
        env=dict(os.environ),
        cwd=str(tmp_path),
        marker="test-shutdown-terminate",
    )
    agent.end(WAIT, None)  # SIGTERM ends it: the grace is not waited out
    assert calls[1:] == [{"grace": 0, "term_grace": WAIT}]


def test_the_recording_proxy_stops_on_the_one_signal_mechanism(tmp_path: Path) -> None:
    seen: list[Any] = []

    def on_started(_proc: subprocess.Popen[bytes]) -> None:
        seen.append(signal.getsignal(signal.SIGTERM))
        signal.raise_signal(signal.SIGTERM)

    client_r, client_w = os.pipe()
    out_r, out_w = os.pipe()
    cassette = tmp_path / "a.cassette.json"
    recorder = Recorder(
        cassette,
        RedactionPolicy.default().redactor(),
        command=[FAKE, "graceful"],
        policy_name="default",
        policy_digest="x",
    )
    before = signal.getsignal(signal.SIGTERM)
    proxy = StdioProxy(
        [sys.executable, FAKE, "graceful"],
        recorder,
        stdin_fd=client_r,
        stdout_fd=out_w,
        grace=WAIT,
        on_started=on_started,
        on_event=lambda _text: None,
        allow_empty=True,
    )
    try:
        result = proxy.run()
    finally:
        for fd in (client_r, client_w, out_r, out_w):
            os.close(fd)
    assert isinstance(getattr(seen[0], "__self__", None), StopSignals)
    assert result.reason == "signal:SIGTERM" and result.exit_code == 0
    assert signal.getsignal(signal.SIGTERM) == before


def test_no_module_but_shutdown_installs_a_signal_handler() -> None:
    package = Path(__file__).parents[1] / "harn_mcp_mock"
    allowed = {"shutdown.py", "runner/_supervisor.py"}  # the supervisor: a process of its own
    found = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if str(path.relative_to(package)) not in allowed
        and ("signal.signal(" in (text := path.read_text(encoding="utf-8")) or "add_signal_handler(" in text)
    )
    assert found == []
