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
from harn_mcp_mock.redact.gates import Text
from harn_mcp_mock.redact.placeholders import PLACEHOLDER_RE, is_placeholder, placeholder
from harn_mcp_mock.redact.rules import (
    FINGERPRINT_SCHEME,
    AssignmentRule,
    FingerprintRule,
    Hit,
    fingerprint,
    literal_rules,
    merge_hits,
)
from harn_mcp_mock.redact.scanner import Scanner

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
_ENCODED_MIN = 12  # literal secrets this long are also looked for URL-encoded and in base64
_CLEAN_STRING_MAX = 512  # clean strings up to this long are remembered as clean
_FLAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_ENV_STYLE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


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
        self._findings: dict[str, int] = {}
        self._key_cache: dict[str, int] = {}
        self._harmless: set[str] = set()
        self._clean: set[str] = set()
        assignment = AssignmentRule(compiled.name_is_secret, compiled.name_needles, compiled.min_name)
        detectors = Scanner([*compiled.patterns, assignment], compiled.entropy)
        literals, short = self._literal_secrets(argv or (), env or {}, detectors)
        self._short = short
        self._short_set = frozenset(short)
        # The composed scanner: token formats and user patterns, the server's literal secrets,
        # secret assignments in text, and entropy (where it is on).
        literal = literal_rules(literals)
        self._originals = sorted(self._origin_values)
        known = FingerprintRule.from_meta(fingerprints)
        extra = [known] if known is not None else []
        self._scanner = Scanner([*compiled.patterns, *literal, assignment, *extra], compiled.entropy)
        # Binary data in base64 (images, audio) can only hold a secret as the base64 form of a
        # literal secret: token formats found in it would be chance.
        # Base64 token formats with a long fixed prefix (AWS session tokens) are looked for too.
        prefixed = [
            p
            for p in compiled.patterns
            if p.contained and any(len(n) >= 8 and _B64_CHARS.issuperset(n) for n in p.needles)
        ]
        self._binary_scanner = Scanner([*prefixed, *literal], None) if literal or prefixed else None
        self._text_min = self._scanner.min_len
        self._root = compiled.pointers.root
        self._track = compiled.has_redact_pointers
        self._scan = self._make_scanner()

    # --- public ---------------------------------------------------------------------------------

    @property
    def findings(self) -> dict[str, int]:
        """Rule name -> how many values it redacted so far (counts only, never secret material)."""
        return dict(self._findings)

    def redact_message(self, obj: Any) -> Any:
        """``obj`` (a JSON-RPC message, a batch, any JSON value) with its secrets replaced.

        The input is never modified. When nothing needed redacting the very same object is
        returned; otherwise a new value that shares its unchanged branches with the input.
        """
        strings: list[str] = []
        if self._scan_top(obj, strings) and self._strings_clean(strings):
            return obj
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
        if not self._originals:
            return None
        key = os.urandom(32)
        values = sorted({fingerprint(key, v) for v in self._originals})
        return {"scheme": FINGERPRINT_SCHEME, "key": key.hex(), "values": values}

    def redact_text(self, s: str) -> str:
        """A line of free text (a non-JSON line, stderr, an error message) with its secrets replaced."""
        return self._red_text(s, True)

    def redact_argv(self, argv: Sequence[str]) -> list[str]:
        """The server command line with every secret value replaced (same shape, same length)."""
        out: list[str] = []
        pending = False
        for i, arg in enumerate(argv):
            if pending:
                pending = False
                if arg and not arg.startswith("--"):
                    out.append(self._whole(arg, "argv"))
                    continue
            if i > 0:
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

    # --- literal secrets of the server --------------------------------------------------------

    def _literal_secrets(
        self, argv: Sequence[str], env: Mapping[str, str], detectors: Scanner
    ) -> tuple[dict[str, str], dict[str, str]]:
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
                add(value, "env", short_ok=False)
            else:
                for secret in _detected(value, detectors, entropy=False):
                    add(secret, "env", short_ok=False)
        for secret, whole in self._argv_secrets(argv, detectors):
            add(secret, "argv", short_ok=whole)
        self._origin_values = frozenset(literals)
        for secret, origin in list(literals.items()):
            for form in _encoded_forms(secret):
                literals.setdefault(form, origin)
        return literals, short

    def _argv_secrets(self, argv: Sequence[str], detectors: Scanner) -> Iterator[tuple[str, bool]]:
        """(secret, is a whole argument) for each secret of the command line."""
        pending = False
        for i, arg in enumerate(argv):
            if not isinstance(arg, str):
                continue
            if pending:
                pending = False
                if arg and not arg.startswith("--"):
                    yield arg, True
                    continue
            if i > 0:
                flag = self._secret_flag(arg)
                if flag is not None:
                    if flag[1] is None:
                        pending = True
                    else:
                        yield flag[1], True
                    continue
                env_style = _ENV_STYLE.fullmatch(arg)
                if env_style and env_style[2] and self._c.env_is_secret(env_style[1]):
                    yield env_style[2], True
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
            flags = self._key_flags(key)
            if flags & _DIRTY_KEY or flags & (K_SECRET | K_ALLOW) == K_SECRET:
                return False
            if len(harmless) >= _CACHE_MAX:
                harmless.clear()
            harmless.add(key)
        return True

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

    def _holds_secret(self, s: str) -> bool:
        hits = self._scanner.hits(Text(s), entropy=True)
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
        if max(map(len, fresh)) >= _BINARY_MIN:
            binary = {b for b in fresh if len(b) >= _BINARY_MIN and binary_base64(b)}
            if binary:
                if any(self._binary_hits(b) for b in binary):
                    return False
                fresh -= binary
                if not fresh:
                    return True
        if scanner.any(Text("\n".join(fresh))) or scanner.any_separately(list(fresh)):
            return False
        if len(clean) + len(fresh) > _CACHE_MAX:
            clean.clear()
        if max(map(len, fresh)) <= _CLEAN_STRING_MAX:
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
        for i, (key, value) in enumerate(d.items()):
            is_str = type(key) is str
            flags = self._key_flags(key) if is_str else 0
            if dead:
                child = state
                child_mode = self._child_mode(mode, flags, state) if flags else mode
            else:
                child = state.step(key if is_str else str(key))
                child_mode = self._child_mode(mode, flags, child)
            if key == _BLOB_KEY and value.__class__ is str and not child_mode & (_SECRET | _ALLOW):
                new_value = self._red_blob(value, d.get("mimeType"), child_mode)
            else:
                new_value = self._red(value, child_mode, child)
            new_key = self._red_text(key, not child_mode & _NO_ENTROPY) if flags & _DIRTY_KEY else key
            if out is None:
                if new_value is value and new_key is key:
                    continue
                out = dict(islice(d.items(), i))
            out[new_key] = new_value
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
            return self._red_str(blob, mode)
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
        return self._placeholder(s, rule)

    def _red_text(self, s: str, entropy: bool) -> str:
        if self._short_set and s in self._short_set:
            return self._whole(s, self._short[s])
        if len(s) < self._text_min or s in self._clean:
            return s
        if len(s) >= _BINARY_MIN and binary_base64(s):
            hits = self._binary_hits(s)
        else:
            hits = self._scanner.hits(Text(s), entropy=entropy)
        if not hits:
            if entropy and len(s) <= _CLEAN_STRING_MAX:
                self._remember_clean(s)
            return s
        return self._apply(s, hits)

    def _binary_hits(self, s: str) -> list[Hit]:
        scanner = self._binary_scanner
        return scanner.hits(Text(s), entropy=False) if scanner is not None else []

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
        number = self._numbers.get(secret)
        if number is None:
            number = self._numbers[secret] = len(self._numbers) + 1
        self._findings[rule] = self._findings.get(rule, 0) + 1
        return placeholder(number)


