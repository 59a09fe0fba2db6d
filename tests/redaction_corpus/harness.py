"""Plant the corpus in every channel the recorder sees and scan every byte it writes.

Three recordings go through the real :class:`~harn_mcp_mock.record.recorder.Recorder` (journal,
cassette, CAS sidecar blobs), each with its own redactor built as ``harn mcp mock record``
builds it (:meth:`RedactionPolicy.redactor` with the server's argv and env):

* ``env``: every secret is in the server's environment under its variable; the server then
  prints it everywhere, free-standing and in context;
* ``argv``: every secret is on the server's command line (``--flag value`` and
  ``--flag=value``), which the cassette's ``command`` field keeps (redacted); then printed
  everywhere, free-standing and in context;
* ``cold``: the redactor knows nothing; each secret travels under its name only (a JSON key,
  ``NAME=value`` text, an HTTP header), and free-standing only when its format tells.

The channels: tool-call arguments, text content, structuredContent, a JSON-RPC error, a log
notification, a resource's text and JSON text, a text over 4 KiB (a sidecar blob), a base64
resource blob over 4 KiB, and HTTP request headers (kept in the cassette's ``http`` entries,
as ``record --url`` keeps them). A secret leaks when its secret part (the password of a DSN,
the key of a connection string, the whole token otherwise) occurs in any written byte, raw,
JSON-escaped, URL-encoded or base64-encoded. A harmless value is a false positive when any
channel gives it back changed.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.jsonrpc import CLIENT, SERVER
from harn_mcp_mock.record.recorder import Recorder
from harn_mcp_mock.redact import RedactionPolicy, Redactor
from tests.redaction_corpus.corpus import Harmless, Secret

FILLER = "lorem ipsum dolor sit amet " * 156  # > 4 KiB: the message goes to a sidecar blob
EXIT = {"code": 0, "signal": None, "reason": "client-eof"}
SERVER_ENV = {"HOME": "/home/ada", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
_PEM_LINE = re.compile(r"^[A-Za-z0-9+/=]{16,}$")


def cores(secret: Secret) -> list[str]:
    """The parts of ``secret.value`` that must never be written."""
    v = secret.value
    if "-----BEGIN" in v:
        return [line for line in v.splitlines() if _PEM_LINE.match(line)]
    if v.startswith("PuTTY-User-Key-File"):
        lines = v.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("Private-Lines"))
        return [lines[at + 1], lines[-1].split(": ")[1]]
    for marker, end in (("AccountKey=", ";"), ("&sig=", None), ("Password=", ";"), ("password=", None)):
        if marker in v:
            rest = v.split(marker, 1)[1]
            return [rest.split(end, 1)[0] if end else rest]
    found = re.match(r"[a-z+]+://([^/:@]*):([^@/]+)@", v)
    if found:
        return [found[2]]
    found = re.match(r"https://([0-9a-f]{32})@", v)
    if found:
        return [found[1]]
    if "/webhook" in v or "hooks.slack.com" in v:
        return [v.rsplit("/", 1)[1] if "slack" in v or "discord" in v else v.split("webhookb2/", 1)[1]]
    if v.startswith("FlyV1 "):
        return [v[len("FlyV1 ") :]]
    return [v]


def forms(core: str) -> list[bytes]:
    """How ``core`` may travel: raw, JSON-escaped, URL-encoded and inside base64."""
    raw = core.encode()
    out = {raw, json.dumps(core)[1:-1].encode(), urllib.parse.quote(core, safe="").encode()}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        middle = encoded[4 if shift else 0 : -4]
        if len(middle) >= 12:
            out.add(middle.encode())
            out.add(middle.replace("+", "-").replace("/", "_").encode())
    return sorted(out)


def _blob(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def channel_messages(s: Secret, *, free: bool, seq: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(direction, message) planting ``s`` in every channel: in context always, free-standing
    (no name next to it) when ``free``."""
    v, k, env = s.value, s.key, s.env
    assign = f"{env}={v}"
    bare = f"the value is {v} ok" if free else assign
    rid = seq * 100
    args: dict[str, Any] = {k: v, "note": assign}
    if free:
        args["input"] = v
    yield (
        CLIENT,
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "lookup", "arguments": args},
        },
    )
    structured: dict[str, Any] = {"config": {k: v}}
    if free:
        structured["value"] = v
    yield (
        SERVER,
        {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {
                "content": [{"type": "text", "text": f"loaded {assign}"}, {"type": "text", "text": bare}],
                "structuredContent": structured,
                "isError": False,
            },
        },
    )
    yield (
        CLIENT,
        {
            "jsonrpc": "2.0",
            "id": rid + 1,
            "method": "tools/call",
            "params": {"name": "fail", "arguments": {}},
        },
    )
    yield (
        SERVER,
        {
            "jsonrpc": "2.0",
            "id": rid + 1,
            "error": {"code": -32602, "message": f"rejected {bare}", "data": {k: v, "detail": assign}},
        },
    )
    yield (
        SERVER,
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "logger": "config", "data": {"env": {env: v}, "line": bare}},
        },
    )
    yield (
        CLIENT,
        {"jsonrpc": "2.0", "id": rid + 2, "method": "resources/read", "params": {"uri": "file:///app/.env"}},
    )
    yield (
        SERVER,
        {
            "jsonrpc": "2.0",
            "id": rid + 2,
            "result": {
                "contents": [
                    {"uri": "file:///app/.env", "mimeType": "text/plain", "text": f"{assign}\n{bare}\n"},
                    {
                        "uri": "file:///app/config.json",
                        "mimeType": "application/json",
                        "text": json.dumps({k: v}),
                    },
                ]
            },
        },
    )
    yield (
        CLIENT,
        {"jsonrpc": "2.0", "id": rid + 3, "method": "resources/read", "params": {"uri": "file:///app/big"}},
    )
    yield (
        SERVER,
        {
            "jsonrpc": "2.0",
            "id": rid + 3,
            "result": {
                "contents": [
                    {
                        "uri": "file:///app/big.txt",
                        "mimeType": "text/plain",
                        "text": f"{FILLER}\n{assign}\n{bare}",
                    },
                    {
                        "uri": "file:///app/big.env",
                        "mimeType": "text/plain",
                        "blob": _blob(f"{FILLER}\n{assign}\n{bare}\n"),
                    },
                    {"uri": "file:///app/big.json", "blob": _blob(json.dumps({"pad": FILLER, k: v}))},
                ]
            },
        },
    )


