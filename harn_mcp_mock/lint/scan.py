"""``harn mcp mock lint``: every cassette under the given paths, checked by the rules of
:mod:`harn_mcp_mock.lint.rules`, filtered by the project's configuration.

A finding names the file and a JSON pointer into it (``/messages/12/message/result/tools/0/
description``) and never the secret or more than a short excerpt of the text it is about.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.errors import HarnError, UsageError
from harn_mcp_mock.findings.locate import CassetteLocator
from harn_mcp_mock.findings.model import Finding, Severity
from harn_mcp_mock.lint.config import LintConfig
from harn_mcp_mock.lint.rules import RULES, distinctive, mentions, poisoning, poisoning_at, shadowing
from harn_mcp_mock.store.pointer import escape

__all__ = ["SKIP_DIRS", "LintResult", "find_cassettes", "lint_paths"]

SUFFIX = ".cassette.json"
SKIP_DIRS = frozenset(
    {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".pytest_cache"}
)
_SURFACE_METHODS = {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "initialize"}
_RESULT_METHODS = {"tools/call", "prompts/get", "resources/read", "sampling/createMessage"}


@dataclass(slots=True)
class LintResult:
    files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    allowed: list[tuple[Finding, str]] = field(default_factory=list)
    """Findings an allowlist entry suppressed, with its reason."""

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("ERR", "WARN", "INFO"), 0)
        for finding in self.findings:
            counts[finding.severity.name] += 1
        return counts

    def exit_code(self, fail_on: Severity) -> int:
        return int(any(f.severity >= fail_on for f in self.findings))


def find_cassettes(paths: Sequence[str | Path], root: Path) -> list[Path]:
    """The cassettes under ``paths`` (files or folders); with none, every ``cassettes/`` folder
    under ``root`` (where the pytest plugin keeps them: ``<test dir>/cassettes/``)."""
    found: list[Path] = []
    if not paths:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".cas"))
            if "cassettes" in Path(folder).relative_to(root).parts:
                found += [Path(folder) / f for f in sorted(files) if f.endswith(SUFFIX)]
        return found
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".cas"))
                found += [Path(folder) / f for f in sorted(files) if f.endswith(SUFFIX)]
        elif path.exists():
            found.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder", where="PATHS")
    return found


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string of a JSON value (keys included) with its pointer."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{escape(str(key))}"
            yield child, str(key)
            yield from _strings(item, child)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{i}")


_LINE_COLUMN = re.compile(r"(\d+):(\d+)")
_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _unreadable_at(where: str | None) -> tuple[str, tuple[int, int] | None]:
    """Where the loader said a cassette is unreadable, as a pointer or a line and column: it says
    ``LINE:COLUMN`` for text that is not JSON, ``$`` for the whole document, else a path such as
    ``messages[3].blob``."""
    if not where or where == "$":
        return "", None
    line_column = _LINE_COLUMN.fullmatch(where)
    if line_column:
        return "", (int(line_column[1]), int(line_column[2]))
    return "".join("/" + escape(index or key) for index, key in _STEP.findall(where)), None


class _Linter:
    def __init__(self, config: LintConfig, used: set[str] | None, now: dt.datetime) -> None:
        self.config = config
        self.used = used
        self.now = now
        self.out: list[Finding] = []
        self.file = ""
        self.servers: dict[str, set[str]] = {}
        """Server name -> the tools it offers, over every cassette of the run (P6 across servers)."""
        self.offsets: dict[tuple[str, str, str], int] = {}
        """(file, pointer, rule) -> where in that string the finding's phrase starts."""
        self.learned: dict[str, tuple[str, str]] = {}
        """Value memory: each secret value a detector found -> (file, pointer) where first."""
        self.flagged: set[tuple[str, str]] = set()
        self.descriptions: list[tuple[str, str, str, str, str]] = []
        """(file, server, tool, pointer, description) of every tool description seen."""

    def add(
        self,
        rule: str,
        pointer: str,
        message: str,
        index: int | None = None,
        at: tuple[int, int] | None = None,
    ) -> None:
        """``at``: the finding's line and column when no pointer can say it (a file that is not JSON)."""
        if index:
            self.offsets[(self.file, pointer, rule)] = index
        finding = Finding(rule, RULES[rule].severity, None, pointer, message, kind="cassette", file=self.file)
        if at is not None:
            finding.line, finding.column = at
        self.out.append(finding)

    def lint(self, path: Path, shown: str) -> None:
        from harn_mcp_mock.cassette.model import load_cassette
        from harn_mcp_mock.cassette.unanswered import unanswered_requests

        self.file = shown
        try:
            cassette = load_cassette(path)
        except HarnError as exc:
            pointer, at = _unreadable_at(exc.where)
            self.add("H5", pointer, exc.message, at=at)
            return
        except OSError as exc:
            self.add("H5", "", f"cannot read it: {exc.strerror or exc}")
            return
        self._secrets(cassette)
        self._poisoning(cassette)
        if not cassette.complete:
            self.add("H4", "", "recovered from its journal: the recording did not end cleanly")
        for request in unanswered_requests(cassette):
            doc = request.to_dict()
            what = f"{doc.get('method')}" + (f" ({doc['tool']})" if doc.get("tool") else "")
            self.add(
                "H3",
                f"/messages/{doc.get('seq')}",
                f"the server never answered {what} (id {doc.get('id')!r})",
            )
        self._age(cassette)
        if self.used is not None and str(path.resolve()) not in self.used:
            self.add("H1", "", "no test used it in the last complete pytest run")

    def _age(self, cassette: Any) -> None:
        if self.config.max_age_days is None:
            return
        recorded = cassette.meta.get("recorded_at")
        try:
            when = dt.datetime.fromisoformat(str(recorded).replace("Z", "+00:00"))
        except ValueError:
            return
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        age = (self.now - when).days
        if age > self.config.max_age_days:
            self.add(
                "H2", "/recorded_at", f"recorded {age} days ago (max age {self.config.max_age_days} days)"
            )

    def _secrets(self, cassette: Any) -> None:
        redactor = self._policy().redactor()
        for key, value in sorted(cassette.meta.items()):
            self._compare(redactor, value, f"/{escape(key)}", lambda: "")
        blobs: set[int] | None = None  # read from the file only when a message holds a secret

        def in_blob(i: int) -> str:
            nonlocal blobs
            if blobs is None:
                blobs = self._blob_messages(cassette)
            return " (in its CAS blob)" if i in blobs else ""

        for i, msg in enumerate(cassette.messages):
            value, where = (msg.raw, "raw") if msg.invalid is not None else (msg.message, "message")
            if value:
                self._compare(redactor, value, f"/messages/{i}/{where}", functools.partial(in_blob, i))

    @staticmethod
    def _blob_messages(cassette: Any) -> set[int]:
        """Indexes of the messages the cassette keeps in its CAS sidecar."""
        import orjson

        if cassette.path is None or not cassette.path.exists():
            return set()
        try:
            doc = orjson.loads(cassette.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return set()
        entries = doc.get("messages") if isinstance(doc, dict) else None
        return {i for i, e in enumerate(entries or ()) if isinstance(e, dict) and "blob" in e}

    def _compare(self, redactor: Any, value: Any, pointer: str, note: Callable[[], str]) -> None:
        before = redactor.findings
        redacted = redactor.redact_message(value)
        if redacted is value:
            return
        after = redactor.findings
        rules = sorted(name for name, n in after.items() if n > before.get(name, 0)) or ["a detector"]
        where = note()
        for leaf in _changed(value, redacted, pointer):
            self.add(
                "S1",
                leaf,
                f"a secret ({', '.join(rules)}) left in the cassette{where}; the value is not shown",
            )
            self.flagged.add((self.file, leaf))
            before, after = _at(value, pointer, leaf), _at(redacted, pointer, leaf)
            if isinstance(before, str) and isinstance(after, str):
                for secret in _replaced(before, after):
                    self.learned.setdefault(secret, (self.file, leaf))

    def _policy(self) -> Any:
        from harn_mcp_mock.redact import RedactionPolicy

        if self.config.redact_policy:
            return RedactionPolicy.load(self.config.redact_policy)
        return RedactionPolicy.default()

    def remembered(self, paths: dict[str, Path]) -> None:
        """Value memory, run-wide: the redaction pipeline's own memory (``Redactor.learn``: the
        same values chased, the same encoded forms) is taught every secret value the detectors
        found in any cassette of the run, and every cassette is read again with it; a string it
        changes that no detector flagged holds such a value (before or after the spot it was
        found, in any message, the metadata or a CAS blob; whole, glued, URL-encoded,
        JSON-escaped or inside base64)."""
        if not self.learned:
            return
        from harn_mcp_mock.cassette.model import load_cassette

        memory = self._policy().redactor()
        taught = [memory.learn(secret, "lint") for secret in self.learned]
        if not any(taught):
            return
        for shown, path in paths.items():
            try:
                cassette = load_cassette(path)
            except (HarnError, OSError):
                continue
            self.file = shown
            values: list[tuple[str, Any]] = [(f"/{escape(k)}", v) for k, v in sorted(cassette.meta.items())]
            for i, msg in enumerate(cassette.messages):
                if msg.invalid is not None:
                    values.append((f"/messages/{i}/raw", msg.raw))
                else:
                    values.append((f"/messages/{i}/message", msg.message))
            for base, value in values:
                redacted = (
                    memory.redact_message(value) if not isinstance(value, str) else memory.redact_text(value)
                )
                if redacted is value or redacted == value:
                    continue
                for leaf in _changed(value, redacted, base):
                    if (shown, leaf) in self.flagged:
                        continue
                    self.flagged.add((shown, leaf))
                    text = _at(value, base, leaf)
                    first = next(
                        (
                            f"{f}:{p}"
                            for secret, (f, p) in self.learned.items()
                            if isinstance(text, str) and secret in text
                        ),
                        "elsewhere in this run",
                    )
                    where = first if first.startswith("elsewhere") else f"at {first}"
                    self.add(
                        "S1",
                        leaf,
                        f"the value of a secret found {where} left in the cassette (value memory); "
                        "the value is not shown",
                    )

    def _poisoning(self, cassette: Any) -> None:
        methods = {m.seq: m.method for m in cassette.messages if m.method}
        tools: list[str] = []
        for msg in cassette.messages:
            if methods.get(msg.reply_to if isinstance(msg.reply_to, int) else -1) == "tools/list":
                result = msg.message.get("result") if isinstance(msg.message, dict) else None
                for tool in (result or {}).get("tools") or ():
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        tools.append(tool["name"])
        server = _server_name(cassette, self.file)
        offered = self.servers.setdefault(server, set())
        offered.update(tools)
        for i, msg in enumerate(cassette.messages):
            if msg.direction != "server" or not isinstance(msg.message, dict):
                continue
            answered = methods.get(msg.reply_to) if isinstance(msg.reply_to, int) else None
            result = msg.message.get("result")
            where = f"/messages/{i}/message/result"
            if answered in _SURFACE_METHODS and isinstance(result, dict):
                key = _LISTED.get(answered)
                items = result.get(key) if key else None
                if isinstance(items, list):
                    for j, item in enumerate(items):
                        self._group(item, f"{where}/{key}/{j}", surface=True)
                    rest = {k: v for k, v in result.items() if k != key}
                    self._group(rest, where, surface=True)
                else:
                    self._group(result, where, surface=True)
                if answered == "tools/list":
                    for j, tool in enumerate(result.get("tools") or ()):
                        if isinstance(tool, dict) and isinstance(tool.get("description"), str):
                            pointer = f"{where}/tools/{j}/description"
                            found = shadowing(tool["description"], str(tool.get("name")), tools)
                            if found:
                                self.add("P6", pointer, f"tool {tool.get('name')!r} {found}")
                            self.descriptions.append(
                                (self.file, server, str(tool.get("name")), pointer, tool["description"])
                            )
            elif answered in _RESULT_METHODS and result is not None:
                self._group(result, where, surface=False)
            elif msg.method is not None and "params" in msg.message:  # a server request or notification
                self._group(msg.message["params"], f"/messages/{i}/message/params", surface=False)

    def _group(self, value: Any, pointer: str, *, surface: bool) -> None:
        """Every text of one tool, prompt, resource or result, alone and then joined (an
        instruction split across a description and its parameters' docs)."""
        where = "in a tool surface" if surface else "in a result (prompt injection, MCP06)"
        texts = [(p, t) for p, t in _strings(value, pointer) if len(t) >= 4]
        seen: set[str] = set()
        for text_pointer, text in texts:
            for rule, found, index in poisoning_at(text, surface=surface):
                seen.add(rule)
                self.add(rule, text_pointer, f"{found} {where}", index)
        prose = [t for p, t in _values(value, pointer) if len(t) >= 4 and not p.endswith(_NOT_PROSE)]
        if len(prose) < 2:
            return
        for rule, found in poisoning("\n".join(prose), surface=surface):
            if rule not in seen and rule != "P2":
                self.add(rule, pointer, f"{found} {where}, split across {len(prose)} fields of it")

    def cross_server(self) -> None:
        """P6 across servers: a tool description of one server that names a tool of another
        server recorded in the same lint run."""
        if len(self.servers) < 2:
            return
        for file, server, tool, pointer, description in self.descriptions:
            for other, names in sorted(self.servers.items()):
                if other == server:
                    continue
                for name in sorted(names):
                    if name == tool or len(name) < 3:
                        continue
                    if mentions(description, name, orders_needed=not distinctive(name)):
                        self.file = file
                        self.add(
                            "P6",
                            pointer,
                            f"tool {tool!r} of server {server!r} names the tool {name!r} of server "
                            f"{other!r} (cross-server shadowing)",
                        )
                        break


_LISTED = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
           "resources/templates/list": "resourceTemplates"}  # fmt: skip
