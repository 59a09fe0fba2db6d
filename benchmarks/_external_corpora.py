"""Public labelled credential corpora nobody here wrote, read from a checkout pinned by commit.

Two corpora are read (their files are never copied into this repository):

* **CredSweeper** (``github.com/Samsung/CredSweeper``): the sample files in ``tests/samples``
  and the findings CredSweeper's own test suite expects from them, ``tests/data/output.json``
  (default mode, ML on). A *labelled credential* is the ``value`` of one ``line_data_list``
  entry there, located in its file by line and column (deduplicated by position). Values that
  only CredSweeper's looser modes report (``no_filters_no_ml.json``, ``doc.json``,
  ``depth_3_pedantic.json``: regex hits that its filters or its ML model reject) are neither
  credentials nor non-credentials: *ambiguous*, counted apart.
* **gitleaks** (``github.com/gitleaks/gitleaks``): the true and false positive samples
  (``tps``/``fps``) of each rule in ``cmd/generate/config/rules/*.go``. They are Go code; this
  module evaluates the subset of Go they use (string literals, ``+``, ``fmt.Sprintf``,
  ``append``, ``[]string{}``/``map[string]string{}`` literals, local variables,
  ``utils.GenerateSampleSecret(s)``, ``secrets.NewSecret(regex)`` with a seeded generator of our
  own, and the ``utils`` regex helpers). A sample built in a way it cannot evaluate (a loop, a
  base64 encoder...) is skipped and counted. In a true positive the *labelled credential* is the
  secret gitleaks' rule extracts: the generated secret when the sample came from
  ``GenerateSampleSecrets``, else the rule's secret group (its regex from ``config/gitleaks.toml``,
  translated to Python's dialect) matched over the sample; a sample where that fails is counted
  as unlocated. Every false-positive sample is a non-credential text, except that a value the sample itself
assigns to a secret name (``GenerateSampleSecret``: ``<id>_api_token = "<value>"``) is
ambiguous.

A labelled value counts as redacted when every character of it lies in a redacted span. Some
labels hold more than the secret (gitleaks' ``user:password``, ``app_id|secret``, a webhook URL
with its host, a value with its quotes), so a second recall counts the value's *secret part*:
its longest run of token characters (the last of equals).

*Non-credential identifiers* are the runs of ``[A-Za-z0-9_.+/~-]`` (4 or more characters, trimmed
of leading and trailing ``./+-~``) that overlap no labelled and no ambiguous value, and no other
occurrence of a labelled value (the same secret repeated: redacting it is right). A run counts
as *altered* when a redacted span overlaps it. Runs that look like documented example or
placeholder keys (``EXAMPLE`` in any case, or 8 identical characters in a row), and the lines
of private key blocks the corpus does not label (encrypted keys, keys marked fake: a
``-----BEGIN ... PRIVATE KEY-----`` block is redacted whole by design), are counted apart as
format-valid example keys, as the issue allows.

Each sample is served as the text content of one ``tools/call`` result and redacted by a fresh
:meth:`~harn_mcp_mock.redact.Redactor.redact_message` (one recording per file, so a value seen
in another file does not help). The redacted spans are recovered by aligning the text around
each ``[REDACTED:n]`` placeholder with the original.

A third corpus, trufflehog's detector tests, is read by ``_trufflehog_corpus`` (with this
module's Go evaluator). :func:`order_diffs` is the order test: a corpus through one redactor in
some order, each sample's output against a fresh redactor's taught what the shared one had
learned before it.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.redact.placeholders import PLACEHOLDER_RE

# --- the samples ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    """A labelled credential: ``text[start:end]`` of its sample, of class ``cls``."""

    start: int
    end: int
    cls: str


@dataclass
class Sample:
    """One text served as a tool result."""

    name: str
    text: str
    labels: list[Label] = field(default_factory=list)
    ambiguous: list[tuple[int, int]] = field(default_factory=list)
    negative: bool = False  # a gitleaks false-positive sample: nothing in it is a credential


@dataclass
class Corpus:
    """A corpus read from one checkout."""

    kind: str
    root: Path
    commit: str
    samples: list[Sample]
    skipped: Counter[str] = field(default_factory=Counter)  # what could not be read, and why
    trimmed: Counter[str] = field(default_factory=Counter)  # rule -> labels trimmed (see _reported)


def detect(root: Path) -> str:
    """``"credsweeper"`` or ``"gitleaks"``: which corpus the checkout ``root`` holds."""
    if (root / "tests" / "data" / "output.json").is_file() and (root / "tests" / "samples").is_dir():
        return "credsweeper"
    if (root / "cmd" / "generate" / "config" / "rules").is_dir():
        return "gitleaks"
    raise ValueError(
        f"{root}: neither a CredSweeper checkout (tests/data/output.json, tests/samples) "
        "nor a gitleaks checkout (cmd/generate/config/rules) nor a trufflehog checkout (pkg/detectors, pkg/engine)"
    )


def commit_of(root: Path) -> str:
    """The commit checked out at ``root`` (or ``"unknown"`` when it is not a git work tree)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def load(root: Path, kind: str | None = None) -> Corpus:
    """The corpus in the checkout ``root`` (its kind detected unless given)."""
    kind = kind or detect(root)
    return load_credsweeper(root) if kind == "credsweeper" else load_gitleaks(root)


