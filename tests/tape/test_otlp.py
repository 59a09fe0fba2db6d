"""A tape as OpenTelemetry spans: validated by the official OTLP protobuf schema
(``opentelemetry-proto``) and sent to an OTLP/HTTP receiver on loopback."""

from __future__ import annotations

import base64
import copy
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from typer.testing import CliRunner

from harn_mcp_mock.clock import PausedClock
from harn_mcp_mock.errors import ServerError
from harn_mcp_mock.tape import TapeWriter, load_tape
from harn_mcp_mock.tape.mcp import McpTapeObserver
from harn_mcp_mock.tape.otlp import export_otlp, tape_to_otlp

ROOT = Path(__file__).resolve().parents[2]
START_MS = 1_767_225_600_000


def parse(document: dict[str, Any]) -> ExportTraceServiceRequest:
    """Parse OTLP/JSON with the official schema. OTLP/JSON writes trace and span ids as hex, where
    protobuf's JSON mapping of bytes is base64 (the one difference the OTLP spec names), so the
    ids are re-encoded first; every other field must parse as it is, unknown ones refused."""
    doc = copy.deepcopy(document)
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.Parse(json.dumps(doc), ExportTraceServiceRequest(), ignore_unknown_fields=False)


def attrs(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        which = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, which)
    return out


def write_tape(path: Path) -> None:
    clock = PausedClock(START_MS)
    with TapeWriter(path, clock=clock, script_path="agent.py", argv=["agent.py"]) as writer:
        mcp = McpTapeObserver(writer, "weather")
        mcp.on_message(
            "client",
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        )
        mcp.on_message("server", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}})
        mcp.on_message("client", {"jsonrpc": "2.0", "method": "notifications/initialized"})
        mcp.on_message(
            "client",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "forecast", "arguments": {"city": "Oslo"}},
            },
        )
        mcp.mark_fault(2, {"fault": "slow-forecast", "kind": "latency"})
        clock.advance(1.5)
        mcp.on_message("server", {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "isError": True}})
        mcp.on_message(
            "client",
            {"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {"uri": "file:///a"}},
        )
        clock.advance(0.25)
        mcp.on_message(
            "server", {"jsonrpc": "2.0", "id": "r", "error": {"code": -32002, "message": "not found"}}
        )
        writer.record("clock_sleep", duration_ms=250)
        writer.record("file_write", path="out.txt", content_hash="ab" * 32, len_bytes=3)
        writer.record(
            "process_spawn", program="/usr/bin/git", args=["status"], cwd=".", exit_code=1, duration_ms=40
        )
        writer.record("llm_call", request_digest="cd" * 32, payloads={"response": "hi"})


@pytest.fixture
def tape_path(tmp_path: Path) -> Path:
    path = tmp_path / "run.tape"
    write_tape(path)
    return path


def test_a_tape_becomes_one_trace_that_the_official_schema_parses(tape_path: Path) -> None:
    document = tape_to_otlp(load_tape(tape_path))
    request = parse(document)
    (resource,) = request.resource_spans
    assert attrs_of(resource.resource.attributes)["service.name"] == "harn-mcp-mock"
    spans = list(resource.scope_spans[0].spans)
    root, *children = spans
    assert len(root.trace_id) == 16 and len(root.span_id) == 8 and root.parent_span_id == b""
    assert root.kind == Span.SPAN_KIND_INTERNAL and root.name == "harn run agent.py"
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert all(s.parent_span_id == root.span_id and len(s.span_id) == 8 for s in children)
    assert len({s.span_id for s in spans}) == len(spans)
    names = [s.name for s in children]
    assert names == [
        "initialize",
        "notifications/initialized",
        "tools/call forecast",
        "resources/read",
        "process git",
        "chat",
    ]
    init, note, call, read, process, chat = children

    assert init.kind == Span.SPAN_KIND_SERVER
    assert attrs(init) == {
        "mcp.method.name": "initialize",
        "mcp.session.id": attrs(root)["mcp.session.id"],
        "jsonrpc.request.id": "1",
        "mcp.protocol.version": "2025-11-25",
        "harn.tape.seq": 0,
        "harn.mcp.server": "weather",
    }
    assert note.start_time_unix_nano == note.end_time_unix_nano and "jsonrpc.request.id" not in attrs(note)

    # Virtual time is span time: the call took 1.5 virtual seconds, ending at the record's time.
    assert call.start_time_unix_nano == START_MS * 1_000_000
    assert call.end_time_unix_nano - call.start_time_unix_nano == 1_500_000_000
    call_attrs = attrs(call)
    assert (
        call_attrs["gen_ai.tool.name"] == "forecast" and call_attrs["gen_ai.operation.name"] == "execute_tool"
    )
    assert call_attrs["error.type"] == "tool_error" and call.status.code == Status.STATUS_CODE_ERROR
    (fault,) = call.events
    assert fault.name == "harn.fault" and fault.time_unix_nano == call.start_time_unix_nano
    assert attrs_of(fault.attributes) == {"harn.fault.id": "slow-forecast", "harn.fault.kind": "latency"}

    read_attrs = attrs(read)
    assert read_attrs["mcp.resource.uri"] == "file:///a" and read_attrs["jsonrpc.request.id"] == "r"
    assert read_attrs["error.type"] == "-32002" and read_attrs["rpc.response.status_code"] == "-32002"
    assert read.status.code == Status.STATUS_CODE_ERROR and read.status.message == "not found"

    assert attrs(process)["process.exit.code"] == 1 and process.status.code == Status.STATUS_CODE_ERROR
    assert process.end_time_unix_nano - process.start_time_unix_nano == 40_000_000
    assert attrs(chat)["gen_ai.operation.name"] == "chat"
    assert [e.name for e in root.events] == ["harn.clock_sleep", "harn.file_write"]
    assert root.start_time_unix_nano <= min(s.start_time_unix_nano for s in children)
    assert root.end_time_unix_nano >= max(s.end_time_unix_nano for s in children)
    # the same tape exports the same document
    assert tape_to_otlp(load_tape(tape_path)) == document


def attrs_of(values: Any) -> dict[str, Any]:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in values}


