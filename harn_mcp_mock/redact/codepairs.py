"""A secret passed as code: a string literal naming it, then another literal holding it (issue 37).

``{ "AccountKey", "v" }`` (a C# collection initialiser), ``Context.Add("AccountKey", "v")``,
``Header.Set("X-Api-Key", "v")``, ``os.Setenv("API_KEY", "v")``, ``{"password", "v"}`` (Go, C++),
``headers["Authorization"] = "v"``, ``os.environ["X_API_KEY"] = 'v'``, ``ENV['SECRET_TOKEN'] =
"v"``, ``assert.equal(parsed['AccountKey'], 'v')``: the name is a quoted literal standing as an
element or argument (after ``(``, ``{``, ``[``, ``,`` or a line's start) followed by ``,``, or an
index (``["name"]``) followed by ``=``, ``==`` or ``,``; the value is the next quoted literal
(over one line break at most).

The name is judged as every context rule judges one (:class:`~.contexts.NameJudge`): a name the
key rules take is *strong*, one that only reads like a secret's (a bare ``key``) is *weak*, an
``allow``-ed one (``page_token``) is neither. The value, on one line and without spaces, must not
be a template, a path or a URL; under a strong name it must be plausible
(:func:`~.rules.plausible_value`) and hold a digit or a symbol, or look like a credential
(:func:`~.rules.credential_like`); under a weak name, look like a credential. Under
``Authorization`` the credential parts of ``<scheme> <credentials>`` go, the scheme stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harn_mcp_mock.redact.contexts import STRONG, NameJudge
from harn_mcp_mock.redact.gates import Facts, Text, lazy_regex
from harn_mcp_mock.redact.rules import (
    AUTH_HEADER_NAMES,
    Hit,
    credential_like,
    plausible_value,
    scheme_credentials,
)

RULE = "code-literal-pair"

# At a name literal's opening quote: the name, its closing quote, the separator (',' after an
# element or argument; ']' then '=', '==' or ',' after an index), then the value literal.
_PAIR = lazy_regex(
    r"""(?P<q>["'])(?P<name>[A-Za-z_][\w.:/-]{0,79})(?P=q)"""
    r"""(?:[ \t]*,|[ \t]*(?P<index>\])[ \t]*(?:,|={1,3}))[ \t]*(?:\r?\n[ \t]*)?"""
    r"""(?P<vq>["'`])(?P<value>[^"'`\\\r\n]{0,256})(?P=vq)"""
)
_BEFORE_ELEMENT = frozenset("({[,")
_SPACE = " \t\r\n"
_MIN_VALUE = 6
_MIN_ALNUM = 4


class CodePairRule:
    """``"name", "value"`` and ``["name"] = "value"`` in code (see the module's docstring).

    One instance per quote and separator (``",``, ``',``, ``"]``, ``']``): the scanner looks for
    that pair of characters before calling the rule, so that a text without one costs a C-speed
    search."""

    __slots__ = ("_facts", "_judge", "_tell")

    name = RULE
    contained = False
    run = 0
    min_len = 12

    def __init__(self, judge: NameJudge, tell: str) -> None:
        self._judge = judge
        self._tell = tell
        self._facts = Facts(min_len=self.min_len, needles=(tell,))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        hits: list[Hit] = []
        tell = self._tell
        at = s.find(tell)
        while at >= 0:
            hits.extend(self._at(s, at))
            at = s.find(tell, at + 2)
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _at(self, s: str, close: int) -> list[Hit]:
        """The pair whose name literal closes at ``close``, if its name and value read as a secret's."""
        quote = s[close]
        open_at = s.rfind(quote, max(0, close - 81), close)
        if open_at < 0:
            return []
        m = _PAIR.match(s, open_at)
        if m is None or m.end("name") != close:
            return []
        i = open_at
        while i > 0 and s[i - 1] in " \t":
            i -= 1
        before = s[i - 1] if i > 0 else "\n"
        if m["index"] is not None:
            if before != "[":
                return []
        elif before not in _BEFORE_ELEMENT and before not in "\r\n":
            return []
        name = m["name"]
        if sum(c.isdigit() for c in name) * 4 > len(name):
            return []  # a value, not a name ('host:API-1111…')
        rest = s[m.end() : m.end() + 8].lstrip(" \t")
        if rest.startswith("+"):
            return []  # only the start of the value ('"Token token=" + key', '"Bearer " + token')
        strength = self._judge(name)
        if not strength and any(c in name for c in ".:/"):
            strength = self._judge(name.replace(":", ".").replace("/", ".").rpartition(".")[2])
        if not strength:
            return []
        value = m["value"]
        v_at = m.start("value")
        if strength == STRONG and name.lower() in AUTH_HEADER_NAMES:
            spans = scheme_credentials(s, m.start("vq"))
            if spans is not None:
                return [(a, b, RULE) for a, b in spans if a >= v_at and b <= m.end("value")]
        if not _value_ok(value, strong=strength == STRONG):
            return []
        return [(v_at, m.end("value"), RULE)]


def _value_ok(value: str, *, strong: bool) -> bool:
    if len(value) < _MIN_VALUE or any(c in _SPACE for c in value):
        return False
    if "://" in value or value[0] in "/~.\\" or sum(c.isalnum() for c in value) < _MIN_ALNUM:
        return False  # a URL, a path, a mask ('********')
    if not strong:
        return credential_like(value)
    if not plausible_value(value):
        return False
    return any(not c.isalpha() for c in value.replace("_", "").replace("-", "").replace(".", "")) or (
        credential_like(value)
    )


# --- a literal that a secret's name stands for in code ----------------------------------------

FALLBACK_RULE = "code-fallback"
GETTER_RULE = "code-getter"
BRACE_RULE = "code-brace-init"
ARROW_RULE = "code-array-pair"

# Before '||' or '??': a property ('process.env.API_KEY', 'config.apiKey'), an index
# ('ENV["API_KEY"]') or a one-argument call ('getenv("API_KEY")'); the operator and the literal
# after it may stand on the next lines (formatters wrap them).
_FALLBACK = lazy_regex(
    r"""(?:\.(?P<name>[A-Za-z_]\w{0,79})|\[[ \t]*(?P<q>["'])(?P<name2>[A-Za-z_][\w.:/-]{0,79})(?P=q)[ \t]*\]"""
    r"""|\([ \t]*(?P<q2>["'])(?P<name3>[A-Za-z_][\w.:/-]{0,79})(?P=q2)[ \t]*\))[ \t]*(?:\r?\n[ \t]*)?\Z"""
)
"""The lookup before an operator (searched in a window that ends at it)."""
_FALLBACK_VALUE = lazy_regex(r"""[ \t]*(?:\r?\n[ \t]*)?(?P<vq>["'`])(?P<value>[^"'`\\\r\n]{1,4096})(?P=vq)""")
"""The literal after an operator."""
_LOOKUP_WINDOW = 128
# The shell's default: '${API_KEY:-value}', '${API_KEY-value}', '${API_KEY:=value}'.
_SHELL_DEFAULT = lazy_regex(r"""\$\{(?P<name>[A-Za-z_]\w{0,79}):?[-=](?P<value>[^}\s"'`$]{1,4096})\}""")
# A function returning one literal: 'func getApiToken() string { return "…" }',
# 'def api_key():⏎    return "…"', 'function getSecret() {⏎  return '…';'.
_GETTER = lazy_regex(
    r"""\b(?:func|def|function|fun|fn)[ \t]+(?:\([^)\r\n]{0,80}\)[ \t]*)?(?P<name>[A-Za-z_]\w{0,79})"""
    r"""[ \t]*\([^)\r\n]{0,80}\)[^{:\r\n]{0,40}[{:][ \t]*(?:\r?\n[ \t]*)?return[ \t]+"""
    r"""(?P<vq>["'`])(?P<value>[^"'`\\\r\n]{1,4096})(?P=vq)"""
)
# A brace initialiser holding one literal: C++'s 'std::string apiKey{"…"}', over line breaks.
_BRACE = lazy_regex(
    r"""\{[ \t]*(?:\r?\n[ \t]*)?(?P<vq>["'])(?P<value>[^"'`\\\r\n]{1,4096})(?P=vq)[ \t]*(?:\r?\n[ \t]*)?\}"""
)
# A quoted key and its literal in an associative array: PHP's and Ruby's '"api_key" => "…"'.
_ARROW = lazy_regex(
    r"""(?P<q>["'])(?P<name>[A-Za-z_][\w.:/-]{0,79})(?P=q)[ \t]*=>[ \t]*(?:\r?\n[ \t]*)?"""
    r"""(?P<vq>["'])(?P<value>[^"'`\\\r\n]{1,4096})(?P=vq)"""
)
_JOINS_GROUP = ("||", "${", "=>")
_NAME_BEFORE = lazy_regex(r"(?<![\w.])[A-Za-z_]\w{0,79}\Z")
_FORMS = {  # the tell the scanner looks for first -> (finding name, expression)
    "||": (FALLBACK_RULE, _FALLBACK),
    "??": (FALLBACK_RULE, _FALLBACK),
    "${": (FALLBACK_RULE, _SHELL_DEFAULT),
    "return": (GETTER_RULE, _GETTER),
    "{": (BRACE_RULE, _BRACE),
    "=>": (ARROW_RULE, _ARROW),
}


class CodeLiteralRule:
    """A literal that a secret's name stands for in code, in one of these forms (``tell`` picks
    one; the scanner looks for the tell first):

    * the fallback when a lookup finds none: ``process.env.API_KEY || "…"``, ``config.apiKey ??
      "…"``, ``ENV["API_KEY"] || "…"`` and the shell's ``${API_KEY:-…}``;
    * the one literal a function returns: ``func getApiToken() string { return "…" }``;
    * a brace initialiser's one literal: ``std::string apiKey{"…"}``;
    * a quoted key's literal in an associative array: ``'account_key' => '…'`` (PHP, Ruby).

    The name (the property, index, argument, function or variable) and the value are judged as a
    code pair's (:class:`~.contexts.NameJudge`, :func:`_value_ok`)."""

    __slots__ = ("_brace", "_facts", "_judge", "_regex", "name")

    contained = False
    run = 0
    min_len = 12

    def __init__(self, judge: NameJudge, tell: str) -> None:
        self._judge = judge
        self.name, self._regex = _FORMS[tell]
        self._brace = self._regex is _BRACE
        # '||', '${' and '=>' join the scanner's group of their first character (one search
        # for '|', '$' or '=' then gates several rules), their own pair searched after it
        needles = (tell[0], tell) if tell in _JOINS_GROUP else (tell,)
        self._facts = Facts(min_len=self.min_len, needles=needles)

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        if self._regex is _FALLBACK:
            return self._fallbacks(s)
        hits: list[Hit] = []
        for m in self._regex.finditer(s):
            if m.end("value") - m.start("value") < _MIN_VALUE:
                continue  # (what _value_ok refuses first: before the name is looked for)
            if self._brace:
                before = _NAME_BEFORE.search(s, max(0, m.start() - 80), m.start())
                if before is None:
                    continue
                name = before[0]
            else:
                name = m["name"]
            strength = self._strength(name)
            if strength and _value_ok(m["value"], strong=strength == STRONG):
                hits.append((m.start("value"), m.end("value"), self.name))
        return hits

    def _fallbacks(self, s: str) -> list[Hit]:
        """``lookup || "…"`` and ``lookup ?? "…"``: at each operator, the literal after it, then
        the lookup before it (found from the operator: a search from every ``.``, ``[`` and
        ``(`` of a long text costs more than the operators are many)."""
        hits: list[Hit] = []
        tell = self._facts.needles[-1]
        at = s.find(tell)
        while at >= 0:
            value = _FALLBACK_VALUE.match(s, at + 2)
            if value is not None and value.end("value") - value.start("value") >= _MIN_VALUE:
                lookup = _FALLBACK.search(s, max(0, at - _LOOKUP_WINDOW), at)
                if lookup is not None:
                    name = lookup["name"] or lookup["name2"] or lookup["name3"] or ""
                    strength = self._strength(name)
                    if strength and _value_ok(value["value"], strong=strength == STRONG):
                        hits.append((value.start("value"), value.end("value"), self.name))
            at = s.find(tell, at + 2)
        return hits

    def _strength(self, name: str) -> int:
        strength = self._judge(name)
        if not strength and any(c in name for c in ".:/"):
            strength = self._judge(name.replace(":", ".").replace("/", ".").rpartition(".")[2])
        return strength

    def any(self, text: Text) -> bool:
        return bool(self(text))


def code_pair_rules(
    secret_name: Callable[[str], bool],
    allowed_name: Callable[[str], bool],
    needles: Sequence[str] | None,
) -> list[object]:
    """The rules for a policy whose key rules are ``secret_name`` (``allowed_name`` the ``allow``
    ones; ``needles`` as :func:`~.contexts.context_rules` takes them: ``()`` means no key rules,
    and no rule)."""
    if needles is not None and not needles:
        return []
    judge = NameJudge(secret_name, allowed_name, weak=True)
    return [
        *(CodePairRule(judge, quote + separator) for separator in ",]" for quote in "\"'"),
        *(CodeLiteralRule(judge, tell) for tell in _FORMS),
    ]
