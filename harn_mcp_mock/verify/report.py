"""Render a verify result: terminal text, JSON, Markdown, JUnit XML, SARIF 2.1.0, GitHub Actions.

Every renderer is a pure function of the result: same result, same bytes, whatever order
the findings came in. Nothing here reads the environment or writes files; the CLI decides
about colour (isatty, ``NO_COLOR``), where a report goes, and appends
:func:`github_step_summary` to ``$GITHUB_STEP_SUMMARY``. The formats are documented in
``docs/verify-report-formats.md``, which also publishes the JSON report's schema.

Findings are ordered by group (server-level first, then tools, resources, resource
templates and prompts, each by name), then severity (highest first), rule id (``I2``
before ``I10``), pointer and message.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from harn_mcp_mock.findings.model import Finding, Rule, Severity
from harn_mcp_mock.findings.writers import (
    JunitCase,
    github_annotation,
    json_text,
    junit_xml,
    printable,
    sarif_log,
    sarif_result,
    sarif_rule,
)
from harn_mcp_mock.formats import Formats
from harn_mcp_mock.verify.findings import RULE_TITLES

__all__ = ["FORMATS", "REPORT_VERSION", "VerifyResult", "github_step_summary", "render"]

REPORT_FORMATS: Formats[Callable[[VerifyResult, Severity, bool], str]] = Formats("report format")
"""Verify's report formats, by name (each renderer gets the result, ``fail_on`` and ``color``)."""
REPORT_VERSION = 1
"""``version`` of the JSON report; bumped on any change to its shape."""

_TOOL_NAME = "harn-mcp-mock verify"
_SHORT_VALUE = 40
"""Old/new values whose compact JSON is longer than this are left to the JSON report."""
_MAX_EVIDENCE = 3
"""Evidence lines shown per finding in the human formats (the JSON report keeps all)."""
_MAX_DIFF_EVIDENCE = 13
"""...except for a finding whose evidence is a diff (B9: 12 lines and a "more" line), shown in the text report."""
_DIFF_RULES = frozenset({"B9"})
_STEP_SUMMARY_LIMIT = 1_000_000
"""GitHub rejects a step summary over 1 MiB; stay a little under it."""


@dataclass(slots=True)
class VerifyResult:
    cassette: str
    """The baseline cassette path."""
    candidate: str
    """The candidate cassette path, or the (redacted) live server command."""
    findings: list[Finding]
    """Findings kept after the ignore file, in any order."""
    ignored: list[tuple[Finding, str]]
    """(finding, reason) pairs suppressed by the ignore file."""
    compared: dict[str, int]
    """What was compared, e.g. ``{"tools": 3, "calls_replayed": 12}``."""

    def exit_code(self, fail_on: Severity) -> int:
        """1 if any kept finding is at or above ``fail_on``, else 0."""
        return int(any(f.severity >= fail_on for f in self.findings))

    def counts(self) -> dict[str, int]:
        """Kept findings per severity, ``{"ERR": n, "WARN": n, "INFO": n}``."""
        counts = dict.fromkeys(("ERR", "WARN", "INFO"), 0)
        for finding in self.findings:
            counts[finding.severity.name] += 1
        return counts


def render(result: VerifyResult, fmt: str, *, fail_on: Severity = Severity.ERR, color: bool = False) -> str:
    """The report in ``fmt`` (one of :data:`FORMATS`: ``REPORT_FORMATS.names``), ending with a newline.

    ``color`` adds ANSI colours to the ``text`` format and is ignored by the others.
    """
    return REPORT_FORMATS.get(fmt)(result, fail_on, color)


def github_step_summary(result: VerifyResult, fail_on: Severity = Severity.ERR) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY`` (the caller appends it): the markdown report,
    cut at a section boundary, with a note, if it would exceed GitHub's 1 MiB limit."""
    text = _markdown(result, fail_on)
    if len(text.encode()) <= _STEP_SUMMARY_LIMIT:
        return text
    note = (
        "\n_The report was cut to fit GitHub's step summary limit; use `--format json` for all findings._\n"
    )
    budget = _STEP_SUMMARY_LIMIT - len(note.encode())
    kept: list[str] = []
    used = 0
    for block in re.split(r"(?=^### )", text, flags=re.M):
        size = len(block.encode())
        if used + size > budget:
            break
        kept.append(block)
        used += size
    return "".join(kept).rstrip("\n") + "\n" + note


