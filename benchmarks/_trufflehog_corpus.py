"""trufflehog's detector tests as a labelled corpus, read from a checkout pinned by commit.

**trufflehog** (``github.com/trufflesecurity/trufflehog``): the ``Test*_Pattern`` functions of
``pkg/detectors/<detector>/*_test.go`` (``*_integration_test.go`` left out: they need live
accounts). Each test case has an ``input`` (the text trufflehog scans) and a ``want`` list (what
the detector reports for it: ``Raw``, or ``RawV2`` when set, sometimes ``id:secret`` or a similar
join of several values). The cases are Go code: the Go-subset evaluator of
``_external_corpora`` reads them (string literals, raw strings, ``+``, ``fmt.Sprintf``,
package-level ``var``/``const`` and local variables, one-line helper functions returning an
expression, ``common.GenerateRandomPassword`` with a seeded generator of our own). A case
built in a way it cannot evaluate is skipped and counted.

A *labelled value* is each wanted string, located in the case's input (a URL with a password:
its password, as docs/redaction.md keeps hosts and user names). A joined value not found
whole (``RawV2`` = ``id:secret``, ``user:pass@host``...) is split on the characters that are not
token characters, and each part of 4 or more characters found in the input is a labelled value
of its own; a wanted string none of whose parts is found is counted as unlocated. Values are
counted once per detector (*distinct values*).

Two measures per value, each redacted by a fresh redactor as the text of a ``tools/call``
result:

* **in context**: the input of every case that wants the value, as the test gives it; the value
  counts when it is redacted in full in every one of them;
* **bare**: the value alone, in a sentence (``the value is <v> for now``) and under a neutral JSON
  key (``{"data": "<v>"}``); it counts only when both are redacted in full.

A value is *vendor-prefixed* when it starts with a short run of letters followed by ``_``, ``-``
or ``.`` (``ghp_``, ``xkeysib-``, ``sk.``) and that run of letters stands, as a word, in the
detector's own Go source (its regex or keywords): a random body that happens to start with letters
and a dash (``faiiahli-goke-...``) is not a vendor prefix.

*Non-credential identifiers* are counted as for the other corpora (``_external_corpora``): runs
of token characters in the inputs of the cases that want something, overlapping no labelled value
and no other occurrence of one; the inputs of the cases that want nothing (look-alikes trufflehog
rejects: a key of the wrong length, a keyword too far away) are ambiguous, counted apart.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _external_corpora as ext  # benchmarks/ is on sys.path (the bench scripts' own folder)

from harn_mcp_mock.redact import RedactionPolicy

# --- reading the tests -----------------------------------------------------------------------------


@dataclass
class Case:
    """One test case of a ``Test*_Pattern`` function."""

    detector: str  # the detector's directory under pkg/detectors (its family)
    name: str  # <file>:<test case name>
    text: str
    wants: list[str]


@dataclass
class Value:
    """A distinct labelled value of one detector, with every place it stands in a case."""

    detector: str
    value: str
    wanted: str  # the wanted string it comes from (itself, or a join it is a part of)
    vendor: bool
    contexts: list[tuple[int, int]] = field(default_factory=list)  # (case index, start)


@dataclass
class TrufflehogCorpus:
    root: Path
    commit: str
    cases: list[Case]
    values: list[Value]
    detectors: int  # detectors with at least one case read
    skipped: Counter[str] = field(default_factory=Counter)
    parts: int = 0  # labelled values that are parts of a joined wanted string (or a URL's password)
    notes: Counter[str] = field(default_factory=Counter)  # wanted strings counted by a part, and why

    kind: str = "trufflehog"

    def samples(self) -> list[ext.Sample]:
        """Every case as a sample of ``_external_corpora`` (labels: the located values; the cases
        that want nothing are ambiguous whole)."""
        labels: dict[int, list[ext.Label]] = defaultdict(list)
        for v in self.values:
            for case, start in v.contexts:
                labels[case].append(ext.Label(start, start + len(v.value), v.detector))
        out = []
        for i, c in enumerate(self.cases):
            s = ext.Sample(f"{c.detector}/{c.name}", c.text, labels.get(i, []))
            if not c.wants:
                s.ambiguous.append((0, len(c.text)))
            out.append(s)
        return out


def is_trufflehog(root: Path) -> bool:
    return (root / "pkg" / "detectors").is_dir() and (root / "pkg" / "engine").is_dir()


class _Eval(ext._GoEval):
    """The gitleaks evaluator, with what trufflehog's tests add: more ``fmt.Sprintf`` verbs,
    ``strings`` helpers, ``common.GenerateRandomPassword`` and one-expression helper functions."""

    def __init__(self, tokens: list[tuple[str, str]], rng: random.Random, funcs: dict[str, Any]) -> None:
        super().__init__(tokens, [], rng)
        self.funcs = funcs

    def primary(self, i: int) -> tuple[Any, int]:
        kind, text = self.toks[i]
        # []byte("...") / string(x): a conversion, the same text.
        if (
            text == "["
            and self.toks[i + 1][1] == "]"
            and self.toks[i + 2][1] == "byte"
            and self.toks[i + 3][1] == "("
        ):
            (value,), _spread, end = self.args(i + 4)
            return value, end
        if kind == "num":
            return int(text), i + 1
        if text == "nil":
            return None, i + 1
        return super().primary(i)

    def call(self, name: str, args: list[Any], spread: bool) -> Any:
        if name == "fmt.Sprintf" and args and isinstance(args[0], str):
            rest = iter(args[1:])

            def verb(m: re.Match[str]) -> str:
                if m.group() == "%%":
                    return "%"
                value = next(rest)
                if m.group(1) == "q":
                    return json.dumps(value)
                if m.group(1) == "x" and isinstance(value, str):
                    return value.encode().hex()
                return str(value)

            try:
                return re.sub(r"%[-+# 0-9.]*([sdvqx%])", verb, args[0])
            except StopIteration:
                raise ext._Unsupported("fmt.Sprintf arguments") from None
        if name == "string" and len(args) == 1 and isinstance(args[0], str):
            return args[0]
        if name == "strings.Repeat" and len(args) == 2:
            return args[0] * int(args[1])
        if name == "strings.Join" and len(args) == 2 and isinstance(args[0], list):
            return str(args[1]).join(args[0])
        if name in ("strings.ToUpper", "strings.ToLower", "strings.TrimSpace") and len(args) == 1:
            return {
                "strings.ToUpper": str.upper,
                "strings.ToLower": str.lower,
                "strings.TrimSpace": str.strip,
            }[name](args[0])
        if name == "common.GenerateRandomPassword" and len(args) == 5:
            lower, upper, numeric, special, length = args
            pools = [
                p
                for on, p in (
                    (lower, "abcdefghijklmnopqrstuvwxyz"),
                    (upper, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
                    (numeric, "0123456789"),
                    (special, "!@#$%^&*()-_=+[]{}|;:',.<>?/"),
                )
                if on
            ]
            chars = [self.rng.choice(p) for p in pools]
            chars += [self.rng.choice("".join(pools)) for _ in range(int(length) - len(chars))]
            self.rng.shuffle(chars)
            return "".join(chars)
        if name in self.funcs:
            params, body = self.funcs[name]
            if len(params) != len(args):
                raise ext._Unsupported(name)
            inner = _Eval(body, self.rng, self.funcs)
            inner.env = {**self.env, **dict(zip(params, args, strict=True))}
            value, _end = inner.expr(0)
            return value
        if name in ("true", "false"):
            raise ext._Unsupported(name)
        return super().call(name, args, spread)

    def expr(self, i: int) -> tuple[Any, int]:
        kind, text = self.toks[i]
        if kind == "ident" and text in ("true", "false"):
            return text == "true", i + 1
        return super().expr(i)


def _matching(toks: list[tuple[str, str]], i: int) -> int:
    """The index just after the bracket closing the one at ``toks[i]``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[toks[i][1]]]
    i += 1
    while stack:
        t = toks[i][1]
        if t in pairs:
            stack.append(pairs[t])
        elif stack and t == stack[-1]:
            stack.pop()
        i += 1
    return i


