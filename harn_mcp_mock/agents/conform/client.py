"""A small HTTP client for checking a Harness from outside: JSON requests, bounded SSE reads.

Built on ``httpx2`` (imported here, inside this subpackage only, never on the replay or world
start-up path). Every call is bounded: requests by ``timeout``, SSE reads by a monotonic deadline,
task polling by a monotonic deadline with a small backoff. The API key is sent only in the
``Authorization`` header and is never part of a :class:`Reply`'s ``describe()``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2
import orjson

from harn_mcp_mock.agents import PROTOCOL_VERSION, VERSION_HEADER
from harn_mcp_mock.errors import HarnError

__all__ = ["ConformClient", "ConnectionFailed", "Reply", "SseFrame", "SseRead"]

#: Sentinel: send the default header (the supported version, the configured key).
DEFAULT = "\x00default"


class ConnectionFailed(HarnError):
    """The Harness could not be reached at all (exit 2): one line, never a traceback."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Reply:
    """One HTTP response: status, headers (lower-case names), raw text and parsed JSON (or None)."""

    method: str
    path: str
    status: int
    headers: Mapping[str, str]
    text: str
    json: Any

    @property
    def error_code(self) -> str | None:
        """``error.code`` when the body is the spec's error envelope."""
        if isinstance(self.json, Mapping) and isinstance(self.json.get("error"), Mapping):
            code = self.json["error"].get("code")
            return code if isinstance(code, str) else None
        return None

    def describe(self) -> str:
        """``POST /v1/tasks -> 409 idempotency_key_reused`` (for one-line reasons)."""
        code = self.error_code
        return f"{self.method} {self.path} -> {self.status}" + (f" {code}" if code else "")

    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class SseFrame:
    """One SSE frame: its fields (``id``, ``event``, ``data``; ``data`` lines joined by newlines)."""

    fields: Mapping[str, str]

    def get(self, name: str) -> str | None:
        return self.fields.get(name)


@dataclass(slots=True)
class SseRead:
    """What a bounded SSE read saw: the HTTP reply head, the frames, and how it ended."""

    status: int
    content_type: str
    frames: list[SseFrame] = field(default_factory=list)
    closed: bool = False  # the server ended the stream (not our deadline or frame limit)
    body: str = ""  # the body when the answer was not an event stream


class ConformClient:
    """``base_url`` + ``api_key``; one ``httpx2.Client`` per instance (make one per thread)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self._http = httpx2.Client(timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ConformClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def clone(self) -> ConformClient:
        return ConformClient(self.base_url, self.api_key, timeout=self.timeout)

    def headers(
        self,
        *,
        version: str | None = DEFAULT,
        auth: str | None = DEFAULT,
        extra: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Request headers; ``version``/``auth`` None leaves the header out, a string overrides it
        (``auth`` is the whole header value, e.g. ``"Bearer other"``)."""
        out: dict[str, str] = {"Accept": "application/json"}
        if version is not None:
            out[VERSION_HEADER] = PROTOCOL_VERSION if version == DEFAULT else version
        if auth is not None:
            out["Authorization"] = f"Bearer {self.api_key}" if auth == DEFAULT else auth
        out.update(extra or {})
        return out

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        raw_body: bytes | None = None,
        version: str | None = DEFAULT,
        auth: str | None = DEFAULT,
        extra: Mapping[str, str] | None = None,
    ) -> Reply:
        headers = self.headers(version=version, auth=auth, extra=extra)
        content: bytes | None = raw_body
        if body is not None:
            content = orjson.dumps(body)
        if content is not None:
            headers["Content-Type"] = "application/json"
        try:
            response = self._http.request(method, self.base_url + path, headers=headers, content=content)
        except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
            raise ConnectionFailed(f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}") from None
        try:
            parsed: Any = orjson.loads(response.content) if response.content else None
        except orjson.JSONDecodeError:
            parsed = None
        return Reply(
            method=method,
            path=path,
            status=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            text=response.text,
            json=parsed,
        )

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, body=body, **kw)

    def stream(
        self,
        path: str,
        *,
        last_event_id: str | None = None,
        max_frames: int | None = None,
        timeout: float = 5.0,
    ) -> SseRead:
        """Read an SSE stream until the server closes it, ``max_frames`` event frames arrived, or
        ``timeout`` seconds passed (a monotonic deadline; each read also times out)."""
        extra = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            extra["Last-Event-ID"] = last_event_id
        headers = self.headers(extra=extra)
        deadline = time.monotonic() + timeout  # allow-wall-clock: bounds a read of a remote stream
        read_timeout = httpx2.Timeout(self.timeout, read=timeout)
        try:
            with self._http.stream("GET", self.base_url + path, headers=headers, timeout=read_timeout) as r:
                content_type = r.headers.get("content-type", "")
                out = SseRead(status=r.status_code, content_type=content_type)
                if not content_type.startswith("text/event-stream"):
                    out.body = r.read().decode("utf-8", "replace")
                    out.closed = True
                    return out
                try:
                    for frame in _frames(r.iter_lines()):
                        out.frames.append(frame)
                        if max_frames is not None and len(out.frames) >= max_frames:
                            return out
                        if time.monotonic() > deadline:  # allow-wall-clock: bounded stream read
                            return out
                    out.closed = True
                except httpx2.ReadTimeout:
                    pass  # the server kept the stream open and silent: not closed
                return out
        except httpx2.ReadTimeout:
            return SseRead(status=0, content_type="")
        except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
            raise ConnectionFailed(f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}") from None

    def wait_terminal(self, task_id: str, *, timeout: float, seen: list[str] | None = None) -> Reply:
        """GET the task until its status is terminal or ``timeout`` seconds pass (monotonic
        deadline, backoff 20 ms doubling to 250 ms). Returns the last reply; appends every status
        observed to ``seen``."""
        from harn_mcp_mock.agents.lifecycle import is_terminal

        deadline = time.monotonic() + timeout  # allow-wall-clock: bounded polling of a remote server
        delay = 0.02
        while True:
            reply = self.get(f"/v1/tasks/{task_id}")
            status = reply.json.get("status") if isinstance(reply.json, Mapping) else None
            if isinstance(status, str) and seen is not None and (not seen or seen[-1] != status):
                seen.append(status)
            if not reply.ok() or (isinstance(status, str) and is_terminal(status)):
                return reply
            remaining = deadline - time.monotonic()  # allow-wall-clock: bounded polling
            if remaining <= 0:
                return reply
            time.sleep(min(delay, remaining))  # allow-wall-clock: backoff between polls of a remote server
            delay = min(delay * 2, 0.25)


def _frames(lines: Iterator[str]) -> Iterator[SseFrame]:
    """SSE frames from lines (comments skipped; ``data`` lines joined with newlines)."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if fields:
                yield SseFrame(dict(fields))
                fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data" and "data" in fields:
            fields["data"] += "\n" + value
        else:
            fields[name] = value
    if fields:
        yield SseFrame(dict(fields))
