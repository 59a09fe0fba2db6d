"""The stdio bridge: what a trial's ``HARN_MCP_CONFIG`` starts. It connects the client to the
trial's world, which the runner keeps (:mod:`harn_mcp_mock.runner.hub`), over a Unix socket::

    python -I .../harn_mcp_mock/runner/bridge.py SOCKET TOKEN

In one message it sends ``TOKEN`` and a newline (the trial's world is found by it) and hands its
own stdin and stdout to the world (``SCM_RIGHTS``): the world reads the client's requests and writes its
answers on the client's pipes itself, so the bridge relays nothing and adds no hop to a call. It
then waits until the world ends the session and exits. Every bridge started in a trial reaches
the same world, so a client that opens a session per call sees one state, as with a real
server's backend.

Standard library only and run as a file (no package import), so it starts in a few milliseconds.
"""

import os
import socket
import sys

USAGE = "usage: bridge.py SOCKET TOKEN (started by harn mcp mock run: see HARN_MCP_CONFIG)"


def bridge(path: str, token: str, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Hand ``stdin_fd``/``stdout_fd`` to the world at ``path``; wait for the session's end."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        # One message: the token and the pipes together, so the world's side never turns the
        # bridge away between the two (an ended trial closes the connection; no EPIPE race).
        socket.send_fds(sock, [token.encode("ascii") + b"\n"], [stdin_fd, stdout_fd])
    except OSError as exc:
        sys.stderr.write(f"harn bridge: cannot reach the trial's world at {path}: {exc.strerror or exc}\n")
        return 1
    # The world holds the pipes now: let go of ours, so the client sees its stdout end when the
    # world closes it (not when this process exits).
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, stdin_fd)
    os.dup2(null, stdout_fd)
    try:
        while sock.recv(64):
            pass
    except (OSError, KeyboardInterrupt):
        pass
    finally:
        sock.close()
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write(USAGE + "\n")
        return 2
    return bridge(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