# --- ordering and small helpers --------------------------------------------------------------

_KIND_ORDER = {"server": 0, "tool": 1, "resource": 2, "resource_template": 3, "prompt": 4}

Group = tuple[str, str | None]
"""(kind, name) of what findings are about; ``("server", None)`` for server-level findings."""


def _group(finding: Finding) -> Group:
    if finding.kind == "server" or finding.tool is None:
        return ("server", None)
    return (finding.kind, finding.tool)


def _group_key(group: Group) -> tuple[int, str, str]:
    kind, name = group
    return (_KIND_ORDER.get(kind, len(_KIND_ORDER)), kind, name or "")


def _rule_key(rule: str) -> tuple[str, int, str]:
    match = re.fullmatch(r"([A-Za-z]+)(\d+)", rule)
    return (match[1], int(match[2]), "") if match else (rule, 0, rule)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def _sort_key(finding: Finding) -> tuple[Any, ...]:
    return (
        _group_key(_group(finding)),
        -finding.severity,
        _rule_key(finding.rule),
        finding.pointer,
        finding.message,
        _compact(finding.old),
        _compact(finding.new),
        tuple(finding.evidence),
    )


def _sorted(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=_sort_key)


def _sorted_ignored(ignored: Iterable[tuple[Finding, str]]) -> list[tuple[Finding, str]]:
    return sorted(ignored, key=lambda pair: (*_sort_key(pair[0]), pair[1]))


def _grouped(findings: list[Finding]) -> list[tuple[Group, list[Finding]]]:
    """Sorted findings in groups, in report order."""
    return [(group, list(items)) for group, items in groupby(_sorted(findings), key=_group)]


def _group_title(group: Group) -> str:
    kind, name = group
    return "server" if name is None else f"{kind.replace('_', ' ')} {name}"


def _subject(finding: Finding) -> str:
    """The tool name alone for tools; ``resource X``, ``prompt X`` or ``server`` otherwise."""
    kind, name = _group(finding)
    return name if kind == "tool" and name is not None else _group_title((kind, name))


def _where(finding: Finding) -> str:
    """``<subject> <pointer>``, or the subject alone for an empty pointer."""
    return f"{_subject(finding)} {finding.pointer}" if finding.pointer else _subject(finding)


_COMPARED_ORDER = ("tools", "resources", "resource_templates", "prompts", "calls_replayed")


def _compared_items(compared: dict[str, int]) -> list[tuple[str, int]]:
    order = {key: i for i, key in enumerate(_COMPARED_ORDER)}
    return sorted(compared.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def _compared_line(compared: dict[str, int]) -> str:
    return ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in _compared_items(compared))


def _change(finding: Finding) -> tuple[str, str] | None:
    """Compact (old, new) JSON when both fit in a line; a missing side is ``None`` -> ``""``."""
    if finding.old is None and finding.new is None:
        return None
    old = "" if finding.old is None else _compact(finding.old)
    new = "" if finding.new is None else _compact(finding.new)
    if len(old) > _SHORT_VALUE or len(new) > _SHORT_VALUE:
        return None
    return old, new


def _change_text(finding: Finding, code: Callable[[str], str] = str) -> str:
    """`` (old -> new)``, `` (was old)`` or `` (now new)``, or ``""``."""
    change = _change(finding)
    if change is None:
        return ""
    old, new = change
    if not old:
        return f" (now {code(new)})"
    if not new:
        return f" (was {code(old)})"
    return f" ({code(old)} -> {code(new)})"


