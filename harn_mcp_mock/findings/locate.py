"""Where a JSON pointer's value is in a file's text: line and column (1-based, in Unicode code
points), for SARIF regions and GitHub annotations.

:class:`JsonText` walks the raw text along the pointer only (every other value is skipped, not
parsed), so locating is linear in the bytes before the value. A string's escapes (``\\n``,
``\\"``, ``\\uXXXX`` and surrogate pairs) are honoured both when keys are compared and when an
offset *inside* a string value (an index into the decoded string) is mapped back to the raw
text. When the pointer goes further than the document, the deepest existing value is given
(a finding about something a newer listing added still points at its parent).

:class:`CassetteLocator` knows the cassette's layout: a message kept in the CAS sidecar
(``"blob"`` entries) is located in its blob file (``NAME.cassette.json.cas/<blake3>``), a
JSON blob by the rest of the pointer, a text blob by the offset in its text.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from pathlib import Path

from harn_mcp_mock.store.pointer import split

__all__ = ["CassetteLocator", "JsonText", "Position"]

_WS = " \t\r\n"


@dataclass(frozen=True, slots=True)
class Position:
    file: str
    line: int
    column: int
    exact: bool = True
    """False when only a parent of the pointed value (or the file's start) was found."""


class JsonText:
    """One JSON document's text, indexed for :meth:`offset` and :meth:`line_column`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[int] | None = None

    # --- lines ---------------------------------------------------------------------------

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset (``\\n``, ``\\r\\n`` and ``\\r`` end lines)."""
        if self._lines is None:
            starts = [0]
            text = self.text
            i = 0
            n = len(text)
            while i < n:
                c = text[i]
                if c == "\n" or (c == "\r" and (i + 1 == n or text[i + 1] != "\n")):
                    starts.append(i + 1)
                i += 1
            self._lines = starts
        line = bisect.bisect_right(self._lines, offset) - 1
        return line + 1, offset - self._lines[line] + 1

    # --- walking -------------------------------------------------------------------------

    def _ws(self, i: int) -> int:
        text = self.text
        n = len(text)
        while i < n and text[i] in _WS:
            i += 1
        return i

    def _string_end(self, i: int) -> int:
        """The offset just past the string that opens at ``i`` (a ``"``)."""
        text = self.text
        j = i + 1
        while True:
            quote = text.find('"', j)
            if quote < 0:
                raise ValueError("unterminated string")
            k = quote - 1
            while text[k] == "\\":
                k -= 1
            if (quote - 1 - k) % 2 == 0:  # an even run of backslashes: the quote is not escaped
                return quote + 1
            j = quote + 1

    def _skip(self, i: int) -> int:
        """The offset just past the value that starts at ``i``."""
        text = self.text
        c = text[i]
        if c == '"':
            return self._string_end(i)
        if c in "{[":
            depth = 0
            n = len(text)
            while i < n:
                c = text[i]
                if c == '"':
                    i = self._string_end(i)
                    continue
                if c in "{[":
                    depth += 1
                elif c in "}]":
                    depth -= 1
                    if depth == 0:
                        return i + 1
                i += 1
            raise ValueError("unterminated container")
        n = len(text)
        while i < n and text[i] not in ",]}" and text[i] not in _WS:
            i += 1
        return i

    def _child(self, i: int, segment: str) -> int | None:
        """The offset of the member ``segment`` of the container at ``i``, or None."""
        text = self.text
        if text[i] == "[":
            if not segment.isdigit() or (len(segment) > 1 and segment[0] == "0"):
                return None
            want = int(segment)
            j = self._ws(i + 1)
            if text[j] == "]":
                return None
            index = 0
            while True:
                if index == want:
                    return j
                j = self._ws(self._skip(j))
                if text[j] != ",":
                    return None
                j = self._ws(j + 1)
                index += 1
        if text[i] != "{":
            return None
        found: int | None = None
        j = self._ws(i + 1)
        if text[j] == "}":
            return None
        while True:
            end = self._string_end(j)
            key = json.loads(text[j:end])
            j = self._ws(end)
            j = self._ws(j + 1)  # past ':'
            if key == segment:
                found = j  # the last of duplicate keys wins, as JSON loaders read them
            j = self._ws(self._skip(j))
            if text[j] != ",":
                return found
            j = self._ws(j + 1)

    def offset(self, pointer: str) -> tuple[int, bool]:
        """(offset of the value at ``pointer``, whether it exists); when it does not, the offset
        of the deepest existing value on its way."""
        try:
            segments = split(pointer)
        except ValueError:
            return 0, False
        try:
            i = self._ws(0)
            if i >= len(self.text):
                return 0, False
            for segment in segments:
                child = self._child(i, segment)
                if child is None:
                    return i, False
                i = child
            return i, True
        except (ValueError, IndexError):  # not JSON after all
            return 0, False

    def inside(self, start: int, index: int) -> int:
        """The raw offset of character ``index`` of the decoded string that opens at ``start``."""
        text = self.text
        if start >= len(text) or text[start] != '"':
            return start
        i = start + 1
        decoded = 0
        while decoded < index:
            c = text[i]
            if c == '"':
                break
            if c == "\\":
                if text[i + 1] == "u":
                    code = int(text[i + 2 : i + 6], 16)
                    if 0xD800 <= code < 0xDC00 and text[i + 6 : i + 8] == "\\u":  # a surrogate pair
                        i += 12
                    else:
                        i += 6
                else:
                    i += 2
            else:
                i += 1
            decoded += 1
        return i


class CassetteLocator:
    """Positions of cassette pointers (``/messages/3/message/result/tools/0/description``) in
    the cassette file or, for a message kept in the CAS sidecar, in its blob file."""

    def __init__(self, path: Path, shown: str | None = None) -> None:
        self.path = path
        self.shown = shown if shown is not None else str(path)
        self._doc: JsonText | None = None
        self._entries: list[object] | None = None
        self._blobs: dict[str, JsonText] = {}

    def _text(self) -> JsonText:
        if self._doc is None:
            try:
                self._doc = JsonText(self.path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self._doc = JsonText("")
        return self._doc

    def _blob(self, segments: list[str]) -> tuple[str, str, str] | None:
        """(blake3 key, how it is kept, the pointer's rest) when ``/messages/N/...`` is in a blob."""
        if len(segments) < 2 or segments[0] != "messages" or not segments[1].isdigit():
            return None
        if self._entries is None:
            try:
                doc = json.loads(self._text().text)
            except ValueError:
                doc = None
            entries = doc.get("messages") if isinstance(doc, dict) else None
            self._entries = entries if isinstance(entries, list) else []
        index = int(segments[1])
        entry = self._entries[index] if index < len(self._entries) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("blob"), dict):
            return None
        blob = entry["blob"]
        key = blob.get("blake3")
        if not isinstance(key, str) or len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            return None
        rest = "".join("/" + s.replace("~", "~0").replace("/", "~1") for s in segments[3:])
        return key, str(blob.get("as", "json")), rest

    def position(self, pointer: str, index: int | None = None) -> Position:
        """Where ``pointer``'s value is (``index``: a character of that string value)."""
        try:
            segments = split(pointer)
        except ValueError:
            segments = []
        blob = self._blob(segments)
        if blob is not None:
            key, kept, rest = blob
            folder = self.path.with_name(self.path.name + ".cas")
            shown = f"{self.shown}.cas/{key}"
            text = self._blobs.get(key)
            if text is None:
                try:
                    text = JsonText((folder / key).read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    text = JsonText("")
                self._blobs[key] = text
            if kept == "text":
                offset = min(index or 0, len(text.text))
                line, column = text.line_column(offset)
                return Position(shown, line, column, bool(text.text))
            return self._at(text, rest, index, shown)
        return self._at(self._text(), pointer, index, self.shown)

    @staticmethod
    def _at(text: JsonText, pointer: str, index: int | None, shown: str) -> Position:
        offset, exact = text.offset(pointer)
        if exact and index:
            offset = text.inside(offset, index)
        line, column = text.line_column(offset)
        return Position(shown, line, column, exact)
