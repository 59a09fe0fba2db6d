"""Cassette format versions: upgrade older ones, refuse newer ones with a structured error.

Version history (``docs/cassette-format.md``):

- 1: the first format (messages in wire order, CAS sidecar, journal while recording).
"""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.errors import CassetteFormatError, CassetteVersionError

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

FORMAT = "harn-mcp-mock/cassette"
JOURNAL_FORMAT = "harn-mcp-mock/journal"
FORMAT_VERSION = 1

_UPGRADES: dict[int, Any] = {}
"""version -> function upgrading a document of that version to version + 1."""


def check_version(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """Return ``doc`` upgraded to :data:`FORMAT_VERSION`, or raise naming the file."""
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CassetteFormatError("expected a positive integer", path=path, where="version")
    if version > FORMAT_VERSION:
        raise CassetteVersionError(
            f"written by cassette format version {version}; this harn-mcp-mock reads versions up to "
            f"{FORMAT_VERSION}: upgrade harn-mcp-mock to read it",
            path=path,
            where="version",
        )
    while version < FORMAT_VERSION:
        doc = _UPGRADES[version](doc)
        version += 1
        doc["version"] = version
    return doc