def _summary_line(result: VerifyResult, fail_on: Severity, *, grouped: bool = False) -> str:
    """``3 ERR, 1 WARN, 3 INFO, 2 ignored (fail-on ERR: FAIL)``; ``grouped`` counts a repeated
    kind of finding (:func:`_repeated`) once and says how many findings there were."""
    counts = result.counts()
    repeated = _repeated(result.findings) if grouped else []
    for group in repeated:
        counts[group[0].severity.name] -= len(group) - 1
    parts = [f"{counts[name]} {name}" for name in ("ERR", "WARN", "INFO")]
    if result.ignored:
        parts.append(f"{len(result.ignored)} ignored")
    verdict = "FAIL" if result.exit_code(fail_on) else "PASS"
    note = f" ({len(result.findings)} findings, a repeated kind counted once)" if repeated else ""
    return f"{', '.join(parts)}{note} (fail-on {fail_on.name}: {verdict})"


# --- repeated findings -------------------------------------------------------------------------

_REPEATED_MIN = 2
"""Findings of one kind about this many subjects or more are grouped in the text report."""


def _kind_message(finding: Finding) -> str:
    """The message without its subject's name (``tool 'a' description changed`` -> ``tool
    description changed``), so the same change to many tools reads the same."""
    name = finding.tool
    if name is None:
        return finding.message
    quoted = repr(name)
    for before, after in ((f" {quoted}: ", ": "), (f" {quoted} ", " "), (f" {quoted}", "")):
        if before in finding.message:
            return finding.message.replace(before, after, 1)
    return finding.message


def _kind(finding: Finding) -> tuple[str, int, str, str, str]:
    return (finding.rule, int(finding.severity), finding.kind, finding.pointer, _kind_message(finding))


def _repeated(findings: Iterable[Finding]) -> list[list[Finding]]:
    """Groups of findings of one kind (rule, severity, pointer and message but for the subject's
    name) about at least :data:`_REPEATED_MIN` different subjects, most severe first."""
    by_kind: dict[tuple[str, int, str, str, str], list[Finding]] = {}
    for finding in _sorted(findings):
        if finding.tool is not None and finding.kind != "server":
            by_kind.setdefault(_kind(finding), []).append(finding)
    groups = [items for items in by_kind.values() if len({f.tool for f in items}) >= _REPEATED_MIN]
    return sorted(groups, key=lambda g: (-g[0].severity, _rule_key(g[0].rule), g[0].pointer, _kind(g[0])[4]))


def _repeated_finding(items: list[Finding]) -> Finding:
    """One finding standing for a repeated kind: its message without a subject's name, and the
    old and new values only when every finding of the kind has the same ones."""
    first = items[0]
    shown = Finding(first.rule, first.severity, None, first.pointer, _kind_message(first), kind="server")
    if len({_compact(f.old) for f in items}) == 1 and len({_compact(f.new) for f in items}) == 1:
        shown.old, shown.new = first.old, first.new
    return shown


def _wrapped(names: list[str], indent: str, width: int = 100) -> list[str]:
    lines, line = [], ""
    for name in names:
        piece = name if not line else f", {name}"
        if line and len(indent) + len(line) + len(piece) > width:
            lines.append(indent + line + ",")
            line = name
        else:
            line += piece
    return [*lines, indent + line] if line else lines


def _finish(lines: Iterable[str]) -> str:
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


# --- text ------------------------------------------------------------------------------------

