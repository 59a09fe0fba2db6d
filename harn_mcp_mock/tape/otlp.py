"""An event tape as OpenTelemetry spans: OTLP/JSON to a file or over OTLP/HTTP.

``harn test-bench export TAPE --otlp OUT.json`` (or ``--otlp-endpoint URL``). One trace per
tape: a root span for the run, and a child span per MCP exchange, LLM call and subprocess, named
and attributed after the OpenTelemetry semantic conventions for MCP and GenAI (development
status; ``docs/tape.md`` lists the attributes):

- an MCP request is a span ``{mcp.method.name} {target}`` (the tool or prompt name) with
  ``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.session.id``, ``gen_ai.tool.name`` and
  ``gen_ai.operation.name: execute_tool`` for ``tools/call``, ``gen_ai.prompt.name``,
  ``mcp.resource.uri``, ``mcp.protocol.version``; an error answer sets ``error.type`` and
  ``rpc.response.status_code`` to the JSON-RPC code and the span status to ERROR; a tool result
  with ``isError`` sets ``error.type: tool_error``. A request from the client is a SERVER span
  (the tape is written beside the server), one from the server (sampling, elicitation, roots) a
  CLIENT span; a notification is a zero-length span;
- an injected fault is a span event ``harn.fault`` (``harn.fault.id``, ``harn.fault.kind``), from
  the record's ``fault`` or, for a world's tape, from the world's report;
- virtual time is span time: a record's ``virtual_time_ms`` is when the exchange ended, and it
  started ``latency_ms`` earlier; file writes, deletes and sleeps are events of the root span.

Ids are derived from the tape's header and record numbers with BLAKE3, so the same tape
exports the same bytes. Pure standard library besides the tape loader (``urllib`` for HTTP).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from harn_mcp_mock._version import __version__
from harn_mcp_mock.errors import HarnError, ServerError, UsageError
from harn_mcp_mock.store import canonical_bytes, digest
from harn_mcp_mock.tape.model import Tape, TapeRecord, load_tape

__all__ = [
    "OTLP_TRACES_PATH",
    "SPAN_KIND",
    "export_otlp",
    "post_otlp",
    "span_names",
    "tape_to_otlp",
    "traces_url",
]

OTLP_TRACES_PATH: Final = "/v1/traces"
SCOPE_NAME: Final = "harn_mcp_mock.tape.otlp"
SPAN_KIND: Final = {"internal": 1, "server": 2, "client": 3}
"""``Span.SpanKind`` numbers (OTLP/JSON writes enums as integers)."""
STATUS_ERROR: Final = 2
ROOT_EVENT_KINDS: Final = frozenset({"clock_sleep", "file_write", "file_delete"})


def _id(seed: str, length: int) -> str:
    """A hex id of ``length`` bytes: BLAKE3 of ``seed`` (never all zero, which OTLP forbids)."""
    text = digest(seed.encode())[: 2 * length]
    return text if text.strip("0") else "1".rjust(2 * length, "0")


def _nanos(ms: float) -> str:
    """Unix milliseconds as OTLP's uint64 nanoseconds, written as a decimal string (the whole
    milliseconds in integers: a float of 1.7e18 nanoseconds would be off by tens)."""
    whole = math.floor(ms)
    return str(whole * 1_000_000 + round((ms - whole) * 1_000_000))


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(pairs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None]


def _message(record: TapeRecord, name: str) -> dict[str, Any] | None:
    """The JSON-RPC message in payload ``name``, or None when absent or unreadable."""
    if name not in record.fields:
        return None
    try:
        message = json.loads(record.payload(name))
    except (HarnError, KeyError, ValueError):
        return None
    return message if isinstance(message, dict) else None


def _session_id(tape: Tape) -> str:
    """The run id a world's tape was started with, else a digest of the header."""
    argv = tape.header.get("argv")
    if isinstance(argv, list) and "--run-id" in argv:
        index = argv.index("--run-id")
        if index + 1 < len(argv):
            return str(argv[index + 1])
    return digest(canonical_bytes(tape.header))[:32]


def _faults_from_report(tape: Tape, report: Mapping[str, Any] | None) -> dict[int, dict[str, Any]]:
    """seq of a ``tools/call`` record -> the fault the world fired on it (matched by call order,
    when the tape and the report have the same number of tool calls)."""
    if not report:
        return {}
    fired = {f.get("call"): f for f in report.get("faults_fired") or () if isinstance(f, dict)}
    calls = report.get("calls") or []
    records = [r for r in tape.records if r.kind == "mcp_json_rpc" and r.fields.get("method") == "tools/call"]
    if not fired or len(records) != len(calls):
        return {}
    out = {}
    for index, record in enumerate(records):
        fault = fired.get(index)
        if fault is not None:
            out[record.seq] = {"id": fault.get("fault"), "kind": fault.get("kind")}
    return out