def headers_for(s: Secret, *, free: bool) -> dict[str, str]:
    out = {
        "content-type": "application/json",
        s.key.replace("_", "-"): s.value,
        "x-config": f"{s.env}={s.value}",
    }
    if "\n" not in s.value:
        out["authorization"] = f"Bearer {s.value}"
        if free:
            out["x-forwarded-secret-ish"] = s.value
    return out


def record(
    folder: Path, name: str, planted: list[Secret], redactor: Redactor, argv: list[str], *, free: bool
) -> Path:
    """One recording through the real recorder; returns the cassette path."""
    cassette = folder / f"{name}.cassette.json"
    policy = redactor.policy
    recorder = Recorder(
        cassette,
        redactor,
        command=redactor.redact_argv(argv),
        policy_name=policy.name,
        policy_digest=policy.digest,
    )
    http: list[dict[str, Any]] = []
    for i, s in enumerate(planted):
        plant = free or s.tell == "format"
        for direction, message in channel_messages(s, free=plant, seq=i + 1):
            recorder.feed(direction, orjson.dumps(message) + b"\n")
        http.append(
            {"method": "POST", "status": 200, "headers": redactor.redact_message(headers_for(s, free=plant))}
        )
    recorder.finish(EXIT, {"http": http})
    # What `record --url` would have kept of the headers, also as a file of its own.
    (folder / f"{name}.headers.json").write_bytes(orjson.dumps(http))
    return cassette


def record_corpus(folder: Path, planted: list[Secret], policy: RedactionPolicy | None = None) -> None:
    """The three recordings (``env``, ``argv``, ``cold``) of ``planted`` into ``folder``."""
    policy = policy or RedactionPolicy.default()
    env = {**SERVER_ENV, **{s.env: s.value for s in planted}}
    record(folder, "env", planted, policy.redactor(argv=["srv"], env=env), ["srv"], free=True)
    argv = ["srv"]
    for i, s in enumerate(planted):
        argv += [s.flag, s.value] if i % 2 else [f"{s.flag}={s.value}"]
    argv2 = ["srv"]
    for i, s in enumerate(planted):
        argv2 += [f"{s.flag}={s.value}"] if i % 2 else [s.flag, s.value]
    record(folder, "argv", planted, policy.redactor(argv=argv, env=SERVER_ENV), argv, free=True)
    record(folder, "argv2", planted, policy.redactor(argv=argv2, env=SERVER_ENV), argv2, free=True)
    record(folder, "cold", planted, policy.redactor(argv=["srv"], env=SERVER_ENV), ["srv"], free=False)


def written_bytes(folder: Path) -> bytes:
    """Every byte written under ``folder`` (cassettes, journals, sidecar blobs, header files)."""
    return b"\n".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def leaked(folder: Path, planted: list[Secret]) -> list[str]:
    """The formats some form of whose secret part occurs in the bytes written under ``folder``."""
    data = written_bytes(folder)
    return [s.format for s in planted if any(f in data for core in cores(s) for f in forms(core))]


def harmless_messages(value: str) -> list[dict[str, Any]]:
    """``value`` in each channel, under neutral names."""
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get", "arguments": {"id": value, "q": f"find {value}"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "content": [
                    {"type": "text", "text": value},
                    {"type": "text", "text": f"Found item {value} in the index."},
                ],
                "structuredContent": {"items": [{"id": value, "ref": value}]},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32602, "message": f"unknown id {value}", "data": {"id": value}},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": f"processed {value}"},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {
                "contents": [
                    {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": f"ref: {value}\n"},
                    {
                        "uri": "file:///a.json",
                        "mimeType": "application/json",
                        "text": json.dumps({"id": value}),
                    },
                    {
                        "uri": "file:///b.txt",
                        "mimeType": "text/plain",
                        "blob": _blob(f"{FILLER}\nref {value}\n"),
                    },
                ]
            },
        },
        {"etag": value, "x-request-id": value, "link": f"<{value}>; rel=next"},
    ]


def false_positives(values: list[Harmless], policy: RedactionPolicy | None = None) -> list[Harmless]:
    """The harmless values some channel gives back changed (one redactor, like one session)."""
    policy = policy or RedactionPolicy.default()
    redactor = policy.redactor(argv=["srv", "--port", "8080"], env=SERVER_ENV)
    changed = []
    for h in values:
        if any(redactor.redact_message(m) != m for m in harmless_messages(h.value)):
            changed.append(h)
    return changed
