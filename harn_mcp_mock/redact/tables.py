"""A secret in a table row whose first cell names it (issue 37): Markdown's
``| API_KEY | Your key for the API | sk9Xq…  |``, as READMEs and runbooks list settings with an
example or a real value.

A row is a line starting with ``|``. Its first cell, one name, is judged as every context rule
judges one (:class:`~.contexts.NameJudge`); then each later cell that holds one word and nothing
else is a value, redacted when it looks like a credential (:func:`~.rules.credential_like`:
descriptions, types such as ``string``, defaults such as ``true`` or ``30s`` stay).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harn_mcp_mock.redact.contexts import NameJudge
from harn_mcp_mock.redact.gates import Facts, Text, lazy_regex
from harn_mcp_mock.redact.rules import Hit, credential_like

RULE = "table-row"

_NAME = lazy_regex(r"[ \t]*`?(?P<name>[A-Za-z_][\w.-]{0,79})`?[ \t]*\Z")
_CELL = lazy_regex(r"[ \t]*`?(?P<value>[^\s|`]{8,4096})`?[ \t]*\Z")
_ROW_MAX = 8192  # a longer line is no table row worth reading


class TableRowRule:
    """``| NAME | … | value |`` (see the module's docstring)."""

    __slots__ = ("_facts", "_judge")

    name = RULE
    contained = False
    run = 0
    min_len = 16

    def __init__(self, judge: NameJudge) -> None:
        self._judge = judge
        self._facts = Facts(min_len=self.min_len, needles=("|",))

    def __call__(self, text: Text) -> list[Hit]:
        s = text.s
        n = len(s)
        if n < self.min_len:
            return []
        hits: list[Hit] = []
        at = s.find("|")
        while at >= 0:
            line_start = s.rfind("\n", 0, at) + 1
            line_end = s.find("\n", at)
            line_end = n if line_end < 0 else line_end
            if not s[line_start:at].strip(" \t") and line_end - at <= _ROW_MAX:
                hits.extend(self._row(s, at, line_end))
            at = s.find("|", line_end)
        return hits

    def any(self, text: Text) -> bool:
        return bool(self(text))

    def _row(self, s: str, at: int, end: int) -> list[Hit]:
        """The values of the row whose first ``|`` is at ``at`` and whose line ends at ``end``."""
        bars = [at]
        i = s.find("|", at + 1, end)
        while i >= 0:
            if s[i - 1] != "\\":  # '\|' is a pipe inside a cell
                bars.append(i)
            i = s.find("|", i + 1, end)
        if len(bars) < 3 and not s[bars[-1] + 1 : end].strip():
            return []  # fewer than two cells
        bars.append(end)
        cells = [(bars[k] + 1, bars[k + 1]) for k in range(len(bars) - 1)]
        name = _NAME.match(s, *cells[0])
        if name is None or not self._judge(name["name"]):
            return []
        hits: list[Hit] = []
        for a, b in cells[1:]:
            value = _CELL.match(s, a, b)
            if value is not None and credential_like(value["value"]):
                hits.append((value.start("value"), value.end("value"), RULE))
        return hits


def table_rules(
    secret_name: Callable[[str], bool],
    allowed_name: Callable[[str], bool],
    needles: Sequence[str] | None,
) -> list[object]:
    """The rule for a policy whose key rules are ``secret_name`` (``needles`` as
    :func:`~.contexts.context_rules` takes them: ``()`` means no key rules, and no rule)."""
    if needles is not None and not needles:
        return []
    return [TableRowRule(NameJudge(secret_name, allowed_name, weak=True))]