def _mcp_span(
    record: TapeRecord, trace_id: str, parent: str, session: str, fault: Mapping[str, Any] | None
) -> dict[str, Any]:
    fields = record.fields
    method = fields.get("method") or "unknown"
    notification = bool(fields.get("notification"))
    request = _message(record, "payload" if notification else "request") or {}
    response = _message(record, "response")
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    assert isinstance(params, dict)
    attributes: dict[str, Any] = {"mcp.method.name": method, "mcp.session.id": session}
    target = None
    if "id" in request and request["id"] is not None:
        attributes["jsonrpc.request.id"] = str(request["id"])
    if method == "tools/call" and isinstance(params.get("name"), str):
        target = params["name"]
        attributes["gen_ai.tool.name"] = target
        attributes["gen_ai.operation.name"] = "execute_tool"
    elif method == "prompts/get" and isinstance(params.get("name"), str):
        target = params["name"]
        attributes["gen_ai.prompt.name"] = target
    if isinstance(params.get("uri"), str):
        attributes["mcp.resource.uri"] = params["uri"]
    if method == "initialize":
        version = (response or {}).get("result", {}).get("protocolVersion") or params.get("protocolVersion")
        attributes["mcp.protocol.version"] = version
    attributes["harn.tape.seq"] = record.seq
    attributes["harn.mcp.server"] = fields.get("server")
    status: dict[str, Any] = {}
    error = (response or {}).get("error")
    if isinstance(error, dict):
        code = error.get("code")
        attributes["error.type"] = str(code)
        attributes["rpc.response.status_code"] = str(code)
        status = {"code": STATUS_ERROR, "message": str(error.get("message", ""))}
    elif isinstance((response or {}).get("result"), dict) and response and response["result"].get("isError"):
        attributes["error.type"] = "tool_error"
        status = {"code": STATUS_ERROR, "message": "the tool returned isError: true"}
    elif fields.get("unanswered"):
        attributes["error.type"] = "unanswered"
        status = {"code": STATUS_ERROR, "message": "the request was never answered"}
    end_ms = float(record.virtual_time_ms)
    latency = fields.get("latency_ms")
    start_ms = end_ms - float(latency) if isinstance(latency, (int, float)) and not notification else end_ms
    kind = "server" if fields.get("direction") == "client->server" else "client"
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": _id(f"{trace_id}/{record.seq}", 8),
        "parentSpanId": parent,
        "name": f"{method} {target}" if target else method,
        "kind": SPAN_KIND[kind],
        "startTimeUnixNano": _nanos(start_ms),
        "endTimeUnixNano": _nanos(end_ms),
        "attributes": _attributes(attributes),
    }
    fault = fields.get("fault") if isinstance(fields.get("fault"), dict) else fault
    if fault:
        span["events"] = [
            {
                "timeUnixNano": _nanos(start_ms),
                "name": "harn.fault",
                "attributes": _attributes(
                    {"harn.fault.id": fault.get("id"), "harn.fault.kind": fault.get("kind")}
                ),
            }
        ]
    if status:
        span["status"] = status
    return span


def _other_span(record: TapeRecord, trace_id: str, parent: str) -> dict[str, Any] | None:
    fields = record.fields
    end_ms = float(record.virtual_time_ms)
    attributes: dict[str, Any]
    if record.kind == "llm_call":
        name, attributes, start_ms = "chat", {"gen_ai.operation.name": "chat"}, end_ms
    elif record.kind == "process_spawn":
        duration = fields.get("duration_ms")
        start_ms = end_ms - float(duration) if isinstance(duration, (int, float)) else end_ms
        program = str(fields.get("program") or "process")
        name = f"process {Path(program).name}"
        args = fields.get("args")
        attributes = {
            "process.executable.name": Path(program).name,
            "process.command_args": " ".join(str(a) for a in args) if isinstance(args, list) else None,
            "process.exit.code": fields.get("exit_code"),
        }
    else:
        return None
    attributes["harn.tape.seq"] = record.seq
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": _id(f"{trace_id}/{record.seq}", 8),
        "parentSpanId": parent,
        "name": name,
        "kind": SPAN_KIND["client"],
        "startTimeUnixNano": _nanos(start_ms),
        "endTimeUnixNano": _nanos(end_ms),
        "attributes": _attributes(attributes),
    }
    code = fields.get("exit_code")
    if record.kind == "process_spawn" and isinstance(code, int) and code != 0:
        span["status"] = {"code": STATUS_ERROR, "message": f"exit code {code}"}
    return span


def _root_event(record: TapeRecord) -> dict[str, Any]:
    keep = {
        k: v for k, v in record.fields.items() if k in ("path", "duration_ms", "len_bytes", "content_hash")
    }
    return {
        "timeUnixNano": _nanos(record.virtual_time_ms),
        "name": f"harn.{record.kind}",
        "attributes": _attributes({f"harn.{k}": v for k, v in keep.items()}),
    }


