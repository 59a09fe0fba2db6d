"""The lint rules: ids, titles, default severities, OWASP MCP Top 10 mapping, and the text checks
for tool poisoning and prompt injection (docs/lint.md lists them; a test keeps the two in step).

A poisoning check looks at one string (a tool, prompt or resource description, a schema's
descriptions and enum values, a tool result) and returns what it found, in words that never
quote more than a short excerpt of the string.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from harn_mcp_mock.findings.model import Rule, Severity

__all__ = ["POISONING", "RULES", "Rule", "TextCheck", "hidden_characters", "shadowing"]


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
             "instead of using it): it can change how a trusted tool is used without touching it."),
        Rule("P7", "a request to keep something from the user", Severity.WARN, "MCP03",
             "Text telling the model not to tell, show or mention something to the user."),
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


@dataclass(frozen=True, slots=True)
class TextCheck:
    rule: str
    check: Callable[[str], str | None]
    """What was found in the text (a short phrase for the finding's message), or None."""


def _pattern(rule: str, what: str, *patterns: str) -> TextCheck:
    compiled = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE | re.DOTALL)

    def check(text: str) -> str | None:
        found = compiled.search(text)
        if found is None:
            return None
        excerpt = " ".join(found.group(0).split())
        return f"{what}: {excerpt[:60]!r}"

    return TextCheck(rule, check)


_HIDDEN = {
    **dict.fromkeys(range(0xE0000, 0xE0080), "a Unicode tag character"),
    **dict.fromkeys((0x200B, 0x200C, 0x200D, 0x2060, 0x180E, 0xFEFF), "a zero-width character"),
    **dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A)), "a bidirectional control"),
}


def hidden_characters(text: str) -> str | None:
    """``3 Unicode tag characters (U+E0041...)`` and the like, or None."""
    found: dict[str, list[int]] = {}
    for char in text:
        kind = _HIDDEN.get(ord(char))
        if kind is not None:
            found.setdefault(kind, []).append(ord(char))
    if not found:
        return None
    parts = []
    for kind, codes in found.items():
        name = unicodedata.name(chr(codes[0]), f"U+{codes[0]:04X}")
        parts.append(f"{len(codes)} x {kind} (first U+{codes[0]:04X} {name})")
    if any(0xE0000 <= c < 0xE0080 for codes in found.values() for c in codes):
        decoded = "".join(
            chr(c - 0xE0000) for c in found.get("a Unicode tag character", []) if 0x20 <= c - 0xE0000 < 0x7F
        )
        if decoded:
            parts.append(f"the tags spell {decoded[:60]!r}")
    return "; ".join(parts)


_VERB = (
    r"(?:read|open|cat|get|fetch|pass|include|append|attach|send|print|show|return|copy|upload|exfiltrate)"
)
POISONING: tuple[TextCheck, ...] = (
    _pattern(
        "P1", "overrides the agent's instructions",
        r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:previous|prior|above|earlier|all|any|other|your)\b.{0,20}\b(?:instructions?|prompts?|rules|guidelines|directions)\b",
        r"\byou (?:must|should) (?:now |instead )?(?:ignore|disregard|forget)\b",
        r"\bnew (?:system )?instructions?\s*:",
        r"(?:^|\n)\s*(?:system|developer)\s*(?:prompt|message)?\s*:",
        r"\bact as (?:if you (?:are|were)|an? (?:unrestricted|jailbroken))",
    ),
    TextCheck("P2", hidden_characters),
    _pattern(
        "P3", "hidden-instruction markup",
        r"<\s*/?\s*(?:important|system|instructions?|secret|hidden)\s*>",
        r"\[\s*(?:hidden|system|important)\s*\]",
        r"<!--.*?-->",
    ),
    _pattern(
        "P4", "asks for credentials or private files",
        _VERB + r"\b.{0,60}(?:~/\.ssh|\bid_(?:rsa|ed25519|ecdsa)\b|\.env\b|/etc/(?:passwd|shadow)|\.aws/credentials|\.netrc|\.npmrc|\.pypirc|\bprivate[ _-]?keys?\b|\bapi[ _-]?keys?\b|\baccess[ _-]?tokens?\b|\bcredentials?\b|\bpasswords?\b)",
        r"(?:~/\.ssh|\bid_(?:rsa|ed25519)\b|\.aws/credentials).{0,60}\b(?:contents?|parameter|argument|field)\b",
    ),
    _pattern(
        "P5", "asks to send data elsewhere",
        r"\b(?:send|post|upload|forward|transmit|exfiltrate|report)\b.{0,80}\bto\b.{0,20}(?:https?://|\bwebhook\b|[\w.+-]+@[\w-]+\.[\w.]+)",
        r"\bcurl\s+(?:-[a-z]+\s+)*(?:-d|--data|-F|-T)\b",
    ),
    _pattern(
        "P7", "asks to keep something from the user",
        r"\b(?:do not|don't|never)\s+(?:tell|inform|show|mention|reveal|notify|alert)\s+(?:this\s+|it\s+)?(?:to\s+)?the user\b",
        r"\bwithout (?:telling|informing|notifying|alerting) the user\b",
        r"\bthe user (?:must|should) not (?:know|see|be told)\b",
    ),
)  # fmt: skip
"""The checks run on every text of a tool surface and of every result (P6 needs the tool list)."""


def shadowing(description: str, own: str, others: list[str]) -> str | None:
    """P6: ``description`` (of tool ``own``) gives orders about another tool of the server."""
    for name in others:
        if name == own or len(name) < 3:
            continue
        pattern = (
            r"\b(?:when|whenever|before|after|instead of|rather than|if)\b[^.]{0,40}\b(?:using|calling|call|use|invoking|running)?\s*`?"
            + re.escape(name)
            + r"\b"
        )
        if re.search(pattern, description, re.IGNORECASE):
            return f"gives orders about the tool {name!r}"
    return None
