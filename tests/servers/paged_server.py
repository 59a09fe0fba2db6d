"""A stdio MCP server whose ``resources/list`` is paginated, for verify's reading of unfinished lists.

    python paged_server.py NAMES PAGE_SIZE

Serves the resources ``test://NAME`` for each of the comma-separated NAMES, PAGE_SIZE per page
(the cursor is the offset of the next page); answers ``initialize`` and nothing else but
``resources/list`` (an empty result).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    names, size = sys.argv[1].split(","), int(sys.argv[2])
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result: dict[str, object] = {}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"resources": {}},
                "serverInfo": {"name": "paged", "version": "1"},
            }
        elif message["method"] == "resources/list":
            start = int((message.get("params") or {}).get("cursor") or 0)
            page = names[start : start + size]
            result = {"resources": [{"uri": f"test://{n}", "name": n} for n in page]}
            if start + size < len(names):
                result["nextCursor"] = str(start + size)
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
