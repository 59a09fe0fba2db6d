"""The redactor: one policy's rules, composed once, applied to every message of one server.

:meth:`Redactor.redact_message` works in two passes. The first, on the hot path of a proxy,
only asks whether anything needs redacting: it walks the message checking each object key
against a cache of keys already known to be harmless (a C-speed ``keys() <= set`` per
object), and gathers its strings; then it drops the strings it already found clean in an
earlier message, joins the others and asks every string rule, cheapest first, whether it
matches anywhere (each rule first asks the joined text the cheap questions of
:mod:`~harn_mcp_mock.redact.gates`). A clean message is returned as is: no copy. Only a message that may hold a secret gets the second,
exact pass, which copies what changes (and only that: unchanged branches are shared with the
input, which is never modified) and replaces each secret with its numbered placeholder.

In the exact pass each node has a *mode*, decided by the nearest rule above it: a secret key
(``"password"``) or a ``redact.pointers`` match makes every scalar below it a secret; an
``allow.keys`` or ``allow.pointers`` match turns key, pointer and entropy rules off below it
(allow wins over redact at the same node); an ``entropy.skip_pointers`` match turns the
entropy rule off. Token formats, the user's patterns and the server's literal secrets apply
everywhere. A top-level list is a batch: pointers apply to each of its messages.
"""

from __future__ import annotations

import codecs
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice

from harn_mcp_mock.redact import pointers as ptr
from harn_mcp_mock.redact._flags import K_ALLOW, K_SECRET
from harn_mcp_mock.redact.codepairs import code_pair_rules
from harn_mcp_mock.redact.contexts import context_rules
from harn_mcp_mock.redact.gates import Text, lazy_regex
from harn_mcp_mock.redact.logins import login_pair_rules
from harn_mcp_mock.redact.namevalue import name_value_rules
from harn_mcp_mock.redact.placeholders import PLACEHOLDER_RE, is_placeholder, placeholder
from harn_mcp_mock.redact.rules import (
    AUTH_PARAM,
    FINGERPRINT_SCHEME,
    KEPT_AUTH_PARAMS,
    AssignmentRule,
    Base64TextRule,
    EntropyRule,
    FingerprintRule,
    Hit,
    PgpassRule,
    extra_text_rules,
    fingerprint,
    literal_rules,
    merge_hits,
)
from harn_mcp_mock.redact.scanner import Scanner
from harn_mcp_mock.redact.tables import table_rules

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from harn_mcp_mock.redact.policy import RedactionPolicy

_SECRET_KEY = 1
_SECRET_POINTER = 2
_ALLOW = 4
_SKIP_ENTROPY = 8
_SECRET = _SECRET_KEY | _SECRET_POINTER
_NO_ENTROPY = _ALLOW | _SKIP_ENTROPY
_DIRTY_KEY = 4  # key flag next to K_SECRET (1) and K_ALLOW (2): the key text itself holds a secret