def _top_level(
    toks: list[tuple[str, str]],
) -> tuple[list[tuple[str, str]], dict[str, Any], list[tuple[str, int, int]]]:
    """The tokens outside function bodies, the one-expression helper functions
    (name -> (parameters, expression tokens)), and every function as (name, body start, end)."""
    outside: list[tuple[str, str]] = []
    funcs: dict[str, Any] = {}
    bodies: list[tuple[str, int, int]] = []
    i = 0
    while i < len(toks):
        if (
            toks[i] == ("ident", "func")
            and i + 2 < len(toks)
            and toks[i + 1][0] == "ident"
            and toks[i + 2][1] == "("
        ):
            name = toks[i + 1][1]
            params_end = _matching(toks, i + 2)
            j = params_end
            while j < len(toks) and toks[j][1] != "{":
                j = _matching(toks, j) if toks[j][1] in "([" else j + 1
            end = _matching(toks, j)
            bodies.append((name, j + 1, end - 1))
            body = toks[j + 1 : end - 1]
            if body and body[0] == ("ident", "return"):
                params = [
                    toks[k][1]
                    for k in range(i + 3, params_end - 1)
                    if toks[k][0] == "ident"
                    and toks[k + 1][1] in (",", "string", ")")
                    and toks[k - 1][1] in ("(", ",")
                ]
                funcs[name] = (params, [*body[1:], ("op", ";")])
            i = end
            continue
        outside.append(toks[i])
        i += 1
    return outside, funcs, bodies