_COLOURS = {Severity.ERR: "\x1b[1;31m", Severity.WARN: "\x1b[33m", Severity.INFO: "\x1b[36m"}
_BOLD, _DIM, _GREEN, _RED, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[1;32m", "\x1b[1;31m", "\x1b[0m"


def _text_line(finding: Finding, paint: Callable[[str, str], str]) -> list[str]:
    severity = paint(_COLOURS[finding.severity], f"{finding.severity.name:<4}")
    parts = [f"  {severity} {finding.rule:<4}"]
    if finding.pointer:
        parts.append(printable(finding.pointer) + " ")
    parts.append(printable(finding.message + _change_text(finding)))
    lines = [" ".join(parts)]
    if finding.rule in _DIFF_RULES:
        lines += [paint(_DIM, f"{'':13}{printable(e)}") for e in finding.evidence[:_MAX_DIFF_EVIDENCE]]
        return lines
    lines += [paint(_DIM, f"{'':13}evidence: {printable(e)}") for e in finding.evidence[:_MAX_EVIDENCE]]
    if len(finding.evidence) > _MAX_EVIDENCE:
        lines.append(paint(_DIM, f"{'':13}... and {len(finding.evidence) - _MAX_EVIDENCE} more"))
    return lines


@REPORT_FORMATS.register("text")
def _text(result: VerifyResult, fail_on: Severity, color: bool) -> str:
    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    lines = [f"verify: {printable(result.cassette)} -> {printable(result.candidate)}"]
    if result.compared:
        lines.append(f"compared: {printable(_compared_line(result.compared))}")
    lines.append("")
    if not result.findings:
        lines += ["no drift found", ""]
    repeated = _repeated(result.findings)
    in_groups = {id(f) for group in repeated for f in group}
    for group, findings in _grouped([f for f in result.findings if id(f) not in in_groups]):
        lines.append(paint(_BOLD, printable(_group_title(group))))
        for finding in findings:
            lines += _text_line(finding, paint)
        lines.append("")
    if repeated:
        lines.append(
            paint(
                _BOLD,
                f"repeated ({len(in_groups)} findings of {len(repeated)} kind{'' if len(repeated) == 1 else 's'};"
                " --format json lists each)",
            )
        )
        for items in repeated:
            kinds = {f.kind for f in items}
            noun = (kinds.pop().replace("_", " ") if len(kinds) == 1 else "subject") + "s"
            head = _text_line(_repeated_finding(items), paint)[0]
            names = sorted({str(f.tool) for f in items})
            lines.append(f"{head}  [{len(names)} {noun}]")
            lines += [paint(_DIM, line) for line in _wrapped([printable(n) for n in names], " " * 13)]
        lines.append("")
    if result.ignored:
        lines.append(paint(_BOLD, f"ignored by the ignore file ({len(result.ignored)})"))
        for finding, reason in _sorted_ignored(result.ignored):
            lines.append(
                f"  {finding.severity.name:<4} {finding.rule:<4} {printable(_where(finding))}  {printable(reason)}"
            )
        lines.append("")
    verdict = _RED if result.exit_code(fail_on) else _GREEN
    lines.append(paint(verdict, _summary_line(result, fail_on, grouped=True)))
    return _finish(lines)


# --- json ------------------------------------------------------------------------------------


def _json_doc(result: VerifyResult, fail_on: Severity) -> dict[str, Any]:
    return {
        "version": REPORT_VERSION,
        "cassette": result.cassette,
        "candidate": result.candidate,
        "fail_on": fail_on.name,
        "result": "fail" if result.exit_code(fail_on) else "pass",
        "counts": result.counts(),
        "compared": dict(_compared_items(result.compared)),
        "findings": [f.to_dict() for f in _sorted(result.findings)],
        "ignored": [{**f.to_dict(), "reason": reason} for f, reason in _sorted_ignored(result.ignored)],
    }


def _json(result: VerifyResult, fail_on: Severity) -> str:
    return json_text(_json_doc(result, fail_on))


def _html(result: VerifyResult, fail_on: Severity) -> str:
    """One self-contained page: findings by severity and rule, old and new side by side."""
    from harn_mcp_mock.report.page import render_page

    doc = json.loads(json.dumps(_json_doc(result, fail_on), ensure_ascii=False, default=str))
    return render_page(
        {"kind": "verify", "title": "harn mcp mock verify", "report": doc, "rules": RULE_TITLES}
    )


# --- markdown --------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<|~&])")
_NEWLINES = re.compile(r"\r\n|\r|\n")


def _md_text(text: str) -> str:
    """Plain text safe in a table cell: Markdown punctuation escaped, newlines as ``<br>``."""
    return "<br>".join(_MD_SPECIAL.sub(r"\\\1", printable(part)) for part in _NEWLINES.split(text))


def _md_code(text: str, *, cell: bool = True) -> str:
    """A code span that survives backticks in ``text``; ``|`` escaped inside table cells."""
    if not text:
        return ""
    text = printable(_NEWLINES.sub(" ", text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip()) else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return span.replace("|", "\\|") if cell else span


def _md_table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    align = align or ["---"] * len(header)
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _md_change(finding: Finding) -> str:
    cell = _md_text(finding.message) + _change_text(finding, _md_code)
    evidence = finding.evidence[:_MAX_EVIDENCE]
    if evidence:
        more = len(finding.evidence) - len(evidence)
        cell += (
            "<br>Evidence: "
            + "; ".join(_md_text(e) for e in evidence)
            + (f"; and {more} more" if more else "")
        )
    return cell


def _markdown(result: VerifyResult, fail_on: Severity) -> str:
    verdict = "FAIL" if result.exit_code(fail_on) else "PASS"
    counts = result.counts()
    lines = [
        f"## {_TOOL_NAME}: {verdict}",
        "",
        f"Baseline {_md_code(result.cassette, cell=False)}, candidate {_md_code(result.candidate, cell=False)}, "
        f"fail-on {fail_on.name}.",
        "",
        *_md_table(
            ["Severity", "Count"],
            [[name, str(counts[name])] for name in ("ERR", "WARN", "INFO")]
            + [["ignored", str(len(result.ignored))]],
            ["---", "---:"],
        ),
        "",
    ]
    if result.compared:
        lines += [f"Compared: {_md_text(_compared_line(result.compared))}.", ""]
    if not result.findings:
        lines += ["No drift found.", ""]
    repeated = _repeated(result.findings)
    in_groups = {id(f) for group in repeated for f in group}
    for group, findings in _grouped([f for f in result.findings if id(f) not in in_groups]):
        kind, name = group
        title = "server" if name is None else f"{kind.replace('_', ' ')} {_md_code(name, cell=False)}"
        rows = [[f.severity.name, f.rule, _md_code(f.pointer), _md_change(f)] for f in findings]
        lines += [f"### {title}", "", *_md_table(["Severity", "Rule", "Pointer", "Change"], rows), ""]
    if repeated:
        rows = []
        for items in repeated:
            shown = _repeated_finding(items)
            names = sorted({str(f.tool) for f in items})
            subjects = f"{len(names)}: " + ", ".join(_md_code(n) for n in names)
            rows.append(
                [shown.severity.name, shown.rule, _md_code(shown.pointer), _md_change(shown), subjects]
            )
        lines += [
            f"### repeated ({len(in_groups)} findings; `--format json` lists each)",
            "",
            *_md_table(["Severity", "Rule", "Pointer", "Change", "Subjects"], rows),
            "",
        ]
    if result.ignored:
        rows = [
            [f.severity.name, f.rule, _md_text(_subject(f)), _md_code(f.pointer), _md_text(reason)]
            for f, reason in _sorted_ignored(result.ignored)
        ]
        lines += [
            "<details>",
            f"<summary>{len(result.ignored)} ignored by the ignore file</summary>",
            "",
            *_md_table(["Severity", "Rule", "Subject", "Pointer", "Reason"], rows),
            "",
            "</details>",
            "",
        ]
    lines.append(_summary_line(result, fail_on, grouped=True))
    return _finish(lines)


# --- junit -----------------------------------------------------------------------------------


def _headline(finding: Finding) -> str:
    """``ERR I1 (title) /pointer: message`` on one line, for JUnit."""
    title = RULE_TITLES.get(finding.rule, finding.rule)
    where = f" {finding.pointer}" if finding.pointer else ""
    return _NEWLINES.sub(" ", f"{finding.severity.name} {finding.rule} ({title}){where}: {finding.message}")


def _plain_lines(finding: Finding) -> str:
    """The headline, then old/new and evidence lines."""
    lines = [_headline(finding)]
    lines += [
        f"  {side}: {_compact(value)}"
        for side, value in (("old", finding.old), ("new", finding.new))
        if value is not None
    ]
    lines += [f"  evidence: {e}" for e in finding.evidence]
    return "\n".join(lines)


def _junit(result: VerifyResult, fail_on: Severity) -> str:
    groups: dict[Group, tuple[list[Finding], list[tuple[Finding, str]]]] = {}
    for finding in result.findings:
        groups.setdefault(_group(finding), ([], []))[0].append(finding)
    for finding, reason in result.ignored:
        groups.setdefault(_group(finding), ([], []))[1].append((finding, reason))

    cases = []
    for group in sorted(groups, key=_group_key):
        kind, name = group
        kept, ignored = groups[group]
        case = JunitCase(kind, name or "server", failure_type="drift")
        failing = [f for f in _sorted(kept) if f.severity >= fail_on]
        if failing:
            case.failure = _headline(failing[0])
            if len(failing) > 1:
                case.failure += f" (and {len(failing) - 1} more at or above {fail_on.name})"
            case.details = "\n".join(_plain_lines(f) for f in failing)
        out = [_plain_lines(f) for f in _sorted(kept) if f.severity < fail_on]
        out += [f"ignored ({reason}): {_plain_lines(f)}" for f, reason in _sorted_ignored(ignored)]
        case.out = "\n".join(out)
        cases.append(case)
    if not groups:
        cases.append(JunitCase("verify", "no drift"))
    properties = (("cassette", result.cassette), ("candidate", result.candidate), ("fail_on", fail_on.name))
    return junit_xml(_TOOL_NAME, cases, properties)


# --- sarif -----------------------------------------------------------------------------------


def _fingerprint(finding: Finding) -> str:
    key = "\x00".join((finding.rule, finding.kind, finding.tool or "", finding.pointer))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _sarif(result: VerifyResult, fail_on: Severity) -> str:
    findings = _sorted(result.findings)
    rule_ids = sorted({f.rule for f in findings}, key=_rule_key)
    index = {rule: i for i, rule in enumerate(rule_ids)}
    rules = [sarif_rule(Rule(rule, RULE_TITLES.get(rule, rule))) for rule in rule_ids]
    results = [
        sarif_result(
            f,
            rule_index=index[f.rule],
            message=f"{_where(f)}: {f.message}{_change_text(f)}",
            default_file=result.cassette,
            logical={
                "name": _subject(f),
                "fullyQualifiedName": f"{_subject(f)}{f.pointer}",
                "kind": "member",
            },
            fingerprint=("harnMcpMockFinding/v1", _fingerprint(f)),
            properties={
                "severity": f.severity.name,
                "kind": f.kind,
                "tool": f.tool,
                "pointer": f.pointer,
                "old": f.old,
                "new": f.new,
                "evidence": f.evidence,
            },
        )
        for f in findings
    ]
    return sarif_log(
        tool=_TOOL_NAME,
        rules=rules,
        results=results,
        properties={
            "candidate": result.candidate,
            "fail_on": fail_on.name,
            "result": "fail" if result.exit_code(fail_on) else "pass",
            "counts": result.counts(),
            "compared": dict(_compared_items(result.compared)),
            "ignored": len(result.ignored),
        },
    )


# --- github ----------------------------------------------------------------------------------


def _github(result: VerifyResult, fail_on: Severity) -> str:
    lines = [
        github_annotation(
            f,
            title=f"{f.rule} {RULE_TITLES.get(f.rule, f.rule)}",
            message=f"{_where(f)}: {f.message}{_change_text(f)}",
            default_file=result.cassette if f.line is not None else None,
        )
        for f in _sorted(result.findings)
    ]
    lines.append(_summary_line(result, fail_on))
    return _finish(lines)


def _without_color(
    renderer: Callable[[VerifyResult, Severity], str],
) -> Callable[[VerifyResult, Severity, bool], str]:
    """A renderer that has no colours, with the registry's signature."""

    def render(result: VerifyResult, fail_on: Severity, color: bool) -> str:
        return renderer(result, fail_on)

    return render


for _name, _renderer in (
    ("json", _json),
    ("markdown", _markdown),
    ("junit", _junit),
    ("sarif", _sarif),
    ("github", _github),
    ("html", _html),
):
    REPORT_FORMATS.register(_name)(_without_color(_renderer))

FORMATS = REPORT_FORMATS.names
"""The format names, ``text`` first (what ``--format`` accepts)."""
