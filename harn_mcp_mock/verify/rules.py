"""The drift-rule reference: each rule's family, usual severity and when it fires.

``docs/drift-rules.md`` is generated from this table and :data:`~harn_mcp_mock.verify.findings.RULE_TITLES`
by ``python -m harn_mcp_mock.verify.rules > docs/drift-rules.md`` (``tests/verify/test_rules.py``
fails when the committed file differs, and when a rule is missing here). The severity column says
what the rule usually reports; the finding itself carries the severity of the case at hand.
"""

from __future__ import annotations

from harn_mcp_mock.verify.findings import RULE_TITLES

FAMILIES: dict[str, tuple[str, str]] = {
    "T": ("Tool level", "A tool appeared, disappeared or changed its description, title or capability."),
    "I": (
        "inputSchema (request direction: narrowing breaks)",
        "The agent produces the arguments and the server validates them: a change breaks when an "
        "argument object that used to be valid becomes invalid.",
    ),
    "O": (
        "outputSchema and structuredContent (response direction: widening breaks)",
        "The server produces the result and the client validates it: a change breaks when the new "
        "server can return a value the old schema rejected.",
    ),
    "A": (
        "Annotations (effective values, after the spec's defaults)",
        "The defaults are readOnlyHint=false, destructiveHint=true, idempotentHint=false and "
        "openWorldHint=true, so a missing hint and an explicit default never differ.",
    ),
    "B": (
        "Behaviour (the cassette's calls against the candidate)",
        "Observed in the answers: a live server (`verify -- CMD`, `verify --url`) or a second "
        "cassette (`verify --candidate`).",
    ),
    "R": ("Resources and resource templates", "Compared by URI (resources) and URI template (templates)."),
    "P": ("Prompts", "Compared by name; arguments like a tool's input."),
    "C": ("Server capabilities", "The `initialize` result's capabilities other than `tools` (that is T6)."),
}

