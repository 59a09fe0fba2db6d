"""The per-cassette recording claim, driven by a second process that holds it.

The holder is a child process synchronised over its pipes (it prints ``held`` once it holds the
claim and acts on the commands it reads), never by sleeping: what it holds is known when it says
so, and it finishes when told to.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harn_mcp_mock.api import RecordTransport, ReplayTransport, cassette_transport, replay_session
from harn_mcp_mock.cassette.claim import CassetteClaim, Holder, claim_once, claim_path
from harn_mcp_mock.cassette.model import journal_path
from harn_mcp_mock.errors import CassetteBusyError, CassetteError

REPO = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(REPO / "tests" / "servers" / "fake_server.py"), "echo"]

# Holds the claim of argv[1] as pytest-xdist worker gw7, with a recording's journal beside it;
# on "finish" writes the cassette (an echo server's) and lets go; on EOF lets go as it is.
HOLDER = """
import sys
from pathlib import Path
from harn_mcp_mock.cassette.claim import CassetteClaim
from harn_mcp_mock.cassette.model import journal_path
from tests.echo_cassette import echo_cassette

path = Path(sys.argv[1])
claim = CassetteClaim(path).acquire()
journal_path(path).write_text('{"format": "harn-mcp-cassette-journal"}\\n')
print("held", flush=True)
if sys.stdin.readline().strip() == "finish":
    echo_cassette(path, "hi")
    journal_path(path).unlink()
claim.release()
print("released", flush=True)
"""


class Holding:
    """A child process holding a cassette's claim (see ``HOLDER``)."""

    def __init__(self, cassette: Path) -> None:
        env = {**os.environ, "PYTEST_XDIST_WORKER": "gw7", "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(cassette)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        assert self.proc.stdout.readline() == "held\n"

    def finish(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("finish\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "released\n"
        assert self.proc.wait(timeout=30) == 0

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    return tmp_path / "cassettes" / "shared.cassette.json"


@pytest.fixture
def holder(cassette: Path) -> Iterator[Holding]:
    holding = Holding(cassette)
    yield holding
    holding.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_claim_file_names_its_holder_and_goes_when_released(cassette: Path) -> None:
    claim = CassetteClaim(cassette).acquire()
    holder = claim.holder()
    assert holder is not None and holder.pid == os.getpid() and holder.alive() is True
    assert claim.reclaimed is None
    claim.release()
    assert not claim_path(cassette).exists()
    assert list(cassette.parent.iterdir()) == []


async def test_all_fails_at_once_naming_the_worker_that_records(cassette: Path, holder: Holding) -> None:
    transport = cassette_transport(cassette, mode="all", command=FAKE)
    assert isinstance(transport, RecordTransport)
    with pytest.raises(CassetteBusyError) as caught:
        async with transport:
            pass
    text = str(caught.value)
    assert f"pytest-xdist worker gw7 (pid {holder.proc.pid} on " in text
    assert "recover" not in text  # the journal beside it belongs to a live recorder
    assert isinstance(caught.value.holder, Holder) and caught.value.holder.worker == "gw7"


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "--mode", "all"],
        ["replay", "--mode", "new_episodes"],
        ["replay", "--mode", "new_episodes", "existing"],
        ["record"],
        ["record", "--url", "http://127.0.0.1:9/mcp"],  # refused before anything connects
    ],
    ids=["replay-all", "replay-new_episodes-fresh", "replay-new_episodes", "record", "record-url"],
)
def test_the_cli_refuses_to_record_a_held_cassette_in_one_line(
    cassette: Path, args: list[str], holder: Holding
) -> None:
    if args[-1] == "existing":
        args = args[:-1]
        cassette.write_text("{}")  # exists: new_episodes would append to it
    command = [] if "--url" in args else ["--", *FAKE]
    done = cli(*args, "--cassette", str(cassette), *command)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"pytest-xdist worker gw7 (pid {holder.proc.pid} on " in lines[0]
    assert "recover" not in lines[0] and "Traceback" not in done.stderr
    assert not journal_path(cassette).read_text().count("\n") > 1  # the holder's journal, untouched