def _fields(ev: _Eval, i: int, end: int) -> dict[str, Any]:
    """The ``field: value`` pairs of one struct literal, from ``toks[i]`` (just after ``{``) to ``end``;
    a value the evaluator cannot read is an ``_Unsupported``."""
    out: dict[str, Any] = {}
    toks = ev.toks
    while i < end:
        if toks[i][0] == "ident" and toks[i + 1][1] == ":":
            name = toks[i][1]
            try:
                value, j = _want_or_expr(ev, i + 2)
                out[name] = value
            except (ext._Unsupported, IndexError, ValueError, TypeError) as exc:
                out[name] = ext._Unsupported(str(exc))
                j = i + 2
                while j < end and toks[j][1] != ",":
                    j = _matching(toks, j) if toks[j][1] in "([{" else j + 1
            i = j
        else:
            i = _matching(toks, i) if toks[i][1] in "([{" else i + 1
    return out


def _want_or_expr(ev: _Eval, i: int) -> tuple[Any, int]:
    toks = ev.toks
    if [t for _k, t in toks[i : i + 4]] == ["[", "]", "string", "{"]:
        values, end = ev.composite(i + 3, keyed=False)
        return [str(v) for v in values], end
    if toks[i][1] == "nil":
        return [], i + 1
    return ev.expr(i)


def _cases(path: Path, detector: str, skipped: Counter[str]) -> list[Case]:
    source = path.read_text(encoding="utf-8", errors="replace")
    toks = ext._tokens(source)
    outside, funcs, bodies = _top_level(toks)
    rng = random.Random(f"{detector}/{path.name}")
    top = _Eval(outside, rng, funcs)
    top.run()
    out: list[Case] = []
    for name, start, end in bodies:
        if not re.fullmatch(r"Test\w*_Pattern\w*", name):
            continue
        ev = _Eval(toks[start:end], rng, funcs)
        ev.env = dict(top.env)
        ev.run()
        body = ev.toks
        # tests := []struct { ... }{ {case}, {case}, ... }
        k = next(
            (
                j
                for j in range(len(body) - 3)
                if body[j][1] == "[" and body[j + 1][1] == "]" and body[j + 2][1] == "struct"
            ),
            None,
        )
        if k is None or body[k + 3][1] != "{":
            skipped["Pattern functions without a table of cases"] += 1
            continue
        j = _matching(body, k + 3)
        if body[j][1] != "{":
            skipped["Pattern functions without a table of cases"] += 1
            continue
        table_end = _matching(body, j) - 1
        j += 1
        while j < table_end:
            if body[j][1] != "{":
                j += 1
                continue
            case_end = _matching(body, j)
            fields = _fields(ev, j + 1, case_end - 1)
            j = case_end
            # The usual shape (input, want), and the others some detectors use: data with
            # shouldMatch and match, expectedPairs, wantRawV2.
            text = fields.get("input", fields.get("data"))
            want = fields.get("want", fields.get("expectedPairs"))
            if want is None and isinstance(fields.get("shouldMatch"), bool):
                match = fields.get("match")
                want = [match] if fields["shouldMatch"] and isinstance(match, str) and match else []
            if want is None and "wantRawV2" in fields:
                want = [fields["wantRawV2"]] if fields["wantRawV2"] else []
            label = fields.get("name")
            label = label if isinstance(label, str) else f"case {len(out)}"
            if text is None or want is None:
                skipped["cases with no input/want fields (another table shape)"] += 1
                continue
            if isinstance(text, ext._Unsupported) or isinstance(want, ext._Unsupported):
                skipped[
                    "cases built in a way the evaluator does not read (helpers with loops, encoders...)"
                ] += 1
                continue
            if not isinstance(text, str) or not isinstance(want, list):
                skipped["cases whose input is not a string or want not a []string"] += 1
                continue
            out.append(Case(detector, f"{path.name}:{label}", text, [str(w) for w in want]))
    return out


