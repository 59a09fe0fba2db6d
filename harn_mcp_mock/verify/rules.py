"""The drift-rule reference: each rule's family, usual severity and when it fires.

``docs/drift-rules.md`` is generated from this table and :data:`~harn_mcp_mock.verify.findings.RULE_TITLES`
by ``python -m harn_mcp_mock.verify.rules > docs/drift-rules.md`` (``tests/verify/test_rules.py``
fails when the committed file differs, and when a rule is missing here). The severity column says
what the rule usually reports; the finding itself carries the severity of the case at hand.
"""

from __future__ import annotations

from typing import NamedTuple

from harn_mcp_mock.verify.findings import RULE_TITLES


class RuleDoc(NamedTuple):
    severity: str
    """What the rule usually reports (the finding carries the severity of the case at hand)."""
    breaks: str
    """Whom the change breaks: the question each severity answers (ERR: clients that did what the
    recording shows; WARN: clients that may; INFO: nobody, or only a reader of the text)."""
    when: str


FAMILIES: dict[str, tuple[str, str]] = {
    "S": (
        "Server metadata",
        "The `initialize` result's `instructions`, `serverInfo` and `protocolVersion` "
        "(`capabilities` are C and T6).",
    ),
    "T": ("Tool level", "A tool appeared, disappeared or changed a field other than its schemas and hints."),
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
    "C": (
        "Server capabilities",
        "The `initialize` result's capabilities (the `tools` capability removed as a whole is T6). "
        "A capability or flag is *used* when the recording's client sent a request it enables "
        "(`resources/subscribe` for `resources.subscribe`, `tasks/list` for `tasks.list`, any "
        "`prompts/*` request for `prompts`, a request of a method outside MCP's for "
        "`experimental`), or, for `listChanged`, when the server sent the list-changed "
        "notification in the recording.",
    ),
}

_SCHEMA_IN = "callers whose arguments no longer validate"
_SCHEMA_OUT = "clients that validate or parse the result against the old schema"
_NOBODY = "nobody (compatible)"

