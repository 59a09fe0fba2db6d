"""Where each verify finding is in the cassettes: the file, line and column of the definition
it is about (a tool's ``inputSchema`` property, a prompt, the server's capabilities), for SARIF
regions and GitHub annotations.

A finding is placed in the baseline cassette when what it points at is there; something only
the candidate has (an added tool or property) is placed in the candidate when that is a file;
otherwise the nearest existing parent in the baseline is used. Behaviour findings (``B*``)
point into a call's result, so they are placed at the tool's definition.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.findings.locate import CassetteLocator, Position
from harn_mcp_mock.findings.model import Finding
from harn_mcp_mock.store.pointer import escape
from harn_mcp_mock.verify.surface import KEYS, LISTS

__all__ = ["item_pointers", "locate_findings"]

_KINDS = {
    "tool": "tools",
    "resource": "resources",
    "resource_template": "resourceTemplates",
    "prompt": "prompts",
}


def item_pointers(cassette: Cassette) -> dict[tuple[str, str], str]:
    """(listing key, item name) -> the pointer of its last listed definition in the file."""
    requests = {m.seq: m for m in cassette.messages if m.direction == "client" and m.kind == "request"}
    found: dict[tuple[str, str], str] = {}
    for i, msg in enumerate(cassette.messages):
        if msg.direction != "server" or not isinstance(msg.message, dict) or msg.reply_to is None:
            continue
        request = requests.get(msg.reply_to) if isinstance(msg.reply_to, int) else None
        method = (
            request.message.get("method")
            if request is not None and isinstance(request.message, dict)
            else None
        )
        kind = LISTS.get(str(method))
        result = msg.message.get("result")
        if kind is None or not isinstance(result, dict) or not isinstance(result.get(kind), list):
            continue
        for j, item in enumerate(result[kind]):
            if isinstance(item, dict) and isinstance(item.get(KEYS[kind]), str):
                found[(kind, item[KEYS[kind]])] = f"/messages/{i}/message/result/{escape(kind)}/{j}"
    return found


class _Side:
    def __init__(self, cassette: Cassette, path: Path, shown: str) -> None:
        self.items = item_pointers(cassette)
        self.locator = CassetteLocator(path, shown)

    def pointer(self, finding: Finding) -> str | None:
        if finding.kind == "server" or finding.tool is None:
            return "/server" + finding.pointer
        base = self.items.get((_KINDS.get(finding.kind, "tools"), finding.tool))
        if base is None:
            return None
        return base if finding.rule.startswith("B") else base + finding.pointer

    def position(self, finding: Finding) -> Position | None:
        pointer = self.pointer(finding)
        return None if pointer is None else self.locator.position(pointer)


def locate_findings(
    findings: Iterable[Finding],
    baseline: Cassette,
    baseline_path: str | Path,
    candidate: Cassette | None = None,
    candidate_path: str | Path | None = None,
) -> None:
    """Set ``file``, ``line`` and ``column`` of each finding (in place)."""
    base = _Side(baseline, Path(baseline_path), str(baseline_path))
    cand = (
        _Side(candidate, Path(candidate_path), str(candidate_path))
        if candidate is not None and candidate_path is not None and Path(candidate_path).is_file()
        else None
    )
    for finding in findings:
        best = base.position(finding)
        if (best is None or not best.exact) and cand is not None:
            other = cand.position(finding)
            if other is not None and (other.exact or best is None):
                best = other
        if best is not None:
            finding.file, finding.line, finding.column = best.file, best.line, best.column
