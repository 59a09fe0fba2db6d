"""Shared data for the protocol tests: the spec text and one valid sample per resource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import settings

HERE = Path(__file__).resolve().parent
#: A verbatim copy of /work/shared/seeds/agents-protocol-v1.md, so tests can read the spec's tables.
SPEC_TEXT = (HERE / "spec" / "agents-protocol-v1.md").read_text(encoding="utf-8")
SAMPLES: dict[str, dict[str, Any]] = json.loads((HERE / "samples.json").read_text(encoding="utf-8"))


def spec_section(start: str, end: str) -> str:
    """The spec text from the line ``start`` up to the line ``end``."""
    lines = SPEC_TEXT.splitlines()
    a = lines.index(start)
    b = lines.index(end, a + 1)
    return "\n".join(lines[a:b])


#: Property tests run the same examples every time (no seed, no example database).
deterministic = settings(derandomize=True, database=None, deadline=None)