# --- CredSweeper --------------------------------------------------------------------------------------

_LOOSER_OUTPUTS = ("no_filters_no_ml.json", "doc.json", "depth_3_pedantic.json", "no_ml.json")


def _decode(raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _line_starts(text: str) -> list[int]:
    starts, at = [0], 0
    for line in text.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


def _locate(text: str, starts: list[int], entry: dict[str, Any]) -> tuple[int, int] | None:
    """Where a CredSweeper ``line_data`` entry's value is in ``text``: by line and column, else
    the occurrence of the value nearest to its line."""
    value, num = entry["value"], entry["line_num"]
    if not value:
        return None
    if 0 < num < len(starts):
        at = starts[num - 1] + entry["value_start"]
        if text[at : at + len(value)] == value:
            return at, at + len(value)
    hits = [m.start() for m in re.finditer(re.escape(value), text)]
    if not hits:
        return None
    near = starts[min(max(num - 1, 0), len(starts) - 1)]
    at = min(hits, key=lambda h: abs(h - near))
    return at, at + len(value)


def load_credsweeper(root: Path) -> Corpus:
    """CredSweeper's samples with their expected findings."""
    files: dict[str, Sample] = {}
    skipped: Counter[str] = Counter()

    def sample(path: str) -> Sample | None:
        rel = path.removeprefix("./")
        if rel not in files:
            full = root / rel
            if not full.is_file():
                return None
            files[rel] = Sample(rel.removeprefix("tests/samples/"), _decode(full.read_bytes()))
        return files[rel]

    starts: dict[str, list[int]] = {}
    seen: set[tuple[str, int, int]] = set()
    for finding in json.loads((root / "tests" / "data" / "output.json").read_bytes()):
        for entry in finding["line_data_list"]:
            s = sample(entry["path"])
            if s is None:
                skipped["labelled value in a file not in the checkout"] += 1
                continue
            line_starts = starts.setdefault(s.name, _line_starts(s.text))
            span = _locate(s.text, line_starts, entry)
            if span is None:
                skipped["labelled value not found in its file"] += 1
                continue
            if (s.name, *span) in seen:
                continue
            seen.add((s.name, *span))
            s.labels.append(Label(span[0], span[1], finding["rule"]))
    for name in _LOOSER_OUTPUTS:
        path = root / "tests" / "data" / name
        if not path.is_file():
            continue
        for finding in json.loads(path.read_bytes()):
            for entry in finding["line_data_list"]:
                s = sample(entry["path"]) if entry["path"].removeprefix("./") in files else None
                if s is None:
                    continue
                span = _locate(s.text, starts.setdefault(s.name, _line_starts(s.text)), entry)
                if span is not None:
                    s.ambiguous.append(span)
    # Sample files no output names: every identifier in them is a non-credential.
    for path in sorted((root / "tests" / "samples").rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and rel not in files:
            raw = path.read_bytes()
            if b"\0" in raw[:4096] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                skipped["binary sample file (archive, image, class file...)"] += 1
                continue
            files[rel] = Sample(rel.removeprefix("tests/samples/"), _decode(raw))
    return Corpus("credsweeper", root, commit_of(root), sorted(files.values(), key=lambda s: s.name), skipped)


# --- gitleaks: a small evaluator of the Go the rule samples are written in -----------------------------

_GO_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<str>"(?:\\.|[^"\\\n])*")|(?P<raw>`[^`]*`)"""
    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|(?P<num>[0-9]+)"""
    r"""|(?P<op>:=|\.\.\.|[-+*/=(){}\[\],:;&!<>.%|])""",
    re.S,
)
_GO_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _go_unquote(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "xuU":
            return chr(int(e[1:], 16))
        if e[0].isdigit():
            return chr(int(e, 8))
        return _SIMPLE_ESCAPES.get(e, e)

    return _GO_ESCAPE.sub(one, body)


class _Unsupported(Exception):
    """Go the evaluator does not read."""


class _Text(str):
    """A sample string that knows the secret planted in it (from ``GenerateSampleSecret(s)``)."""

    secret: str | None = None


def _text(value: str, secret: str | None) -> _Text:
    out = _Text(value)
    out.secret = secret
    return out


_UTILS_REGEX = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
    "utils.AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}",
}


def _sample_templates(root: Path) -> list[str]:
    """The templates of ``utils.GenerateSampleSecrets``, read from its Go source."""
    source = (root / "cmd" / "generate" / "config" / "utils" / "generate.go").read_text()
    body = source.split("func GenerateSampleSecrets", 1)[1].split("replacer", 1)[0]
    out = []
    for line in body.splitlines():
        if line.strip().startswith("//"):
            continue
        m = re.match(r'\s*"[^"]*":\s*("(?:\\.|[^"\\])*"|`[^`]*`),', line)
        if m:
            lit = m.group(1)
            out.append(_go_unquote(lit[1:-1]) if lit[0] == '"' else lit[1:-1])
    return out


class _GoEval:
    """Evaluates the expressions assigned to local variables in one Go function."""

    def __init__(self, tokens: list[tuple[str, str]], templates: list[str], rng: random.Random) -> None:
        self.toks = tokens
        self.templates = templates
        self.rng = rng
        self.env: dict[str, Any] = {}

    def run(self) -> None:
        i = 0
        while i < len(self.toks) - 2:
            kind, text = self.toks[i]
            op = self.toks[i + 1][1]
            if kind == "ident" and "." not in text and op in (":=", "="):
                try:
                    value, end = self.expr(i + 2)
                    self.env[text] = value
                    i = end
                    continue
                except (_Unsupported, IndexError):
                    if text in ("tps", "fps"):
                        self.env.setdefault(text + "!unsupported", 0)
                        self.env[text + "!unsupported"] += 1
            i += 1

    def expr(self, i: int) -> tuple[Any, int]:
        value, i = self.primary(i)
        while i < len(self.toks) and self.toks[i][1] == "+":
            right, i = self.primary(i + 1)
            if not isinstance(value, str) or not isinstance(right, str):
                raise _Unsupported("+ on a non-string")
            value = value + right
        return value, i

    def args(self, i: int) -> tuple[list[Any], bool, int]:
        """Arguments from just after ``(`` to after ``)``; whether the last one is spread (``...``)."""
        out: list[Any] = []
        spread = False
        while self.toks[i][1] != ")":
            value, i = self.expr(i)
            out.append(value)
            if self.toks[i][1] == "...":
                spread, i = True, i + 1
            if self.toks[i][1] == ",":
                i += 1
        return out, spread, i + 1

    def primary(self, i: int) -> tuple[Any, int]:
        kind, text = self.toks[i]
        if kind == "str":
            return _go_unquote(text[1:-1]), i + 1
        if kind == "raw":
            return text[1:-1], i + 1
        if text == "[" and self.toks[i + 1][1] == "]" and self.toks[i + 2][1] == "string":
            return self.composite(i + 3, keyed=False)
        if text == "map" and [t for _k, t in self.toks[i + 1 : i + 6]] == ["[", "string", "]", "string", "{"]:
            return self.composite(i + 5, keyed=True)
        if kind == "ident" and self.toks[i + 1][1] == "(":
            args, spread, end = self.args(i + 2)
            return self.call(text, args, spread), end
        if kind == "ident" and text in self.env:
            return self.env[text], i + 1
        raise _Unsupported(text)

    def composite(self, i: int, *, keyed: bool) -> tuple[list[_Text], int]:
        if self.toks[i][1] != "{":
            raise _Unsupported("composite")
        i += 1
        out: list[_Text] = []
        while self.toks[i][1] != "}":
            value, i = self.expr(i)
            if keyed:
                if self.toks[i][1] != ":":
                    raise _Unsupported("map literal")
                value, i = self.expr(i + 1)
            if not isinstance(value, str):
                raise _Unsupported("non-string element")
            out.append(value if isinstance(value, _Text) else _text(value, None))
            if self.toks[i][1] == ",":
                i += 1
        return out, i + 1

    def call(self, name: str, args: list[Any], spread: bool) -> Any:
        if name in _UTILS_REGEX and len(args) == 1:
            return _UTILS_REGEX[name] % args[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "secrets.NewSecret" and len(args) == 1:
            return generate(args[0], self.rng)
        if name == "fmt.Sprintf" and args and all(isinstance(a, str) for a in args):
            rest = iter(args[1:])
            return re.sub(r"%[sdv%]", lambda m: "%" if m.group() == "%%" else str(next(rest)), args[0])
        if name == "utils.GenerateSampleSecret" and len(args) == 2:
            return _text(f'{args[0]}_api_token = "{args[1]}"', args[1])
        if name == "utils.GenerateSampleSecrets" and len(args) == 2:
            ident, secret = args
            return [
                _text(t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret), secret)
                for t in self.templates
            ]
        if name == "append" and args and isinstance(args[0], list):
            items = args[1:]
            if spread:
                *items, last = items
                if not isinstance(last, list):
                    raise _Unsupported("append")
                items = [*items, *last]
            return [*args[0], *(a if isinstance(a, _Text) else _text(a, None) for a in items)]
        raise _Unsupported(name)


def _tokens(source: str) -> list[tuple[str, str]]:
    out = []
    for m in _GO_TOKEN.finditer(source):
        kind = m.lastgroup or ""
        if kind not in ("ws", "comment"):
            out.append((kind, m.group()))
    return out


def generate(regex: str, rng: random.Random) -> str:
    """A string matching ``regex`` (what gitleaks' ``secrets.NewSecret`` does, with our own
    seeded generator): unbounded repeats stop at their minimum plus up to 8."""
    import re._parser as sre_parse  # type: ignore[import-not-found]

    alnum = [chr(c) for c in range(33, 127)]
    categories = {
        "CATEGORY_DIGIT": "0123456789",
        "CATEGORY_WORD": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
        "CATEGORY_SPACE": " ",
    }

    def charset(items: Any) -> list[str]:
        chars: list[str] = []
        negate = False
        for op, av in items:
            name = str(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                chars.append(chr(av))
            elif name == "RANGE":
                chars += [chr(c) for c in range(av[0], av[1] + 1)]
            elif name == "CATEGORY":
                chars += list(categories.get(str(av), "a"))
        if negate:
            chars = [c for c in alnum if c not in chars]
        return chars

    def emit(parsed: Any) -> str:
        out = []
        for op, av in parsed:
            name = str(op)
            if name == "LITERAL":
                out.append(chr(av))
            elif name == "NOT_LITERAL":
                out.append(rng.choice([c for c in "abcxyz019" if ord(c) != av]))
            elif name == "ANY":
                out.append(rng.choice("abcdefXYZ0123"))
            elif name == "IN":
                out.append(rng.choice(charset(av)))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                hi = lo + 8 if hi is sre_parse.MAXREPEAT else hi
                out += [emit(sub) for _ in range(rng.randint(lo, hi))]
            elif name == "SUBPATTERN":
                out.append(emit(av[-1]))
            elif name == "BRANCH":
                out.append(emit(rng.choice(av[1])))
            elif name == "CATEGORY":
                out.append(rng.choice(categories.get(str(av), "a")))
            elif name in ("AT", "ASSERT", "ASSERT_NOT"):
                continue
            else:
                raise _Unsupported(name)
        return "".join(out)

    return emit(sre_parse.parse(go_regex_to_python(regex)))


_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
}


def go_regex_to_python(regex: str) -> str:
    """Go's RE2 dialect as Python reads it: a ``(?i)`` after the start becomes a scoped group
    to the end of its enclosing group, ``\\z`` becomes ``\\Z``, POSIX classes are spelled out."""
    regex = re.sub(r"\[:(\w+):\]", lambda m: _POSIX.get(m.group(1), m.group()), regex)
    regex = regex.replace(r"\z", r"\Z")
    out: list[str] = []
    closes: list[int] = [0]  # per open group: how many scoped flag groups to close with it
    i, in_class = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if regex[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if regex[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif regex.startswith("(?i)", i) and (i > 0 or len(closes) > 1):
            out.append("(?i:")
            closes[-1] += 1
            i += 4
            continue
        elif c == "(":
            closes.append(0)
            out.append(c)
        elif c == ")":
            out.append(")" * closes.pop())
            out.append(c)
        elif c == "|" and closes[-1]:
            out.append(")" * closes[-1] + "|")
            closes[-1] = 0
        else:
            out.append(c)
        i += 1
    out.append(")" * closes[0])
    return "".join(out)


@dataclass
class _Rule:
    id: str
    regex: re.Pattern[str] | None
    group: int


def _gitleaks_rules(root: Path) -> dict[str, _Rule]:
    config = tomllib.loads((root / "config" / "gitleaks.toml").read_text())
    rules = {}
    for rule in config.get("rules", []):
        try:
            compiled: re.Pattern[str] | None = re.compile(go_regex_to_python(rule.get("regex", "")))
        except (re.error, OverflowError):
            compiled = None
        rules[rule["id"]] = _Rule(rule["id"], compiled, int(rule.get("secretGroup", 0)))
    return rules


def _secret_span(
    text: str, secret: str | None, rule: _Rule | None, trimmed: Counter[str]
) -> tuple[int, int] | None:
    if secret:
        at = text.find(secret)
        if at >= 0:
            return _reported(text, (at, at + len(secret)), rule, trimmed)
    if rule is None or rule.regex is None or not rule.regex.pattern:
        return None
    m = rule.regex.search(text)
    if m is None:
        return None
    group = rule.group or next((g for g in range(1, (m.re.groups or 0) + 1) if m.group(g)), 0)
    return m.span(group)


def _reported(text: str, span: tuple[int, int], rule: _Rule | None, trimmed: Counter[str]) -> tuple[int, int]:
    """The part of the generated secret at ``span`` that gitleaks' own rule reports: its secret
    group, when the rule matches there and the group lies strictly inside the generated secret
    (``pplx-<48>'``: the sample's stray quote is no part of the key, and gitleaks' rule leaves it
    out). Otherwise the generated secret whole."""
    if rule is None or rule.regex is None or not rule.regex.pattern:
        return span
    for m in rule.regex.finditer(text):
        group = rule.group or next((g for g in range(1, (m.re.groups or 0) + 1) if m.group(g)), 0)
        a, b = m.span(group)
        if span[0] <= a < b <= span[1] and (a, b) != span:
            trimmed[rule.id] += 1
            return a, b
    return span


def load_gitleaks(root: Path) -> Corpus:
    """gitleaks' rule samples: every ``tps`` a credential text, every ``fps`` a non-credential one."""
    templates = _sample_templates(root)
    rules = _gitleaks_rules(root)
    samples: list[Sample] = []
    skipped: Counter[str] = Counter()
    trimmed: Counter[str] = Counter()
    for path in sorted((root / "cmd" / "generate" / "config" / "rules").glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        source = path.read_text()
        for n, body in enumerate(re.split(r"\nfunc ", source)[1:]):
            ids = re.findall(r'RuleID:\s*"([^"]+)"', body)
            if not ids:
                continue
            rule = rules.get(ids[0])
            rng = random.Random(f"{path.name}:{n}")
            ev = _GoEval(_tokens(body), templates, rng)
            ev.run()
            for kind in ("tps", "fps"):
                if ev.env.get(kind + "!unsupported"):
                    skipped[f"{kind} assignments the evaluator does not read (loops, encoders...)"] += ev.env[
                        kind + "!unsupported"
                    ]
                values = ev.env.get(kind, [])
                if not isinstance(values, list):
                    continue
                for k, value in enumerate(values):
                    name = f"{ids[0]}:{kind}[{k}]"
                    if kind == "fps":
                        # A false positive the sample itself assigns to a secret name
                        # (``<id>_api_token = "..."``): not a credential of the rule's format,
                        # but a value a reader would take for a secret: ambiguous.
                        secret = getattr(value, "secret", None)
                        at = str(value).find(secret) if secret else -1
                        spans = [(at, at + len(secret))] if secret and at >= 0 else []
                        samples.append(Sample(name, str(value), ambiguous=spans, negative=True))
                        continue
                    span = _secret_span(value, getattr(value, "secret", None), rule, trimmed)
                    if span is None:
                        skipped["true positives whose secret could not be located"] += 1
                        continue
                    samples.append(Sample(name, str(value), [Label(span[0], span[1], ids[0])]))
    return Corpus("gitleaks", root, commit_of(root), samples, skipped, trimmed)


# --- measuring ----------------------------------------------------------------------------------------

_RUN = re.compile(r"[A-Za-z0-9_.+/~-]{4,}")
_EXAMPLE = re.compile(r"(?i)example|(.)\1{7}")
_KEY_BLOCK = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)")

