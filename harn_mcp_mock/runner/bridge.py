"""The stdio bridge: what a trial's ``HARN_MCP_CONFIG`` starts. It relays stdin and stdout to the
trial's world, which the runner keeps (:mod:`harn_mcp_mock.runner.hub`), over a Unix socket::

    python -I .../harn_mcp_mock/runner/bridge.py SOCKET TOKEN

It sends ``TOKEN`` and a newline (the trial's world is found by it), then copies bytes both ways
until the world closes the connection. Every bridge started in a trial reaches the same world, so
a client that opens a session per call sees one state, as with a real server's backend.

Standard library only and run as a file (no package import), so it starts in a few milliseconds.
"""

import os
import select
import socket
import sys

USAGE = "usage: bridge.py SOCKET TOKEN (started by harn mcp mock run: see HARN_MCP_CONFIG)"
CHUNK = 1 << 16


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def relay(path: str, token: str, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Relay ``stdin_fd``/``stdout_fd`` to the world at ``path``; the exit code."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        sock.sendall(token.encode("ascii") + b"\n")
    except OSError as exc:
        sys.stderr.write(f"harn bridge: cannot reach the trial's world at {path}: {exc.strerror or exc}\n")
        return 1
    watched = [stdin_fd, sock.fileno()]
    try:
        while True:
            readable, _, _ = select.select(watched, [], [])
            if stdin_fd in readable:
                data = os.read(stdin_fd, CHUNK)
                if data:
                    sock.sendall(data)
                else:  # the client closed our stdin: the session ends once the world is done
                    sock.shutdown(socket.SHUT_WR)
                    watched.remove(stdin_fd)
            if sock.fileno() in readable:
                data = sock.recv(CHUNK)
                if not data:
                    return 0  # the world closed the session (its trial ended, or our stdin did)
                _write_all(stdout_fd, data)
    except (BrokenPipeError, ConnectionResetError):
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write(USAGE + "\n")
        return 2
    return relay(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
