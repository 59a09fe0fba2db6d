"""`make demo`: record the bundled example server through `harn mcp mock record`, show what was
recorded and where, then replay the cassette offline with the same client and compare.

The client is the official `mcp` SDK client; the server is examples/servers/notes_server.py,
started with a fake API key in its environment to show that redaction keeps it off disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "demo-out"
CASSETTE = OUT / "notes.cassette.json"
SERVER = [sys.executable, str(ROOT / "examples" / "servers" / "notes_server.py")]
HARN = [sys.executable, "-m", "harn_mcp_mock"]
FAKE_KEY = "sk-demo-" + "4f9Qx2Lm8Rt7Vb3Nc6Hj1Kp5"  # a made-up key in a real key format


async def session(command: list[str], env: dict[str, str]) -> list[Any]:
    """What a client sees: tool list, three calls and a prompt, as plain JSON."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            tools = await client.list_tools()
            results: list[Any] = [[t.name for t in tools.tools]]
            for name, args in [
                ("read_note", {"name": "welcome"}),
                ("write_note", {"name": "todo", "text": "ship the demo"}),
                ("whoami", {}),
            ]:
                result = await client.call_tool(name, args)
                results.append(result.model_dump(mode="json", exclude_none=True))
            prompt = await client.get_prompt("summarise", {"name": "todo"})
            results.append(prompt.model_dump(mode="json", exclude_none=True))
            return results


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for stale in (CASSETTE, CASSETTE.with_name(CASSETTE.name + ".journal")):
        stale.unlink(missing_ok=True)
    env = {"NOTES_API_KEY": FAKE_KEY, "PATH": os.environ.get("PATH", "")}
    record = [*HARN, "record", "--cassette", str(CASSETTE), "--", *SERVER]
    print(
        f"$ harn mcp mock record --cassette {CASSETTE.relative_to(ROOT)} -- python examples/servers/notes_server.py"
    )
    live = anyio.run(session, record, env)
    print(f"live   : {live[3]['content'][0]['text']}")
    print(f"\n$ harn mcp mock show --cassette {CASSETTE.relative_to(ROOT)}")
    subprocess.run([*HARN, "show", "--cassette", str(CASSETTE)], check=True)
    on_disk = b"".join(p.read_bytes() for p in OUT.rglob("*") if p.is_file())
    leaked = FAKE_KEY.encode() in on_disk
    print(
        f"\nthe server's API key is in its tool output on the wire, and on disk: {'LEAKED' if leaked else 'never'}"
    )
    replay = [*HARN, "replay", "--strict", "--cassette", str(CASSETTE)]
    print(f"\n$ harn mcp mock replay --strict --cassette {CASSETTE.relative_to(ROOT)}   (no server, no key)")
    replayed = anyio.run(session, replay, {"PATH": os.environ.get("PATH", "")})
    print(f"replay : {replayed[3]['content'][0]['text']}")
    same = replayed == [*live[:3], replayed[3], *live[4:]]
    print(f"replayed results identical to the live run (apart from the redacted key): {same}")
    print(f"\ncassette: {CASSETTE}")
    if leaked or not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