def joined_parts(want: str, text: str) -> tuple[list[str], int]:
    """The parts of a wanted string not found whole in ``text``: its string values when it is a
    JSON object, else the longest pieces (4 characters or more) found in ``text``, taken from left
    to right; and how many runs of 4 or more characters between them were not found."""
    try:
        obj = json.loads(want)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        values = [v for k, v in obj.items() if isinstance(v, str) and v and not _NAME_KEY.search(k)]
        found = [v for v in values if v in text]
        return found, len(values) - len(found)
    parts: list[str] = []
    unfound, gap, at = 0, 0, 0
    while at < len(want):
        lo, hi = 0, len(want) - at  # the longest prefix of want[at:] in text (a monotone property)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if want[at : at + mid] in text:
                lo = mid
            else:
                hi = mid - 1
        if lo >= 4:
            unfound += gap >= 4
            gap = 0
            parts.append(want[at : at + lo])
            at += lo
        else:
            gap += 1
            at += 1
    unfound += gap >= 4
    return list(dict.fromkeys(parts)), unfound


_NAME_KEY = re.compile(r"(?i)name|user|url|host|endpoint|domain|region|tenant|client_?id|^id$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_USERINFO = re.compile(r"://[^/\s@:]*:([^/\s@]+)@")  # a URL with a password: the password counts
_HOSTLIKE = re.compile(
    r"(?i)[a-z][a-z0-9+.-]*://\S*|[\w.+-]+@[\w-]+(\.[\w-]+)+|([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?(/\S*)?"
)


def _not_secret_part(part: str) -> str | None:
    """Why a part of a joined wanted string is no secret (a URL, host or e-mail address; a short
    or numeric id, a name, a UUID: what docs/redaction.md keeps), or ``None``."""
    if _HOSTLIKE.fullmatch(part):
        return "a URL, host or e-mail address"
    if len(part) < 6 or part.isdigit():
        return "short or numeric ids"
    if part.isalpha() and len(part) < 12:
        return "names (letters only)"
    if _UUID.fullmatch(part):
        return "UUIDs (kept by design)"
    return None


_PREFIX = re.compile(r"([A-Za-z]{1,12})[_.-]")
_PART_SPLIT = re.compile(r"[^A-Za-z0-9_+/=.~-]+")


def _vendor(value: str, source: str) -> bool:
    m = _PREFIX.match(value)
    if not m or len(value) - m.end() < 8:
        return False
    return re.search(rf"(?<![A-Za-z]){re.escape(m.group(1))}(?![a-z])", source) is not None


def load_trufflehog(root: Path) -> TrufflehogCorpus:
    """The ``Test*_Pattern`` cases of every detector, with their labelled values located."""
    skipped: Counter[str] = Counter()
    cases: list[Case] = []
    sources: dict[str, str] = {}
    detectors_dir = root / "pkg" / "detectors"
    for path in sorted(detectors_dir.glob("*/*_test.go")) + sorted(detectors_dir.glob("*/*/*_test.go")):
        if path.name.endswith("_integration_test.go"):
            continue
        detector = str(path.parent.relative_to(detectors_dir))
        try:
            found = _cases(path, detector, skipped)
        except (IndexError, KeyError) as exc:  # a file the token walk cannot follow
            skipped[f"test files the reader cannot follow ({type(exc).__name__})"] += 1
            continue
        if found and detector not in sources:
            sources[detector] = "\n".join(
                p.read_text(encoding="utf-8", errors="replace")
                for p in sorted(path.parent.glob("*.go"))
                if not p.name.endswith("_test.go")
            )
        cases += found
    values: dict[tuple[str, str], Value] = {}
    notes: Counter[str] = Counter()
    parts = 0
    for i, c in enumerate(cases):
        for want in dict.fromkeys(c.wants):
            if not want:
                skipped["empty wanted strings"] += 1
                continue
            at = c.text.find(want)
            password = _USERINFO.search(want) if at >= 0 else None
            if password:  # a URL with a password: the password is the secret (hosts are kept)
                notes["wanted URLs with a password, counted by their password"] += 1
                located = [(password.group(1), at + password.start(1))]
            elif at >= 0:
                located = [(want, at)]
            else:
                pieces, unfound = joined_parts(want, c.text)
                if unfound:
                    skipped["parts of joined wanted strings not found in their input"] += unfound
                located = []
                for piece in pieces:
                    password = _USERINFO.search(piece)
                    piece = password.group(1) if password else piece
                    why = _not_secret_part(piece)
                    if why:
                        skipped[f"parts of joined wanted strings that are {why}"] += 1
                    else:
                        located.append((piece, c.text.find(piece)))
                if not pieces:
                    skipped["wanted strings not found in their input, whole or in parts"] += 1
                    continue
            for value, start in located:
                key = (c.detector, value)
                if key not in values:
                    values[key] = Value(c.detector, value, want, _vendor(value, sources.get(c.detector, "")))
                    parts += value != want
                values[key].contexts.append((i, start))
    detectors = len({c.detector for c in cases})
    return TrufflehogCorpus(
        root, ext.commit_of(root), cases, list(values.values()), detectors, skipped, parts, notes
    )


# --- measuring ----------------------------------------------------------------------------------------


def bare_texts(value: str) -> list[str]:
    """The value alone: in a sentence, and under a neutral JSON key."""
    return [f"the value is {value} for now", json.dumps({"data": value})]


def _redacted_in_full(policy: RedactionPolicy, text: str, span: tuple[int, int]) -> bool:
    spans = _spans(policy, text)
    return spans is not None and ext._covered(span, spans)


def _spans(policy: RedactionPolicy, text: str) -> list[tuple[int, int]] | None:
    message = policy.redactor(argv=["srv"], env={}).redact_message(ext.tool_result(text, 1))
    return ext.redacted_spans(text, message["result"]["content"][0]["text"])


@dataclass
class Miss:
    detector: str
    value: str
    vendor: bool
    in_context: bool  # redacted in full in every input that wants it
    bare: bool
    line: str  # the value's line in the (first failing) input
    case: str
    part: bool = False  # a part of a joined wanted string (or a URL's password)


@dataclass
class TrufflehogResult:
    corpus: TrufflehogCorpus
    values: int = 0
    in_context: int = 0
    bare: int = 0
    per_family: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    per_class: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    misses: list[Miss] = field(default_factory=list)
    identifiers: ext.Result | None = None  # the non-credential figures (_external_corpora's count)
    unaligned: int = 0


def measure_trufflehog(corpus: TrufflehogCorpus, policy: RedactionPolicy | None = None) -> TrufflehogResult:
    policy = policy or RedactionPolicy.default()
    res = TrufflehogResult(corpus)
    spans: list[list[tuple[int, int]] | None] = [_spans(policy, c.text) for c in corpus.cases]
    res.unaligned = sum(s is None for s in spans)
    for v in corpus.values:
        failed = [
            (i, start)
            for i, start in v.contexts
            if spans[i] is None or not ext._covered((start, start + len(v.value)), spans[i] or [])
        ]
        in_context = not failed
        bare = all(
            _redacted_in_full(policy, text, (text.find(v.value), text.find(v.value) + len(v.value)))
            for text in bare_texts(v.value)
        )
        res.values += 1
        res.in_context += in_context
        res.bare += bare
        cls = "vendor-prefixed" if v.vendor else "other"
        for stats in (res.per_family[v.detector], res.per_class[cls]):
            stats[0] += 1
            stats[1] += in_context
            stats[2] += bare
        if not (in_context and bare):
            case, start = failed[0] if failed else v.contexts[0]
            res.misses.append(
                Miss(
                    v.detector,
                    v.value,
                    v.vendor,
                    in_context,
                    bare,
                    ext._line_of(corpus.cases[case].text, start).strip(),
                    corpus.cases[case].name,
                    v.value != v.wanted,
                )
            )
    res.identifiers = ext.measure(
        ext.Corpus("trufflehog", corpus.root, corpus.commit, corpus.samples(), corpus.skipped), policy
    )
    return res


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}% ({k}/{n})" if n else "n/a"


