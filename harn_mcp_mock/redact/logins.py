"""A secret written beside the account it opens (issue 37): ``<secret> / <e-mail>`` and
``<e-mail> / <secret>``, as credentials are handed over in notes, tickets and READMEs
(``demo: Xk8vQ2mPz7Lw / demo@example.com``, ``login: ops@example.com / Tq9#mZ2vLp``), with a
name and ``=`` or ``:`` before the address at most (``key/ account_email = a@example.com``).

The address is what makes the pair: no name says the value is a secret, so the value must look
like a credential by itself (:func:`~.rules.credential_like`: not a word, a name, a number, a path
or a URL) and stand as a whole word (a space, a quote or a bracket on its other side). The
address is no secret and stays.
"""

from __future__ import annotations

from harn_mcp_mock.redact.gates import Facts, Text, lazy_regex
from harn_mcp_mock.redact.rules import Hit, credential_like

RULE = "login-pair"

# An address, found at its '@' (a search from every position would try 64 characters at each):
# the domain by an expression, the local part walked back over.
_DOMAIN = lazy_regex(r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])")
_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_LOCAL_MAX = 64
# From the slash to the address: ' / ', '/ name = ', '/ name: '.
_SEPARATOR = lazy_regex(r"""/[ \t]*(?:[A-Za-z_][\w.-]{0,40}[ \t]*[=:][ \t]*)?""")
_SEPARATOR_MAX = 48
_AFTER = lazy_regex(r"""[ \t]+/[ \t]+(?P<value>[^\s"'`<>()\[\]{},;]{8,4096})(?=[\s"'`<>()\[\]{},;]|\Z)""")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_.~!#$%^&*?|-")
_WORD_EDGE = frozenset(" \t\r\n\"'`<>()[]{},;")
_VALUE_MAX = 4096


class LoginPairRule:
    """``<secret> / <e-mail>`` and ``<e-mail> / <secret>`` (see the module's docstring)."""

    __slots__ = ("_facts",)

    name = RULE
    contained = False
    run = 0
    min_len = 16

    def __init__(self) -> None:
        self._facts = Facts(min_len=self.min_len, needles=("@", "/"))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        hits: list[Hit] = []
        at = s.find("@")
        while at >= 0:
            domain = _DOMAIN.match(s, at)
            local = at
            while local > 0 and at - local < _LOCAL_MAX and s[local - 1] in _LOCAL_CHARS:
                local -= 1
            while local < at and not s[local].isalnum():
                local += 1
            if domain is None or local == at:
                at = s.find("@", at + 1)
                continue
            before = self._before(s, local)
            if before is not None:
                hits.append(before)
            after = _AFTER.match(s, domain.end())
            if after is not None:
                value = after["value"].rstrip(".:!?")
                if _login_value(value):
                    hits.append((after.start("value"), after.start("value") + len(value), RULE))
            at = s.find("@", domain.end())
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    @staticmethod
    def _before(s: str, email_at: int) -> Hit | None:
        """The token before ``<token> / `` (or ``<token>/ name = ``) in front of the address at
        ``email_at``, if it looks like a credential."""
        slash = s.rfind("/", max(0, email_at - _SEPARATOR_MAX), email_at)
        if slash < 0 or _SEPARATOR.fullmatch(s, slash, email_at) is None:
            return None
        if s[slash - 1 : slash] not in (" ", "\t") and s[slash + 1] not in " \t":
            return None  # 'path/user@example.com': a path or a URL, no pair
        end = slash
        while end > 0 and s[end - 1] in " \t":
            end -= 1
        start = end
        while start > 0 and s[start - 1] in _TOKEN_CHARS and end - start < _VALUE_MAX:
            start -= 1
        if start == end or (start > 0 and s[start - 1] not in _WORD_EDGE):
            return None
        return (start, end, RULE) if _login_value(s[start:end]) else None


def _login_value(value: str) -> bool:
    """Whether a value beside an address looks like a credential (:func:`~.rules.credential_like`);
    one holding ``/`` only as base64 does, with a ``+`` or a closing ``=`` (``path/1234``,
    ``team/ops`` are paths)."""
    if "/" in value and "+" not in value and not value.endswith("="):
        return False
    return credential_like(value)


def login_pair_rules() -> list[object]:
    """The rule, for a policy with key rules (a policy without any redacts no context)."""
    return [LoginPairRule()]