EXCLUDED_CLASSES = {
    # CredSweeper rule names that name a value our docs keep on purpose (docs/redaction.md):
    # identifiers, not credentials.
    "UUID": "UUIDs",
    "AWS S3 Bucket": "bucket hosts",
    "Firebase Domain": "bucket hosts",
    "Tencent WeChat API App ID": "org and app ids",
    "Salt": "salts and nonces (not credentials)",
    "Nonce": "salts and nonces (not credentials)",
}
"""Labelled classes kept by design, each with the reason docs/redaction.md gives."""

EXCLUDED_VALUES = [
    # Labelled values, inside a credential class, that are identifiers our docs keep on purpose.
    (re.compile(r"[0-9]+-[a-z0-9]+\.apps\.googleusercontent\.com"), "org and app ids"),  # OAuth client ids
    (re.compile(r"00D[A-Za-z0-9]{12,15}"), "org and app ids"),  # Salesforce org ids
    (re.compile(r"3MVG[A-Za-z0-9._]+"), "org and app ids"),  # Salesforce connected-app consumer keys
    (re.compile(r'"kty"\s*:.*'), "JWK key-type markers (the key's private fields are counted)"),
]
"""Labelled values (matched whole) excluded by design, with the reason."""


def excluded(cls: str, value: str) -> str | None:
    """Why a labelled value of class ``cls`` is excluded by design, or ``None``."""
    if cls in EXCLUDED_CLASSES:
        return EXCLUDED_CLASSES[cls]
    return next((why for rx, why in EXCLUDED_VALUES if rx.fullmatch(value)), None)