def summary_lines(res: TrufflehogResult) -> list[str]:
    c = res.corpus
    out = [
        f"trufflehog: {c.root} at commit {c.commit}, {len(c.cases)} test cases from {c.detectors} detectors "
        f"({sum(1 for x in c.cases if x.wants)} wanting a value)",
        f"  distinct labelled values {res.values} (per detector; {c.parts} of them parts of a joined RawV2 value "
        "or the password of a URL)",
    ]
    for why, n in sorted(c.notes.items()):
        out.append(f"  {n} {why}")
    for why, n in sorted(c.skipped.items()):
        out.append(f"  not measured: {n} {why}")
    if res.unaligned:
        out.append(f"  not measured: {res.unaligned} cases whose redacted text did not align")
    out.append(f"  in context: {_pct(res.in_context, res.values)}; bare: {_pct(res.bare, res.values)}")
    for cls in ("vendor-prefixed", "other"):
        n, k, b = res.per_class.get(cls, [0, 0, 0])
        out.append(f"    {cls:16} {n:5} values: in context {_pct(k, n)}, bare {_pct(b, n)}")
    fams = res.per_family
    full = sum(1 for n, k, _b in fams.values() if k == n)
    none = sum(1 for _n, k, _b in fams.values() if k == 0)
    out.append(
        f"  detector families {len(fams)}: in context {full} fully caught, {len(fams) - full - none} partly, {none} not at all"
    )
    bfull = sum(1 for n, _k, b in fams.values() if b == n)
    bnone = sum(1 for _n, _k, b in fams.values() if b == 0)
    out.append(f"    bare: {bfull} fully caught, {len(fams) - bfull - bnone} partly, {bnone} not at all")
    vendor_families = {v.detector for v in c.values if v.vendor}
    for cls in ("vendor-prefixed", "other"):
        group = [st for fam, st in fams.items() if (fam in vendor_families) == (cls == "vendor-prefixed")]
        out.append(
            f"    {cls} families ({'no' if cls == 'other' else 'a'} value vendor-prefixed) {len(group)}: fully caught in context "
            f"{sum(1 for n, k, _b in group if k == n)}, bare {sum(1 for n, _k, b in group if b == n)}"
        )
    idr = res.identifiers
    if idr is not None:
        out.append(
            f"  false positives {idr.fp_rate:.2f}% ({idr.altered} of {idr.identifiers} non-credential "
            f"identifiers altered); format-valid example keys altered {idr.example_altered} of "
            f"{idr.example_keys}; in the cases that want nothing (ambiguous) altered "
            f"{idr.ambiguous_altered} of {idr.ambiguous}"
        )
    return out


