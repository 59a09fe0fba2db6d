"""Capture a release's own surface, as it answers it, for the ground truth of the release-pair tests.

    .venv/bin/python -m tests.e2e.releases.capture [RELEASE_ID ...]   # all releases when none given

Starts each release over stdio (its command from :func:`tests.e2e.releases.release_command`, on a
fresh one-commit git repository or an empty directory), speaks plain JSON-RPC to it (no SDK, no
harn code: the ground truth must not come from the code under test), and writes
``ground_truth/<release>.json``: the ``initialize`` answer (protocol version, serverInfo,
capabilities, instructions) and every page of ``tools/list``, ``prompts/list``, ``resources/list``
and ``resources/templates/list`` joined, walked to the end (``nextCursor``), and the answers to the
recorded sessions' calls (``sessions.calls_for``; a protocol error as ``{"error": ...}``). The
working directory's path is written as ``<workdir>``, today's date as ``<date>``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from tests.e2e.releases import GROUND_TRUTH, RELEASES, release_command
from tests.e2e.releases.sessions import calls_for, make_repository

PROTOCOL_VERSION = "2025-11-25"
LISTS = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resources", "resourceTemplates"),
}
TIMEOUT_S = 60.0
TODAY = re.compile(r"\d{4}-\d{2}-\d{2}T")  # convert_time stamps today's date


class _Session:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.lines = TextReceiveStream(process.stdout)
        self.buffer = ""
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def _line(self) -> str:
        while "\n" not in self.buffer:
            self.buffer += await self.lines.receive()
        line, self.buffer = self.buffer.split("\n", 1)
        return line

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = (await self._line()).strip()
            if not line.startswith("{"):
                continue
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
            if "method" in message and "id" in message:  # a server request (roots, ...): decline it
                await self.send(
                    {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
                )


async def capture(release_id: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="harn-capture-") as scratch:
        work = make_repository(Path(scratch) / "work")
        command = release_command(release_id, work)
        async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as process:
            with anyio.fail_after(TIMEOUT_S):
                session = _Session(process)
                init = await session.request(
                    "initialize",
                    {
                        "protocolVersion": PROTOCOL_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "harn-ground-truth", "version": "1"},
                    },
                )
                await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                caps = init.get("capabilities", {})
                out: dict[str, Any] = {"release": release_id, "initialize": init}
                for method, (capability, key) in LISTS.items():
                    if capability not in caps:
                        continue
                    items: list[Any] = []
                    pages = 0
                    cursor = None
                    while True:
                        result = await session.request(method, {"cursor": cursor} if cursor else {})
                        items += result.get(key, [])
                        pages += 1
                        cursor = result.get("nextCursor")
                        if not cursor:
                            break
                    out[key] = items
                    out.setdefault("pages", {})[key] = pages
                tools = {t["name"] for t in out.get("tools", [])}
                prompts = {p["name"] for p in out.get("prompts", [])}
                calls = out["calls"] = {}
                for method, params in calls_for(RELEASES[release_id].kind, tools, prompts, str(work)):
                    label = f"{method} {params.get('name') or params.get('uri')}"
                    try:
                        calls[label] = await session.request(method, params)
                    except RuntimeError as exc:  # a protocol error: kept as such
                        calls[label] = {"error": str(exc)}
            process.terminate()
        text = json.dumps(out, indent=2, sort_keys=True).replace(str(work), "<workdir>")
        return dict(json.loads(TODAY.sub("<date>T", text)))


def main(argv: list[str]) -> int:
    GROUND_TRUTH.mkdir(exist_ok=True)
    for release_id in argv or list(RELEASES):
        surface = anyio.run(capture, release_id)
        path = GROUND_TRUTH / f"{release_id}.json"
        path.write_text(json.dumps(surface, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        counts = {k: len(v) for k, v in surface.items() if isinstance(v, list)}
        print(f"{path.name}: {counts} pages {surface.get('pages')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
