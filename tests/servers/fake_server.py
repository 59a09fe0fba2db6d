"""A scriptable, misbehaving stdio JSON-RPC server for the recorder's process tests.

    python fake_server.py MODE [ARG]

Modes:
  echo               answer every request with {"echo": params}; raw bytes of odd shape
  crash-after N      answer N requests, then exit with code 3
  die-on N           answer N requests; on reading the next one exit with code 3, unanswered
  stubborn           ignore stdin EOF, SIGTERM and SIGINT (only SIGKILL stops it)
  graceful           on SIGTERM/SIGINT or stdin EOF write a notification ("bye N", "bye eof"), exit 0
  linger             like graceful, but at stdin EOF write "eof" and wait for a signal
  slow-exit N        at stdin EOF write N notifications 0.1 s apart ("working K"), then exit 0
  big N              answer each request with a result of N bytes
  reverse N          read N requests, answer them in reverse order, then echo
  answer-at-eof      say "working ID" at each request, answer them all at stdin EOF (a slow server
                     that an SDK would have stopped: its answers are owed when the client's EOF comes)
  secrets            answer with the env var FAKE_TOKEN's value and its arguments
  garbage            write a non-JSON line before each answer
Writes its pid to the file named by $FAKE_PID_FILE when set, and with $FAKE_ANNOUNCE set first
sends a ``notifications/message`` "ready" (an event a test can wait for before any client message).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def send(obj: object, raw: bytes | None = None) -> None:
    sys.stdout.buffer.write((raw if raw is not None else json.dumps(obj).encode()) + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    sys.setrecursionlimit(5000)  # parse (and echo) messages nested up to JSON parsers' 1,024 levels
    mode = sys.argv[1]
    arg = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 0
    if os.environ.get("FAKE_PID_FILE"):
        with open(os.environ["FAKE_PID_FILE"], "w") as fh:
            fh.write(str(os.getpid()))
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.environ.get("FAKE_ANNOUNCE"):
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "ready"}})
    if mode in ("graceful", "linger"):

        def bye(signum: int, _frame: object) -> None:
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": f"bye {signum}"}})
            sys.exit(0)

        signal.signal(signal.SIGTERM, bye)
        signal.signal(signal.SIGINT, bye)
    held: list[dict] = []  # type: ignore[type-arg]
    answered = 0
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a real server would answer -32700; this one just skips it
        if "id" not in msg or "method" not in msg:
            continue
        if mode == "die-on" and answered >= arg:
            os._exit(3)
        if mode == "answer-at-eof":
            held.append(msg)
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"data": f"working {msg['id']}"},
                }
            )
            continue
        if mode == "reverse" and len(held) < arg:
            held.append(msg)
            if len(held) == arg:
                for m in reversed(held):
                    send({"jsonrpc": "2.0", "id": m["id"], "result": {"echo": m.get("params")}})
            continue
        if mode == "garbage":
            send(None, raw=b"this line is not JSON")
        if mode == "big":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"blob": "y" * arg}})
        elif mode == "secrets":
            token = os.environ.get("FAKE_TOKEN", "")
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "result": {
                        "content": [{"type": "text", "text": f"token is {token}"}],
                        "args": sys.argv[2:],
                        "got": msg.get("params"),
                    },
                }
            )
        else:
            # odd spacing, key order and escapes: the proxy must pass these bytes through untouched
            body = json.dumps({"echo": msg.get("params")}, ensure_ascii=True)
            send(
                None,
                raw=b'{"result": '
                + body.encode()
                + b', "id":'
                + json.dumps(msg["id"]).encode()
                + b',"jsonrpc":"2.0"}',
            )
        answered += 1
        if mode == "crash-after" and answered >= arg:
            sys.stdout.flush()
            os._exit(3)
    if mode == "answer-at-eof":
        for m in held:
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"echo": m.get("params")}})
    if mode == "stubborn":
        signal.pause()  # wait until killed
    if mode == "graceful":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "bye eof"}})
    if mode == "slow-exit":
        for k in range(arg):
            time.sleep(0.1)  # allow-wall-clock: a server slower than the proxy's grace, on purpose
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": f"working {k}"}})
    if mode == "linger":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "eof"}})
        signal.pause()


if __name__ == "__main__":
    main()
