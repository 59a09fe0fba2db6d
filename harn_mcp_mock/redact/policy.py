"""Redaction policies: the built-in default, user files merged over it, and their digest.

A policy file is JSON (format version 1, see ``docs/redaction.md``)::

    {"version": 1, "extends": "default",
     "redact": {"keys": [...], "pointers": [...], "patterns": [{"name": ..., "regex": ...}], "env": [...]},
     "allow": {"keys": [...], "pointers": [...], "patterns": [...], "env": [...]},
     "entropy": {"enabled": true, "min_length": 24, "max_length": 1024, "threshold": 3.5,
                 "skip_pointers": [...]}}

Every field is optional. A file extends the built-in default unless it says
``"extends": "none"``: its lists are added to the default's, its patterns are added (or
replace the default's pattern of the same name) and its entropy settings replace the
default's one by one. The *effective* policy is kept in one canonical shape (sorted,
deduplicated lists) so that its digest, ``blake3:`` + the BLAKE3 of its canonical JSON,
changes exactly when what the policy does changes. A policy holds names and patterns, never a
secret. Validation is hand-written: every problem raises
:class:`~harn_mcp_mock.errors.RedactionPolicyError` naming the file and the field, and never
quotes a value from the file.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import orjson

from harn_mcp_mock.errors import RedactionPolicyError
from harn_mcp_mock.redact import pointers as ptr
from harn_mcp_mock.redact._flags import K_ALLOW, K_SECRET
from harn_mcp_mock.redact.gates import NO_FACTS, analyze, facts_of, index_entries, lazy_regex
from harn_mcp_mock.redact.rules import PREFIXED_TOKEN, EntropyRule, PatternRule, PrefixedTokenRule
from harn_mcp_mock.store.canonical import digest_json

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from harn_mcp_mock.redact.pipeline import Redactor

FORMAT_VERSION = 1
"""The policy file format version this code reads and writes."""

RESERVED_RULE_NAMES = frozenset({"argv", "entropy", "env", "pointer", "secret-assignment", "secret-key"})
"""Finding names of the built-in rules; a pattern may not take one of them."""


_REGEX_PREFIX = "re:"
_SECTIONS = ("keys", "pointers", "patterns", "env")
_ENTROPY_FIELDS = ("enabled", "min_length", "max_length", "threshold", "skip_pointers")
_TOP_FIELDS = ("version", "extends", "redact", "allow", "entropy")
_SHOWABLE_FIELD = lazy_regex(r"[A-Za-z_-]{1,40}")
_PATTERN_NAME = lazy_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_CACHE_MAX = 8192


class _Problem(Exception):
    """A validation problem: ``where`` (field path) and a message; turned into the public error."""

    def __init__(self, where: str | None, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def _join(where: str, field: str) -> str:
    return f"{where}.{field}" if where else field


def _object(value: Any, where: str | None, allowed: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Problem(where, "must be a JSON object")
    for field in value:
        if field not in allowed:
            if isinstance(field, str) and _SHOWABLE_FIELD.fullmatch(field):
                raise _Problem(_join(where or "", field), "unknown field")
            raise _Problem(where, "unknown field (name not shown); known fields: " + ", ".join(allowed))
    return value


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise _Problem(where, "must be a list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _Problem(f"{where}[{i}]", "must be a string")
        if not item:
            raise _Problem(f"{where}[{i}]", "must not be empty")
    return value


def _regex(text: str, where: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(text, flags)
    except re.error as exc:
        at = f" at position {exc.pos}" if exc.pos is not None else ""
        raise _Problem(where, f"invalid regular expression ({exc.msg}{at})") from None
    except (OverflowError, RecursionError, ValueError):
        raise _Problem(where, "invalid regular expression") from None


def _names(value: Any, where: str, *, upper: bool, check_regex: bool = True) -> list[str]:
    """Key or env names: plain names (case-insensitive) or ``re:<regex>``."""
    out = []
    for i, item in enumerate(_strings(value, where)):
        if item.startswith(_REGEX_PREFIX):
            body = item[len(_REGEX_PREFIX) :]
            if not body:
                raise _Problem(f"{where}[{i}]", "'re:' must be followed by a regular expression")
            if check_regex:
                _regex(body, f"{where}[{i}]", re.IGNORECASE)
            out.append(item)
        else:
            out.append(item.upper() if upper else item.lower())
    return out


def _pointers(value: Any, where: str) -> list[str]:
    out = []
    for i, item in enumerate(_strings(value, where)):
        try:
            ptr.parse_pointer(item)
        except ValueError as exc:
            raise _Problem(f"{where}[{i}]", str(exc)) from None
        out.append(item)
    return out


def _redact_patterns(value: Any, where: str, *, check_regex: bool = True) -> dict[str, str]:
    if not isinstance(value, list):
        raise _Problem(where, 'must be a list of {"name": ..., "regex": ...} objects')
    out: dict[str, str] = {}
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        item = _object(item, at, ("name", "regex"))
        for field in ("name", "regex"):
            if field not in item:
                raise _Problem(f"{at}.{field}", "missing")
            if not isinstance(item[field], str) or not item[field]:
                raise _Problem(f"{at}.{field}", "must be a non-empty string")
        name, regex = item["name"], item["regex"]
        if not _PATTERN_NAME.fullmatch(name):
            raise _Problem(f"{at}.name", "must be letters, digits, '-', '_', '.' or ':' (at most 64)")
        if name in RESERVED_RULE_NAMES:
            raise _Problem(f"{at}.name", "is the name of a built-in rule: choose another")
        if name in out:
            raise _Problem(f"{at}.name", "the same name is used twice")
        if check_regex:
            compiled = _regex(regex, f"{at}.regex")
            facts = analyze(regex)
            if compiled.search("") is not None or (facts is not NO_FACTS and facts.min_len == 0):
                raise _Problem(f"{at}.regex", "can match the empty string")
        out[name] = regex
    return out


def _allow_patterns(value: Any, where: str) -> list[str]:
    strings = _strings(value, where)
    for i, item in enumerate(strings):
        _regex(item, f"{where}[{i}]")
    return list(strings)


def _entropy(value: Any, where: str) -> dict[str, Any]:
    section = _object(value, where, _ENTROPY_FIELDS)
    out: dict[str, Any] = {}
    if "enabled" in section:
        if not isinstance(section["enabled"], bool):
            raise _Problem(f"{where}.enabled", "must be true or false")
        out["enabled"] = section["enabled"]
    for field, lo, hi in (("min_length", 8, 4096), ("max_length", 8, 1 << 30)):
        if field in section:
            number = section[field]
            if not isinstance(number, int) or isinstance(number, bool):
                raise _Problem(f"{where}.{field}", "must be an integer")
            if not lo <= number <= hi:
                raise _Problem(f"{where}.{field}", f"must be between {lo} and {hi}")
            out[field] = number
    if "threshold" in section:
        threshold = section["threshold"]
        if not isinstance(threshold, int | float) or isinstance(threshold, bool):
            raise _Problem(f"{where}.threshold", "must be a number")
        if not 0 < threshold <= 8:
            raise _Problem(f"{where}.threshold", "must be above 0 and at most 8 (bits per character)")
        out["threshold"] = float(threshold)
    if "skip_pointers" in section:
        out["skip_pointers"] = _pointers(section["skip_pointers"], f"{where}.skip_pointers")
    return out


def _parse(doc: Any, *, check_regex: bool = True) -> tuple[str, dict[str, Any]]:
    """(extends, the document's own rules in the effective shape, only the fields it has)."""
    top = _object(doc, None, _TOP_FIELDS)
    if "version" in top:
        version = top["version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise _Problem("version", "must be an integer")
        if version > FORMAT_VERSION:
            raise _Problem(
                "version",
                f"policy format version {version} is newer than this harn-mcp-mock reads "
                f"(version {FORMAT_VERSION}): upgrade harn-mcp-mock",
            )
        if version != FORMAT_VERSION:
            raise _Problem("version", f"must be {FORMAT_VERSION}")
    extends = top.get("extends", "default")
    if extends not in ("default", "none"):
        raise _Problem("extends", 'must be "default" or "none"')
    own: dict[str, Any] = {}
    for section in ("redact", "allow"):
        if section not in top:
            continue
        body = _object(top[section], section, _SECTIONS)
        parsed: dict[str, Any] = {}
        if "keys" in body:
            parsed["keys"] = _names(body["keys"], f"{section}.keys", upper=False, check_regex=check_regex)
        if "env" in body:
            parsed["env"] = _names(body["env"], f"{section}.env", upper=True, check_regex=check_regex)
        if "pointers" in body:
            parsed["pointers"] = _pointers(body["pointers"], f"{section}.pointers")
        if "patterns" in body:
            where = f"{section}.patterns"
            if section == "redact":
                parsed["patterns"] = _redact_patterns(body["patterns"], where, check_regex=check_regex)
            else:
                parsed["patterns"] = _allow_patterns(body["patterns"], where)
        own[section] = parsed
    if "entropy" in top:
        own["entropy"] = _entropy(top["entropy"], "entropy")
    return extends, own


def _empty() -> dict[str, Any]:
    return {
        "version": FORMAT_VERSION,
        "redact": {"keys": [], "pointers": [], "patterns": [], "env": []},
        "allow": {"keys": [], "pointers": [], "patterns": [], "env": []},
        "entropy": {
            "enabled": False,
            "min_length": 24,
            "max_length": 1024,
            "threshold": 3.5,
            "skip_pointers": [],
        },
    }


def _merge(base: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """``own`` over ``base`` (both effective-shaped), normalised: sorted, deduplicated."""
    out = _empty()
    for section in ("redact", "allow"):
        mine = own.get(section, {})
        for field in ("keys", "pointers", "env"):
            out[section][field] = sorted({*base[section][field], *mine.get(field, ())})
        if section == "redact":
            patterns = {p["name"]: p["regex"] for p in base[section]["patterns"]}
            patterns.update(mine.get("patterns", {}))
            out[section]["patterns"] = [{"name": n, "regex": patterns[n]} for n in sorted(patterns)]
        else:
            out[section]["patterns"] = sorted({*base[section]["patterns"], *mine.get("patterns", ())})
    entropy = {**base["entropy"], **own.get("entropy", {})}
    entropy["skip_pointers"] = sorted(
        {*base["entropy"]["skip_pointers"], *own.get("entropy", {}).get("skip_pointers", ())}
    )
    if entropy["max_length"] < entropy["min_length"]:
        raise _Problem("entropy.max_length", "must not be below entropy.min_length")
    out["entropy"] = entropy
    return out


def _build(
    doc: Any, source: str, *, base: Mapping[str, Any] | None, check_regex: bool = True
) -> RedactionPolicy:
    try:
        extends, own = _parse(doc, check_regex=check_regex)
        if base is None or extends == "none":
            base = _empty()
        data = _merge(base, own)
    except _Problem as problem:
        raise RedactionPolicyError(problem.message, path=source, where=problem.where) from None
    return RedactionPolicy(data, source)


@functools.cache
def _default_policy() -> RedactionPolicy:
    # A plain file read: importlib.resources would import zipfile and more at every start-up.
    folder = Path(__file__).with_name("policies")
    with open(folder / "default.json", "rb") as fh:
        raw = fh.read()
    # The built-in patterns are checked by the test suite (tests/redact/test_policy.py), not
    # compiled and analysed at every start-up: a rule is compiled when its gate first admits text.
    policy = _build(orjson.loads(raw), "default", base=None, check_regex=False)
    # Its digest is precomputed too (BLAKE3 is then imported only when something is hashed).
    with contextlib.suppress(OSError):
        policy._digest = (folder / "default.digest").read_text().strip() or None
    return policy


def default_index_patterns() -> list[tuple[str, int]]:
    """The (pattern, flags) pairs of the default policy whose facts are precomputed."""
    data = _default_policy().to_dict()
    pairs = [(p["regex"], 0) for p in data["redact"]["patterns"]]
    for section in ("redact", "allow"):
        for field in ("keys", "env"):
            pairs += [
                (e[len(_REGEX_PREFIX) :], re.IGNORECASE)
                for e in data[section][field]
                if e.startswith(_REGEX_PREFIX)
            ]
    return pairs


def write_facts_index(path: str | Path | None = None) -> Path:
    """Write the default policy's precomputed pattern facts (see :func:`~.gates.facts_of`) and,
    beside them, its digest (``default.digest``)."""
    target = Path(path) if path is not None else Path(__file__).with_name("policies") / "default.facts.json"
    _default_policy.cache_clear()
    policy = RedactionPolicy(_default_policy().to_dict(), "default")
    target.with_name("default.digest").write_text(policy.digest + "\n")
    entries = index_entries(default_index_patterns())
    lines = [orjson.dumps(key) + b": " + orjson.dumps(value) for key, value in entries.items()]
    target.write_bytes(b"{\n" + b",\n".join(lines) + b"\n}\n")  # one pattern a line: readable diffs
    return target


class RedactionPolicy:
    """An effective redaction policy; immutable. Build one with :meth:`default`, :meth:`load`
    or :meth:`from_dict`, then a :class:`~harn_mcp_mock.redact.Redactor` per server with
    :meth:`redactor`."""

    __slots__ = ("_compiled", "_data", "_digest", "name")

    def __init__(self, data: dict[str, Any], name: str) -> None:
        self._data = data
        self.name = name
        """``"default"``, or where the policy came from (the file path given to :meth:`load`)."""
        self._digest: str | None = None
        self._compiled: CompiledPolicy | None = None

    @property
    def digest(self) -> str:
        """``blake3:<hex>`` of the canonical JSON of the effective policy (computed on first use)."""
        if self._digest is None:
            self._digest = "blake3:" + digest_json(self._data)
        return self._digest

    @classmethod
    def default(cls) -> RedactionPolicy:
        """The built-in policy (``harn_mcp_mock/redact/policies/default.json``)."""
        return _default_policy()

    @classmethod
    def load(cls, path: str | Path) -> RedactionPolicy:
        """The policy in the JSON file ``path``, merged over the default unless it says
        ``"extends": "none"``. Raises :class:`RedactionPolicyError` naming the file and field."""
        try:
            from harn_mcp_mock.inputs import read_input

            raw = read_input(path)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise RedactionPolicyError(f"cannot read the policy file ({reason})", path=path) from None
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RedactionPolicyError(
                f"not valid JSON (line {exc.lineno}, column {exc.colno})", path=path
            ) from None
        return _build(doc, str(path), base=_default_policy()._data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>") -> RedactionPolicy:
        """The policy ``data`` (the parsed content of a policy file); ``source`` names it in errors."""
        doc = dict(data) if isinstance(data, Mapping) else data
        return _build(doc, source, base=_default_policy()._data)

    def to_dict(self) -> dict[str, Any]:
        """The effective policy, JSON-serialisable (a fresh copy)."""
        copy: dict[str, Any] = orjson.loads(orjson.dumps(self._data))
        return copy

    def redactor(
        self,
        argv: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        fingerprints: Any = None,
    ) -> Redactor:
        """A fresh :class:`~harn_mcp_mock.redact.Redactor` for the server started with ``argv``
        and ``env`` (their secrets become literal secrets); ``fingerprints`` (a cassette's
        ``redaction.fingerprints``) adds the secrets known only from the recording's env."""
        from harn_mcp_mock.redact.pipeline import Redactor

        return Redactor(self, argv=argv, env=env, fingerprints=fingerprints)

    def compiled(self) -> CompiledPolicy:
        """The policy's matchers, built once and shared by all its redactors."""
        if self._compiled is None:
            self._compiled = CompiledPolicy(self._data)
        return self._compiled

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RedactionPolicy) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"RedactionPolicy(name={self.name!r}, digest={self.digest[:19]}...)"


class _NameSet:
    """Plain names (compared case-folded) and ``re:`` rules (searched, case-insensitive).

    A rule's expression is compiled the first time a name gets past its gate (the literal every
    match contains, from the precomputed facts): most names never reach any of them.
    """

    __slots__ = ("_compiled", "_gates", "names", "sources")

    def __init__(self, entries: Iterable[str]) -> None:
        names, sources = set(), []
        for entry in entries:
            if entry.startswith(_REGEX_PREFIX):
                sources.append(entry[len(_REGEX_PREFIX) :])
            else:
                names.add(entry.casefold())
        self.names = frozenset(names)
        self.sources = tuple(sources)
        self._gates = tuple(facts_of(source, re.IGNORECASE).fold_needles for source in self.sources)
        self._compiled: list[re.Pattern[str] | None] = [None] * len(self.sources)

    @property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        """Every ``re:`` rule, compiled."""
        return tuple(self._regex(i) for i in range(len(self.sources)))

    def _regex(self, i: int) -> re.Pattern[str]:
        compiled = self._compiled[i]
        if compiled is None:
            compiled = self._compiled[i] = re.compile(self.sources[i], re.IGNORECASE)
        return compiled

    def __call__(self, name: str) -> bool:
        folded = name.casefold()
        if folded in self.names:
            return True
        for i, needles in enumerate(self._gates):
            if all(needle in folded for needle in needles) and self._regex(i).search(name):
                return True
        return False

    def needles(self) -> tuple[tuple[str, ...] | None, int]:
        """(substrings one of which every matching name contains, or None when a rule does not
        tell; the length of the shortest matching name)."""
        needles: set[str] = set(self.names)
        widths = [len(n) for n in self.names]
        complete = True
        for source in self.sources:
            facts = facts_of(source, re.IGNORECASE)
            widths.append(facts.min_len)
            if facts.fold_needles:
                needles.add(facts.fold_needles[0])
            else:
                complete = False
        kept = tuple(sorted(n for n in needles if not any(m != n and m in n for m in needles)))
        return (kept if complete else None), max(1, min(widths, default=1))


class CompiledPolicy:
    """The matchers of one effective policy (shared by all its redactors)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        redact, allow, entropy = data["redact"], data["allow"], data["entropy"]
        self._secret_keys = _NameSet(redact["keys"])
        self._allowed_keys = _NameSet(allow["keys"])
        self._secret_env = _NameSet(redact["env"])
        self._allowed_env = _NameSet(allow["env"])
        # ``prefixed-token``'s expression finds candidates that a judge in code then weighs
        # (:func:`~.rules.prefixed_secret`: entropy, words, checksums).
        self.patterns = tuple(
            PrefixedTokenRule(p["name"], p["regex"])
            if p["name"] == PREFIXED_TOKEN
            else PatternRule(p["name"], p["regex"], facts=facts_of(p["regex"]))
            for p in redact["patterns"]
        )
        self.allow_patterns = tuple(re.compile(p) for p in allow["patterns"])
        self.entropy = (
            EntropyRule(entropy["min_length"], entropy["max_length"], entropy["threshold"])
            if entropy["enabled"]
            else None
        )
        patterns = [(ptr.parse_pointer(p), ptr.REDACT) for p in redact["pointers"]]
        patterns += [(ptr.parse_pointer(p), ptr.ALLOW) for p in allow["pointers"]]
        patterns += [(ptr.parse_pointer(p), ptr.SKIP_ENTROPY) for p in entropy["skip_pointers"]]
        self.pointers = ptr.PointerAutomaton(patterns)
        self.has_redact_pointers = bool(redact["pointers"])
        self.name_needles, self.min_name = self._secret_keys.needles()
        self._key_flags: dict[str, int] = {}
        self._secret_names: dict[str, bool] = {}

    def key_flags(self, key: str) -> int:
        """:data:`K_SECRET` and/or :data:`K_ALLOW` for an object key (cached)."""
        flags = self._key_flags.get(key)
        if flags is None:
            flags = (K_SECRET if self._secret_keys(key) else 0) | (K_ALLOW if self._allowed_keys(key) else 0)
            if len(self._key_flags) >= _CACHE_MAX:
                self._key_flags.clear()
            self._key_flags[key] = flags
        return flags

    def name_is_secret(self, name: str) -> bool:
        """Whether a name (object key, ``--flag``, ``name=`` in text) holds a secret value."""
        secret = self._secret_names.get(name)
        if secret is None:
            secret = self.key_flags(name) == K_SECRET
            if len(self._secret_names) >= _CACHE_MAX:
                self._secret_names.clear()
            self._secret_names[name] = secret
        return secret

    def name_is_allowed(self, name: str) -> bool:
        """Whether an ``allow`` key rule lets a name through (``next_page_token``)."""
        return bool(self.key_flags(name) & K_ALLOW)

    def env_is_secret(self, name: str) -> bool:
        """Whether the environment variable ``name`` holds a secret."""
        return self._secret_env(name) and not self._allowed_env(name)

    def allowed(self, value: str) -> bool:
        """Whether an ``allow.patterns`` rule lets ``value`` through."""
        return any(p.search(value) for p in self.allow_patterns)