_NOT_PROSE = ("/type", "/$schema", "/format", "/pattern", "/uri", "/uriTemplate", "/mimeType", "/$ref",
              "/name", "/required", "/protocolVersion", "/version", "/additionalProperties")  # fmt: skip


_MEMORY_MIN = 8
"""Values shorter than this are not chased through the rest of the run (ordinary words)."""


def _at(value: Any, base: str, pointer: str) -> Any:
    """The value at ``pointer`` (which starts with ``base``, the pointer of ``value``)."""
    from harn_mcp_mock.store.pointer import split

    node = value
    for part in split(pointer)[len(split(base)) :]:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _replaced(before: str, after: str) -> list[str]:
    """The parts of ``before`` the redactor replaced with placeholders in ``after`` (linear: the
    text between placeholders is found again in ``before``, in order)."""
    from harn_mcp_mock.redact import PLACEHOLDER_RE

    kept = PLACEHOLDER_RE.split(after)
    if len(kept) < 2 or not before.startswith(kept[0]):
        return []
    out = []
    at = len(kept[0])
    for i, segment in enumerate(kept[1:], 2):
        end = before.find(segment, at) if segment else (len(before) if i == len(kept) else -1)
        if end < 0:
            break
        secret = before[at:end].strip()
        if len(secret) >= _MEMORY_MIN:
            out.append(secret)
        at = end + len(segment)
    return out


