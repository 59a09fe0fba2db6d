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

What is counted as a credential
-------------------------------

trufflehog's detectors report more than secrets: to verify a key they also extract what goes
with it (a user name, a host, an account or client id, a URL's options) and join it into the
wanted string (``RawV2``: ``id:secret``, ``key + host``, a whole connection URL). Our redactor
rewrites secrets and keeps harmless identifiers on purpose (docs/redaction.md), so each wanted
string is counted by its *secret-bearing* parts, and every other part is counted apart under a
named reason. The decision is made from the value and its role in the wanted string, never from
what the redactor does with it:

0. **A wanted string's ends that are no part of a secret** are trimmed first: a line break (as
   it stands, or escaped once or twice: a PEM block's last ``\\n``) and a quote the detector's
   expression took along with the value (``live_…"``, the input's closing quote). The report
   counts the wanted strings so trimmed.
1. **A URL or connection string** (``scheme://``, ``jdbc:``, two ``name=value`` pairs or more
   joined by ``;`` or ``&``, ``key: v account_url: w``) counts by its secret-bearing fields: the
   password of ``user:pass@`` (Oracle's ``user/pass@``) and the values of the parameters whose
   name is a secret's (``password=``, ``pwd=``, ``sig=``, ``Secret=``, ``AccountKey=``...). One
   with none is *not a credential: a locator* (``jdbc:mysql://host:3306/db``), except a URL the
   detector wants alone whose path holds a random segment (16 characters or more, letters and
   digits): a webhook, whose URL is the secret, counted whole. A wanted URL not found whole in
   the input (the detector rewrites it: Mongo options reordered) counts its fields; its other
   pieces found inside a URL or connection string of the input are that URL's user names, hosts,
   path pieces or options.
2. **A name's head word** says what a value is: the last word of a name, ``Pat``/``Regex``
   aside (``tokenNamePat`` a name, ``clientSecretPat`` and ``accountKey`` secrets, ``project_id``
   an id; a name holding ``secret`` or ``password`` anywhere is a secret: Vault's
   ``secretIdPat``). The names looked at, in order: a JSON wanted string's keys; the package
   patterns of the detector's Go source (``keyPat``, ``idPat``, ``userPat``...) whose capture
   holds the value, when the detector names at least one pattern for a secret
   (bitbucketdatacenter's tokens are its ``userPat``: such a detector says nothing by its names);
   when no pattern decides (none captures the value, or one names it a secret and another an
   identifier), the name the value stands under in the input (``ORG_ID=``, ``"client_id":``,
   ``username:``). A secret's name makes the value a credential whatever its form (a UUID that is
   the detector's key counts).
3. **By its form**, what can never hold a secret, before the names: an e-mail address, a host or
   URL fragment (``.jfrog.io``, ``://jira.``), a PEM armour line (``-----BEGIN ... KEY-----``),
   a hex hash right after a hash word (``commit 2c65bd…``); and, after the names, when none
   decided: a UUID, an id shorter than 6 characters or all digits, a name of fewer than 12
   letters.

A wanted string found whole is judged by the same rules as a part (an e-mail address wanted alone
is no credential). The report prints the count of each reason, ``--misses`` lists every value and
part counted apart (``EXCLUDED <reason>: ...``), and how many of each the redactor altered in
context (an identifier altered is over-redaction, not a catch). Those values are left out of the
non-credential identifiers figure below (they are counted apart).

The count issue 37 was measured with is printed beside it (``AS COUNTED BEFORE``): a wanted
string found whole counted whole (a URL with a password: its password), a joined one by every
part of 4 characters or more found in its input, save URLs, hosts, e-mail addresses, UUIDs, short
or numeric ids and short names of letters.

Parts are located in the input as they stand, percent-decoded or JSON-escaped (a private key
with ``\\n`` in escaped JSON); a joined string not found whole is split into the longest pieces
of 4 or more characters found in the input, left to right; pieces not found are counted
(``not measured``). Values are counted once per detector (*distinct values*).

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
class Excluded:
    """A wanted value, or a part of one, that is not a credential, and why (the reasons of
    ``why_not_a_credential``)."""

    detector: str
    value: str
    wanted: str
    reason: str
    case: str
    contexts: list[tuple[int, int]] = field(default_factory=list)  # (case index, start) in the inputs


@dataclass
class TrufflehogCorpus:
    root: Path
    commit: str
    cases: list[Case]
    values: list[Value]  # the secret-bearing values (this loader's classification)
    detectors: int  # detectors with at least one case read
    skipped: Counter[str] = field(default_factory=Counter)
    parts: int = 0  # values that are parts of a wanted string (a URL's password, a RawV2's part)
    notes: Counter[str] = field(default_factory=Counter)  # wanted strings counted by a part, and why
    excluded: list[Excluded] = field(default_factory=list)  # values and parts that are no credential
    # The count before this classification (every part of a joined value a credential, a URL
    # whole unless it holds a password): the figure issue 37 was measured with.
    before: list[Value] = field(default_factory=list)
    before_parts: int = 0
    before_skipped: Counter[str] = field(default_factory=Counter)

    kind: str = "trufflehog"

    def samples(self, *, apart: bool = False) -> list[ext.Sample]:
        """Every case as a sample of ``_external_corpora`` (labels: the located values; the cases
        that want nothing are ambiguous whole). ``apart``: the values that are no credential
        (``excluded``) are labelled too, so that the count of non-credential identifiers leaves
        them out (they are counted apart, by reason)."""
        labels: dict[int, list[ext.Label]] = defaultdict(list)
        for v in self.values:
            for case, start in v.contexts:
                labels[case].append(ext.Label(start, start + len(v.value), v.detector))
        for e in self.excluded if apart else []:
            for case, start in e.contexts:
                labels[case].append(ext.Label(start, start + len(e.value), "not a credential"))
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
    pieces, unfound = joined_pieces(want, text)
    return list(dict.fromkeys(p for p, _at in pieces)), unfound


def joined_pieces(want: str, text: str) -> tuple[list[tuple[str, int]], int]:
    """The longest pieces of ``want`` (4 characters or more) found in ``text``, from left to
    right, each with where it starts in ``want``; and how many runs of 4 or more characters
    between them were not found."""
    parts: list[tuple[str, int]] = []
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
            parts.append((want[at : at + lo], at))
            at += lo
        else:
            gap += 1
            at += 1
    unfound += gap >= 4
    return parts, unfound


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


# --- what is a credential ------------------------------------------------------------------------

LOCATOR = "not a credential: a locator (a URL or connection string with no secret-bearing part)"
USERS = "user names"
EMAILS = "e-mail addresses"
HOSTS = "hosts, domains and URLs (parts of a wanted string, no secret in them)"
PATHS = "path pieces of a wanted URL"
OPTIONS = "options of a wanted URL or connection string (ssl=true, appName=, database=...)"
IDS = "project, account, org, client and other ids (named so by the detector or its input)"
NAMES = "names of a token, key or service (named so by the detector or its input)"
ARMOUR = "PEM armour lines (-----BEGIN/END ...-----)"
HASHES = "hashes under a hash word (commit, sha, digest...)"
UUIDS = "UUIDs (kept by design)"
SHORT = "short or numeric ids"
LETTERS = "names (letters only)"

# The head word of a name (its last word, ``Pat``/``Regex`` aside: ``tokenNamePat`` is a name,
# ``clientSecretPat`` a secret, ``accountKey`` a key, ``project_id`` an id) says what the named
# thing is. A name is split at ``_``, ``-``, spaces and camelCase humps.
_SECRET_HEADS = (
    "key",
    "keys",
    "secret",
    "secrets",
    "token",
    "tokens",
    "password",
    "passwd",
    "pass",
    "pwd",
    "pword",
    "passphrase",
    "sig",
    "signature",
    "credential",
    "credentials",
    "cred",
    "creds",
    "auth",
)
_ID_HEADS: dict[str, tuple[str, ...]] = {
    USERS: ("user", "username", "usr", "uname", "login", "owner"),
    EMAILS: ("email", "mail"),
    HOSTS: (
        "host",
        "hostname",
        "domain",
        "subdomain",
        "url",
        "uri",
        "endpoint",
        "server",
        "instance",
        "site",
        "address",
        "cluster",
    ),
    IDS: (
        "id",
        "ids",
        "org",
        "organization",
        "organisation",
        "project",
        "proj",
        "account",
        "tenant",
        "workspace",
        "team",
        "client",
        "app",
        "application",
        "type",
        "database",
        "db",
        "catalog",
    ),
    NAMES: ("name", "service"),
}
_NOISE_WORDS = {"pat", "pattern", "patterns", "regex", "regexp", "re", "rgx", "matcher", "value", "values"}


def name_role(name: str) -> str | None:
    """What a name says its value is: ``"secret"``, the reason an identifier is kept (``USERS``,
    ``EMAILS``, ``HOSTS``, ``IDS``, ``NAMES``), or ``None`` when its head word says neither."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name))
    words = [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]
    while words and words[-1] in _NOISE_WORDS:
        words.pop()
    if not words:
        return None
    head = words[-1]
    # A secret's own id is the secret (Vault's ``secretIdPat``); a key's or token's id is not
    # (``private_key_id``, ``accessKeyIdPat``).
    if head in _SECRET_HEADS or any(w in ("secret", "password", "passwd", "passphrase") for w in words):
        return "secret"
    for reason, heads in _ID_HEADS.items():
        if head in heads:
            return reason
    # A compound written as one word: ``apikey``, ``clientid``, ``hostname``.
    if any(head.endswith(w) for w in _SECRET_HEADS if len(w) >= 3):
        return "secret"
    for reason, heads in _ID_HEADS.items():
        if any(head.endswith(w) for w in heads if len(w) >= 2):
            return reason
    return None


_URL_START = re.compile(r"(?i)^(?:jdbc:[a-z0-9]+:(?://)?|[a-z][a-z0-9+.-]{0,15}://)")
_ORACLE_THIN = re.compile(r"(?i)^jdbc:oracle:thin:([^/@:\s]*)/([^@\s]+)@")
_PARAM = re.compile(r"[?&;]\s*([A-Za-z][\w .-]*?)\s*=([^&;]*)")
_PAIR = re.compile(r"\s*([A-Za-z][\w .-]*?)\s*=([^;&]*)")
_COLON_PAIRS = re.compile(r"[A-Za-z][\w-]*: \S+(?: [A-Za-z][\w-]*: \S+)+")
_RANDOM_SEGMENT = re.compile(r"(?=[^/]*[0-9])(?=[^/]*[A-Za-z])[A-Za-z0-9_-]{16,}")


def secret_fields(value: str) -> list[str] | None:
    """The secret-bearing fields of a URL or connection string: a URL's password (``user:pass@``,
    Oracle's ``user/pass@``) and the values of its parameters whose name is a secret's
    (``password=``, ``pwd=``, ``sig=``, ``Secret=``, ``AccountKey=``, ``token=``...: ``name_role``);
    ``[]`` when it holds none; ``None`` when ``value`` is neither a URL (``scheme://``, ``jdbc:``)
    nor a connection string (two ``name=value`` pairs or more, joined by ``;`` or ``&``)."""
    out: list[str] = []
    if _URL_START.match(value):
        oracle = _ORACLE_THIN.match(value)
        if oracle:
            out.append(oracle.group(2))
        rest = value[_URL_START.match(value).end() :]  # type: ignore[union-attr]
        authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
        userinfo, at, _hosts = authority.rpartition("@")
        if at and ":" in userinfo:
            out.append(userinfo.split(":", 1)[1])
        params = _PARAM.findall(rest)
    elif _COLON_PAIRS.fullmatch(value):  # key: v account_url: w
        params = re.findall(r"([A-Za-z][\w-]*): (\S+)", value)
    else:
        sep = ";" if value.count(";") >= value.count("&") else "&"
        items = value.strip().strip(sep).split(sep)
        pairs = [_PAIR.fullmatch(x) for x in items]
        if len(items) < 2 or not all(pairs):
            return None
        params = [(m.group(1), m.group(2)) for m in pairs if m]
    out += [v for name, v in params if v.strip() and name_role(name) == "secret"]
    return [v for v in dict.fromkeys(out) if v]


def is_capability_url(url: str) -> bool:
    """A URL whose path holds a random segment (16 characters or more, letters and digits): a
    webhook's URL, where the URL itself is the secret."""
    m = _URL_START.match(url)
    if not m or url.lower().startswith("jdbc:"):
        return False
    path = url[m.end() :].split("/", 1)[1] if "/" in url[m.end() :] else ""
    return any(not _UUID.fullmatch(s) for s in _RANDOM_SEGMENT.findall(path))


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
_HOST_PIECE = re.compile(r"(?i)(?:[a-z][a-z0-9+.-]*)?://\S*|\.?([a-z0-9-]+\.)+[a-z]{2,10}\.?(:\d+)?(/\S*)?")
_ARMOUR = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----")
_UNDER = re.compile(r"([A-Za-z][\w.-]*)[\"']?[ \t]*(?::=|[:=])[ \t]*[\"'`]?[ \t]*$")
_HASH_WORD = re.compile(
    r"(?i)\b(?:commit|sha|sha1|sha256|sha512|hash|digest|checksum|md5|revision|rev)\W{0,3}$"
)


def why_not_a_credential(value: str, text: str, start: int, roles: set[str]) -> str | None:
    """Why a wanted value (or a part of one) standing at ``text[start:]`` is no credential, or
    ``None`` when it is one. ``roles``: the names of the detector's patterns that capture it in
    ``text`` (``keyPat``, ``idPat``...). In order: by its form, what can never hold a secret (an
    e-mail address, a host or URL fragment, a PEM armour line, a hex hash right after a hash
    word); then by the detector's own name for it (a pattern named for a secret makes it a
    credential, whatever its form; one named only for an identifier makes it that identifier);
    last, by its form again when no pattern names it: a UUID, a short or numeric id, a short
    name of letters only."""
    if _EMAIL.fullmatch(value):
        return EMAILS
    if _HOST_PIECE.fullmatch(value):
        return HOSTS
    if _ARMOUR.fullmatch(value.strip()):
        return ARMOUR
    if re.fullmatch(r"[0-9a-f]{7,64}", value) and _HASH_WORD.search(text[max(0, start - 20) : start]):
        return HASHES
    kinds = {name_role(r) for r in roles}
    ids = sorted(k for k in kinds if k and k != "secret")
    if kinds == {"secret"}:
        return None
    if ids and kinds == set(ids):
        return ids[0]
    # No pattern names it, or one names it a secret and another an identifier: the name it
    # stands under in the input decides (ORG_ID=..., "client_id": "...", username: ...).
    under = _UNDER.search(text[max(0, start - 80) : start])
    role = name_role(under.group(1)) if under else None
    if role not in (None, "secret"):
        return role
    if "secret" in kinds:
        return None
    if _UUID.fullmatch(value):
        return UUIDS
    if len(value) < 6 or value.isdigit():
        return SHORT
    if value.isalpha() and len(value) < 12:
        return LETTERS
    return None


class _Regex(str):
    """A pattern a detector compiles (``regexp.MustCompile``)."""


class _PatternEval(_Eval):
    def call(self, name: str, args: list[Any], spread: bool) -> Any:
        if name in ("regexp.MustCompile", "regexp.Compile") and len(args) == 1 and isinstance(args[0], str):
            return _Regex(args[0])
        if name == "detectors.PrefixRegex" and len(args) == 1 and isinstance(args[0], list):
            return "(?i:" + "|".join(args[0]) + r")(?:.|[\n\r]){0,40}?"
        return super().call(name, args, spread)


_POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:xdigit:]": "0-9a-fA-F",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:space:]": r"\s",
    "[:word:]": r"\w",
}


def _python_regex(go: str) -> re.Pattern[str] | None:
    """A Go (RE2) pattern as Python's, or ``None`` when Python cannot read it: flags set
    mid-pattern apply to the whole pattern (looser, enough to find what it captures)."""
    for k, v in _POSIX.items():
        go = go.replace(k, v)
    go = go.replace(r"\z", r"\Z")
    flags = set("".join(re.findall(r"\(\?([imsU]+)\)", go))) - {"U"}
    go = re.sub(r"\(\?[imsU]+\)", "", go)
    try:
        return re.compile(("(?" + "".join(sorted(flags)) + ")" if flags else "") + go)
    except (re.error, OverflowError, RecursionError):
        return None


def detector_patterns(source: str, common: dict[str, Any] | None = None) -> dict[str, re.Pattern[str]]:
    """The package-level patterns of a detector's Go source, by variable name (``keyPat``,
    ``idPat``...), those the evaluator and Python's ``re`` can read."""
    toks = ext._tokens(source)
    outside, funcs, _bodies = _top_level(toks)
    ev = _PatternEval(outside, random.Random(0), funcs)
    ev.env.update(common or {})
    try:
        ev.run()
    except (IndexError, KeyError, ValueError, TypeError):
        pass
    out = {}
    for name, value in ev.env.items():
        if isinstance(value, _Regex):
            rx = _python_regex(value)
            if rx is not None:
                out[name] = rx
    return out


def _common_env(root: Path) -> dict[str, Any]:
    """trufflehog's shared pattern constants (``common.EmailPattern``...) as ``common.<name>``."""
    path = root / "pkg" / "common" / "patterns.go"
    if not path.is_file():
        return {}
    outside, funcs, _bodies = _top_level(ext._tokens(path.read_text(encoding="utf-8", errors="replace")))
    ev = _PatternEval(outside, random.Random(0), funcs)
    try:
        ev.run()
    except (IndexError, KeyError, ValueError, TypeError):
        pass
    return {f"common.{k}": v for k, v in ev.env.items() if isinstance(v, str)}


def pattern_roles(value: str, captures: list[tuple[str, str]]) -> set[str]:
    """The patterns whose captures (``(pattern name, captured text)`` in one input) hold
    ``value``: the tightest such capture's (a key's own pattern before a URL's that holds it);
    else those it holds whole (a joined part may span two captures). A capture that is a whole
    JSON object says nothing of one of its values (their keys do)."""
    holding = [(len(g), name) for name, g in captures if value in g and not g.lstrip().startswith("{")]
    if holding:
        tightest = min(n for n, _name in holding)
        return {name for n, name in holding if n == tightest}
    return {name for name, g in captures if len(g) >= 8 and g in value}


def captures_of(text: str, patterns: dict[str, re.Pattern[str]]) -> list[tuple[str, str]]:
    out = []
    for name, rx in patterns.items():
        for m in rx.finditer(text):
            groups = [g for g in m.groups() if g] or [m.group()]
            out += [(name, g) for g in groups if len(g) >= 4]
    return out


def url_part(url: str, offset: int) -> str:
    """Which part of a URL stands at ``url[offset]``: ``USERS`` (the user name), ``HOSTS`` (the
    scheme, the hosts and ports), ``PATHS`` or ``OPTIONS`` (the query, or ``;name=value`` options)."""
    m = _URL_START.match(url)
    start = m.end() if m else 0
    if offset < start:
        return HOSTS
    rest = url[start:]
    authority = re.split(r"[/?#;]", rest, maxsplit=1)[0]
    end = start + len(authority)
    if offset < end:
        userinfo, at, _hosts = authority.rpartition("@")
        return USERS if at and offset < start + len(userinfo) else HOSTS
    query = min((i for i in (url.find("?", end), url.find(";", end)) if i >= 0), default=len(url))
    return PATHS if offset < query else OPTIONS


_LOCATOR_RUN = re.compile(
    r"(?i)(?:jdbc:[a-z0-9]+:|[a-z][a-z0-9+.-]{0,15}://)[^\s\"'`<>]+"
    r"|(?:[A-Za-z][\w .]*=[^;\s\"'`]*;)+[A-Za-z][\w .]*=[^;\s\"'`]*"
)


def _in_locator(text: str, start: int) -> bool:
    """Whether ``text[start]`` stands inside a URL or a ``name=value;...`` connection string."""
    return any(m.start() <= start < m.end() for m in _LOCATOR_RUN.finditer(text))


@dataclass
class Classified:
    """What one wanted string of one case counts as: its credentials located in the input
    (value, start, whether a part of the wanted string), what is not a credential (value,
    reason), how many of its parts were not found, and a note on how it was counted."""

    located: list[tuple[str, int, bool]] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)
    unfound: int = 0
    note: str | None = None


def _locate(value: str, text: str, near: int) -> tuple[list[tuple[str, int]], int]:
    """``value`` in ``text`` (at or after ``near`` when it stands there), as it is or
    percent-decoded or JSON-escaped (once, or twice: JSON in a JSON string); else its pieces
    (``joined_pieces``)."""
    from urllib.parse import unquote

    escaped = json.dumps(value)[1:-1]
    for form in dict.fromkeys((value, unquote(value), escaped, json.dumps(escaped)[1:-1])):
        at = text.find(form, near)
        at = at if at >= 0 else text.find(form)
        if at >= 0:
            return [(form, at)], 0
    pieces, unfound = joined_parts(value, text)
    return [(p, text.find(p)) for p in pieces], unfound


_LINE_BREAK_END = re.compile(r"(?:\s|\\{1,3}[nr])+\Z")


def trimmed(want: str, text: str) -> str:
    """``want`` without the ends that are no part of a secret (rule 0 of the module's docstring):
    a trailing line break, as it stands or escaped, and a quote at the end that closes the value
    in ``text`` (the detector's expression took it along) but opens nothing in ``want``."""
    out = _LINE_BREAK_END.sub("", want).lstrip()
    while out and out[-1] in "\"'`" and out[0] != out[-1] and out.count(out[-1]) == 1:
        quote = out[-1]
        if quote + out not in text:
            break  # no quote opens the value in the input: the quote is the value's own
        out = out[:-1]
    return out if len(out) >= 4 else want


def classify_wanted(want: str, text: str, captures: list[tuple[str, str]]) -> Classified:
    """Where the credentials of one wanted string stand in its case's input, and what in it is no
    credential (this loader's docstring: *What is counted as a credential*). ``captures``: what
    the detector's patterns capture in ``text`` (``captures_of``)."""
    out = Classified()
    at = text.find(want)
    url = _URL_START.match(want) is not None
    fields = secret_fields(want)
    if fields is not None and (at >= 0 or not url):  # a URL or a connection string, as wanted
        if fields:
            out.note = "wanted URLs or connection strings, counted by their secret-bearing fields"
            for f in fields:
                found, unfound = _locate(f, text, max(at, 0))
                out.unfound += unfound
                out.located += [(v, s, v != want) for v, s in found]
        elif at >= 0 and is_capability_url(want):
            out.note = "wanted URLs whose path is the secret (webhooks), counted whole"
            out.located.append((want, at, False))
        else:
            out.excluded.append((want, LOCATOR))
        return out
    try:
        obj = json.loads(want)
    except ValueError:
        obj = None
    if isinstance(obj, dict):  # a JSON object: each string value by its key's name
        out.note = "wanted JSON objects, counted by the values under a secret's name"
        for key, v in obj.items():
            if not isinstance(v, str) or not v:
                continue
            role = name_role(str(key))
            if role not in ("secret", None):
                out.excluded.append((v, role))
                continue
            found, unfound = _locate(trimmed(v, text), text, 0)
            out.unfound += unfound
            for piece, start in found:
                why = (
                    why_not_a_credential(piece, text, start, set())
                    if role is None
                    else ARMOUR
                    if _ARMOUR.fullmatch(piece.strip())
                    else None
                )
                if why:
                    out.excluded.append((piece, why))
                else:
                    out.located.append((piece, start, True))
        return out
    if at >= 0:
        _judge_alone(out, want, text, at, captures, part=False)
        return out
    # A joined value (id:secret, key + URL, a URL rewritten by the detector): by its pieces found
    # in the input. In a wanted URL (mongodb://user:pass@host/?options) a piece over its password
    # or a secret parameter counts that field; one standing in a URL or connection string of the
    # input is the part of the URL it is (user, host, path, options); others are judged alone.
    spans = [(want.find(f), want.find(f) + len(f), f) for f in (fields or [])]
    counted: set[str] = set()
    if spans:
        out.note = "wanted URLs or connection strings, counted by their secret-bearing fields"
    pieces, out.unfound = joined_pieces(want, text)
    cursor = 0
    for piece, off in pieces:
        # The pieces of a wanted string stand in the input in its order, as a rule: the first
        # occurrence after the previous piece (an EC private key's tail recurs in its public key).
        start = text.find(piece, cursor)
        start = start if start >= 0 else text.find(piece)
        cursor = start + len(piece)
        over = [f for lo, hi, f in spans if lo < off + len(piece) and off < hi]
        if over:
            for f in over:
                if f not in counted:
                    counted.add(f)
                    found, unfound = _locate(f, text, 0)
                    out.unfound += unfound
                    out.located += [(v, s, True) for v, s in found]
            continue
        if url and _in_locator(text, start):
            out.excluded.append((piece, url_part(want, off)))
            continue
        pf = secret_fields(piece)
        if pf is not None and _URL_START.match(piece):  # a URL among the pieces
            if not pf:
                out.excluded.append((piece, HOSTS))
            for f in pf:
                found, unfound = _locate(f, text, start)
                out.unfound += unfound
                out.located += [(v, s, True) for v, s in found]
            continue
        _judge_alone(out, piece, text, start, captures, part=True)
    return out


def _judge_alone(
    out: Classified, value: str, text: str, start: int, captures: list[tuple[str, str]], *, part: bool
) -> None:
    """``value`` (at ``start`` in ``text``) counted apart if it is no credential by its form and
    role (``why_not_a_credential``), else located."""
    why = why_not_a_credential(value, text, start, pattern_roles(value, captures))
    if why:
        out.excluded.append((value, why))
    else:
        out.located.append((value, start, part))


_PREFIX = re.compile(r"([A-Za-z]{1,12})[_.-]")
_PART_SPLIT = re.compile(r"[^A-Za-z0-9_+/=.~-]+")


def _vendor(value: str, source: str) -> bool:
    m = _PREFIX.match(value)
    if not m or len(value) - m.end() < 8:
        return False
    return re.search(rf"(?<![A-Za-z]){re.escape(m.group(1))}(?![a-z])", source) is not None


def load_trufflehog(root: Path) -> TrufflehogCorpus:
    """The ``Test*_Pattern`` cases of every detector, with their labelled values located (both
    ways: secret-bearing, and as counted before)."""
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
    for c in cases:
        for want in c.wants:
            skipped["empty wanted strings"] += not want
    if not skipped["empty wanted strings"]:
        del skipped["empty wanted strings"]
    common = _common_env(root)
    patterns = {d: detector_patterns(src, common) for d, src in sources.items()}
    # A detector that names none of its patterns for a secret says nothing by its names about
    # which value is the secret (bitbucketdatacenter's tokens are its ``userPat``).
    patterns = {d: p for d, p in patterns.items() if any(name_role(n) == "secret" for n in p)}
    values: dict[tuple[str, str], Value] = {}
    excluded: dict[tuple[str, str, str], Excluded] = {}
    notes: Counter[str] = Counter()
    parts = 0
    for i, c in enumerate(cases):
        captures = captures_of(c.text, patterns.get(c.detector, {})) if c.wants else []
        for wanted in dict.fromkeys(w for w in c.wants if w):
            want = trimmed(wanted, c.text)
            if want != wanted:
                notes["wanted strings trimmed of a line break or a quote at their end (rule 0)"] += 1
            got = classify_wanted(want, c.text, captures)
            if got.note:
                notes[got.note] += 1
            if got.unfound:
                skipped["parts of wanted strings not found in their input"] += got.unfound
            if not got.located and not got.excluded:
                skipped["wanted strings not found in their input, whole or in parts"] += 1
            for value, reason in got.excluded:
                e = excluded.setdefault(
                    (c.detector, value, reason), Excluded(c.detector, value, want, reason, c.name)
                )
                start = c.text.find(want) if value == want else c.text.find(value)
                if start >= 0:
                    e.contexts.append((i, start))
            for value, start, part in got.located:
                key = (c.detector, value)
                if key not in values:
                    values[key] = Value(c.detector, value, want, _vendor(value, sources.get(c.detector, "")))
                    parts += part
                values[key].contexts.append((i, start))
    before, before_parts, before_skipped = _count_as_before(cases, sources)
    detectors = len({c.detector for c in cases})
    return TrufflehogCorpus(
        root,
        ext.commit_of(root),
        cases,
        list(values.values()),
        detectors,
        skipped,
        parts,
        notes,
        list(excluded.values()),
        before,
        before_parts,
        before_skipped,
    )


def _count_as_before(cases: list[Case], sources: dict[str, str]) -> tuple[list[Value], int, Counter[str]]:
    """The labelled values as this loader counted them before the classification above (issue
    37's figures): a wanted string found whole is a credential unless it is a URL with a password
    (then its password is); a joined one counts by every part found in its input, but URLs,
    hosts, e-mail addresses, UUIDs, short or numeric ids and short names of letters."""
    skipped: Counter[str] = Counter()
    values: dict[tuple[str, str], Value] = {}
    parts = 0
    for i, c in enumerate(cases):
        for want in dict.fromkeys(c.wants):
            if not want:
                continue
            at = c.text.find(want)
            password = _USERINFO.search(want) if at >= 0 else None
            if password:
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
    return list(values.values()), parts, skipped


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
    before: TrufflehogResult | None = None  # the same figures, values counted as before (corpus.before)
    # Per reason a value is no credential: (values, altered in context: any of it replaced in one
    # of the inputs it stands in).
    apart: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))


def measure_trufflehog(corpus: TrufflehogCorpus, policy: RedactionPolicy | None = None) -> TrufflehogResult:
    """Both counts: the secret-bearing values (``corpus.values``) and the values as counted
    before (``corpus.before``), each in context and bare."""
    policy = policy or RedactionPolicy.default()
    spans: list[list[tuple[int, int]] | None] = [_spans(policy, c.text) for c in corpus.cases]
    bare_cache: dict[str, bool] = {}
    res = _tally(corpus, corpus.values, spans, policy, bare_cache)
    res.before = _tally(corpus, corpus.before, spans, policy, bare_cache)
    for e in corpus.excluded:
        stats = res.apart[e.reason]
        stats[0] += 1
        stats[1] += any(
            spans[i] is not None and ext._overlaps((start, start + len(e.value)), spans[i] or [])
            for i, start in e.contexts
        )
    res.identifiers = ext.measure(
        ext.Corpus("trufflehog", corpus.root, corpus.commit, corpus.samples(apart=True), corpus.skipped),
        policy,
    )
    return res


def _tally(
    corpus: TrufflehogCorpus,
    values: list[Value],
    spans: list[list[tuple[int, int]] | None],
    policy: RedactionPolicy,
    bare_cache: dict[str, bool],
) -> TrufflehogResult:
    res = TrufflehogResult(corpus)
    res.unaligned = sum(s is None for s in spans)
    for v in values:
        failed = [
            (i, start)
            for i, start in v.contexts
            if spans[i] is None or not ext._covered((start, start + len(v.value)), spans[i] or [])
        ]
        in_context = not failed
        if v.value not in bare_cache:
            bare_cache[v.value] = all(
                _redacted_in_full(policy, text, (text.find(v.value), text.find(v.value) + len(v.value)))
                for text in bare_texts(v.value)
            )
        bare = bare_cache[v.value]
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
    return res


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}% ({k}/{n})" if n else "n/a"


def summary_lines(res: TrufflehogResult) -> list[str]:
    c = res.corpus
    out = [
        f"trufflehog: {c.root} at commit {c.commit}, {len(c.cases)} test cases from {c.detectors} detectors "
        f"({sum(1 for x in c.cases if x.wants)} wanting a value)",
    ]
    for why, n in sorted(c.skipped.items()):
        out.append(f"  not measured: {n} {why}")
    if res.unaligned:
        out.append(f"  not measured: {res.unaligned} cases whose redacted text did not align")
    old = res.before
    if old is not None:
        out.append(
            f"  AS COUNTED BEFORE (issue 37's figures: every part of a joined wanted value a credential): "
            f"{old.values} values ({c.before_parts} parts); in context {_pct(old.in_context, old.values)}; "
            f"bare {_pct(old.bare, old.values)}"
        )
        for cls in ("vendor-prefixed", "other"):
            n, k, b = old.per_class.get(cls, [0, 0, 0])
            out.append(f"    {cls:16} {n:5} values: in context {_pct(k, n)}, bare {_pct(b, n)}")
        for why, n in sorted(c.before_skipped.items()):
            out.append(f"    left out then: {n} {why}")
    out.append(
        f"  SECRET-BEARING (what is a credential: the loader's docstring): {res.values} distinct labelled "
        f"values (per detector; {c.parts} of them parts of a wanted string: a URL's password or secret "
        "parameter, a part of a joined RawV2 value)"
    )
    for why, n in sorted(c.notes.items()):
        out.append(f"    {n} {why}")
    apart = res.apart
    out.append(
        f"    not credentials, counted apart ({sum(n for n, _a in apart.values())} distinct values and "
        f"parts, {sum(a for _n, a in apart.values())} of them altered in context; --misses lists them):"
    )
    for why, (n, a) in sorted(apart.items(), key=lambda x: (-x[1][0], x[0])):
        out.append(f"      {n:4} {why} (altered {a})")
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


def excluded_lines(corpus: TrufflehogCorpus) -> list[str]:
    """``EXCLUDED <reason>: <detector> <value> in <file>:<case> (wanted: <the wanted string>)``,
    by reason, so that every exclusion can be checked."""
    out = []
    for e in sorted(corpus.excluded, key=lambda e: (e.reason, e.detector, e.value)):
        wanted = "" if e.wanted == e.value else f" (wanted: {e.wanted[:120]!r})"
        out.append(f"EXCLUDED {e.reason}: {e.detector} {e.value[:160]!r} in {e.case}{wanted}")
    return out


def report_trufflehog(
    res: TrufflehogResult, *, verbose: bool = False, out: Callable[[str], None] = print
) -> None:
    for line in summary_lines(res):
        out(line)
    if verbose:
        for line in family_lines(res) + miss_lines(res) + excluded_lines(res.corpus):
            out("    " + line if line.startswith(("MISS", "EXCLUDED")) else line)
        if res.identifiers is not None:
            for name, line in res.identifiers.altered_examples:
                out(f"    ALTERED {name}: {line!r}")
