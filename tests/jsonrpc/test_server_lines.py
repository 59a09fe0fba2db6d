"""serve_stdio with a LineEngine (stdio ``new_episodes``): the client's lines reach the engine as
they came, the live side's output is relayed as it comes, and after the client's EOF the loop
waits, bounded, for the answers the live side still owes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.jsonrpc.server import Out, serve_stdio


class Relay:
    """A LineEngine whose live side is a pipe: each client line is owed one live line."""

    def __init__(self, live_fd: int, wait: float, stop_when_waiting: int | None = None) -> None:
        self.lines: list[bytes] = []
        self._live_fd = live_fd
        self.wait = wait
        self.owed = 0  # below 0: live lines that came before the client's (the loop reads both)
        self.stop_when_waiting = stop_when_waiting
        """A stop pipe written the first time the loop asks what is owed (after the client's EOF)."""

    def receive(self, message: Any) -> list[Out]:
        raise AssertionError("a LineEngine gets the client's lines, never parsed messages")

    def receive_line(self, line: bytes) -> list[Out]:
        self.lines.append(line)
        self.owed += 1
        return [Out(None, raw=b"got " + line)]

    @property
    def live_fd(self) -> int | None:
        return self._live_fd

    def from_live(self) -> list[Out]:
        data = os.read(self._live_fd, 1 << 16)
        self.owed -= data.count(b"\n")
        return [Out(None, raw=line) for line in data.splitlines()]

    @property
    def owes(self) -> int:
        if self.stop_when_waiting is not None and self.owed > 0:
            os.write(self.stop_when_waiting, b"x")  # a stop signal while the loop waits
            self.stop_when_waiting = None
        return max(0, self.owed)


class Pipes:
    """Pipes by name; each end closed once (a second close could hit a reused fd number)."""

    def __init__(self) -> None:
        self.fds = {name: os.pipe() for name in ("stdin", "stdout", "live", "stop")}
        self.open = {fd for pair in self.fds.values() for fd in pair}

    def __getitem__(self, name: str) -> tuple[int, int]:
        return self.fds[name]

    def close(self, fd: int) -> None:
        self.open.discard(fd)
        os.close(fd)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    made = Pipes()
    yield made
    for fd in sorted(made.open):
        os.close(fd)


def test_the_client_s_lines_reach_the_engine_as_they_came_and_the_live_side_is_relayed(
    pipes: Pipes,
) -> None:
    odd = [b'{"jsonrpc":"2.0",  "id": 1, "method":"tools/list"}', b"not json at all", b'{"id":2}  ']
    os.write(pipes["stdin"][1], b"\n".join(odd) + b"\n")
    pipes.close(pipes["stdin"][1])
    os.write(pipes["live"][1], b"live one\nlive two\nlive three\n")
    relay = Relay(pipes["live"][0], wait=30.0)
    serve_stdio(relay, stdin_fd=pipes["stdin"][0], stdout_fd=pipes["stdout"][1])
    assert relay.lines == odd  # byte for byte: no parse, no error answer for the non-JSON line
    pipes.close(pipes["stdout"][1])
    written = os.read(pipes["stdout"][0], 1 << 16).splitlines()
    assert sorted(written) == sorted(
        [b"got " + line for line in odd] + [b"live one", b"live two", b"live three"]
    )


def test_after_the_client_s_eof_a_silent_live_side_that_owes_answers_is_an_error(
    pipes: Pipes,
) -> None:
    os.write(pipes["stdin"][1], b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    pipes.close(pipes["stdin"][1])
    relay = Relay(pipes["live"][0], wait=0.01)
    with pytest.raises(ServerError, match="did not answer 1 forwarded request"):
        serve_stdio(relay, stdin_fd=pipes["stdin"][0], stdout_fd=pipes["stdout"][1])


def test_a_stop_signal_ends_the_wait_for_what_the_live_side_owes(pipes: Pipes) -> None:
    os.write(pipes["stdin"][1], b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    pipes.close(pipes["stdin"][1])
    relay = Relay(pipes["live"][0], wait=30.0, stop_when_waiting=pipes["stop"][1])
    serve_stdio(relay, stdin_fd=pipes["stdin"][0], stdout_fd=pipes["stdout"][1], stop_fd=pipes["stop"][0])
    assert relay.owes == 1  # it returned at the stop, not after 30 s of waiting
