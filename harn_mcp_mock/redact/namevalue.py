"""A secret written as a name/value pair in text (issue 37): ``{"name": "DB_PASSWORD", "value": "…"}``.

Kubernetes ``env`` lists, ECS task definitions, Azure ``secrets`` arrays, SSM parameters and Postman
environments hold a secret as an object with two keys, neither of them secret: the secret's name is
the *value* of ``name`` (or ``key``), its value the value of ``value``. In a real JSON object the
pipeline pairs them; in text (a tool's output, JSON inside a string, a ``kubectl`` YAML listing)
:class:`NameValueRule` does:

* JSON or a Python literal, either order, with any escaping of the quotes
  (``{"name":"registry-password","value":"…"}``, ``{\\"key\\": \\"api_key\\", \\"value\\": …}``,
  ``{'Value': '…', 'Name': '/prod/db/password'}``);
* YAML, ``- name: DB_PASSWORD`` then ``value: …`` on the next line (``valueFrom:`` is no value).

The name is judged as :class:`~.contexts.XmlSecretRule` judges an element's ``name`` attribute (a
name the key rules take: any plausible value; one that only reads like a secret's: a
credential-like value; the last part of a path or a ``ns:name``); only the value is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from harn_mcp_mock.redact.contexts import STRONG, NameJudge
from harn_mcp_mock.redact.gates import Facts, Text, lazy_regex
from harn_mcp_mock.redact.rules import Hit, credential_like, plausible_value

_Q = r"""(?P<q>\\*["'])"""  # the quote, with the backslashes that escape it (the same everywhere)
_NAME_KEY = r"(?P=q)(?i:name|key)(?P=q)[ \t]*:[ \t]*(?P=q)(?P<name>[^\"'\\\r\n<>{}]{1,120})(?P=q)"
_VALUE_KEY = r"(?P=q)(?i:value)(?P=q)[ \t]*:[ \t]*(?P=q)(?P<value>[^\"'\\\r\n]{1,1024})(?P=q)"
_SEP = r"[ \t]*,[ \t\r\n]*"
_JSON_NAME_FIRST = lazy_regex(r"(?=" + _Q + r"(?i:name|key)\\*[\"'])" + _NAME_KEY + _SEP + _VALUE_KEY)
_JSON_VALUE_FIRST = lazy_regex(r"(?=" + _Q + r"(?i:value)\\*[\"'])" + _VALUE_KEY + _SEP + _NAME_KEY)
_YAML = lazy_regex(
    r"(?m)^[ \t]*-?[ \t]*(?i:name|key):[ \t]*(?P<nq>[\"']?)(?P<name>[\w.:/-]{1,120})(?P=nq)[ \t]*\r?\n"
    r"[ \t]*(?i:value):[ \t]*(?:\"(?P<v1>[^\"\r\n]+)\"|'(?P<v2>[^'\r\n]+)'|(?P<v3>[^\s\"'#|>&*!%@`][^\s#]*))"
    r"[ \t]*(?:#.*)?$"
)


class NameValueRule:
    """A secret's value beside its name as two entries, ``name``/``key`` and ``value``, in text."""

    __slots__ = ("_judge",)

    name = "name-value-pair"
    contained = False
    run = 0
    min_len = 20
    _facts = Facts(min_len=20, fold_needles=("value",))

    def __init__(self, judge: NameJudge) -> None:
        self._judge = judge

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        if len(s) < self.min_len:
            return []
        folded = text.ascii_fold
        if "value" not in folded or ("name" not in folded and "key" not in folded):
            return []
        hits: list[Hit] = []
        if '"' in s or "'" in s:
            for regex in (_JSON_NAME_FIRST, _JSON_VALUE_FIRST):
                for m in regex.finditer(s):
                    hits += self._judged(m, "value")
        if "\n" in s:
            for m in _YAML.finditer(s):
                group = "v1" if m.group("v1") is not None else "v2" if m.group("v2") is not None else "v3"
                hits += self._judged(m, group)
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _judged(self, m: re.Match[str], group: str) -> list[Hit]:
        name = m.group("name").strip()
        strength = self._judge(name) or self._judge(re.split(r"[:/]", name)[-1])
        if not strength:
            return []
        value = m.group(group)
        if not (plausible_value(value) if strength == STRONG else credential_like(value)):
            return []
        return [(m.start(group), m.end(group), self.name)]


def name_value_rules(
    secret_name: Callable[[str], bool],
    allowed_name: Callable[[str], bool],
    needles: Sequence[str] | None,
) -> list[NameValueRule]:
    """The name/value pair rule for a policy whose key rules are ``secret_name`` (``allowed_name``
    the ``allow`` ones; none when there are no key rules, ``needles`` empty)."""
    if needles is not None and not needles:
        return []
    return [NameValueRule(NameJudge(secret_name, allowed_name, weak=True))]
