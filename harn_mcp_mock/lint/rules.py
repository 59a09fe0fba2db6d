"""The lint rules: ids, titles, default severities, OWASP MCP Top 10 mapping, and the text checks
for tool poisoning and prompt injection (docs/lint.md lists them; a test keeps the two in step).

:func:`poisoning` looks at one text (a description, a parameter's docs, a tool result, a
resource's contents, or a tool's fields joined) in every reading :func:`~harn_mcp_mock.lint.
text.views` gives (its skeleton, what hidden tag characters spell, decoded base64/hex/URL runs)
and matches the phrases of :mod:`harn_mcp_mock.lint.phrases` in thirteen languages. What it
reports never quotes more than a short excerpt of the text.
"""

from __future__ import annotations

import re
import unicodedata

from harn_mcp_mock.findings.model import Rule, Severity
from harn_mcp_mock.lint.phrases import LANGUAGES, match
from harn_mcp_mock.lint.text import skeleton, skeleton_offsets, skeleton_pattern, views

__all__ = [
    "RULES",
    "Rule",
    "distinctive",
    "hidden_characters",
    "mentions",
    "poisoning",
    "poisoning_at",
    "shadowing",
]


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule("S1", "secret in a cassette", Severity.ERR, "MCP01",
             "A string (in a message, a CAS blob, the command line or the metadata) matches a credential "
             "detector of the redaction policy: a hand edit, another tool's cassette or an older policy "
             "left it in. Re-record, or redact the value by hand, and rotate the secret."),
        Rule("P1", "instructions that override the agent", Severity.ERR, "MCP03",
             "Text that tells the model to ignore or replace its instructions, or claims to be a system "
             "or developer message (in a tool surface: tool poisoning; in a result: prompt injection, MCP06)."),
        Rule("P2", "hidden characters", Severity.ERR, "MCP03",
             "Unicode tag characters, zero-width characters or bidirectional controls: text a human "
             "reviewer does not see but a model reads."),
        Rule("P3", "hidden-instruction markup", Severity.WARN, "MCP03",
             "Markup used to smuggle instructions past a reader: <IMPORTANT>, <system>, [HIDDEN], HTML "
             "comments."),
        Rule("P4", "a request to read credentials or private files", Severity.ERR, "MCP03",
             "Text asking the model to read, pass or include SSH keys, .env files, credentials, tokens "
             "or system files."),
        Rule("P5", "a request to send data elsewhere", Severity.ERR, "MCP03",
             "Text asking the model to send, post or upload data to a URL, an e-mail address or a "
             "webhook: exfiltration."),
        Rule("P6", "cross-tool shadowing", Severity.WARN, "MCP03",
             "A tool's description gives orders about another tool of the server (when, before, after or "
             "instead of using it), or names a tool of another server recorded in the same lint run: it "
             "can change how a trusted tool is used without touching it."),
        Rule("P7", "a request to keep something from the user", Severity.WARN, "MCP03",
             "Text telling the model not to tell, show or mention something to the user."),
        Rule("P8", "orders to do something first", Severity.WARN, "MCP03",
             "Text that makes a precondition of reading, calling or sending something before this or any "
             "tool is used (\"before using this tool, read...\", \"you must first call...\"): the usual "
             "carrier of a poisoned tool's real order."),
        Rule("H1", "cassette no test uses", Severity.WARN, "",
             "No test used this cassette in the last complete pytest run (the plugin's record in "
             ".pytest_cache): delete it or the test that lost it."),
        Rule("H2", "cassette older than --max-age", Severity.INFO, "",
             "Recorded longer ago than the allowed age: re-record it, or verify it against the live server."),
        Rule("H3", "unanswered requests", Severity.WARN, "",
             "The recording holds client requests the server never answered (replay answers them with "
             "error -32051)."),
        Rule("H4", "unfinished recording", Severity.WARN, "",
             "The cassette was recovered from a journal: the recording did not end cleanly."),
        Rule("H5", "unreadable cassette", Severity.ERR, "",
             "The file is not a cassette this version can read: malformed, truncated, altered, a missing "
             "CAS blob, or a newer format version."),
    )
}  # fmt: skip


_HIDDEN = {
    **dict.fromkeys(range(0xE0000, 0xE0080), "a Unicode tag character"),
    **dict.fromkeys((0x200B, 0x200C, 0x200D, 0x2060, 0x180E, 0xFEFF, 0x00AD, *range(0x2061, 0x2065)),
                    "a zero-width character"),
    **dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C),
                    "a bidirectional control"),
    **dict.fromkeys(range(0xE0100, 0xE01F0), "a variation selector (smuggled bytes)"),
}  # fmt: skip
_JOINED = {0x200C, 0x200D}
"""Joiners that are ordinary between emoji or in Indic and Persian words, and hidden elsewhere."""


