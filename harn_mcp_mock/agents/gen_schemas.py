"""Write ``protocol/schemas/*.schema.json`` from the model field tables.

Run ``python -m harn_mcp_mock.agents.gen_schemas`` after changing a model; the test
``tests/agents/test_schemas.py`` fails while a shipped schema differs from the derived one.
"""

from __future__ import annotations

import json
from pathlib import Path

from harn_mcp_mock.agents.models import RESOURCE_TYPES, json_schema

SCHEMA_DIR = Path(__file__).with_name("schemas")


def schema_text(stem: str) -> str:
    return json.dumps(json_schema(RESOURCE_TYPES[stem]), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    SCHEMA_DIR.mkdir(exist_ok=True)
    for stem in RESOURCE_TYPES:
        (SCHEMA_DIR / f"{stem}.schema.json").write_text(schema_text(stem), encoding="utf-8")


if __name__ == "__main__":
    main()