def _values(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string value (not the keys) of a JSON value, with its pointer, in document order."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _values(item, f"{pointer}/{escape(str(key))}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _values(item, f"{pointer}/{i}")


def _server_name(cassette: Any, file: str) -> str:
    info = cassette.server.get("serverInfo") if isinstance(cassette.server, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    if isinstance(name, str) and name:
        return name
    command = cassette.meta.get("command")
    return " ".join(map(str, command)) if isinstance(command, list) and command else file


def _changed(before: Any, after: Any, pointer: str) -> Iterator[str]:
    if before is after or before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict) and len(before) == len(after):
        pairs = list(zip(before.items(), after.items(), strict=True))
        for (key, old), (new_key, new) in pairs:
            if key != new_key:
                yield f"{pointer}/{escape(str(key))}"
                continue
            yield from _changed(old, new, f"{pointer}/{escape(str(key))}")
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _changed(old, new, f"{pointer}/{i}")
        return
    yield pointer


def lint_paths(
    paths: Sequence[str | Path],
    config: LintConfig,
    *,
    root: Path | None = None,
    used: set[str] | None = None,
    now: dt.datetime | None = None,
) -> LintResult:
    """Lint every cassette under ``paths`` (see :func:`find_cassettes`); ``used``: the resolved
    paths of the cassettes the last complete pytest run used (None: unknown, H1 is not checked)."""
    root = (root or Path.cwd()).resolve()
    linter = _Linter(config, used, now or dt.datetime.now(dt.UTC))
    result = LintResult()
    locators: dict[str, CassetteLocator] = {}
    for path in find_cassettes(paths, root):
        try:
            shown = str(path.resolve().relative_to(root))
        except ValueError:
            shown = str(path)
        result.files.append(shown)
        locators[shown] = CassetteLocator(path, shown)
        linter.lint(path, shown)
    linter.cross_server()
    linter.remembered({shown: locator.path for shown, locator in locators.items()})
    for finding in linter.out:
        if not config.enabled(finding.rule):
            continue
        finding = dataclasses.replace(finding, severity=config.severity(finding.rule, finding.severity))
        shown = finding.file or ""
        reason = config.allowed(finding.rule, shown, finding.pointer)
        index = linter.offsets.get((shown, finding.pointer, finding.rule))
        where = locators[shown].position(finding.pointer, index) if shown in locators else None
        if where is not None and finding.line is None:
            finding.file, finding.line, finding.column = where.file, where.line, where.column
        if reason is not None:
            result.allowed.append((finding, reason))
        else:
            result.findings.append(finding)
    result.findings.sort(
        key=lambda f: (f.file or "", f.line or 0, f.column or 0, -f.severity, f.rule, f.pointer)
    )
    return result
