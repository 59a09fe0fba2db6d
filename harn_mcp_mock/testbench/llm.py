"""The LLM axis: JSONL fixture replay and recording, with no provider SDK involved.

Fixture file (JSONL, one object per line, blank lines and ``#`` lines ignored)::

    {"response": {"content": "hello"}}
    {"request_digest": "3f1c...", "request": {"model": "m", "prompt": "hi"}, "response": {...}}

``response`` is required and is returned as is. ``request_digest`` (BLAKE3 hex of the request's
canonical JSON: sorted keys, compact, UTF-8; ``harn_mcp_mock.store.canonical.digest_json``) is optional; when present, replay
checks it. ``request`` is informative only. Record mode writes all three keys.

Matching: ``order`` (default) hands responses out in file order and fails if an entry's
digest, when present, differs; ``digest`` takes the first unused entry with the request's digest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from harn_mcp_mock.errors import CassetteFormatError, LlmFixtureError
from harn_mcp_mock.store.canonical import digest_json
from harn_mcp_mock.testbench import _guard

LlmRequest = dict[str, Any]
LlmResponse = dict[str, Any]
Provider = Callable[[LlmRequest], LlmResponse]
Match = Literal["order", "digest"]


def request_digest(request: LlmRequest) -> str:
    """BLAKE3 hex of the request's canonical JSON (the project's one notion of "same content")."""
    return digest_json(request)


def _load(path: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    with _guard.quiet(), _guard.REAL_OPEN(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                entry = json.loads(text)
            except json.JSONDecodeError as exc:
                raise CassetteFormatError(f"not JSON: {exc.msg}", path=path, where=str(lineno)) from None
            if not isinstance(entry, dict) or not isinstance(entry.get("response"), dict):
                raise CassetteFormatError(
                    'each line must be an object with a "response" object', path=path, where=str(lineno)
                )
            entries.append(entry)
    return entries


class LlmFixtures:
    """A queue of scripted responses (replay) or a recorder around a provider (record)."""

    def __init__(
        self,
        entries: list[dict[str, Any]] | None = None,
        *,
        match: Match = "order",
        record_to: Path | None = None,
        provider: Provider | None = None,
        source: str = "<memory>",
    ) -> None:
        if match not in ("order", "digest"):
            raise LlmFixtureError(f"unknown match mode {match!r} (valid: order, digest)")
        self.entries = list(entries or [])
        self.match = match
        self.record_to = record_to
        self.provider = provider
        self.source = source
        self.recorded: list[dict[str, Any]] = []
        self._used = [False] * len(self.entries)
        self._cursor = 0

    @classmethod
    def replay(cls, path: str | Path, *, match: Match = "order") -> LlmFixtures:
        return cls(_load(Path(path)), match=match, source=str(path))

    @classmethod
    def recording(cls, path: str | Path, provider: Provider | None = None) -> LlmFixtures:
        return cls(record_to=Path(path), provider=provider, source=str(path))

    @property
    def recording_mode(self) -> bool:
        return self.record_to is not None

    def next(self, request: LlmRequest, *, provider: Provider | None = None) -> LlmResponse:
        """The response for ``request``; never reaches a provider unless recording."""
        digest = request_digest(request)
        if self.recording_mode:
            call = provider or self.provider
            if call is None:
                raise LlmFixtureError(
                    "LLM record mode needs a provider: pass provider= to llm_call() or to record_llm()"
                )
            response = call(request)
            self.recorded.append({"request_digest": digest, "request": request, "response": response})
            return response
        if self.match == "digest":
            for i, entry in enumerate(self.entries):
                if not self._used[i] and entry.get("request_digest") == digest:
                    self._used[i] = True
                    return dict(entry["response"])
            raise LlmFixtureError(
                f"no LLM fixture left for request {digest} ({self.unused_count()} unused, none with that digest)",
                path=self.source,
            )
        if self._cursor >= len(self.entries):
            raise LlmFixtureError(
                f"no LLM fixture left: call #{self._cursor + 1} but the fixture holds {len(self.entries)} "
                "response(s); the testbench never falls through to a real provider",
                path=self.source,
            )
        entry = self.entries[self._cursor]
        expected = entry.get("request_digest")
        if expected is not None and expected != digest:
            raise LlmFixtureError(
                f"LLM call #{self._cursor + 1} diverged: fixture expects {expected}, script sent {digest}",
                path=self.source,
                where=str(self._cursor + 1),
            )
        self._used[self._cursor] = True
        self._cursor += 1
        return dict(entry["response"])

    def unused_count(self) -> int:
        return self._used.count(False)

    def save(self) -> Path | None:
        """Write the recorded JSONL (record mode); returns the path written."""
        if self.record_to is None:
            return None
        lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in self.recorded]
        with _guard.quiet(), _guard.REAL_OPEN(self.record_to, "w", encoding="utf-8") as fh:
            fh.writelines(lines)
        return self.record_to


def llm_call(request: LlmRequest, *, provider: Provider | None = None) -> LlmResponse:
    """The one LLM entry point scripts call.

    Under an active testbench: the next fixture (replay), or ``provider`` recorded (record), or an
    :class:`LlmFixtureError` when no LLM fixture is installed. Outside a testbench: ``provider``.
    """
    bench = _guard.active
    if bench is None:
        if provider is None:
            raise LlmFixtureError("llm_call() outside a testbench needs a provider")
        return provider(request)
    return bench._llm_call(request, provider)
