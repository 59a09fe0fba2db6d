"""The ground truth of a release pair: every change between the two releases' own surfaces
(``ground_truth/<release>.json``, made by ``capture.py``), each classified by ``classification.json``.

A change is ``(kind, item, pointer)``: ``kind`` as verify's findings name it (``server``,
``tool``, ``prompt``, ``resource``, ``resource_template``), ``item`` the tool/prompt name or
resource URI (``None`` for the server), ``pointer`` a JSON pointer inside the item (``""``: the
item itself was added or removed). Below an item the walk goes down to the first key that was
added or removed, or to the leaf that changed. Calls (``tools/call``, ``prompts/get``,
``resources/read``) are compared by what they answered, at ``/result``.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.releases import GROUND_TRUTH

__all__ = ["CLASSES", "Change", "changes", "classify", "load_classification", "load_truth"]

HERE = Path(__file__).resolve().parent
KINDS = {"tools": ("tool", "name"), "prompts": ("prompt", "name"), "resources": ("resource", "uri")}
KINDS["resourceTemplates"] = ("resource_template", "uriTemplate")
CALL_KINDS = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}
CLASSES = {
    "breaking": "breaks a client that used it: verify must say ERR",
    "conditional": "breaks only calls the session did not make (a request narrowed): at least WARN",
    "output": "a recorded call's answer changed its format or content: a finding above INFO",
    "compatible": "breaks no client: never ERR",
}


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    item: str | None
    pointer: str
    old: Any
    new: Any

    def __str__(self) -> str:
        return f"{self.kind} {self.item or '-'} {self.pointer or '(whole)'}"


def load_truth(release_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GROUND_TRUTH / f"{release_id}.json").read_text(encoding="utf-8"))
    return data


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _walk(kind: str, item: str | None, old: Any, new: Any, pointer: str, out: list[Change]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            sub = f"{pointer}/{_escape(key)}"
            if key not in old or key not in new:
                out.append(Change(kind, item, sub, old.get(key), new.get(key)))
            else:
                _walk(kind, item, old[key], new[key], sub, out)
    elif old != new:
        out.append(Change(kind, item, pointer, old, new))


def changes(old_id: str, new_id: str) -> list[Change]:
    """Every change from release ``old_id`` to ``new_id``, from their captured surfaces."""
    old, new = load_truth(old_id), load_truth(new_id)
    out: list[Change] = []
    _walk("server", None, old["initialize"], new["initialize"], "", out)
    for key, (kind, name) in KINDS.items():
        if key not in old or key not in new:
            continue  # a kind only one release offers: its capability change says it
        before = {i[name]: i for i in old[key]}
        after = {i[name]: i for i in new[key]}
        for item in sorted(set(before) | set(after)):
            if item not in after or item not in before:
                out.append(Change(kind, item, "", before.get(item), after.get(item)))
            else:
                _walk(kind, item, before[item], after[item], "", out)
    for label, answer in old["calls"].items():
        method, item = label.split(" ", 1)
        other = new["calls"].get(label)
        if other is None:
            continue  # the call differs by release (a renamed tool): the removal covers it
        _walk(CALL_KINDS[method], item, answer, other, "/result", out)
    return out


def load_classification() -> dict[str, list[dict[str, str]]]:
    data: dict[str, list[dict[str, str]]] = json.loads(
        (HERE / "classification.json").read_text(encoding="utf-8")
    )
    return {pair: entries for pair, entries in data.items() if not pair.startswith("_")}


def classify(pair: str, change: Change) -> dict[str, str] | None:
    """The first entry of the pair's hand-written classification that matches ``change``."""
    for entry in load_classification()[pair]:
        if entry["kind"] != change.kind:
            continue
        if not fnmatch.fnmatchcase(change.item or "-", entry.get("item", "-")):
            continue
        if "change" in entry and entry["change"] != ("removed" if change.new is None else "added"):
            continue
        if fnmatch.fnmatchcase(change.pointer, entry.get("at", "*")):
            return entry
    return None