RULE_DOCS: dict[str, tuple[str, str]] = {
    "T1": ("ERR", "A recorded tool is gone."),
    "T2": ("ERR", "One tool removed and one added with the same input schema: reported as a rename."),
    "T3": ("INFO; WARN if destructive or open-world", "A new tool."),
    "T4": ("INFO", "The description changed (flagged for review: a rug-pull signal)."),
    "T5": ("INFO", "`title` or `annotations.title` changed."),
    "T6": ("ERR; INFO for listChanged", "The `tools` capability was dropped or its `listChanged` flipped."),
    "I1": ("ERR", "A new required property, with or without a default."),
    "I2": ("INFO; WARN if recorded calls already sent the key", "A new optional property."),
    "I3": (
        "ERR if additional properties are closed; else WARN",
        "A property was removed (promoted to ERR when recorded calls used it).",
    ),
    "I4": ("ERR", "An optional property became required."),
    "I5": ("INFO", "A required property became optional."),
    "I6": ("ERR", "The type changed or narrowed (a type left a list, number became integer)."),
    "I7": ("INFO", "The type widened (a type joined the list, integer became number)."),
    "I8": ("ERR", "`null` is no longer allowed."),
    "I9": ("ERR", "An enum value was removed, an enum introduced, or a const added or changed."),
    "I10": ("INFO", "An enum value was added, or the enum or const removed."),
    "I11": ("ERR", "A bound tightened (maximum, maxLength, maxItems down; minimum, minLength, minItems up)."),
    "I12": ("INFO", "A bound loosened or was removed."),
    "I13": ("WARN; ERR if a recorded argument violates it", "A bound is set where there was none."),
    "I14": ("ERR when added; WARN when changed", "A `pattern` was added or changed (promoted on evidence)."),
    "I15": ("ERR", "A `format` was added or changed."),
    "I16": ("ERR", "`additionalProperties` went from true to false, or `unevaluatedProperties` was added."),
    "I17": ("ERR (the reverse is INFO)", "An anyOf/oneOf branch was removed, or an allOf member added."),
    "I18": (
        "WARN",
        "A `default` changed or was removed: callers that omit the argument now get another value.",
    ),
    "I19": ("INFO", "Only a description changed."),
    "O1": ("ERR", "The outputSchema was removed: structured output is no longer promised."),
    "O2": ("INFO", "An outputSchema was added (then B1 and B2 hold the server to it)."),
    "O3": ("ERR", "A required output property was removed or became optional."),
    "O4": ("WARN", "An optional output property was removed."),
    "O5": ("INFO; ERR if the old schema closed additional properties", "An output property was added."),
    "O6": ("ERR", "An output type widened, became nullable or changed."),
    "O7": ("INFO", "An output type narrowed or became non-nullable."),
    "O8": ("WARN", "An output enum value was added."),
    "O9": ("INFO", "An output enum value was removed."),
    "O10": ("ERR", "An output bound loosened or was unset."),
    "O11": ("ERR", "An output oneOf branch was added, or a const removed or changed."),
    "A1": ("ERR", "readOnlyHint true to false: clients that auto-approve reads would now run writes."),
    "A2": ("ERR", "destructiveHint false to true (for a tool that is not read-only)."),
    "A3": ("ERR", "idempotentHint true to false: retrying after a timeout is no longer safe."),
    "A4": ("WARN", "openWorldHint false to true."),
    "A5": ("WARN", "A hint moved in the permissive direction: a safety claim was added; verify it."),
    "B1": ("ERR", "An outputSchema is declared but the result has no structuredContent."),
    "B2": ("ERR", "structuredContent fails the new or the old outputSchema."),
    "B3": ("WARN", "structuredContent without its serialized JSON in a text content block."),
    "B4": (
        "ERR",
        "A success became an error, a tool error became a protocol error, or the JSON-RPC error code changed.",
    ),
    "B5": ("INFO", "A call that used to fail now succeeds."),
    "B6": ("INFO", "Only the error message text changed."),
    "B7": ("WARN", "A read-only call's result differs from the recorded one."),
    "B8": ("WARN", "p50 or p95 latency is over both the ratio (default 2x) and the floor (default +100 ms)."),
    "R1": ("ERR", "A resource or resource template is gone."),
    "R2": ("INFO", "A new resource or resource template."),
    "R3": (
        "WARN for mimeType; INFO otherwise",
        "A resource's mimeType, URI template or annotations changed.",
    ),
    "P1": ("ERR", "A prompt is gone."),
    "P2": ("INFO", "A new prompt."),
    "P3": ("ERR", "A prompt argument was added as required, or became required."),
    "P4": ("WARN", "A prompt argument was removed."),
    "P5": ("INFO", "A prompt argument was added as optional, or became optional."),
    "C1": ("ERR", "A server capability (or one of its flags) is gone."),
    "C2": ("INFO", "A server capability was added, or its listChanged flipped."),
}


def family(rule: str) -> str:
    return rule.rstrip("0123456789")


def render_markdown() -> str:
    """docs/drift-rules.md: every rule of every family, in the order of :data:`RULE_TITLES`."""
    missing = sorted(set(RULE_TITLES) ^ set(RULE_DOCS))
    if missing:
        raise ValueError(f"RULE_TITLES and RULE_DOCS disagree on {', '.join(missing)}")
    out = [
        "# Drift rules",
        "",
        "<!-- Generated by `python -m harn_mcp_mock.verify.rules > docs/drift-rules.md` from",
        "     harn_mcp_mock/verify/rules.py and findings.py; do not edit by hand. -->",
        "",
        "`harn mcp mock verify` reports each difference it finds as a finding: a stable rule id, a",
        "severity and one line. ERR breaks clients (verify fails by default), WARN may break (recorded",
        "evidence can promote it to ERR), INFO is compatible. `--fail-on` sets the lowest severity that",
        "fails; an ignore file accepts findings by rule id or family (`I*`). See",
        "`harn mcp mock docs verify` and `harn mcp mock docs verify-report-formats`.",
    ]
    for letter, (heading, intro) in FAMILIES.items():
        out += [
            "",
            f"## {letter}: {heading}",
            "",
            intro,
            "",
            "| Rule | Title | Severity | When |",
            "|---|---|---|---|",
        ]
        for rule, title in RULE_TITLES.items():
            if family(rule) == letter:
                severity, when = RULE_DOCS[rule]
                out.append(f"| {rule} | {title} | {severity} | {when} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_markdown())