RULE_DOCS: dict[str, RuleDoc] = {
    "S1": RuleDoc(
        "WARN; INFO if only whitespace changed",
        "agents steered by the old text: clients put instructions in the model's context, like tool "
        "descriptions, so a rewrite changes what the agent does",
        "The server's `instructions` were added, removed or rewritten.",
    ),
    "S2": RuleDoc(
        "WARN",
        "clients and scanners that key settings, approvals or pins on the server's name",
        "`serverInfo.name` changed.",
    ),
    "S3": RuleDoc(
        "INFO",
        "nobody: display and bookkeeping (a new release changes its version)",
        "`serverInfo` `version`, `title`, `description`, `websiteUrl` or `icons` changed.",
    ),
    "S4": RuleDoc(
        "WARN; INFO when the new version is the one the client asked for",
        "clients that speak only the version the server used to answer with; nobody when the "
        "server now answers with the client's own version",
        "The same `initialize` request got another `protocolVersion`.",
    ),
    "T1": RuleDoc("ERR", "agents and code that call the tool", "A recorded tool is gone."),
    "T2": RuleDoc(
        "ERR",
        "agents and code that call the tool by its old name",
        "One tool removed and one added with the same input schema: reported as a rename.",
    ),
    "T3": RuleDoc(
        "INFO; WARN if destructive or open-world",
        "nobody's calls; a destructive or open-world tool widens what an agent can do",
        "A new tool.",
    ),
    "T4": RuleDoc(
        "INFO",
        "no caller; agents choosing this tool may behave differently (review: a rug-pull signal). "
        "INFO where S1 is WARN: descriptions are reworded in most releases and each steers one tool",
        "The description changed.",
    ),
    "T5": RuleDoc("INFO", "nobody: display only", "`title` or `annotations.title` changed."),
    "T6": RuleDoc(
        "ERR", "every client that lists or calls tools", "The `tools` capability was removed as a whole."
    ),
    "T7": RuleDoc(
        "ERR when it became required; when withdrawn, ERR if a recorded call ran it as a task, else WARN",
        "clients that do not create tasks (now required), or that run the tool as a task (withdrawn)",
        "`execution.taskSupport` became `required`, or went from `optional`/`required` to `forbidden` "
        "(its default).",
    ),
    "T8": RuleDoc(
        "INFO",
        _NOBODY,
        "`execution.taskSupport` became `optional` (from `forbidden`, its default, or from `required`).",
    ),
    "T9": RuleDoc(
        "INFO",
        "only clients that read the named `_meta` keys (UI templates, vendor extensions)",
        "A key of the tool's `_meta` was added, removed or changed (the message names the keys).",
    ),
    "T10": RuleDoc("INFO", "nobody: display only", "The tool's `icons` changed."),
    "T11": RuleDoc(
        "WARN",
        "unknown: a field verify does not model (review)",
        "A tool field outside the MCP schema verify knows (or an `execution` key) changed.",
    ),
    "I1": RuleDoc(
        "ERR", "callers that omit the property", "A new required property, with or without a default."
    ),
    "I2": RuleDoc(
        "INFO; WARN if recorded calls already sent the key",
        "callers that already send the key with a value the new schema rejects",
        "A new optional property.",
    ),
    "I3": RuleDoc(
        "ERR if additional properties are closed; else WARN",
        "callers that still send it (their value is ignored, or rejected when the object is closed)",
        "A property was removed (promoted to ERR when recorded calls used it).",
    ),
    "I4": RuleDoc("ERR", "callers that omit the property", "An optional property became required."),
    "I5": RuleDoc("INFO", _NOBODY, "A required property became optional."),
    "I6": RuleDoc(
        "ERR", _SCHEMA_IN, "The type changed or narrowed (a type left a list, number became integer)."
    ),
    "I7": RuleDoc("INFO", _NOBODY, "The type widened (a type joined the list, integer became number)."),
    "I8": RuleDoc("ERR", "callers that send null", "`null` is no longer allowed."),
    "I9": RuleDoc(
        "ERR", _SCHEMA_IN, "An enum value was removed, an enum introduced, or a const added or changed."
    ),
    "I10": RuleDoc("INFO", _NOBODY, "An enum value was added, or the enum or const removed."),
    "I11": RuleDoc(
        "ERR",
        _SCHEMA_IN,
        "A bound tightened (maximum, maxLength, maxItems down; minimum, minLength, minItems up).",
    ),
    "I12": RuleDoc("INFO", _NOBODY, "A bound loosened or was removed."),
    "I13": RuleDoc(
        "WARN; ERR if a recorded argument violates it",
        "callers whose values fall outside the new bound",
        "A bound is set where there was none.",
    ),
    "I14": RuleDoc(
        "ERR when added; WARN when changed",
        "callers whose strings do not match the new pattern",
        "A `pattern` was added or changed (promoted on evidence).",
    ),
    "I15": RuleDoc(
        "ERR", "callers whose strings are not in the new format", "A `format` was added or changed."
    ),
    "I16": RuleDoc(
        "ERR",
        "callers that send properties the schema does not list",
        "`additionalProperties` went from true to false, or `unevaluatedProperties` was added.",
    ),
    "I17": RuleDoc(
        "ERR; WARN for anyOf that became oneOf",
        "callers whose value matched only the removed branch (or matches two branches of a oneOf)",
        "An anyOf/oneOf branch was removed, a union introduced, an allOf member added, or anyOf became oneOf.",
    ),
    "I18": RuleDoc(
        "WARN",
        "callers that omit the argument: they now get another value",
        "A `default` changed or was removed.",
    ),
    "I19": RuleDoc(
        "INFO", "no caller; agents reading the text", "Only a property's description or title changed."
    ),
    "I20": RuleDoc(
        "INFO",
        _NOBODY,
        "`additionalProperties` went from false to true or was dropped, or `unevaluatedProperties` was removed.",
    ),
    "I21": RuleDoc("INFO", _NOBODY, "A `pattern` was removed."),
    "I22": RuleDoc("INFO", _NOBODY, "A `format` was removed."),
    "I23": RuleDoc(
        "INFO (promoted to ERR when a recorded call no longer validates: a value matching two oneOf branches)",
        _NOBODY,
        "An anyOf/oneOf branch was added, a union or an allOf member removed, or oneOf became anyOf.",
    ),
    "I24": RuleDoc("INFO", _NOBODY, "A `default` was added where there was none."),
    "I25": RuleDoc(
        "WARN (ERR when a recorded call no longer validates)",
        "unknown: a keyword verify does not model (`not`, `if`, `dependentRequired`, ...); review",
        "A keyword verify does not classify (or does not know, or MCP's `x-mcp-header`) changed; other `x-` keywords are not compared.",
    ),
    "I26": RuleDoc(
        "ERR",
        "the recorded calls, which the new schema rejects",
        "A recorded argument object that the old schema accepted fails the new one at a keyword no "
        "other finding covers.",
    ),
    "I27": RuleDoc(
        "INFO",
        "nobody: MCP clients validate with their own dialect",
        "`$schema` (the JSON Schema dialect) changed, was added or was removed.",
    ),
    "O1": RuleDoc(
        "ERR",
        "clients that read `structuredContent`",
        "The outputSchema was removed: structured output is no longer promised.",
    ),
    "O2": RuleDoc("INFO", _NOBODY, "An outputSchema was added (then B1 and B2 hold the server to it)."),
    "O3": RuleDoc(
        "ERR", "clients that read the property", "A required output property was removed or became optional."
    ),
    "O4": RuleDoc(
        "WARN", "clients that read the property when present", "An optional output property was removed."
    ),
    "O5": RuleDoc(
        "INFO; ERR if the old schema closed additional properties",
        "clients that validate against a closed old schema",
        "An output property was added.",
    ),
    "O6": RuleDoc("ERR", _SCHEMA_OUT, "An output type widened, became nullable or changed."),
    "O7": RuleDoc(
        "INFO",
        _NOBODY,
        "The output narrowed: a type narrowed or became non-nullable, a property became required, a "
        "bound, pattern or format was added or tightened, additional properties closed, a union "
        "branch removed or an allOf member added.",
    ),
    "O8": RuleDoc(
        "WARN",
        "clients that switch on the enum's values",
        "An output enum value was added, or the enum dropped.",
    ),
    "O9": RuleDoc("INFO", _NOBODY, "An output enum value was removed, or an enum or const introduced."),
    "O10": RuleDoc(
        "ERR; WARN when a pattern changed",
        _SCHEMA_OUT,
        "An output bound loosened or was unset, a pattern or format removed, a format changed, an "
        "allOf member removed, or more array items allowed.",
    ),
    "O11": RuleDoc(
        "ERR; WARN for oneOf that became anyOf",
        _SCHEMA_OUT,
        "An output oneOf/anyOf branch was added, a union dropped, or a const removed or changed.",
    ),
    "O12": RuleDoc(
        "ERR",
        "clients that validate against the old, closed schema",
        "Output `additionalProperties` went from false to true, or `unevaluatedProperties` was removed.",
    ),
    "O13": RuleDoc(
        "WARN",
        "unknown: a keyword verify does not model; review",
        "An output keyword verify does not classify (or does not know) changed.",
    ),
    "O14": RuleDoc(
        "INFO",
        "nobody: MCP clients validate with their own dialect",
        "The outputSchema's `$schema` changed, was added or was removed.",
    ),
    "A1": RuleDoc(
        "ERR",
        "clients that auto-approve read-only tools: they would now run writes unasked",
        "readOnlyHint true to false.",
    ),
    "A2": RuleDoc(
        "ERR",
        "clients whose confirmation policy trusted the hint",
        "destructiveHint false to true (for a tool that is not read-only).",
    ),
    "A3": RuleDoc(
        "ERR",
        "clients that retry after a timeout: retrying is no longer safe",
        "idempotentHint true to false.",
    ),
    "A4": RuleDoc(
        "WARN", "clients that keep open-world tools away from private data", "openWorldHint false to true."
    ),
    "A5": RuleDoc(
        "INFO",
        "nobody's calls: a tool claiming to be safer breaks no client; a false claim would let "
        "auto-approving clients trust it more, so verify it (e.g. in a simulated world)",
        "A hint moved in the permissive direction: a safety claim was added.",
    ),
    "B1": RuleDoc(
        "ERR",
        "clients that read `structuredContent`",
        "An outputSchema is declared but the result has no structuredContent.",
    ),
    "B2": RuleDoc("ERR", _SCHEMA_OUT, "structuredContent fails the new or the old outputSchema."),
    "B3": RuleDoc(
        "WARN",
        "clients that show the model only text content",
        "The baseline's answer mirrored structuredContent as JSON text; the candidate's does not.",
    ),
    "B4": RuleDoc(
        "ERR",
        "the recorded call: it no longer succeeds, or fails in a way its error handling does not expect",
        "A success became an error, a tool error became a protocol error, or the JSON-RPC error code changed.",
    ),
    "B5": RuleDoc("INFO", _NOBODY, "A call that used to fail now succeeds."),
    "B6": RuleDoc("INFO", "only code that matches error text", "Only the error message text changed."),
    "B7": RuleDoc(
        "INFO",
        "nobody: volatile values (times, ids, counters) differ on every call of an unchanged server",
        "A read-only call's result has the same structure and layout; only values in it differ.",
    ),
    "B8": RuleDoc(
        "WARN",
        "callers with timeouts",
        "p50 or p95 latency is over both the ratio (default 2x) and the floor (default +100 ms).",
    ),
    "B9": RuleDoc(
        "WARN",
        "clients and agents that parse the answer: keys, types or the text's layout changed",
        "A read-only call's result changed structure (a key gone, a list grown or shrunk, a "
        "type changed) or the layout of its text (its lines with digits, ids and times masked), "
        "with the diff.",
    ),
    "B10": RuleDoc(
        "INFO",
        "only readers that reject unknown keys",
        "A read-only call's result only gained keys (`structuredContent` beside the same text, a "
        "new field in a JSON text); nothing was removed or retyped.",
    ),
    "R1": RuleDoc("ERR", "clients that read it", "A resource or resource template is gone."),
    "R2": RuleDoc("INFO", _NOBODY, "A new resource or resource template."),
    "R3": RuleDoc(
        "WARN",
        "clients that parse the content by its type",
        "A resource's or template's mimeType changed.",
    ),
    "R4": RuleDoc(
        "INFO",
        "nobody: display, ranking and bookkeeping",
        "A resource's or template's name, title, description, size, annotations, icons or `_meta` changed.",
    ),
    "P1": RuleDoc("ERR", "clients and users that get the prompt", "A prompt is gone."),
    "P2": RuleDoc("INFO", _NOBODY, "A new prompt."),
    "P3": RuleDoc(
        "ERR",
        "callers that omit the argument",
        "A prompt argument was added as required, or became required.",
    ),
    "P4": RuleDoc("WARN", "callers that still pass it", "A prompt argument was removed."),
    "P5": RuleDoc("INFO", _NOBODY, "A prompt argument was added as optional, or became optional."),
    "P6": RuleDoc(
        "INFO",
        "nobody: users pick prompts by it",
        "A prompt's title, description, icons or `_meta` changed.",
    ),
    "P7": RuleDoc(
        "INFO",
        "nobody's calls; users and agents filling the argument read it",
        "A prompt argument's description or title changed.",
    ),
    "C1": RuleDoc(
        "ERR if it declared something (a non-empty object) or the recording used it; INFO if empty and unused",
        "clients that used what it enabled; an empty `experimental: {}` enabled nothing",
        "A server capability is gone.",
    ),
    "C2": RuleDoc("INFO", _NOBODY, "A server capability was added."),
    "C3": RuleDoc(
        "ERR if the recording used it; INFO otherwise",
        "clients that relied on the flag (subscribed, listed tasks, refreshed on list-changed)",
        "A capability's flag or sub-capability was removed or turned off (`listChanged`, "
        "`subscribe`, `tasks.list`, an `experimental` feature ...).",
    ),
    "C4": RuleDoc("INFO", _NOBODY, "A capability's flag or sub-capability was added or turned on."),
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
        "evidence can promote it to ERR), INFO is compatible. Each severity answers one question, whom",
        "does the change break: the Breaks column says it for every rule. One id has one meaning: a",
        "change that narrows and its reverse that widens (closing and opening, removing and adding a",
        "constraint) have different ids; a rule whose When says *changed* covers a value added,",
        "removed or replaced, which break the same people. `--fail-on` sets the lowest severity that",
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
            "| Rule | Title | Severity | Breaks | When |",
            "|---|---|---|---|---|",
        ]
        for rule, title in RULE_TITLES.items():
            if family(rule) == letter:
                doc = RULE_DOCS[rule]
                out.append(f"| {rule} | {title} | {doc.severity} | {doc.breaks} | {doc.when} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_markdown())
