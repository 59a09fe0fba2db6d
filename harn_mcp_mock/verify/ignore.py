"""Ignore files for ``verify``: accepted drift, each entry with the reason it was accepted.

Two formats, chosen by the file's extension (``docs/verify-report-formats.md`` has examples):

- ``*.json``: ``{"version": 1, "ignore": [{"rule": "B7", "tool": "get_current_time",
  "pointer": "/structuredContent/datetime", "reason": "wall-clock value"}]}``; ``rule``,
  ``tool`` and ``pointer`` may be left out, ``null`` or ``"*"`` to match anything.
- anything else: one entry a line, ``RULE TOOL POINTER  # reason`` (``*`` for any), in the
  spirit of oasdiff's ``--err-ignore`` file; blank lines and ``#`` comment lines are skipped.

Matching (the first entry that matches a finding wins and gives its reason):

- ``rule``: an id from :data:`RULE_TITLES` (``I1``), a whole family (``I*``, ``B*``), or any.
  Ids are checked, so a typo is an error rather than an ignore that never fires.
- ``tool``: the tool, resource or prompt name, or an :func:`fnmatch` glob over it
  (case-sensitive). A specific pattern never matches server-level findings (no name).
- ``pointer``: a pattern in the one pointer-pattern dialect (:func:`harn_mcp_mock.store.pointer.
  compile_pattern`; docs/cli.md "JSON pointer patterns") that matches the finding's pointer or
  one of its ancestors, so it covers everything at and below what it names:
  ``/structuredContent`` matches ``/structuredContent/datetime`` but not
  ``/structuredContentX``, ``/content/*/text`` any element's text, ``/**/datetime`` any pointer
  that has a ``datetime`` segment. The old fnmatch globs (a pattern not starting with ``/``,
  such as ``*/datetime``, or one holding ``?`` or ``[``) still match as they did, with one
  deprecation line on stderr naming the file and entry.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Finding
from harn_mcp_mock.inputs import read_input
from harn_mcp_mock.store import pointer as jsonptr
from harn_mcp_mock.verify.findings import RULE_TITLES

__all__ = ["IgnoreRule", "apply_ignores", "load_ignore_file"]

_VERSION = 1
"""The ``version`` a JSON ignore file declares."""

_FAMILIES = frozenset(re.sub(r"\d+$", "", rule) for rule in RULE_TITLES)
_ENTRY_FIELDS = ("rule", "tool", "pointer", "reason")


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    rule: str | None
    """A rule id (``I1``), a family (``I*``), or None for any rule."""
    tool: str | None
    """A tool/resource/prompt name or fnmatch glob, or None for any (including server-level)."""
    pointer: str | None
    """A pointer pattern matching at or above the finding's pointer (or an old fnmatch glob), or
    None for any pointer."""
    reason: str
    """Why this drift is accepted; never empty."""

    def matches(self, finding: Finding) -> bool:
        return (
            _rule_matches(self.rule, finding.rule)
            and (self.tool is None or (finding.tool is not None and fnmatchcase(finding.tool, self.tool)))
            and (self.pointer is None or _pointer_matches(self.pointer, finding.pointer))
        )


def apply_ignores(
    findings: list[Finding], rules: list[IgnoreRule]
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """Split ``findings`` into (kept, [(ignored, reason)]), both in input order.

    The first rule (in file order) that matches a finding supplies the reason.
    """
    kept: list[Finding] = []
    ignored: list[tuple[Finding, str]] = []
    for finding in findings:
        reason = next((rule.reason for rule in rules if rule.matches(finding)), None)
        if reason is None:
            kept.append(finding)
        else:
            ignored.append((finding, reason))
    return kept, ignored


def load_ignore_file(path: str | Path) -> list[IgnoreRule]:
    """Read an ignore file (JSON for ``*.json``, the line format otherwise).

    Raises :class:`UsageError` (exit 2) naming the file and the line or field at fault.
    """
    path = Path(path)
    try:
        data = read_input(path)
    except FileNotFoundError:
        raise UsageError("no such ignore file", path=path) from None
    except OSError as exc:
        raise UsageError(f"cannot read ignore file: {exc.strerror or exc}", path=path) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError("not UTF-8 text", path=path, where=str(line)) from None
    if path.suffix.lower() == ".json":
        return _load_json(text, path)
    return _load_lines(text, path)


# --- matching --------------------------------------------------------------------------------


def _rule_matches(pattern: str | None, rule: str) -> bool:
    if pattern is None:
        return True
    if pattern.endswith("*"):
        return re.sub(r"\d+$", "", rule) == pattern[:-1]
    return rule == pattern


def _pointer_prefixes(pointer: str) -> list[str]:
    """``/a/b`` -> ``["", "/a", "/a/b"]``: the pointer and every whole-segment prefix."""
    parts = pointer.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _old_spelling(pattern: str) -> bool:
    """Whether ``pattern`` is one of the fnmatch globs ignore files took before the one dialect."""
    return not pattern.startswith("/") or "?" in pattern or "[" in pattern


def _new_spelling(pattern: str) -> str:
    """What to write instead of an old fnmatch glob (the advice of the deprecation line)."""
    if pattern.startswith("/"):
        return "write it with '*' within a segment and '**' for any depth: the dialect has no '?' or '[...]'"
    rest = pattern.lstrip("*")
    new = "/**" + rest if rest.startswith("/") or not rest else "/**/*" + rest
    return f"write {new!r}"


def _pointer_matches(pattern: str, pointer: str) -> bool:
    if _old_spelling(pattern):
        return any(fnmatchcase(prefix, pattern) for prefix in _pointer_prefixes(pointer))
    try:
        segments = jsonptr.split(pointer)
    except ValueError:
        return False
    parts = jsonptr.compile_pattern(pattern)
    return any(jsonptr.pattern_matches(parts, segments[:n]) for n in range(len(segments) + 1))


# --- parsing ---------------------------------------------------------------------------------


class _Problem(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def _rule_field(value: str, where: str) -> str | None:
    text = value.strip().upper()
    if text == "*":
        return None
    if text.endswith("*") and text[:-1] in _FAMILIES:
        return text
    if text in RULE_TITLES:
        return text
    raise _Problem(where, f"unknown rule id {value!r}: use a rule id such as I1, a family such as I*, or *")


def _tool_field(value: str, where: str) -> str | None:
    if not value:
        raise _Problem(where, "must not be empty (use * for any tool)")
    return None if value == "*" else value


def _pointer_field(value: str, where: str, path: Path) -> str | None:
    if value in ("", "*"):
        return None
    if not value.startswith(("/", "*")):
        raise _Problem(
            where, f"pointer {value!r} must start with '/' (a JSON pointer) or be a glob starting with '*'"
        )
    if _old_spelling(value):
        jsonptr.warn_old_spelling(f"{path}:{where}", value, _new_spelling(value))
    else:
        try:
            jsonptr.compile_pattern(value)
        except ValueError as exc:
            raise _Problem(where, f"pointer {value!r}: {exc}") from None
    return value


def _reason_field(value: str, where: str) -> str:
    reason = value.strip()
    if not reason:
        raise _Problem(where, "every ignore entry needs a reason")
    return reason


_LINE = re.compile(r"(?P<body>.*?)(?:(?:^|\s)#(?P<reason>.*))?$")


def _load_lines(text: str, path: Path) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = str(number)
        try:
            match = _LINE.match(line)
            assert match is not None  # the pattern matches every string
            fields = match["body"].split()
            if len(fields) != 3:
                raise _Problem(
                    where,
                    f"expected 'RULE TOOL POINTER  # reason', got {len(fields)} field(s) before the '#'",
                )
            if match["reason"] is None:
                raise _Problem(where, "every ignore entry needs a reason: end the line with '# why'")
            rules.append(
                IgnoreRule(
                    rule=_rule_field(fields[0], where),
                    tool=_tool_field(fields[1], where),
                    pointer=_pointer_field(fields[2], where, path),
                    reason=_reason_field(match["reason"], where),
                )
            )
        except _Problem as problem:
            raise UsageError(problem.message, path=path, where=problem.where) from None
    return rules


def _optional_string(entry: dict[str, Any], field: str, where: str) -> str | None:
    value = entry.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Problem(f"{where}.{field}", "must be a string or null")
    return value


def _json_entry(entry: Any, where: str, path: Path) -> IgnoreRule:
    if not isinstance(entry, dict):
        raise _Problem(
            where, 'must be an object like {"rule": "B7", "tool": "...", "pointer": "/...", "reason": "..."}'
        )
    for field in sorted(entry):
        if field not in _ENTRY_FIELDS:
            raise _Problem(f"{where}.{field}", "unknown field; known fields: " + ", ".join(_ENTRY_FIELDS))
    rule = _optional_string(entry, "rule", where)
    tool = _optional_string(entry, "tool", where)
    pointer = _optional_string(entry, "pointer", where)
    reason = entry.get("reason")
    if not isinstance(reason, str):
        raise _Problem(f"{where}.reason", "every ignore entry needs a reason (a non-empty string)")
    return IgnoreRule(
        rule=None if rule is None else _rule_field(rule, f"{where}.rule"),
        tool=None if tool is None else _tool_field(tool, f"{where}.tool"),
        pointer=None if pointer is None else _pointer_field(pointer, f"{where}.pointer", path),
        reason=_reason_field(reason, f"{where}.reason"),
    )


def _load_json(text: str, path: Path) -> list[IgnoreRule]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"not valid JSON: {exc.msg}", path=path, where=f"{exc.lineno}:{exc.colno}") from None
    try:
        if not isinstance(doc, dict):
            raise _Problem("", 'must be a JSON object like {"version": 1, "ignore": [...]}')
        for field in sorted(doc):
            if field not in ("version", "ignore"):
                raise _Problem(field, "unknown field; known fields: version, ignore")
        version = doc.get("version")
        if version != _VERSION or isinstance(version, bool):
            raise _Problem("version", f"must be {_VERSION}, got {json.dumps(version)}")
        entries = doc.get("ignore")
        if not isinstance(entries, list):
            raise _Problem("ignore", "must be a list of entries")
        return [_json_entry(entry, f"ignore[{i}]", path) for i, entry in enumerate(entries)]
    except _Problem as problem:
        raise UsageError(problem.message, path=path, where=problem.where or None) from None
