"""docs/drift-rules.md is generated from the rule table in the code, so it cannot go stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harn_mcp_mock.verify.findings import RULE_TITLES
from harn_mcp_mock.verify.rules import FAMILIES, RULE_DOCS, family, render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "drift-rules.md"


def test_every_rule_has_a_reference_entry_and_a_family() -> None:
    assert set(RULE_DOCS) == set(RULE_TITLES)
    assert {family(rule) for rule in RULE_TITLES} == set(FAMILIES)


def test_the_committed_drift_rules_doc_is_the_generated_one() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/drift-rules.md is stale: run `python -m harn_mcp_mock.verify.rules > docs/drift-rules.md`"
    )


def test_the_generator_runs_as_a_module_and_lists_every_rule() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock.verify.rules"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == render_markdown()
    for rule, title in RULE_TITLES.items():
        assert f"| {rule} | {title} |" in out.stdout
