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
    pointer = "/messages/3/*"                          # optional glob
    reason = "a deliberately poisoned server for the agent's red-team test"

An allowlist entry without a reason, an unknown rule id or key, or a bad severity is refused with
one line naming the field (exit 2).
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Severity
from harn_mcp_mock.lint.rules import RULES

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
                if fnmatch.fnmatchcase(pointer, entry.pointer):
                    return entry.reason
        return None


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
            raise UsageError("path and pointer are glob strings", path=path, where=where)
        config.allow.append(
            Allow(str(rule), entry.get("path", "*"), entry.get("pointer", "*"), reason.strip())
        )
    return config
