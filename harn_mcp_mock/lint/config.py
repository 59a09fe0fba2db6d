"""The lint configuration: ``[tool.harn-mcp-mock.lint]`` in ``pyproject.toml``::

    [tool.harn-mcp-mock.lint]
    disable = ["H2"]                     # or: enable = ["S1", "P1", ...] (only those)
    severity = { P6 = "INFO" }          # per rule: ERR | WARN | INFO
    fail-on = "WARN"                     # default ERR (the command line's --fail-on wins)
    max-age-days = 90                    # H2; off unless set (or --max-age)
    redact-policy = "redaction.json"     # S1's detectors (default: the default policy)

    [[tool.harn-mcp-mock.lint.allow]]
    rule = "P1"
    path = "tests/cassettes/poisoned/*.cassette.json"   # a glob, from the project root
    pointer = "/messages/3/**"                         # optional pointer pattern
    reason = "a deliberately poisoned server for the agent's red-team test"

An allowlist entry without a reason, an unknown rule id or key, or a bad severity is refused with
one line naming the field (exit 2).

An entry's ``pointer`` is a pattern in the one pointer-pattern dialect
(:func:`harn_mcp_mock.store.pointer.compile_pattern`; docs/cli.md "JSON pointer patterns") that
must match the finding's whole pointer; left out or ``"*"``, it matches any. A pattern ``fnmatch``
(which read it before the dialect) could match a pointer with that the dialect would not is an
*old spelling* (:func:`_old_spelling` says which): it still matches as ``fnmatch`` did, with one
deprecation line on stderr naming the file and entry, so no finding an allowlist let through
comes back.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Severity
from harn_mcp_mock.lint.rules import RULES
from harn_mcp_mock.store import pointer as jsonptr

__all__ = ["Allow", "LintConfig", "load_config"]

_KEYS = {"enable", "disable", "severity", "fail-on", "max-age-days", "redact-policy", "allow"}


@dataclass(frozen=True, slots=True)
class Allow:
    rule: str
    path: str
    pointer: str
    reason: str


@dataclass(slots=True)
class LintConfig:
    enable: frozenset[str] | None = None
    disable: frozenset[str] = frozenset()
    severities: dict[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.ERR
    max_age_days: int | None = None
    redact_policy: Path | None = None
    allow: list[Allow] = field(default_factory=list)
    source: str | None = None

    def enabled(self, rule: str) -> bool:
        return (self.enable is None or rule in self.enable) and rule not in self.disable

    def severity(self, rule: str, default: Severity) -> Severity:
        return self.severities.get(rule, default)

    def allowed(self, rule: str, file: str, pointer: str) -> str | None:
        for entry in self.allow:
            if entry.rule in (rule, "*") and fnmatch.fnmatchcase(file, entry.path):
                if _pointer_matches(entry.pointer, pointer):
                    return entry.reason
        return None


# --- allowlist pointers: the one dialect, old fnmatch spellings still read as before -----------


def _pointer_matches(pattern: str, pointer: str) -> bool:
    if pattern == "*":
        return True
    if _old_spelling(pattern):
        return fnmatch.fnmatchcase(pointer, pattern)
    return jsonptr.matches(pattern, pointer)


def _fnmatch_class(pattern: str) -> bool:
    """Whether ``fnmatch`` reads a ``[...]`` character class in ``pattern`` (a ``[`` with no ``]``
    after it is a literal ``[`` to it, as to the dialect); the scan is :func:`fnmatch.translate`'s."""
    i, n = 0, len(pattern)
    while i < n:
        i += 1
        if pattern[i - 1] == "[":
            j = i + 1 if i < n and pattern[i] == "!" else i
            j = j + 1 if j < n and pattern[j] == "]" else j
            if pattern.find("]", j) >= 0:
                return True
    return False


def _star_reaches_out(segments: list[str]) -> bool:
    """Whether a ``*`` (other than a segment ``**``) in these raw segments of a pattern can match,
    for ``fnmatch``, more than the dialect's: text holding a ``/`` that no ``**`` segment could
    take instead, or the ``~`` of a ``~0``/``~1`` escape (a ``*`` just before a ``0`` or ``1``).

    A ``*`` of a segment ``t0*t1*...*tm`` that crosses ``/`` leaves the segment's head in one
    segment and its tail in a later one. A ``**`` segment before it, with nothing but segments
    ``*`` between, takes the head's segments when the pieces before the star are empty
    (``/**/*-log``); one after it the tail's when the pieces after it are (``/log-*/**``,
    ``/messages/3/*/**``, ``/a/*/*/**``)."""

    def next_to_any_depth(k: int, step: int) -> bool:
        k += step
        while 0 <= k < len(segments) and segments[k] == jsonptr.ANY:
            k += step
        return 0 <= k < len(segments) and segments[k] == jsonptr.ANY_DEPTH

    for k, segment in enumerate(segments):
        if "*" not in segment or segment == jsonptr.ANY_DEPTH:
            continue
        before, after = next_to_any_depth(k, -1), next_to_any_depth(k, 1)
        pieces = segment.split("*")
        for i in range(1, len(pieces)):  # the star between pieces[i - 1] and pieces[i]
            if pieces[i][:1] in ("0", "1"):
                return True
            if not (before and not any(pieces[:i])) and not (after and not any(pieces[i:])):
                return True
    return False


@lru_cache(maxsize=256)
def _old_spelling(pattern: str) -> bool:
    """Whether ``fnmatch`` over the whole pointer (the allowlist's reading before the one dialect)
    can match a pointer with ``pattern`` that the dialect does not: it does not start with ``/``
    (``*`` alone, any pointer, aside), holds a ``?`` or a ``[...]`` class, a malformed ``~``
    escape, or a ``*`` that can reach across a ``/`` (:func:`_star_reaches_out`).

    The other way round, the dialect matches more only where a segment ``**`` matches no segment
    (``/a/**/b`` is ``/a/b`` too): an allowlist grows by it, never shrinks."""
    if pattern == "" or pattern == "*":
        return False
    if not pattern.startswith("/") or "?" in pattern or _fnmatch_class(pattern):
        return True
    try:
        jsonptr.split(pattern)
    except ValueError:
        return True
    return _star_reaches_out(pattern[1:].split("/"))


def _new_spelling(pattern: str) -> str:
    """What to write instead of an old spelling (the advice of the deprecation line): the same
    matches in the dialect where one pattern says them, else how to."""
    if "?" in pattern or _fnmatch_class(pattern):
        return "write it with '*' within a segment and '**' for any depth: the dialect has no '?' or '[...]'"
    if not pattern.startswith(("/", "*")):
        return "it matches no pointer: a pointer pattern starts with '/'"
    if pattern.startswith("/"):
        new = pattern
    else:
        rest = pattern.lstrip("*")
        new = "/**" + rest if rest.startswith("/") or not rest else "/**/*" + rest
    try:
        jsonptr.split(new)
    except ValueError:
        return "write '~0' for '~' and '~1' for '/': a '~' must be followed by 0 or 1"
    segments = new[1:].split("/")
    out: list[str] = []
    for k, segment in enumerate(segments):
        lone = segment.count("*") == 1
        if lone and segment != jsonptr.ANY and segment.startswith("*") and out[-1:] != [jsonptr.ANY_DEPTH]:
            out.append(jsonptr.ANY_DEPTH)  # '*-log' -> '**/*-log'
        out.append(segment)
        if lone and segment.endswith("*") and segments[k + 1 : k + 2] != [jsonptr.ANY_DEPTH]:
            out.append(jsonptr.ANY_DEPTH)  # '*' -> '*/**', 'log-*' -> 'log-*/**'
    new = "/" + "/".join(out)
    if _old_spelling(new):
        return "write a '**' segment where a '*' is to reach across '/': the dialect's '*' stays within a segment"
    return f"write {new!r}"


def _severity(value: Any, where: str, path: Path) -> Severity:
    try:
        return Severity[str(value).upper()]
    except KeyError:
        raise UsageError(f"{value!r} is not a severity (ERR, WARN, INFO)", path=path, where=where) from None


def _rules(value: Any, where: str, path: Path) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError("expected a list of rule ids", path=path, where=where)
    unknown = sorted(set(value) - set(RULES))
    if unknown:
        raise UsageError(f"unknown rule {unknown[0]!r} (rules: {', '.join(RULES)})", path=path, where=where)
    return frozenset(value)


def load_config(root: Path, explicit: Path | None = None) -> LintConfig:
    """The configuration in ``explicit`` (a pyproject.toml) or ``root/pyproject.toml``; the
    defaults when there is none or it has no lint table."""
    path = explicit or root / "pyproject.toml"
    if not path.exists():
        if explicit is not None:
            raise UsageError(f"{path}: no such file", where="--config")
        return LintConfig()
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"not readable TOML ({exc})", path=path) from None
    table = doc.get("tool", {}).get("harn-mcp-mock", {}).get("lint")
    if table is None:
        return LintConfig(source=str(path))
    base = "tool.harn-mcp-mock.lint"
    if not isinstance(table, dict):
        raise UsageError("expected a table", path=path, where=base)
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise UsageError(
            f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})", path=path, where=base
        )
    config = LintConfig(source=str(path))
    if "enable" in table:
        config.enable = _rules(table["enable"], f"{base}.enable", path)
    if "disable" in table:
        config.disable = _rules(table["disable"], f"{base}.disable", path)
    severities = table.get("severity", {})
    if not isinstance(severities, dict):
        raise UsageError("expected a table of rule = severity", path=path, where=f"{base}.severity")
    for rule, value in severities.items():
        _rules([rule], f"{base}.severity", path)
        config.severities[rule] = _severity(value, f"{base}.severity.{rule}", path)
    if "fail-on" in table:
        config.fail_on = _severity(table["fail-on"], f"{base}.fail-on", path)
    if "max-age-days" in table:
        days = table["max-age-days"]
        if isinstance(days, bool) or not isinstance(days, int) or days < 0:
            raise UsageError("expected a whole number of days", path=path, where=f"{base}.max-age-days")
        config.max_age_days = days
    if "redact-policy" in table:
        config.redact_policy = path.parent / str(table["redact-policy"])
    allows = table.get("allow", [])
    if not isinstance(allows, list):
        raise UsageError("expected an array of tables ([[...allow]])", path=path, where=f"{base}.allow")
    for i, entry in enumerate(allows):
        where = f"{base}.allow[{i}]"
        if not isinstance(entry, dict):
            raise UsageError("expected a table", path=path, where=where)
        extra = sorted(set(entry) - {"rule", "path", "pointer", "reason"})
        if extra:
            raise UsageError(
                f"unknown key {extra[0]!r} (keys: rule, path, pointer, reason)", path=path, where=where
            )
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError("every allowlist entry needs a reason", path=path, where=f"{where}.reason")
        rule = entry.get("rule", "*")
        if rule != "*":
            _rules([rule], f"{where}.rule", path)
        if not isinstance(entry.get("path", "*"), str) or not isinstance(entry.get("pointer", "*"), str):
            raise UsageError(
                "path is a glob string and pointer a pointer pattern string", path=path, where=where
            )
        pattern = entry.get("pointer", "*")
        if _old_spelling(pattern):
            jsonptr.warn_old_spelling(f"{path}:{where}.pointer", pattern, _new_spelling(pattern))
        config.allow.append(Allow(str(rule), entry.get("path", "*"), pattern, reason.strip()))
    return config