def redacted_spans(original: str, redacted: str) -> list[tuple[int, int]] | None:
    """The spans of ``original`` that became placeholders in ``redacted`` (``None`` when the
    text around the placeholders does not align with the original)."""
    pieces = PLACEHOLDER_RE.split(redacted)
    if len(pieces) == 1:
        return [] if redacted == original else None
    if not original.startswith(pieces[0]) or not original.endswith(pieces[-1]):
        return None
    spans, at = [], len(pieces[0])
    end_limit = len(original) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = original.find(piece, at + 1, end_limit) if piece else at
        if found < 0:
            return None
        spans.append((at, found))
        at = found + len(piece)
    if end_limit < at:
        return None
    spans.append((at, end_limit))
    return spans


def _overlaps(a: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(s < a[1] and a[0] < e for s, e in spans)


def _covered(a: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    """Whether every non-space character of ``a`` lies in some span."""
    need = a[0]
    for s, e in sorted(spans):
        if s <= need < e:
            need = e
        if need >= a[1]:
            return True
    return need >= a[1]


def tool_result(text: str, seq: int) -> dict[str, Any]:
    """The ``tools/call`` result a server serving ``text`` would send."""
    return {
        "jsonrpc": "2.0",
        "id": seq,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }


@dataclass
class Result:
    """The figures of one corpus."""

    corpus: Corpus
    labelled: int = 0
    excluded: Counter[str] = field(default_factory=Counter)  # reason -> labelled values excluded
    caught: int = 0
    caught_core: int = 0  # the value's longest run of token characters was redacted
    partly: int = 0  # a redacted span overlaps the value but part of it stays
    per_class: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (sample, class, line)
    identifiers: int = 0
    altered: int = 0
    altered_examples: list[tuple[str, str]] = field(default_factory=list)  # (sample, identifier)
    example_keys: int = 0
    example_altered: int = 0
    ambiguous: int = 0
    ambiguous_altered: int = 0
    negative_samples: int = 0
    negative_altered: int = 0
    unaligned: int = 0

    @property
    def considered(self) -> int:
        return self.labelled - sum(self.excluded.values())

    @property
    def recall(self) -> float:
        return 100 * self.caught / self.considered if self.considered else 100.0

    @property
    def core_recall(self) -> float:
        return 100 * self.caught_core / self.considered if self.considered else 100.0

    @property
    def fp_rate(self) -> float:
        return 100 * self.altered / self.identifiers if self.identifiers else 0.0


_CORE_RUN = re.compile(r"[A-Za-z0-9_+=~-]+")


def _core(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """The longest run of token characters in ``text[span]`` (the last of equals): the secret
    part of a labelled value that also holds a user name, a host, an app id or quotes."""
    runs = [m.span() for m in _CORE_RUN.finditer(text, span[0], span[1])]
    if not runs:
        return span
    longest = max(e - s for s, e in runs)
    return [r for r in runs if r[1] - r[0] == longest][-1]


def _line_of(text: str, start: int) -> str:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", start)
    return text[a : b if b >= 0 else len(text)][:160]


def measure(corpus: Corpus, policy: RedactionPolicy | None = None) -> Result:
    """Redact every sample of ``corpus`` as a tool result and count what was caught and altered."""
    policy = policy or RedactionPolicy.default()
    res = Result(corpus)
    for seq, s in enumerate(corpus.samples, 1):
        message = policy.redactor(argv=["srv"], env={}).redact_message(tool_result(s.text, seq))
        redacted = message["result"]["content"][0]["text"]
        spans = redacted_spans(s.text, redacted)
        if spans is None:
            res.unaligned += 1
            continue
        for label in s.labels:
            res.labelled += 1
            reason = excluded(label.cls, s.text[label.start : label.end])
            if reason:
                res.excluded[reason] += 1
                continue
            stats = res.per_class[label.cls]
            stats[1] += 1
            value = (label.start, label.end)
            if _covered(value, spans):
                res.caught += 1
                res.caught_core += 1
                stats[0] += 1
            else:
                res.caught_core += _covered(_core(s.text, value), spans)
                res.partly += _overlaps(value, spans)
                res.misses.append((s.name, label.cls, _line_of(s.text, label.start)))
        if s.negative:
            res.negative_samples += 1
            res.negative_altered += bool(spans)
        known = [(lb.start, lb.end) for lb in s.labels]
        # Other occurrences of a labelled value are the same secret (value memory redacts them on
        # purpose), not non-credential identifiers.
        for value in {s.text[lb.start : lb.end] for lb in s.labels}:
            if len(value) >= 4:
                known += [(m.start(), m.end()) for m in re.finditer(re.escape(value), s.text)]
        blocks = [m.span() for m in _KEY_BLOCK.finditer(s.text)]
        for m in _RUN.finditer(s.text):
            word = m.group().strip("./+-~")
            if len(word) < 4:
                continue
            start = m.start() + m.group().index(word)
            run = (start, start + len(word))
            if _overlaps(run, known):
                continue
            hit = _overlaps(run, spans)
            if _overlaps(run, s.ambiguous):
                res.ambiguous += 1
                res.ambiguous_altered += hit
            elif _EXAMPLE.search(word) or _overlaps(run, blocks):
                res.example_keys += 1
                res.example_altered += hit
            else:
                res.identifiers += 1
                if hit:
                    res.altered += 1
                    res.altered_examples.append((s.name, _line_of(s.text, start)))
    return res


def report(res: Result, *, verbose: bool = False, out: Callable[[str], None] = print) -> None:
    """Print the figures of one corpus (and, with ``verbose``, every miss and altered identifier)."""
    c = res.corpus
    out(f"{c.kind}: {c.root} at commit {c.commit}, {len(c.samples)} samples")
    for why, n in sorted(c.skipped.items()):
        out(f"  not measured: {n} {why}")
    if c.trimmed:
        out(
            f"  labels trimmed to the secret group gitleaks' own rule reports: {sum(c.trimmed.values())} ("
            + ", ".join(f"{rule} {n}" for rule, n in sorted(c.trimmed.items()))
            + ")"
        )
    if res.unaligned:
        out(f"  not measured: {res.unaligned} samples whose redacted text did not align")
    out(f"  labelled credentials {res.labelled}; excluded by design {sum(res.excluded.values())}:")
    for why, n in sorted(res.excluded.items()):
        out(f"    {n:4} {why}")
    out(
        f"  recall {res.recall:.1f}% ({res.caught} of {res.considered} redacted in full; "
        f"{res.partly} only in part); of the secret part (the value's longest run of token "
        f"characters, when the label also holds a user, host, id or quotes) {res.core_recall:.1f}% "
        f"({res.caught_core})"
    )
    out(
        f"  false positives {res.fp_rate:.2f}% ({res.altered} of {res.identifiers} non-credential "
        f"identifiers altered); format-valid example keys altered {res.example_altered} of "
        f"{res.example_keys}; ambiguous (reported only by looser modes) altered "
        f"{res.ambiguous_altered} of {res.ambiguous}"
    )
    if res.negative_samples:
        out(
            f"  false-positive samples with anything redacted: {res.negative_altered} of {res.negative_samples}"
        )
    missed = sorted(
        ((cls, t - k, t) for cls, (k, t) in res.per_class.items() if k < t), key=lambda x: (-x[1], x[0])
    )
    if missed:
        out("  missed, per class: " + ", ".join(f"{cls} {m}/{t}" for cls, m, t in missed))
    if verbose:
        for name, cls, line in res.misses:
            out(f"    MISS {cls:32} {name}: {line!r}")
        for name, line in res.altered_examples:
            out(f"    ALTERED {name}: {line!r}")


def measure_dirs(dirs: Iterable[Path], policy: RedactionPolicy | None = None) -> Iterator[Result]:
    """The result of every corpus checkout in ``dirs``."""
    for root in dirs:
        yield measure(load(root), policy)


# --- end to end: the same samples through `harn mcp mock record` ------------------------------------


def record_end_to_end(samples: list[Sample], folder: Path) -> tuple[int, int]:
    """Serve ``samples`` from a tiny stdio server recorded by ``harn mcp mock record`` (the real
    process, through the tests' harness ``record_texts``) and scan every byte it wrote: (labelled
    values outside the excluded classes, how many of them occur in some written byte, raw or
    JSON-escaped)."""
    from tests.redact.credentials import record_texts

    written = record_texts(folder, [s.text for s in samples], timeout=300)
    total = found = 0
    for s in samples:
        for label in s.labels:
            value = s.text[label.start : label.end]
            if excluded(label.cls, value):
                continue
            total += 1
            forms = {value.encode(), json.dumps(value)[1:-1].encode()}
            found += any(f in written for f in forms)
    return total, found


# --- the order test: the same output whatever the redactor saw before ----------------------------------


def _forms(value: str) -> list[str]:
    """The strings through which the value memory finds ``value`` in a text: the value, its
    credential parts (``Bearer <t>``: the token) and their encoded forms."""
    from harn_mcp_mock.redact import pipeline

    out = {value, *pipeline.credential_parts(value)}
    encoded = getattr(pipeline, "_encoded_forms", None)  # the pipeline's own list of forms
    for v in list(out):
        out.update(encoded(v) if encoded is not None else ())
    return sorted(f for f in out if f)


class _FormIndex:
    """The learned values, found in a text by any of their forms (indexed by a form's first
    four characters: one pass over the text finds every candidate)."""

    def __init__(self) -> None:
        self.by_prefix: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self.short: list[tuple[str, int]] = []

    def add(self, value: str, index: int) -> None:
        for form in _forms(value):
            if len(form) < 4:
                self.short.append((form, index))
            else:
                self.by_prefix[form[:4]].append((form, index))

    def found_in(self, text: str) -> set[int]:
        out = {i for form, i in self.short if form in text}
        get = self.by_prefix.get
        for at in range(len(text) - 3):
            cands = get(text[at : at + 4])
            if cands:
                out.update(i for form, i in cands if i not in out and text.startswith(form, at))
        return out


def renumbered(text: str) -> str:
    """``text`` with its placeholders numbered by order of first appearance (a shared redactor
    numbers from where it stands; a fresh one from 1)."""
    numbers: dict[str, int] = {}
    return PLACEHOLDER_RE.sub(lambda m: f"[REDACTED:{numbers.setdefault(m.group(), len(numbers) + 1)}]", text)


@dataclass
class OrderDiff:
    seed: int | None
    position: int  # how many samples the shared redactor had redacted before this one
    sample: str
    learned_before: int  # values the shared redactor had learned before it
    taught: int  # of them, those with a form in the sample (what the fresh redactor was taught)
    shared: str  # the shared redactor's output (renumbered)
    fresh: str  # the taught fresh redactor's output (renumbered)
    leaks: bool  # the shared output keeps in clear something the fresh one redacted


def order_diffs(samples: list[Sample], policy: RedactionPolicy, seed: int | None) -> list[OrderDiff]:
    """Run ``samples`` in a random order (``seed``; ``None``: in the corpus's own order) through
    ONE redactor; for each, compare its
    output with a fresh redactor's that was first taught (:meth:`Redactor.learn`, in the same
    order) what the shared one had learned before that sample. The fresh one is taught the
    learned values that have a form in the sample only: the memory finds a value by its forms
    (:func:`_forms`), so a value with none in the text cannot change what is redacted in it.
    Returns the samples whose outputs differ (placeholder numbers aside)."""
    order = list(range(len(samples)))
    if seed is not None:
        random.Random(seed).shuffle(order)
    shared = policy.redactor(argv=["srv"], env={})
    learned: list[tuple[str, str]] = []
    index = _FormIndex()
    learn = shared.learn

    def recording_learn(value: str, origin: str = "learned") -> bool:
        new = learn(value, origin)
        if new:
            index.add(value, len(learned))
            learned.append((value, origin))
        return new

    shared.learn = recording_learn  # type: ignore[method-assign]  # the pipeline calls self.learn
    diffs = []
    for position, i in enumerate(order):
        s = samples[i]
        before = len(learned)
        relevant = sorted(k for k in index.found_in(s.text) if k < before)
        got = shared.redact_message(tool_result(s.text, position + 1))["result"]["content"][0]["text"]
        fresh = policy.redactor(argv=["srv"], env={})
        for k in relevant:
            fresh.learn(*learned[k])
        want = fresh.redact_message(tool_result(s.text, position + 1))["result"]["content"][0]["text"]
        got, want = renumbered(got), renumbered(want)
        if got != want:
            got_spans, want_spans = redacted_spans(s.text, got), redacted_spans(s.text, want)
            leaks = (
                got_spans is None
                or want_spans is None
                or any(not _covered(span, got_spans) for span in want_spans)
            )
            diffs.append(OrderDiff(seed, position, s.name, before, len(relevant), got, want, leaks))
    return diffs


def _first_difference(a: str, b: str, width: int = 70) -> tuple[str, str]:
    at = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    lo = max(0, at - width // 2)
    return a[lo : at + width], b[lo : at + width]


def report_orders(
    kind: str,
    samples: list[Sample],
    diffs: dict[int, list[OrderDiff]],
    *,
    show: int = 3,
    out: Callable[[str], None] = print,
) -> None:
    """Print the order test's counts for one corpus, and its first few differences."""
    counts = ", ".join(
        f"{'corpus order' if seed is None else f'seed {seed}'}: {len(d)} ({sum(x.leaks for x in d)} leaving in clear)"
        for seed, d in diffs.items()
    )
    out(f"  order test, {kind}, {len(samples)} samples: samples whose output differs: {counts}")
    shown = [d for ds in diffs.values() for d in ds][:show]
    for d in shown:
        got, want = _first_difference(d.shared, d.fresh)
        out(
            f"    DIFF seed {d.seed} {d.sample} (after {d.position} samples, {d.learned_before} values learned, "
            f"{d.taught} of them in the sample){' LEAK' if d.leaks else ''}"
        )
        out(f"      shared: {got!r}")
        out(f"      fresh:  {want!r}")