def _ordinary_joiner(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    cats = {unicodedata.category(c) for c in (before, after) if c}
    return bool(cats & {"So", "Sk", "Mn", "Mc", "Lo"}) or before == "\ufe0f"


def hidden_characters(text: str) -> str | None:
    """``3 x a Unicode tag character (first U+E0041 ...)`` and the like, or None."""
    found: dict[str, list[int]] = {}
    for i, char in enumerate(text):
        kind = _HIDDEN.get(ord(char))
        if kind is None or (ord(char) in _JOINED and _ordinary_joiner(text, i)):
            continue
        if ord(char) == 0xFEFF and i == 0:  # a byte-order mark at the start
            continue
        found.setdefault(kind, []).append(ord(char))
    if not found:
        return None
    parts = []
    for kind, codes in found.items():
        name = unicodedata.name(chr(codes[0]), f"U+{codes[0]:04X}")
        parts.append(f"{len(codes)} x {kind} (first U+{codes[0]:04X} {name})")
    tags = found.get("a Unicode tag character", [])
    decoded = "".join(chr(c - 0xE0000) for c in tags if 0x20 <= c - 0xE0000 < 0x7F)
    if decoded:
        parts.append(f"the tags spell {decoded[:60]!r}")
    return "; ".join(parts)


_MARKUP = re.compile(
    r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|override)\s*>"
    r"|\[\s*(?:hidden|system|important|instructions?)\s*\]"
    r"|<\|im_start\|>|<\|system\|>|\[inst\]",
    re.DOTALL,
)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
"""An HTML comment: hidden in a tool surface; ordinary in a Markdown result or resource."""
_WHAT = {
    "P1": "overrides the agent's instructions",
    "P4": "asks for credentials or private files",
    "P5": "asks to send data elsewhere",
    "P7": "asks to keep something from the user",
    "P8": "orders something done first",
}
_EXCERPT = 60


def _excerpt(text: str) -> str:
    """A short excerpt, or nothing when folding look-alikes made it a mix of scripts."""
    mixed = not text.isascii() and any("a" <= c <= "z" for c in text)
    return "" if mixed else f": {text[:_EXCERPT]!r}"


def _plain(text: str) -> str:
    """``text`` with accents dropped and case folded, nothing else: what a reader sees."""
    decomposed = unicodedata.normalize("NFD", text)
    return " ".join("".join(c for c in decomposed if unicodedata.category(c) != "Mn").casefold().split())


def poisoning(text: str, *, surface: bool) -> list[tuple[str, str]]:
    """(rule, what was found) for each poisoning rule ``text`` breaks (one finding per rule)."""
    return [(rule, what) for rule, what, _at in poisoning_at(text, surface=surface)]


def poisoning_at(text: str, *, surface: bool) -> list[tuple[str, str, int | None]]:
    """:func:`poisoning`, with the index in ``text`` where each finding's phrase starts (None
    when it was found in a decoded reading, or is about the whole text)."""
    found: dict[str, str] = {}
    starts: dict[str, int] = {}
    hidden = hidden_characters(text)
    if hidden:
        found["P2"] = hidden
        first = next((i for i, c in enumerate(text) if ord(c) in _HIDDEN), None)
        if first is not None:
            starts["P2"] = first
    for label, seen in views(text):
        where = f" (in {label})" if label else ""
        if "P3" not in found:
            markup = _MARKUP.search(seen) or (_COMMENT.search(seen) if surface else None)
            if markup:
                found["P3"] = f"hidden-instruction markup{where}{_excerpt(' '.join(markup.group(0).split()))}"
                if not label:
                    offsets = skeleton_offsets(text)
                    if markup.start() < len(offsets):
                        starts["P3"] = offsets[markup.start()]
        for rule, what in _WHAT.items():
            if rule in found:
                continue
            hit = match(rule, seen, surface=surface)
            if hit is None:
                continue
            lang, excerpt, start = hit
            if not label:
                offsets = skeleton_offsets(text)
                if start < len(offsets):
                    starts[rule] = offsets[start]
            language = f" ({LANGUAGES[lang]})" if lang in LANGUAGES and lang != "en" else ""
            folded = where
            if not label and not text.isascii() and excerpt.isascii() and excerpt not in _plain(text):
                folded = " (after folding look-alike, compatibility and hidden characters)"
            found[rule] = f"{what}{language}{folded}{_excerpt(excerpt)}"
    return [(rule, what, starts.get(rule)) for rule, what in sorted(found.items())]


_TRIGGERS = re.compile(
    skeleton_pattern(
        r"(?:\b(?:when|whenever|before|after|instead of|rather than|if|in place of|prior to)\b"
        r"|\b(?:cuando|antes de|después de|en lugar de|en vez de|quando|depois de|em vez de|lorsque|quand|avant|après"
        r"|au lieu de|wenn|bevor|nachdem|statt|anstatt|prima di|dopo|invece di)\b"
        r"|когда|перед|после|вместо|每当|當|当|之前|之后|代替|前に|後に|代わりに|전에|후에|대신|से पहले|के बाद|के बजाय"
        r"|عندما|قبل|بعد|بدلا من)"
    )
)
"""Words that make a mention of another tool an order about it (when, before, instead of...)."""


def distinctive(name: str) -> bool:
    """A tool name no prose uses by accident: ``send_email``, ``get-sum``, ``readFile``."""
    return len(name) >= 5 and bool(re.search(r"[_\-.]|[a-z][A-Z]", name))


def mentions(description: str, name: str, *, orders_needed: bool) -> bool:
    """Whether ``description`` names the tool ``name`` (as a word); with ``orders_needed``, right
    after a word that makes it an order (when, before, after, instead of..., in 13 languages),
    in the same sentence: "Use read_text_file instead" is documentation, "When using
    send_email, ..." is an order."""
    seen = skeleton(description)
    wanted = re.escape(skeleton(name))
    for hit in re.finditer(rf"(?<![\w-]){wanted}(?![\w-])", seen):
        if not orders_needed:
            return True
        start = max(seen.rfind(". ", 0, hit.start()) + 1, hit.start() - 60, 0)
        if _TRIGGERS.search(seen[start : hit.start()]):
            return True
    return False


def shadowing(description: str, own: str, others: list[str]) -> str | None:
    """P6: ``description`` (of tool ``own``) gives orders about another tool of the server."""
    for name in others:
        if name == own or len(name) < 3:
            continue
        if mentions(description, name, orders_needed=True):
            return f"gives orders about the tool {name!r}"
    return None