def family_lines(res: TrufflehogResult) -> list[str]:
    out = ["  per detector family with a miss (values, in context, bare):"]
    for fam, (n, k, b) in sorted(res.per_family.items(), key=lambda x: (x[1][1] - x[1][0], x[0])):
        if k < n or b < n:
            out.append(f"    {fam:36} {n:3} {k:3} {b:3}")
    return out


def miss_lines(res: TrufflehogResult) -> list[str]:
    """``MISS <detector> <class>[/part] <measures failed> <value> in <file>:<case>: <its line>``."""
    out = []
    for m in sorted(res.misses, key=lambda m: (m.detector, m.value)):
        failed = "+".join(w for w, ok in (("context", m.in_context), ("bare", m.bare)) if not ok)
        cls = ("vendor" if m.vendor else "other") + ("/part" if m.part else "")
        out.append(f"MISS {m.detector:28} {cls:11} {failed:12} {m.value!r} in {m.case}: {m.line[:200]!r}")
    return out


def report_trufflehog(
    res: TrufflehogResult, *, verbose: bool = False, out: Callable[[str], None] = print
) -> None:
    for line in summary_lines(res):
        out(line)
    if verbose:
        for line in family_lines(res) + miss_lines(res):
            out("    " + line if line.startswith("MISS") else line)
        if res.identifiers is not None:
            for name, line in res.identifiers.altered_examples:
                out(f"    ALTERED {name}: {line!r}")