def test_a_world_run_exports_its_faults_from_the_report(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples" / "agent"))
    from scripted_agent import in_process

    from harn_mcp_mock.runner import run_episodes

    run_episodes(["bank"], in_process("good"), out=tmp_path / "run", tasks=["pay-rent"], faults=["flaky"])
    trial = tmp_path / "run" / "trials" / "bank" / "pay-rent" / "flaky" / "1"
    report = json.loads((trial / "report.json").read_text())
    assert report["faults_fired"], "the flaky profile fires on this seed"
    document = export_otlp(trial / "tape.ndjson", out=tmp_path / "trace.json", report=trial / "report.json")
    assert json.loads((tmp_path / "trace.json").read_text()) == document
    spans = list(parse(document).resource_spans[0].scope_spans[0].spans)
    faulted = [s for s in spans if any(e.name == "harn.fault" for e in s.events)]
    assert [attrs_of(s.events[0].attributes)["harn.fault.id"] for s in faulted] == [
        f["fault"] for f in report["faults_fired"]
    ]
    assert all(attrs(s)["mcp.session.id"] == "pay-rent.flaky.t1" for s in spans)
    assert all(s.name.startswith("tools/call ") for s in faulted)


class Receiver:
    """An OTLP/HTTP receiver on loopback (port 0) that parses every body with the schema."""

    def __init__(self, status: int = 200) -> None:
        self.bodies: list[tuple[str, str, ExportTraceServiceRequest]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.bodies.append((self.path, self.headers["Content-Type"], parse(json.loads(body))))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def test_the_cli_sends_the_trace_to_an_otlp_http_receiver(
    tape_path: Path, receiver: Receiver, tmp_path: Path
) -> None:
    from harn_mcp_mock.cli import apps

    out = tmp_path / "trace.json"
    args = ["test-bench", "export", str(tape_path), "--otlp", str(out), "--otlp-endpoint", receiver.url]
    result = CliRunner().invoke(apps.harn, args)
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote 7 spans to {out}\nsent 7 spans to {receiver.url}/v1/traces\n"
    ((path, content_type, request),) = receiver.bodies
    assert path == "/v1/traces" and content_type == "application/json"
    assert request == parse(json.loads(out.read_text()))
    assert [s.name for s in request.resource_spans[0].scope_spans[0].spans][2] == "notifications/initialized"


def test_a_refusing_or_absent_receiver_is_one_line_and_exit_4(tape_path: Path, tmp_path: Path) -> None:
    from harn_mcp_mock.cli import apps

    with Receiver(status=503) as refusing:
        with pytest.raises(ServerError, match="answered HTTP 503"):
            export_otlp(tape_path, endpoint=refusing.url + "/custom/path")
        assert refusing.bodies[0][0] == "/custom/path"  # a URL with a path is used as given
        url = refusing.url
    result = CliRunner().invoke(apps.harn, ["test-bench", "export", str(tape_path), "--otlp-endpoint", url])
    assert result.exit_code == 4
    assert (
        result.output.startswith("harn test-bench: error: ")
        and "cannot reach the OTLP receiver" in result.output
    )
    assert "Traceback" not in result.output
    for bad, message in (
        ([], "give --otlp OUT.json or --otlp-endpoint URL"),
        (["--otlp-endpoint", "ftp://x"], "is not an http(s) URL"),
    ):
        result = CliRunner().invoke(apps.harn, ["test-bench", "export", str(tape_path), *bad])
        assert result.exit_code == 2 and message in result.output