@pytest.mark.slow
def test_a_dead_recorders_claim_is_taken_over_and_only_then_recover_is_suggested(
    cassette: Path, holder: Holding
) -> None:
    pid = holder.proc.pid
    holder.proc.send_signal(signal.SIGKILL)
    holder.proc.wait(timeout=30)
    assert claim_path(cassette).exists() and journal_path(cassette).exists()  # what it left
    claim = CassetteClaim(cassette).acquire()
    assert claim.reclaimed is not None and claim.reclaimed.pid == pid
    assert claim.reclaimed.worker == "gw7" and claim.reclaimed.alive() is False
    claim.release()
    done = cli("record", "--cassette", str(cassette), "--", *FAKE)
    assert done.returncode == 3
    assert "process that has died" in done.stderr and "harn mcp mock recover" in done.stderr
    killed = claim_path(cassette)
    killed.write_text(f'{{"pid": {pid}, "host": "{socket.gethostname()}", "worker": "gw7"}}')
    done = cli("record", "--cassette", str(cassette), "--", *FAKE)  # the dead one's own claim file
    assert f"process that has died (pytest-xdist worker gw7 (pid {pid} on " in done.stderr
    with pytest.raises(CassetteError, match="recover"):
        async_record = cassette_transport(cassette, mode="all", command=FAKE)
        anyio.run(_enter, async_record)


async def _enter(transport: RecordTransport | ReplayTransport) -> None:
    async with transport:
        pass


async def test_once_waits_for_the_worker_recording_it_then_replays_it(
    cassette: Path, holder: Holding
) -> None:
    waiting = threading.Event()
    events: list[str] = []

    def on_event(text: str) -> None:
        events.append(text)
        waiting.set()

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            chosen: list[object] = []

            async def choose() -> None:
                chosen.append(
                    await anyio.to_thread.run_sync(
                        lambda: cassette_transport(cassette, mode="once", command=FAKE, on_event=on_event)
                    )
                )

            tg.start_soon(choose)
            await anyio.to_thread.run_sync(waiting.wait)  # it said it waits ...
            holder.finish()  # ... and the other worker's recording is written
    assert isinstance(chosen[0], ReplayTransport)  # replayed, not recorded again
    assert len(events) == 1
    assert events[0].startswith(f"waiting for pytest-xdist worker gw7 (pid {holder.proc.pid} on ")
    assert events[0].endswith(f"to finish recording {cassette}, then replaying it")
    async with replay_session(cassette) as session:
        result = await session.call_tool("echo", {"text": "hi"})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]


def test_once_gives_up_after_its_timeout_naming_the_holder(cassette: Path, holder: Holding) -> None:
    with pytest.raises(CassetteBusyError, match=r"waited 0\.01 s for pytest-xdist worker gw7 \(pid \d+"):
        claim_once(cassette, timeout=0.01)
    assert not cassette.exists()


def test_once_records_itself_when_the_holder_wrote_nothing(cassette: Path, holder: Holding) -> None:
    assert holder.proc.stdin is not None
    holder.proc.stdin.close()  # lets go without writing the cassette: its recording failed
    holder.proc.wait(timeout=30)
    journal_path(cassette).unlink()
    claim = claim_once(cassette, timeout=30)
    assert claim is not None and claim.held
    claim.release()


def test_once_does_not_wait_for_a_recording_of_its_own_process(cassette: Path) -> None:
    mine = CassetteClaim(cassette).acquire()
    with pytest.raises(CassetteBusyError, match="this process is recording this cassette already"):
        claim_once(cassette, timeout=300)
    mine.release()


@pytest.mark.parametrize("mode", ["none", "once"])
def test_a_replay_that_records_nothing_never_imports_filelock(cassette: Path, mode: str) -> None:
    from tests.echo_cassette import echo_cassette

    echo_cassette(cassette, "hi")
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['harn-mcp-mock', 'replay', '--mode', {mode!r}, '--cassette', {str(cassette)!r}]\n"
        "try:\n    runpy.run_module('harn_mcp_mock', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print('filelock' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr


def test_the_cli_replay_once_waits_for_the_recording_worker_then_replays(
    cassette: Path, holder: Holding
) -> None:
    replay = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harn_mcp_mock",
            "replay",
            "--mode",
            "once",
            "--cassette",
            str(cassette),
            "--",
            *FAKE,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert replay.stderr is not None
    line = replay.stderr.readline()  # it says whom it waits for ...
    if "waiting for" not in line:
        replay.kill()
        replay.communicate(timeout=30)
    assert f"waiting for pytest-xdist worker gw7 (pid {holder.proc.pid} on " in line
    holder.finish()  # ... which then writes the cassette
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        },
    ]
    out, err = replay.communicate("".join(json.dumps(r) + "\n" for r in requests), timeout=60)
    assert replay.returncode == 0, err
    answers = [json.loads(x) for x in out.splitlines()]
    assert answers[-1]["result"]["content"][0]["text"] == "hi"  # replayed from its recording