def tape_to_otlp(
    tape: Tape,
    *,
    report: Mapping[str, Any] | None = None,
    service_name: str = "harn-mcp-mock",
    session_id: str | None = None,
) -> dict[str, Any]:
    """The tape as an OTLP/JSON ``ExportTraceServiceRequest`` document (one trace).

    ``report``: the world's report (``--report``) for a world's tape, whose fired faults become
    span events. ``session_id``: ``mcp.session.id`` (default: the run id in the tape's header).
    """
    header_digest = digest(canonical_bytes(tape.header))
    trace_id = _id(f"trace/{header_digest}", 16)
    root_id = _id(f"{trace_id}/root", 8)
    session = session_id or _session_id(tape)
    faults = _faults_from_report(tape, report)
    spans: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    started = tape.header.get("started_at_unix_ms")
    first = min([r.virtual_time_ms for r in tape.records] or [0])
    begin = float(started) if isinstance(started, int) and started <= first else float(first)
    end = begin
    for record in tape.records:
        if record.kind == "mcp_json_rpc":
            span: dict[str, Any] | None = _mcp_span(
                record, trace_id, root_id, session, faults.get(record.seq)
            )
        elif record.kind in ROOT_EVENT_KINDS:
            events.append(_root_event(record))
            span = None
        else:
            span = _other_span(record, trace_id, root_id)
        if span is not None:
            spans.append(span)
            begin = min(begin, int(span["startTimeUnixNano"]) // 1_000_000)
        end = max(end, float(record.virtual_time_ms))
    script = tape.header.get("script_path")
    root: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": root_id,
        "name": f"harn run {Path(str(script)).name}" if script else "harn run",
        "kind": SPAN_KIND["internal"],
        "startTimeUnixNano": _nanos(begin),
        "endTimeUnixNano": _nanos(end),
        "attributes": _attributes(
            {
                "mcp.session.id": session,
                "harn.tape.records": len(tape.records),
                "harn.tape.argv": " ".join(str(a) for a in tape.header.get("argv") or ()),
            }
        ),
    }
    if events:
        root["events"] = events
    resource = _attributes({"service.name": service_name, "service.version": __version__})
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [
                    {"scope": {"name": SCOPE_NAME, "version": __version__}, "spans": [root, *spans]}
                ],
            }
        ]
    }


def traces_url(endpoint: str) -> str:
    """``endpoint`` with OTLP/HTTP's ``/v1/traces`` when it names only a host (as
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` does); a URL with a path is used as given."""
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{endpoint!r} is not an http(s) URL", where="--otlp-endpoint")
    return endpoint if parts.path not in ("", "/") else endpoint.rstrip("/") + OTLP_TRACES_PATH


def post_otlp(document: Mapping[str, Any], endpoint: str, *, timeout: float = 10.0) -> int:
    """POST the document to an OTLP/HTTP receiver as JSON; returns the HTTP status (2xx).

    Raises :class:`ServerError` (exit 4) when the receiver cannot be reached or refuses."""
    import urllib.error
    import urllib.request

    url = traces_url(endpoint)
    body = json.dumps(document, separators=(",", ":")).encode()
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        raise ServerError(f"the OTLP receiver answered HTTP {exc.code} {exc.reason}", where=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServerError(f"cannot reach the OTLP receiver: {reason}", where=url) from None


def export_otlp(
    tape_path: str | Path,
    *,
    out: str | Path | None = None,
    endpoint: str | None = None,
    report: str | Path | None = None,
    timeout: float = 10.0,
) -> dict[str, Any]:
    """Load the tape, convert it, write it to ``out`` and/or send it to ``endpoint``."""
    if out is None and endpoint is None:
        raise UsageError("give --otlp OUT.json or --otlp-endpoint URL (or both)", where="export")
    if endpoint is not None:
        traces_url(endpoint)  # a bad URL is refused before any work
    tape = load_tape(tape_path)
    report_doc = None
    if report is not None:
        try:
            report_doc = json.loads(Path(report).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(
                f"cannot read it: {exc.strerror or exc}", path=report, where="--report"
            ) from None
        except ValueError as exc:
            raise UsageError(f"not valid JSON ({exc})", path=report, where="--report") from None
        if not isinstance(report_doc, dict) or report_doc.get("format") != "harn-mcp-mock/world-report":
            raise UsageError("not a world report (format harn-mcp-mock/world-report)", path=report)
    document = tape_to_otlp(tape, report=report_doc)
    if out is not None:
        from harn_mcp_mock.store.cas import atomic_write

        atomic_write(Path(out), json.dumps(document, indent=1).encode() + b"\n")
    if endpoint is not None:
        post_otlp(document, endpoint, timeout=timeout)
    return document


def span_names(document: Mapping[str, Any]) -> Sequence[str]:
    """The span names of an OTLP/JSON document, in order (for tests and summaries)."""
    return [s["name"] for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