_SCALARS = frozenset({int, float, bool, type(None)})
_CACHE_MAX = 8192
_LITERAL_MIN = 6
_RESCANS = 4  # passes over one message after the first, at most (each needs a newly learned value)
_ENCODED_MIN = 12  # literal secrets this long are also looked for inside base64
_ENCODED_MAX = 256  # ... up to this long
_CLEAN_STRING_MAX = 512  # clean strings up to this long are remembered as clean
_FLAG_NAME = lazy_regex(r"[A-Za-z][A-Za-z0-9_.-]*")
_ENV_STYLE = lazy_regex(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


class Redactor:
    """Redacts the messages, text and command line of one server under one policy.

    Build it with :meth:`RedactionPolicy.redactor`. It numbers secrets in order of first
    sight, so use one redactor per cassette. Not thread-safe.
    """

    def __init__(
        self,
        policy: RedactionPolicy,
        *,
        argv: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        fingerprints: Any = None,
    ) -> None:
        compiled = policy.compiled()
        self.policy = policy
        self._c = compiled
        self._numbers: dict[str, int] = {}
        self._first_number = 1
        self._findings: dict[str, int] = {}
        self._key_cache: dict[str, int] = {}
        self._harmless: set[str] = set()
        self._clean: set[str] = set()
        self._scanned: dict[tuple[str, bool], tuple[Hit, ...]] = {}  # see _hits
        assignment = AssignmentRule(compiled.name_is_secret, compiled.name_needles, compiled.min_name)
        # XML elements and free text, judged by the same names (issue 37)
        contexts = context_rules(compiled.name_is_secret, compiled.name_is_allowed, compiled.name_needles)
        contexts += code_pair_rules(compiled.name_is_secret, compiled.name_is_allowed, compiled.name_needles)
        contexts += name_value_rules(compiled.name_is_secret, compiled.name_is_allowed, compiled.name_needles)
        contexts += table_rules(compiled.name_is_secret, compiled.name_is_allowed, compiled.name_needles)
        if compiled.name_needles is None or compiled.name_needles:
            contexts += login_pair_rules()  # (a policy without key rules redacts no context)
        detectors = Scanner([*compiled.patterns, assignment, *contexts], compiled.entropy)
        # The value memory: every secret this redactor has identified, by whatever rule (and the
        # server's argv and env secrets from the start), with its encoded forms; each form maps to
        # the value it encodes (one placeholder number per value).
        self._literals: dict[str, str] = {}
        self._canonical: dict[str, str] = {}
        self._fresh: dict[str, str] = {}
        # The memory's literals in chunks, each with its compiled rules (a list, not a dict keyed
        # by ``id(chunk)``: a merged-away chunk's id is reused by a later dict, whose lookup then
        # found the dead chunk's smaller rules, and the values only the new chunk held were
        # never looked for again).
        self._chunks: list[tuple[dict[str, str], list[Any]]] = []
        self._generation = 0
        self._memory_only = False  # while a message is scanned again for what it taught
        # While redact_message runs its first pass: (memory generation, text) for each string and
        # key looked at (what a rescan would look at again), and the hits pass 1 found in a long
        # string (so that pass 2 does not look for them again).
        self._examined: list[tuple[int, str]] | None = None
        self._found: tuple[int, str, list[Hit]] | None = None
        self._fp_key: bytes | None = None
        self._values: list[str] = []  # every remembered value once, in order (what fingerprints cover)
        self._value_set: set[str] = set()
        self._fps: dict[str, str] = {}  # value -> its fingerprint, once computed
        self._fp_given = 0  # how many of _values new_fingerprints() gave already
        self._text_min = 1 << 30  # no shorter string can hold a secret (set below; _remember lowers it)
        short = self._literal_secrets(argv or (), env or {}, detectors)
        self._short = short
        self._short_set = frozenset(short)
        self._originals = sorted(self._origin_values)
        # The composed scanner: token formats and user patterns, secret assignments in text,
        # fingerprints of the recording's secrets, and entropy (where it is on). The literal
        # secrets (the memory) have a scanner of their own, rebuilt when a value is learned.
        known = FingerprintRule.from_meta(fingerprints)
        extra = [known] if known is not None else []
        self._detectors = detectors
        wrapped = Base64TextRule(detectors)  # a .env or a Kubernetes Secret value in base64
        # Escaped text: the rules that look past a run of token characters, on it unescaped.
        text_rules: list[Any] = [r for r in compiled.patterns if not r.contained]
        escaped_inner = Scanner([*text_rules, assignment, *contexts], None)
        self._scanner = Scanner(
            [
                *compiled.patterns,
                assignment,
                *contexts,
                PgpassRule(),
                wrapped,
                *extra_text_rules(escaped_inner, names=compiled.name_needles != ()),
                *extra,
            ],
            compiled.entropy,
        )
        # Binary data in base64 (images, audio) can only hold a secret as the base64 form of a
        # literal secret: token formats found in it would be chance.
        # Base64 token formats with a long fixed prefix (AWS session tokens) are looked for too.
        prefixed = [
            p
            for p in compiled.patterns
            if p.contained and any(len(n) >= 8 and _B64_CHARS.issuperset(n) for n in p.needles)
        ]
        self._binary_scanner = Scanner(prefixed, None) if prefixed else None
        self._lit: Scanner | None = None
        self._text_min = self._scanner.min_len
        self._rebuild_literals()
        for _chunk, rules in self._chunks:  # the server's own secrets: compiled now, not in the first message
            for rule in rules:
                rule.compile()
        self._root = compiled.pointers.root
        self._track = compiled.has_redact_pointers
        self._scan = self._make_scanner()

    # --- public ---------------------------------------------------------------------------------

    @property
    def learned(self) -> int:
        """How many values the memory learned since the redactor was made (grows only)."""
        return self._generation

    def remembered(self) -> list[str]:
        """The values the memory holds (the server's argv and env secrets, then every value
        learned), each once, in the order they were remembered: what a fresh redactor must
        :meth:`learn` to redact as this one does. In memory only; never written anywhere."""
        return list(self._values)

    def number_after(self, taken: int) -> None:
        """Number new secrets from ``taken + 1`` on: ``[REDACTED:1]`` .. ``[REDACTED:taken]`` are
        already in use in what this redactor redacts again (a recording's journal)."""
        self._first_number = max(1, taken + 1)

    @property
    def findings(self) -> dict[str, int]:
        """Rule name -> how many values it redacted so far (counts only, never secret material)."""
        return dict(self._findings)

    def redact_message(self, obj: Any) -> Any:
        """``obj`` (a JSON-RPC message, a batch, any JSON value) with its secrets replaced.

        The input is never modified. When nothing needed redacting the very same object is
        returned; otherwise a new value that shares its unchanged branches with the input.
        """
        generation = self._generation
        out = self._redact_once(obj)
        examined = self._examined
        if examined is None:  # a clean message (pass 2 did not run): done
            return out
        self._examined = self._found = None
        if self._generation == generation:  # nothing learned: done
            return out
        # Only a string examined before the memory last learned may hold a value it does not
        # know was a secret (each text that taught was scanned again at once): when none does
        # (a message whose one long text taught them all), no rescan.
        stale = [text for g, text in examined if g != self._generation]
        lit = self._memory()
        if not stale or lit is None or not lit.any(Text("\n".join(stale))):
            return out
        # A value learned in this message may also stand earlier in it: one more pass (the
        # placeholders already there are left alone), until nothing new is learned.
        # Every string was scanned by the detectors already: the rescans look for the memory's
        # values only (keys are judged in full, and nothing is cached as clean meanwhile).
        self._memory_only = True
        try:
            for _ in range(_RESCANS):
                if self._generation == generation:
                    break
                generation = self._generation
                out = self._redact_once(out)
        finally:
            self._memory_only = False
        return out

    def _seen(self, text: str) -> None:
        """``text`` (a string as written, a key) was looked at with the memory as it is now."""
        if self._examined is not None:
            self._examined.append((self._generation, text))

    def _redact_once(self, obj: Any) -> Any:
        strings: list[str] = []
        if self._scan_top(obj, strings) and self._strings_clean(strings):
            return obj
        if not self._memory_only:
            self._examined = []  # what pass 2 looks at (see redact_message)
        root = self._root
        if obj.__class__ is list:
            out: list[Any] | None = None
            for i, item in enumerate(obj):
                new = self._red(item, self._child_mode(0, 0, root), root)
                if out is None:
                    if new is item:
                        continue
                    out = list(obj[:i])
                out.append(new)
            return obj if out is None else out
        return self._red(obj, self._child_mode(0, 0, root), root)

    def fingerprints(self) -> dict[str, Any] | None:
        """Keyed BLAKE3 fingerprints of the literal secrets of the server's argv and env, for the
        cassette's redaction metadata (``None`` when there are none): a replay that never saw
        that env can still recognise those values in live traffic. A fresh random key per
        call; never the values."""
        if not self._values:
            return None
        return self._fingerprint_meta(self._values)

    def new_fingerprints(self) -> dict[str, Any] | None:
        """Like :meth:`fingerprints`, for the values remembered since the last call only (all
        of them at the first call; ``None`` when there is none): what a recording's journal
        appends each time the memory grows, at a cost that does not grow with the memory."""
        fresh = self._values[self._fp_given :]
        self._fp_given = len(self._values)
        return self._fingerprint_meta(fresh) if fresh else None

    def _fingerprint_meta(self, values: list[str]) -> dict[str, Any]:
        if self._fp_key is None:
            self._fp_key = os.urandom(32)
        key, known = self._fp_key, self._fps
        for v in values:
            if v not in known:
                known[v] = fingerprint(key, v)
        return {"scheme": FINGERPRINT_SCHEME, "key": key.hex(), "values": sorted({known[v] for v in values})}

    def redact_text(self, s: str) -> str:
        """A line of free text (a non-JSON line, stderr, an error message) with its secrets replaced."""
        return self._red_text(s, True)

    def redact_argv(self, argv: Sequence[str]) -> list[str]:
        """The server command line with every secret value replaced (same shape, same length)."""
        out: list[str] = []
        pending = header = False
        for i, arg in enumerate(argv):
            if header:
                header = False
                shown = self._header_option(arg)
                if shown is not None:
                    out.append(shown)
                    continue
            if pending:
                pending = False
                if arg and not arg.startswith("--"):
                    out.append(self._whole(arg, "argv"))
                    continue
            if i > 0:
                if arg in _HEADER_FLAGS:
                    header = True
                    out.append(arg)
                    continue
                if arg.startswith(_HEADER_FLAGS_EQ):
                    name, _eq, option = arg.partition("=")
                    shown = self._header_option(option)
                    if shown is not None:
                        out.append(f"{name}={shown}")
                        continue
                flag = self._secret_flag(arg)
                if flag is not None:
                    prefix, value = flag
                    if value is None:
                        pending = True
                        out.append(arg)
                    else:
                        out.append(prefix + self._whole(value, "argv"))
                    continue
                env_style = _ENV_STYLE.fullmatch(arg)
                if env_style and env_style[2] and self._c.env_is_secret(env_style[1]):
                    out.append(f"{env_style[1]}={self._whole(env_style[2], 'argv')}")
                    continue
            out.append(self._red_text(arg, True))
        return out

    def _header_option(self, option: str) -> str | None:
        """``NAME:VALUE`` (a ``--header`` option) with the value replaced, unless the header is a
        harmless one (``Accept``, ``Content-Type``, ...); None when it is not ``NAME:VALUE``."""
        parsed = header_option(option)
        if parsed is None:
            return None
        name, sep, value = parsed
        if harmless_header(name):
            return self._red_text(option, True)
        return name + sep + self.redact_header_value(name, value, "header")

    def redact_header_value(self, name: str, value: str, rule: str = "secret-key") -> str:
        """The value of a secret header with its credential replaced. For ``Authorization`` and
        ``Proxy-Authorization`` the scheme word stays (``Bearer [REDACTED:1]``,
        ``Digest username="ada", realm="r", response="[REDACTED:2]", …``); any other value is
        replaced whole."""
        if not value or is_placeholder(value) or self._c.allowed(value):
            return value
        if name.lower() in _AUTH_HEADERS:
            shown = self._scheme_value(value, rule)
            if shown is not None:
                return shown
        return self._placeholder(value, rule)

    def _scheme_value(self, value: str, rule: str) -> str | None:
        """``<scheme> <credentials>`` with the scheme kept and each credential part replaced."""
        found = _SCHEMED.fullmatch(value)
        if found is None:
            return None
        self.learn(value, rule)  # its credential parts, for wherever they come back
        rest = found[2]
        params = list(_AUTH_PARAM.finditer(rest))
        if (
            params
            and params[0].start() == 0
            and (len(params) > 1 or "," in rest or params[0].end() == len(rest))
        ):
            parts: list[str] = []
            at = 0
            for p in params:
                group = 2 if p[2] is not None else 3
                if p[1].lower() in _KEPT_PARAMS or not p[group] or is_placeholder(p[group]):
                    continue
                a, b = p.span(group)
                parts.append(rest[at:a])
                parts.append(self._placeholder(p[group], rule))
                at = b
            parts.append(rest[at:])
            return value[: found.start(2)] + "".join(parts)
        if is_placeholder(rest) or any(c.isspace() for c in rest.strip()):
            return None if not is_placeholder(rest) else value
        return value[: found.start(2)] + self._placeholder(rest, rule)

    # --- literal secrets of the server --------------------------------------------------------

    def _literal_secrets(
        self, argv: Sequence[str], env: Mapping[str, str], detectors: Scanner
    ) -> dict[str, str]:
        """Fills the memory with the secrets of the server's argv and env; returns the short
        argv secrets (replaced only as whole values)."""
        literals: dict[str, str] = {}
        short: dict[str, str] = {}
        allowed = self._c.allowed

        def add(value: str, origin: str, *, short_ok: bool) -> None:
            if not value or is_placeholder(value) or allowed(value):
                return
            if len(value) >= _LITERAL_MIN:
                literals.setdefault(value, origin)
            elif short_ok:
                short.setdefault(value, origin)

        for name, value in env.items():
            if not isinstance(value, str) or not value:
                continue
            if self._c.env_is_secret(name):
                # ``Bearer <token>`` (a header value kept in a variable): its token, as a header's
                for secret in _literal_parts(value):
                    add(secret, "env", short_ok=False)
            else:
                for secret in _detected(value, detectors, entropy=False):
                    add(secret, "env", short_ok=False)
        for secret, whole in self._argv_secrets(argv, detectors):
            add(secret, "argv", short_ok=whole)
        self._origin_values = frozenset(literals)
        for secret, origin in literals.items():
            self._remember(secret, origin)
        return short

    def _remember(self, value: str, origin: str) -> None:
        """``value`` and its encoded forms into the memory (the scanner is rebuilt by the caller)."""
        fresh = self._fresh
        added = False
        for form in (value, *_encoded_forms(value)):
            if form not in self._literals:
                self._literals[form] = fresh[form] = origin
                self._canonical[form] = value
                added = True
                if len(form) < self._text_min:
                    self._text_min = len(form)
        if added and value not in self._value_set:
            self._value_set.add(value)
            self._values.append(value)

    def _rebuild_literals(self) -> None:
        """The memory's scanner, after values were remembered. The literals learned since the
        last merge form small rules of their own (one per learning); past a few of them all are
        merged into bigger ones: a learned value costs little however many are known."""
        chunks = self._chunks
        if self._fresh:
            chunks.append((self._fresh, literal_rules(self._fresh)))
            self._fresh = {}
        # As a binary counter: a chunk is merged with the one before it when it is as big, so each
        # literal is compiled into a rule a logarithmic number of times. A chunk keeps its rules
        # (compiled) until it is merged: only the new or merged chunk gets new ones.
        while len(chunks) > 1 and len(chunks[-1][0]) >= len(chunks[-2][0]):
            last, _ = chunks.pop()
            merged = {**chunks[-1][0], **last}
            chunks[-1] = (merged, literal_rules(merged))
        rules = [rule for _chunk, chunk_rules in chunks for rule in chunk_rules]
        self._lit = Scanner(rules, None) if rules else None
        self._text_min = min(self._scanner.min_len, self._lit.min_len if self._lit is not None else 1 << 30)

    def _memory(self) -> Scanner | None:
        """The memory's scanner, with every value learned so far."""
        if self._fresh:
            self._rebuild_literals()
        return self._lit

    def learn(self, value: str, origin: str = "learned") -> bool:
        """Remember ``value`` as a secret: from now on it is replaced wherever it occurs, whole or
        inside longer text, also URL-encoded, JSON-escaped or inside base64. Values a reader would
        not call a credential (see :func:`chaseable`: shorter than 6 characters, a plain word, a
        number or a date) are not remembered. True when the value is new to the memory.

        Every value a rule identifies is learned this way; call it for secrets the caller knows
        of by other means (the values of ``--header`` options)."""
        if value in self._literals or self._c.allowed(value):
            return False
        # ``Bearer <token>``: the token is remembered (so that the scheme word stays wherever it
        # comes back), not the whole value.
        parts = [p for p in credential_parts(value) if chaseable(p) and not self._c.allowed(p)]
        if not parts and not chaseable(value):
            return False
        for part in parts or [value]:
            self._remember(part, origin)
        # The scanner is rebuilt when next used (see _memory): a message that tells hundreds of
        # values rebuilds it once, not once per value (``_remember`` lowered ``_text_min``).
        # Strings and keys found clean before may hold the new value.
        self._clean.clear()
        self._harmless.clear()
        self._key_cache.clear()
        self._generation += 1
        return True

    def _argv_secrets(self, argv: Sequence[str], detectors: Scanner) -> Iterator[tuple[str, bool]]:
        """(secret, is a whole argument) for each secret of the command line."""
        pending = header = False
        for i, arg in enumerate(argv):
            if not isinstance(arg, str):
                continue
            if header or (i > 0 and arg.startswith(_HEADER_FLAGS_EQ)):
                option = arg if header else arg.partition("=")[2]
                header = False
                parsed = header_option(option)
                if parsed is not None:
                    if not harmless_header(parsed[0]) and parsed[2]:
                        # ``Authorization: Bearer <token>``: the token, as wherever else it comes
                        # back (``Bearer [REDACTED:1]`` in a text, a header, the command line: one
                        # number); the whole value too only when a part is too short to chase.
                        auth = parsed[0].strip().lower() in _AUTH_HEADERS
                        for part in _scheme_parts(parsed[2]) if auth else [parsed[2]]:
                            yield part, True
                    continue
            if i > 0 and arg in _HEADER_FLAGS:
                header = True
                continue
            if pending:
                pending = False
                if arg and not arg.startswith("--"):
                    yield from ((part, True) for part in _literal_parts(arg))
                    continue
            if i > 0:
                flag = self._secret_flag(arg)
                if flag is not None:
                    if flag[1] is None:
                        pending = True
                    else:
                        yield from ((part, True) for part in _literal_parts(flag[1]))
                    continue
                env_style = _ENV_STYLE.fullmatch(arg)
                if env_style and env_style[2] and self._c.env_is_secret(env_style[1]):
                    yield from ((part, True) for part in _literal_parts(env_style[2]))
                    continue
            for secret in _detected(arg, detectors, entropy=True):
                yield secret, False

    def _secret_flag(self, arg: str) -> tuple[str, str | None] | None:
        """For ``--token=X``: (``--token=``, ``X``); for ``--token``: (``--token``, None)."""
        if not arg.startswith("-"):
            return None
        name, eq, value = arg.partition("=")
        bare = name.lstrip("-")
        if len(bare) < 2 or not _FLAG_NAME.fullmatch(bare) or not self._c.name_is_secret(bare):
            return None
        return (name + "=", value) if eq else (arg, None)

    # --- pass 1: is anything to redact? -----------------------------------------------------------

    def _scan_top(self, obj: Any, out: list[str]) -> bool:
        if self._track:
            if obj.__class__ is list:
                root = self._root
                return all(self._scan_tracked(item, root, out) for item in obj)
            return self._scan_tracked(obj, self._root, out)
        return self._scan(obj, out.append)

    def _make_scanner(self) -> Callable[[Any, Callable[[str], None]], bool]:
        """The pass-1 walk as closures over locals (the hot loop of the proxy). ``scan_dict`` and
        ``scan_list`` repeat one loop body on purpose: folding them into one loop over
        ``d.values()`` costs an extra call per dict, measured ~10% slower on a clean
        ``tools/list`` (bench_redact.py)."""
        harmless = self._harmless
        keys_harmless = self._keys_harmless
        scalars = _SCALARS

        def scan_dict(d: dict[Any, Any], add: Callable[[str], None]) -> bool:
            if not d.keys() <= harmless and not keys_harmless(d):
                return False
            for v in d.values():
                cls = type(v)
                if cls is str:
                    add(v)
                elif cls is dict:
                    if not scan_dict(v, add):
                        return False
                elif cls is list:
                    if not scan_list(v, add):
                        return False
                elif cls not in scalars:
                    return False
            return True

        def scan_list(items: list[Any], add: Callable[[str], None]) -> bool:
            for v in items:
                cls = type(v)
                if cls is str:
                    add(v)
                elif cls is dict:
                    if not scan_dict(v, add):
                        return False
                elif cls is list:
                    if not scan_list(v, add):
                        return False
                elif cls not in scalars:
                    return False
            return True

        def scan(value: Any, add: Callable[[str], None]) -> bool:
            cls = type(value)
            if cls is dict:
                return scan_dict(value, add)
            if cls is list:
                return scan_list(value, add)
            if cls is str:
                add(value)
                return True
            return cls in scalars

        return scan

    def _scan_tracked(self, value: Any, state: ptr.PointerState, out: list[str]) -> bool:
        if state is ptr.DEAD:
            return self._scan(value, out.append)
        if state.flags & ptr.REDACT:
            return False
        cls = value.__class__
        if cls is dict:
            if not value.keys() <= self._harmless and not self._keys_harmless(value):
                return False
            return all(self._scan_tracked(v, state.step(k), out) for k, v in value.items())
        if cls is list:
            return all(self._scan_tracked(v, state.step(str(i)), out) for i, v in enumerate(value))
        return self._scan(value, out.append)

    def _keys_harmless(self, d: dict[Any, Any]) -> bool:
        harmless = self._harmless
        for key in d:
            if key in harmless:
                continue
            if key.__class__ is not str or key == _BLOB_KEY:
                return False  # a resource blob is decoded and looked into by pass 2
            if key in _PAIR_VALUES:  # never cached: a name beside it may make it a secret
                if self._secret_pair(d):
                    return False
                continue
            flags = self._key_flags(key)
            if flags & _DIRTY_KEY or flags & (K_SECRET | K_ALLOW) == K_SECRET:
                return False
            if len(harmless) >= _CACHE_MAX:
                harmless.clear()
            harmless.add(key)
        return True

    def _secret_pair(self, d: dict[Any, Any]) -> bool:
        """Whether ``d`` is a name/value pair whose name is secret: ``{"name": "DB_PASSWORD",
        "value": ...}`` (Kubernetes ``env``), ``{"Name": ..., "Value": ...}`` (SSM parameters),
        ``{"key": ..., "value": ...}``."""
        for name_key in _PAIR_NAMES:
            name = d.get(name_key)
            if name.__class__ is str and 0 < len(name) <= _NAME_WINDOW_MAX:
                return self._c.name_is_secret(name) or self._c.env_is_secret(name)
        return False

    def _key_flags(self, key: str) -> int:
        flags = self._key_cache.get(key)
        if flags is None:
            flags = self._c.key_flags(key)
            if key in self._short_set or (len(key) >= self._text_min and self._holds_secret(key)):
                flags |= _DIRTY_KEY
            if len(self._key_cache) >= _CACHE_MAX:
                self._key_cache.clear()
            self._key_cache[key] = flags
        return flags

    def _hits(self, text: Text, entropy: bool) -> list[Hit]:
        s = text.s
        if len(s) <= _CLEAN_STRING_MAX:
            # The detectors' hits in a short string, remembered (they depend on the string alone):
            # a string that comes back (the same argument in every call) is not scanned again.
            # The memory's are looked for each time (it grows).
            key = (s, entropy)
            known = self._scanned.get(key)
            if known is None:
                if len(self._scanned) >= _CACHE_MAX:
                    self._scanned.clear()
                known = self._scanned[key] = tuple(self._scanner.hits(text, entropy=entropy))
            hits = list(known)
        else:
            hits = self._scanner.hits(text, entropy=entropy)
        lit = self._memory()
        if lit is not None:
            hits += lit.hits(text, entropy=False)
        return hits

    def _holds_secret(self, s: str) -> bool:
        hits = self._hits(Text(s), True)
        allowed = self._c.allowed
        return any(
            not _inside_placeholder(s, a, b) and not allowed(s[a:b]) for a, b, _name in merge_hits(hits)
        )

    def _strings_clean(self, strings: list[str]) -> bool:
        if not strings:
            return True
        short = self._short_set
        if short and not short.isdisjoint(strings):
            return False
        # Strings already found clean (tool descriptions, schema URLs, ...) are not looked at again.
        clean = self._clean
        fresh = set(strings)
        if clean:
            fresh -= clean
            if not fresh:
                return True
        scanner = self._scanner
        longest = max(map(len, fresh))
        if longest >= _BINARY_MIN:
            binary = {b for b in fresh if len(b) >= _BINARY_MIN and binary_base64(b)}
            if binary:
                if any(self._binary_hits(b) for b in binary):
                    return False
                fresh -= binary
                if not fresh:
                    return True
                longest = max(map(len, fresh))
        lit = self._memory()
        if self._memory_only:
            return lit is None or not lit.any(Text("\n".join(fresh)))
        if longest >= _DIRECT_MIN:
            # A long text (a config dump, a file) that holds a secret would be searched twice, by
            # this pass's questions and by pass 2's: its hits are found once, here, for pass 2.
            for s in [f for f in fresh if len(f) >= _DIRECT_MIN]:
                hits = self._hits(Text(s), True)
                if hits:
                    self._found = (self._generation, s, hits)
                    return False
                fresh.discard(s)
            if not fresh:
                return True
        joined = Text("\n".join(fresh))
        if (
            scanner.any(joined)
            or (lit is not None and lit.any(joined))
            or (scanner.separate and scanner.any_separately(list(fresh)))
        ):
            return False
        if len(clean) + len(fresh) > _CACHE_MAX:
            clean.clear()
        if longest <= _CLEAN_STRING_MAX:
            clean |= fresh
        else:
            clean.update(s for s in fresh if len(s) <= _CLEAN_STRING_MAX)
        return True

    # --- pass 2: redact -----------------------------------------------------------------------

    @staticmethod
    def _child_mode(mode: int, key_flags: int, state: ptr.PointerState) -> int:
        found = state.flags
        out = (mode & _SKIP_ENTROPY) | (_SKIP_ENTROPY if found & ptr.SKIP_ENTROPY else 0)
        if key_flags & K_ALLOW or found & ptr.ALLOW:
            return out | _ALLOW
        if key_flags & K_SECRET:
            return out | _SECRET_KEY
        if found & ptr.REDACT:
            return out | _SECRET_POINTER
        return out | (mode & (_SECRET | _ALLOW))

    def _red(self, value: Any, mode: int, state: ptr.PointerState) -> Any:
        cls = value.__class__
        if cls is str:
            return self._red_str(value, mode)
        if cls is dict:
            return self._red_dict(value, mode, state)
        if cls is list or cls is tuple:
            return self._red_list(value, mode, state)
        if cls is int or cls is float:
            return self._red_number(value, mode) if mode & _SECRET else value
        if value is None or cls is bool or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return self._red_str(str(value), mode)
        if isinstance(value, dict):
            return self._red_dict(dict(value), mode, state)
        if isinstance(value, list | tuple):
            return self._red_list(list(value), mode, state)
        if isinstance(value, int | float):
            return self._red_number(value, mode) if mode & _SECRET else value
        return value

    def _red_dict(self, d: dict[Any, Any], mode: int, state: ptr.PointerState) -> dict[Any, Any]:
        out: dict[Any, Any] | None = None
        dead = state is ptr.DEAD
        pair = None
        examined = self._examined
        replaced = False  # whether a string value (or a key) was replaced: what pair_keys looks beside
        for i, (key, value) in enumerate(d.items()):
            is_str = type(key) is str
            flags = self._key_flags(key) if is_str else 0
            if is_str and key in _PAIR_VALUES and not flags & K_ALLOW:
                if pair is None:
                    pair = self._secret_pair(d)
                if pair:
                    flags |= K_SECRET
            if dead:
                child = state
                child_mode = self._child_mode(mode, flags, state) if flags else mode
            else:
                child = state.step(key if is_str else str(key))
                child_mode = self._child_mode(mode, flags, child)
            if key == _BLOB_KEY and value.__class__ is str and not child_mode & (_SECRET | _ALLOW):
                new_value = self._red_blob(value, d.get("mimeType"), child_mode)
            elif (
                child_mode & _SECRET_KEY
                and value.__class__ is str
                and is_str
                and key.lower() in _AUTH_HEADERS
            ):
                new_value = self.redact_header_value(key, value)
                self._seen(new_value)
            else:
                new_value = self._red(value, child_mode, child)
            if flags & _DIRTY_KEY:
                new_key = self._red_text(key, not child_mode & _NO_ENTROPY)
            else:
                new_key = key
                if examined is not None:
                    examined.append((self._generation, key))
            if out is None:
                if new_value is value and new_key is key:
                    continue
                out = dict(islice(d.items(), i))
            if new_key is not key or (new_value is not value and new_value.__class__ is str):
                replaced = True
            out[new_key] = new_value
        if replaced and out is not None:  # the id half of a credential pair beside a secret replaced
            pairs = _pairs or _import_pairs()
            for key in pairs.pair_keys(d, out):
                out[key] = self._whole(out[key], pairs.PAIR_RULE)
        return d if out is None else out

    def _red_list(self, items: Sequence[Any], mode: int, state: ptr.PointerState) -> Any:
        out: list[Any] | None = None
        dead = state is ptr.DEAD
        for i, value in enumerate(items):
            child = state if dead else state.step(str(i))
            new_value = self._red(value, mode if dead else self._child_mode(mode, 0, child), child)
            if out is None:
                if new_value is value:
                    continue
                out = list(items[:i])
            out.append(new_value)
        return items if out is None else out

    def _red_blob(self, blob: str, mime: Any, mode: int) -> str:
        """A base64 resource blob: when it holds text (by its ``mimeType``, or sniffed), the text
        redacted and encoded again; binary media is left alone."""
        import base64  # lazily: only blobs need it (start-up speed)

        text = blob_text(blob, mime if isinstance(mime, str) else None)
        if text is None:  # binary: still searched as it is (token formats, base64 forms of literals)
            hits = self._binary_hits(blob)
            out = self._apply(blob, hits) if hits else blob
            self._seen(out)
            return out
        redacted = self._red_text(text, False)
        if redacted is text:
            return blob
        return base64.b64encode(redacted.encode("utf-8", "surrogatepass")).decode("ascii")

    def _red_number(self, value: int | float, mode: int) -> Any:
        text = str(value)
        if self._c.allowed(text):
            return value
        return self._placeholder(text, "secret-key" if mode & _SECRET_KEY else "pointer")

    def _red_str(self, s: str, mode: int) -> str:
        if mode & _SECRET:
            return self._whole(s, "secret-key" if mode & _SECRET_KEY else "pointer")
        return self._red_text(s, not mode & _NO_ENTROPY)

    def _whole(self, s: str, rule: str) -> str:
        """``s`` replaced as a whole (a secret key's value, a flag's value, a pointer's target)."""
        if not s or is_placeholder(s) or self._c.allowed(s):
            return s
        if (" " in s or "\t" in s) and _AUTH_SCHEME.match(s):  # ``Bearer <token>``: the token's own number
            shown = self._scheme_value(s, rule)
            if shown is not None:
                return shown
        return self._placeholder(s, rule)

    def _red_text(self, s: str, entropy: bool) -> str:
        if self._short_set and s in self._short_set:
            return self._whole(s, self._short[s])
        examined = self._examined  # (what _seen appends to, inlined here: the hot path)
        if len(s) < self._text_min or s in self._clean:
            if examined is not None:
                examined.append((self._generation, s))
            return s
        found = self._found
        if found is not None and found[1] is s and found[0] == self._generation and not self._memory_only:
            self._found = None
            hits = found[2] if entropy else [h for h in found[2] if h[2] != EntropyRule.name]
        elif len(s) >= _BINARY_MIN and binary_base64(s):
            hits = self._binary_hits(s)
        elif self._memory_only:
            lit = self._memory()
            hits = lit.hits(Text(s), entropy=False) if lit is not None else []
        else:
            hits = self._hits(Text(s), entropy)
        if not hits:
            if entropy and len(s) <= _CLEAN_STRING_MAX and not self._memory_only:
                self._remember_clean(s)
            if examined is not None:
                examined.append((self._generation, s))
            return s
        # The id half of a credential pair beside a secret found.
        hits += (_pairs or _import_pairs()).pair_hits(s, hits)
        generation = self._generation
        counted = dict(self._findings)
        out = self._apply(s, hits)
        if self._generation != generation and out is not s:
            # A value learned here may also stand elsewhere in this text (before the name that
            # told it, or bare after it): scan the text again with the memory and apply every
            # hit at once. The text, not the first result: where a detector took only a part of
            # such a bare repeat (a token inside a password), the result no longer holds the
            # value whole, and its head would be written in clear; the memory's hit and the
            # part merge into one span. Every value the memory finds is known already, so one
            # such pass is enough (the detectors saw all of this text).
            lit = self._memory()
            again = lit.hits(Text(s), entropy=False) if lit is not None else []
            if again:
                self._findings.clear()  # the second pass counts this text's findings anew
                self._findings.update(counted)
                out = self._apply(s, hits + again)
        self._seen(out)
        return out

    def _binary_hits(self, s: str) -> list[Hit]:
        text = Text(s)
        scanner = self._binary_scanner
        hits = scanner.hits(text, entropy=False) if scanner is not None else []
        lit = self._memory()
        if lit is not None:
            hits += lit.hits(text, entropy=False)
        return hits

    def _remember_clean(self, s: str) -> None:
        if len(self._clean) >= _CACHE_MAX:
            self._clean.clear()
        self._clean.add(s)

    def _apply(self, s: str, hits: list[Hit]) -> str:
        allowed = self._c.allowed
        parts: list[str] = []
        at = 0
        for start, end, rule in merge_hits(hits):
            secret = s[start:end]
            if _inside_placeholder(s, start, end) or allowed(secret):
                continue
            parts.append(s[at:start])
            parts.append(self._placeholder(secret, rule))
            at = end
        if not parts:
            return s
        parts.append(s[at:])
        return "".join(parts)

    def _placeholder(self, secret: str, rule: str) -> str:
        value = self._canonical.get(secret)
        if value is None:
            value = secret
            self.learn(secret, rule)
            if rule == Base64TextRule.name:  # the secrets of the decoded text, wherever they come back
                import base64

                decoded = base64.b64decode(secret).decode("utf-8", "replace")
                for inner in _detected(decoded, self._detectors, entropy=False):
                    self.learn(inner, rule)
        number = self._numbers.get(value)
        if number is None:
            number = self._numbers[value] = len(self._numbers) + self._first_number
        self._findings[rule] = self._findings.get(rule, 0) + 1
        return placeholder(number)


_pairs: Any = None
"""The :mod:`~harn_mcp_mock.redact.pairs` module, imported when a text or an object first holds a
secret (see :func:`_import_pairs`): a replay whose first messages hold none never loads it."""


def _import_pairs() -> Any:
    global _pairs
    from harn_mcp_mock.redact import pairs

    _pairs = pairs
    return pairs


_PAIR_NAMES = ("name", "Name", "key", "Key", "ParameterName")
_PAIR_VALUES = frozenset({"value", "Value"})
_NAME_WINDOW_MAX = 128
_HEADER_FLAGS = ("--header", "-H")
_HEADER_FLAGS_EQ = ("--header=",)
_AUTH_HEADERS = frozenset({"authorization", "proxy-authorization"})
HARMLESS_HEADERS = frozenset(
    {
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "connection",
        "content-language",
        "content-length",
        "content-type",
        "host",
        "last-event-id",
        "mcp-protocol-version",
        "mcp-session-id",
        "origin",
        "pragma",
        "referer",
        "traceparent",
        "tracestate",
        "user-agent",
        "x-correlation-id",
        "x-request-id",
    }
)
"""Headers whose values given with ``--header`` are not secrets; every other one is."""
_HEADER_NAME = lazy_regex(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def header_option(option: str) -> tuple[str, str, str] | None:
    """``NAME:VALUE`` -> (name, the separator with its spaces, value); None for another shape."""
    name, sep, value = option.partition(":")
    if not sep or not _HEADER_NAME.fullmatch(name.strip()):
        return None
    spaced = len(value) - len(value.lstrip())
    return name, sep + value[:spaced], value[spaced:]


def harmless_header(name: str) -> bool:
    """Whether a header given on the command line carries no secret (see :data:`HARMLESS_HEADERS`)."""
    return name.strip().lower() in HARMLESS_HEADERS


_BLOB_KEY = "blob"
_BINARY_MIME = ("image/", "audio/", "video/", "font/", "model/")
_TEXT_MIME = lazy_regex(
    r"text/|application/(?:[\w.-]+\+)?(?:json|xml|yaml|x-yaml|toml|javascript|ecmascript|x-sh|"
    r"x-www-form-urlencoded|sql|graphql|x-ndjson|ld\+json|x-ipynb\+json|x-httpd-php|x-python)\b",
    re.IGNORECASE,
)
_SNIFF_CONTROL = lazy_regex(r"[\x00-\x08\x0e-\x1f\x7f]")


_BINARY_MIN = 256  # shorter base64 strings are scanned like any text
_DIRECT_MIN = 4096  # a string this long is searched for its hits at once by pass 1 (see _strings_clean)
_SNIFF_CHARS = 512  # base64 characters decoded first to tell binary data from text


def binary_base64(s: str) -> bool:
    """Whether ``s`` is standard base64 (padded) of bytes that are not UTF-8 text: binary data."""
    import base64  # lazily: only blobs need it (start-up speed)

    if len(s) % 4 or not s.isascii():
        return False
    body = s.rstrip("=").encode("ascii")
    if len(s) - len(body) > 2 or body.translate(None, _ALPHABET_B64):
        return False
    try:
        # The first bytes tell binary data (an image header, compressed audio) cheaply; only a
        # start that reads as text makes the whole string worth decoding.
        head = base64.b64decode(s[:_SNIFF_CHARS])
        codecs.utf_8_decode(head, "strict", False)
        if len(s) > _SNIFF_CHARS:
            base64.b64decode(s).decode("utf-8")
    except UnicodeDecodeError:
        return True
    except ValueError:
        return False
    return False


_LETTERS_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ALPHABET_B64 = (_LETTERS_DIGITS + "+/").encode("ascii")
_B64_CHARS = frozenset(_LETTERS_DIGITS + "+/=")


def blob_text(blob: str, mime: str | None) -> str | None:
    """The text a base64 resource blob holds, or None for binary data (or not base64).

    ``image/*``, ``audio/*``, ``video/*``, ``font/*`` and ``model/*`` are binary whatever they
    hold. Otherwise the blob is decoded and kept as text when it is UTF-8 without control
    characters (besides tab, newline, carriage return and form feed); a ``text/*`` or JSON-like
    ``mimeType`` only lets a few stray control characters through as well.
    """
    import base64  # lazily: only blobs need it (start-up speed)

    if mime is not None and mime.lower().startswith(_BINARY_MIME):
        return None
    try:
        raw = base64.b64decode(blob, altchars=b"-_" if "-" in blob or "_" in blob else None, validate=True)
    except ValueError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    controls = len(_SNIFF_CONTROL.findall(text))
    if controls == 0 or (mime is not None and _TEXT_MIME.match(mime) and controls * 100 <= len(text)):
        return text
    return None


_UNRESERVED = lazy_regex(r"[A-Za-z0-9_.~-]*")
_JSON_PLAIN = lazy_regex(r"[\x20-\x21\x23-\x5b\x5d-\x7e]*")


_URL_QUOTES: dict[int, str] = {}
"""Each ASCII character -> ``urllib.parse.quote_from_bytes`` of it (``safe=""``), built when first needed."""


def _url_quotes() -> dict[int, str]:
    _URL_QUOTES.update({i: urllib.parse.quote_from_bytes(bytes([i]), safe="") for i in range(128)})
    return _URL_QUOTES


def _encoded_forms(secret: str) -> list[str]:
    """How a literal secret may also travel: URL-encoded (``%XX`` and form ``+`` for spaces),
    JSON-escaped (inside JSON text in a string), and inside base64 (standard and URL-safe).

    For base64, the secret may start at any of three alignments inside a larger encoded text;
    for each, the part of the encoding that depends on the secret's bytes alone is kept (only
    for secrets of 12 characters or more: shorter ones leave too few characters of their own).
    """
    import base64  # lazily: only blobs need it (start-up speed)
    import json

    raw = secret.encode("utf-8", "surrogatepass")
    forms: set[str] = set()
    # A secret of URL-safe characters is its own URL-encoded form; one of printable ASCII
    # without a quote or a backslash its own JSON-escaped form (most secrets: no work).
    if _UNRESERVED.fullmatch(secret) is None:
        # An ASCII secret's bytes are its characters: each quoted by a table of urllib's own
        # quotes of the 128 (C-speed ``translate``, where ``quote_from_bytes`` calls per byte).
        quoted = secret.translate(_URL_QUOTES or _url_quotes()) if secret.isascii() else None
        forms.add(quoted if quoted is not None else urllib.parse.quote_from_bytes(raw, safe=""))
        if " " in secret:  # else the same as the form above
            forms.add(urllib.parse.quote_plus(secret, safe=""))
    if _JSON_PLAIN.fullmatch(secret) is None:
        try:
            forms.add(json.dumps(secret)[1:-1])
            forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
        except UnicodeEncodeError:  # a lone surrogate
            pass
    if _ENCODED_MIN <= len(secret) <= _ENCODED_MAX:
        for shift in range(3):
            encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
            core = encoded[4 if shift else 0 : -4]
            if len(core) >= _ENCODED_MIN:
                forms.add(core)
                forms.add(core.replace("+", "-").replace("/", "_"))
    forms.discard(secret)
    return sorted(f for f in forms if len(f) >= _LITERAL_MIN)


CHASE_MIN = 8
"""A learned value this long (or longer) is chased everywhere, unless it is a plain word, a
number or a date (see :func:`chaseable`); 6 and 7 characters only when it mixes letters with
digits or other characters."""
_CHASE_SHORTEST = 6
_CHASE_LONGEST = 1024  # longer secrets (PEM blocks) are caught by their format
_CHASE_WORDS_MIN = 20  # words only (``correct-horse-battery-staple``): a passphrase from this long
_WORDY = lazy_regex(r"[A-Za-z]+(?:[ _.-][A-Za-z]+)*")
_NOT_CHASED = lazy_regex(
    r"(?:true|false|null|none|undefined|nil|yes|no|on|off|required|optional|changeme|example)"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
    r"|[0-9]+(?:\.[0-9]+)*|https?://[^@\s]*|(?:~|\.{1,2})?/[A-Za-z0-9_./-]*",
    re.IGNORECASE,
)


def chaseable(value: str) -> bool:
    """Whether a value identified as a secret at one spot is looked for everywhere else.

    Not: shorter than 6 characters, longer than 1024 (PEM blocks: their format catches them), a placeholder, a number, a date, a URL
    without a user part, a keyword (``true``, ``required``), a file path (``/home/ada/x``), a plain word or words (letters
    only, joined by space, ``_``, ``.`` or ``-``) shorter than 20 characters. Below
    :data:`CHASE_MIN` (6 and 7 characters) the value must mix letters with digits or other
    characters (``hunter2``). So ordinary words and numbers in later text are never mangled
    by a short value that happened to stand under a secret name.
    """
    n = len(value)
    if n < _CHASE_SHORTEST or n > _CHASE_LONGEST or "[REDACTED" in value or value != value.strip():
        return False
    if _NOT_CHASED.fullmatch(value):
        return False
    if _WORDY.fullmatch(value):
        return n >= _CHASE_WORDS_MIN
    if n < CHASE_MIN:
        letters = sum(c.isalpha() for c in value)
        return 0 < letters < n
    return True


_AUTH_PARAM = AUTH_PARAM
_KEPT_PARAMS = KEPT_AUTH_PARAMS
_SCHEMED = lazy_regex(r"([A-Za-z][A-Za-z0-9_.-]{0,39})[ \t]+(\S.*)", re.DOTALL)


def credential_parts(value: str) -> list[str]:
    """The credential parts of an ``Authorization``-style value ``<scheme> <credentials>``:
    the token (``Bearer t``, ``SSWS t``, ``Token t``, any scheme), the decoded ``user:pass``
    and its password for ``Basic``, and the values of the parameters of a parameter list
    (``Digest response=…, cnonce=…``; AWS4's ``Credential=`` key id and ``Signature=``), the
    harmless ones (``realm``, ``uri``, ``algorithm``, ``qop``, ``nc``, ``username``,
    ``SignedHeaders``) excepted. Empty for a value of another shape."""
    found = _SCHEMED.fullmatch(value.strip())
    if found is None:
        return []
    scheme, rest = found[1], found[2].strip()
    parts: list[str] = []
    params = list(_AUTH_PARAM.finditer(rest))
    if params and params[0].start() == 0 and (len(params) > 1 or "," in rest or params[0].end() == len(rest)):
        for p in params:
            name, v = p[1].lower(), p[2] if p[2] is not None else p[3]
            if name in _KEPT_PARAMS or not v:
                continue
            parts.append(v)
            if name == "credential" and "/" in v:
                parts.append(v.split("/", 1)[0])  # AWS4: the access key id before /date/region/...
        return parts
    if any(c.isspace() for c in rest):
        return []
    parts.append(rest)
    if scheme.lower() == "basic":
        import base64
        import binascii

        try:
            decoded = base64.b64decode(rest + "=" * (-len(rest) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return parts
        parts.append(decoded)
        if ":" in decoded:
            parts.append(decoded.split(":", 1)[1])
    return parts


_AUTH_SCHEME = lazy_regex(r"(?:bearer|basic|token|ssws|digest|aws4-hmac-sha256)[ \t]+\S", re.IGNORECASE)


def _scheme_parts(value: str) -> list[str]:
    """The literals to remember for an ``Authorization``-style value: its credential parts (the
    scheme word is no secret: ``Bearer [REDACTED:1]`` wherever the token comes back, one number
    for it in every channel), and the whole value too only when a part is too short to be
    looked for in text (or the value has no such parts)."""
    parts = credential_parts(value)
    if not parts or any(len(p) < _LITERAL_MIN for p in parts):
        return [value, *parts]
    return parts


def _literal_parts(value: str) -> list[str]:
    """The literals to remember for a secret value given whole (a secret flag's, a secret
    variable's): ``Bearer <token>`` as a header's (see :func:`_scheme_parts`), else the value."""
    return _scheme_parts(value) if _AUTH_SCHEME.match(value) else [value]


def _inside_placeholder(s: str, start: int, end: int) -> bool:
    """Whether ``s[start:end]`` is a placeholder already there, or a part of one."""
    at = s.rfind("[REDACTED", max(0, start - 16), end)
    if at < 0:
        return False
    found = PLACEHOLDER_RE.match(s, at)
    return found is not None and found.start() <= start and end <= found.end()


def _detected(value: str, detectors: Scanner, *, entropy: bool) -> list[str]:
    """The secrets the detectors find in ``value`` (for literal secrets of argv and env)."""
    return [value[a:b] for a, b, _rule in merge_hits(detectors.hits(Text(value), entropy=entropy))]