_BLOB_KEY = "blob"
_BINARY_MIME = ("image/", "audio/", "video/", "font/", "model/")
_TEXT_MIME = re.compile(
    r"text/|application/(?:[\w.-]+\+)?(?:json|xml|yaml|x-yaml|toml|javascript|ecmascript|x-sh|"
    r"x-www-form-urlencoded|sql|graphql|x-ndjson|ld\+json|x-ipynb\+json|x-httpd-php|x-python)\b",
    re.IGNORECASE,
)
_SNIFF_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


_BINARY_MIN = 256  # shorter base64 strings are scanned like any text
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


def _encoded_forms(secret: str) -> list[str]:
    """How a literal secret may also travel: URL-encoded, and inside base64 (standard and URL-safe).

    For base64, the secret may start at any of three alignments inside a larger encoded text;
    for each, the part of the encoding that depends on the secret's bytes alone is kept.
    """
    import base64  # lazily: only blobs need it (start-up speed)

    if len(secret) < _ENCODED_MIN:
        return []
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {urllib.parse.quote_from_bytes(raw, safe="")}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        core = encoded[4 if shift else 0 : -4]
        if len(core) >= _ENCODED_MIN:
            forms.add(core)
            forms.add(core.replace("+", "-").replace("/", "_"))
    forms.discard(secret)
    return sorted(forms)


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
