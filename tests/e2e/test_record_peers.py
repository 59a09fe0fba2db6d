"""Real peers we did not write, first directly and then through ``harn mcp mock record``.

The official ``mcp`` SDK client drives ``@modelcontextprotocol/server-everything`` and
``mcp-server-time`` with the scenario drivers of :mod:`tests.e2e.scenarios`, in both client modes
(``auto``: ``server/discover`` probe, then fallback; ``legacy``: classic ``initialize``). Each run
is made twice, directly and with the command wrapped as
``python -m harn_mcp_mock record --cassette F -- <server command>``, and:

* the two client-side results are equal (the proxy is transparent to a real client);
* the cassette holds every exchange, checked from the wire: the exact sequence of client
  requests (method and target of every one, against what the scenario did), each request
  answered exactly once with a response paired to it (``reply_to``, matching id, opposite
  direction, ``latency_ms >= 0``), the server-to-client requests (``roots/list``,
  ``sampling/createMessage``, ``elicitation/create``) nested inside the tool call that caused
  them and answered by the client, progress carrying the long-running call's token,
  ``tools/list_changed`` and log notifications, ``outputSchema``/``annotations``/
  ``structuredContent`` exactly as the client got them, the handshake summary, the exit, and no
  ``invalid`` line;
* the cassette validates against the shipped JSON Schema, and ``harn mcp mock show`` reads it.

Each (server, mode) pair is recorded once per module (the ``recording`` fixture) and the
checks are separate tests over it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import jsonschema  # type: ignore[import-untyped, unused-ignore]
import mcp_types as types
import pytest

import harn_mcp_mock
from harn_mcp_mock.cassette.model import Cassette, Message, cas_dir, journal_path, load_cassette
from tests.e2e import scenarios
from tests.e2e.peers import WAIT
from tests.e2e.scenarios import run_everything, run_time

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e/test_record_peers")]


HANDSHAKE_ERA = "2025-11-25"
MODERN_ERA = "2026-07-28"
METHOD_NOT_FOUND = -32601

Driver = Callable[..., Awaitable[dict[str, Any]]]
DRIVERS: dict[str, Driver] = {"everything": run_everything, "time": run_time}
CASES = [("everything", "auto"), ("everything", "legacy"), ("time", "auto"), ("time", "legacy")]


def record_argv(cassette: Path, command: list[str]) -> list[str]:
    # The server exits on its stdin's EOF; the shutdown timeout is only the hang guard (an SDK
    # server tearing down on a loaded machine can take longer than the 5 s default).
    return [
        *[sys.executable, "-m", "harn_mcp_mock", "record", "--cassette", str(cassette)],
        *["--shutdown-timeout", str(WAIT), "--", *command],
    ]


@dataclass(frozen=True)
class Recording:
    server: str
    """``everything`` or ``time``."""
    mode: str
    command: list[str]
    direct: dict[str, Any]
    """The client-side result of the scenario run against the server itself."""
    proxied: dict[str, Any]
    """The same scenario through the recording proxy."""
    path: Path
    cassette: Cassette
    stderr: str
    """What the recorder (and the server, whose stderr it inherits) wrote on stderr."""

    @property
    def messages(self) -> list[Message]:
        return self.cassette.messages

    def by_seq(self) -> dict[int, Message]:
        return {m.seq: m for m in self.messages}

    def answer_to(self, request: Message) -> Message:
        [answer] = [m for m in self.messages if m.reply_to == request.seq]
        return answer

    def requests(self, direction: str) -> list[Message]:
        return [m for m in self.messages if m.direction == direction and m.kind == "request"]

    def notifications(self, direction: str) -> list[Message]:
        return [m for m in self.messages if m.direction == direction and m.kind == "notification"]

    def handshake_methods(self) -> list[str]:
        if self.mode == "legacy":
            return ["initialize"]
        # auto: the SDK probes server/discover; server-everything (handshake era only) answers
        # -32601 and the client falls back to initialize; mcp-server-time serves discover.
        return ["server/discover", "initialize"] if self.server == "everything" else ["server/discover"]

    def step_requests(self) -> list[tuple[str, Message]]:
        """The scenario's steps (labelled by method first) paired, in order, with the recorded requests."""
        handshake = len(self.handshake_methods())
        after_handshake = self.requests("client")[handshake:]
        labels = list(self.proxied["steps"])
        assert len(after_handshake) == len(labels), (
            f"{len(labels)} scenario steps but {len(after_handshake)} client requests after the handshake"
        )
        return list(zip(labels, after_handshake, strict=True))

    def tool_calls(self) -> list[Message]:
        return [m for m in self.requests("client") if m.method == "tools/call"]

    def call(self, name: str) -> Message:
        [call] = [m for m in self.tool_calls() if m.message["params"]["name"] == name]
        return call


@pytest.fixture(scope="module", params=CASES, ids=[f"{server}-{mode}" for server, mode in CASES])
def recording(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """Run the scenario of one server in one client mode directly, then through the recorder."""
    server, mode = request.param
    command: list[str] = request.getfixturevalue(f"{server}_command")
    driver = DRIVERS[server]
    folder = tmp_path_factory.mktemp(f"record-{server}-{mode}")
    cassette = folder / f"{server}-{mode}.cassette.json"
    stderr_path = folder / "recorder.stderr"

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        direct = await driver(command, mode=mode)
        with stderr_path.open("w", encoding="utf-8") as errlog:
            proxied = await driver(record_argv(cassette, command), mode=mode, errlog=errlog)
        return direct, proxied

    direct, proxied = anyio.run(both)
    # The SDK closed the recorder's stdin and waited for it to exit: the recording is finished.
    assert not journal_path(cassette).exists(), "the journal was left behind"
    loaded = load_cassette(cassette)
    return Recording(
        server=server,
        mode=mode,
        command=command,
        direct=direct,
        proxied=proxied,
        path=cassette,
        cassette=loaded,
        stderr=stderr_path.read_text(encoding="utf-8"),
    )


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def _inside(rec: Recording, inner: Message, outer_request: Message) -> bool:
    """Whether ``inner`` was seen while ``outer_request`` was waiting for its response."""
    return outer_request.seq < inner.seq < rec.answer_to(outer_request).seq


# --- the client cannot tell the proxy is there ------------------------------------------------


def test_client_side_results_are_identical_direct_and_through_the_proxy(recording: Recording) -> None:
    assert recording.proxied == recording.direct
    assert recording.proxied["stream_errors"] == []


# --- the cassette holds every exchange --------------------------------------------------------


def test_every_line_is_a_valid_message_in_order_and_the_recording_is_complete(recording: Recording) -> None:
    messages = recording.messages
    assert recording.cassette.complete
    assert [m.seq for m in messages] == list(range(len(messages)))
    assert [m.seq for m in messages if m.invalid is not None] == []
    for msg in messages:
        assert isinstance(msg.message, dict), f"seq {msg.seq}: not one JSON-RPC object: {msg.message!r}"
        assert msg.message.get("jsonrpc") == "2.0", f"seq {msg.seq}: {msg.message}"
    # The recorder's summary line counts exactly what the cassette holds.
    counts = Counter(m.direction for m in messages)
    summary = f"({counts['client']} client, {counts['server']} server, 0 invalid messages; server exit 0, client-eof)"
    assert f"harn mcp mock record: wrote {recording.path} {summary}" in recording.stderr


def test_every_request_has_exactly_one_paired_response(recording: Recording) -> None:
    by_seq = recording.by_seq()
    answers: Counter[int] = Counter()
    for msg in recording.messages:
        if msg.kind in ("response", "error"):
            assert isinstance(msg.reply_to, int), f"seq {msg.seq}: response paired with nothing"
            request = by_seq[msg.reply_to]
            assert request.kind == "request", f"seq {msg.seq} answers seq {request.seq}, a {request.kind}"
            assert request.direction != msg.direction
            assert request.id == msg.id
            assert request.seq < msg.seq
            assert isinstance(msg.latency_ms, int | float) and not isinstance(msg.latency_ms, bool)
            assert msg.latency_ms >= 0
            answers[msg.reply_to] += 1
        else:
            assert msg.kind in ("request", "notification"), f"seq {msg.seq}: {msg.kind}"
            assert msg.reply_to is None and msg.latency_ms is None, f"seq {msg.seq}: {msg.kind} with reply_to"
    requests = [m.seq for m in recording.messages if m.kind == "request"]
    assert {seq: answers[seq] for seq in requests} == dict.fromkeys(requests, 1)
    assert sum(answers.values()) == len(requests)  # and no response answers a notification


def test_client_requests_are_exactly_what_the_scenario_did(recording: Recording) -> None:
    methods = [m.method for m in recording.requests("client")]
    steps = [label.split(" ")[0] for label in recording.proxied["steps"]]
    assert methods == recording.handshake_methods() + steps
    if recording.server == "everything":
        assert {
            "initialize",
            "ping",
            "logging/setLevel",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "prompts/list",
            "prompts/get",
            "completion/complete",
        } <= set(methods)
    else:
        assert {"tools/list", "tools/call"} <= set(methods)
        assert ("ping" in methods) is (recording.mode == "legacy")

    # Each request targets what the step says: the tool, prompt or resource in its label.
    for label, request in recording.step_requests():
        method, _, target = label.partition(" ")
        assert request.method == method, (label, request.message)
        params = request.message.get("params") or {}
        if method in ("tools/call", "prompts/get"):
            assert params["name"] == target.split(" ")[0], (label, params)
        elif method == "resources/read" and target != "static":
            assert params["uri"] == target, (label, params)


def test_each_step_got_the_kind_of_answer_the_client_saw(recording: Recording) -> None:
    for label, request in recording.step_requests():
        answer = recording.answer_to(request)
        seen = recording.proxied["steps"][label]
        if "error" in seen:  # a JSON-RPC error the client turned into an MCPError
            assert answer.kind == "error", label
            assert answer.message["error"]["code"] == seen["error"]["code"], label
        else:
            assert answer.kind == "response", (label, answer.message)


def test_tool_calls_in_the_cassette_match_the_scenario(recording: Recording) -> None:
    made = [label.split(" ")[1] for label in recording.proxied["steps"] if label.startswith("tools/call ")]
    recorded = [m.message["params"]["name"] for m in recording.tool_calls()]
    assert len(recorded) == len(made)
    assert recorded == made
    if recording.server == "everything":
        assert {
            "echo",
            "get-sum",
            "get-structured-content",
            "trigger-long-running-operation",
            "trigger-sampling-request",
            "trigger-elicitation-request",
            "get-roots-list",
        } <= set(recorded)
        arguments = {
            name: recording.call(name).message["params"]["arguments"] for name in ("echo", "get-sum")
        }
        assert arguments == {"echo": {"message": "hello from harn e2e ✓"}, "get-sum": {"a": 2, "b": 3.5}}
        echo = recording.answer_to(recording.call("echo")).message["result"]
        assert echo["content"] == recording.proxied["steps"]["tools/call echo"]["content"]
    else:
        assert Counter(recorded) == {"get_current_time": 1, "convert_time": 3, "no_such_tool": 1}
        # The error result (isError) and the protocol error, as the server sent them.
        bad_zone = [m for m in recording.tool_calls() if "Nowhere/Atlantis" in json.dumps(m.message)]
        assert recording.answer_to(bad_zone[0]).message["result"]["isError"] is True
        unknown = recording.answer_to(recording.call("no_such_tool")).message
        assert unknown["error"]["code"] == -32602


def test_tool_schemas_annotations_and_structured_content_are_recorded_as_sent(recording: Recording) -> None:
    [listing] = [m for m in recording.requests("client") if m.method == "tools/list"]
    tools = recording.answer_to(listing).message["result"]["tools"]
    # The wire listing is exactly what the client got (the SDK adds nothing, drops nothing).
    assert tools == recording.proxied["steps"]["tools/list"]["tools"]
    assert all("annotations" in tool for tool in tools)
    with_output_schema = {tool["name"] for tool in tools if "outputSchema" in tool}
    steps = recording.proxied["steps"]
    if recording.server == "everything":
        assert "get-structured-content" in with_output_schema
        result = recording.answer_to(recording.call("get-structured-content")).message["result"]
        assert result["structuredContent"] == steps["tools/call get-structured-content"]["structuredContent"]
        assert result["structuredContent"] == {
            "temperature": 36,
            "conditions": "Light rain / drizzle",
            "humidity": 82,
        }
    else:
        assert with_output_schema == {"get_current_time", "convert_time"}
        calls = [m for m in recording.tool_calls() if m.message["params"]["name"] != "no_such_tool"]
        labels = [label for label in steps if label.startswith("tools/call ") and "no_such_tool" not in label]
        for label, call in zip(labels, calls, strict=True):
            result = recording.answer_to(call).message["result"]
            rules = scenarios.TIME_NOW_RULES if "get_current_time" in label else scenarios.TIME_CONVERT_RULES
            if "structuredContent" in steps[label]:
                got = scenarios.normalise(result["structuredContent"], rules)
                assert got == steps[label]["structuredContent"], label


def test_progress_notifications_carry_the_long_running_calls_token(recording: Recording) -> None:
    progress = [m for m in recording.notifications("server") if m.method == "notifications/progress"]
    if recording.server == "time":
        assert progress == []
        return
    call = recording.call("trigger-long-running-operation")
    token = call.message["params"]["_meta"]["progressToken"]
    assert progress, "no progress notification was recorded"
    assert all(m.message["params"]["progressToken"] == token for m in progress)
    assert all(_inside(recording, m, call) for m in progress)
    seen = [
        [p["progress"], p.get("total"), p.get("message")] for p in (m.message["params"] for m in progress)
    ]
    assert seen == recording.proxied["progress"] == [[1, 3, None], [2, 3, None], [3, 3, None]]


def test_server_requests_are_recorded_and_answered_by_the_client(recording: Recording) -> None:
    server_requests = recording.requests("server")
    if recording.server == "time":
        assert server_requests == []
        return
    methods = Counter(m.method for m in server_requests)
    assert set(methods) == {"roots/list", "sampling/createMessage", "elicitation/create"}
    assert methods["sampling/createMessage"] == len(recording.proxied["sampling_requests"]) == 1
    assert methods["elicitation/create"] == len(recording.proxied["elicitation_requests"]) == 1
    assert methods["roots/list"] >= 1  # from get-roots-list, and maybe the server's own sync timer

    for request in server_requests:
        answer = recording.answer_to(request)
        assert answer.direction == "client" and answer.kind == "response", answer.message
        assert isinstance(answer.latency_ms, int | float) and answer.latency_ms >= 0
        result = answer.message["result"]
        if request.method == "roots/list":
            assert result == {"roots": [scenarios.dump(scenarios.FIXED_ROOT)]}
        elif request.method == "sampling/createMessage":
            assert _inside(recording, request, recording.call("trigger-sampling-request"))
            assert request.message["params"] == recording.proxied["sampling_requests"][0]
            assert result == scenarios.dump(scenarios.SAMPLING_REPLY)
        else:
            assert _inside(recording, request, recording.call("trigger-elicitation-request"))
            seen = dict(recording.proxied["elicitation_requests"][0])
            assert seen.pop("mode", "form") == "form"  # the SDK fills in the default mode
            assert request.message["params"] == seen
            assert result["action"] == "accept"
            assert result["content"] == {
                k: v for k, v in scenarios.ELICITATION_CONTENT.items() if k in result["content"]
            }
            assert result["content"]["name"] == "Ada Lovelace"
    # get-roots-list made the server ask for the roots while the call was in flight (unless the
    # server's own 350 ms sync had fetched them already).
    roots = [m for m in server_requests if m.method == "roots/list"]
    call = recording.call("get-roots-list")
    assert any(_inside(recording, m, call) for m in roots) or roots[0].seq < call.seq


def _normalised_logs(recording: Recording) -> list[dict[str, Any]]:
    logs = [m for m in recording.notifications("server") if m.method == "notifications/message"]
    entries = [
        scenarios._normalise_log(types.LoggingMessageNotificationParams.model_validate(m.message["params"]))
        for m in logs
    ]
    return scenarios._distinct_sorted(entries)


def test_server_notifications_are_all_recorded(recording: Recording) -> None:
    notifications = Counter(m.method for m in recording.notifications("server") if m.method)
    logs = notifications.pop("notifications/message", 0)
    # Every notification the client's message handler counted is on the wire, and nothing else.
    assert dict(notifications) == recording.proxied["notifications"]
    if recording.server == "everything":
        assert notifications["notifications/tools/list_changed"] >= 1
        assert logs >= 2  # the roots sync and the simulated-logging burst
        assert _normalised_logs(recording) == recording.proxied["logs"]
    else:
        assert logs == 0
    client_notifications = [m.method for m in recording.notifications("client")]
    expected = [] if recording.handshake_methods()[-1] == "server/discover" else ["notifications/initialized"]
    assert client_notifications == expected


def test_exit_command_and_redaction_policy_are_recorded(recording: Recording) -> None:
    meta = recording.cassette.meta
    assert meta["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}
    assert meta["transport"] == "stdio"
    assert meta["recorder"] == f"harn-mcp-mock {harn_mcp_mock.__version__}"
    assert meta["command"] == recording.command  # nothing in these commands is a secret
    assert meta["redaction"]["policy"] == "default"
    assert re.fullmatch(r"blake3:[0-9a-f]{64}", meta["redaction"]["digest"])
    # Nothing these sessions carry is a secret: the default policy must not redact any of it
    # (a false positive would make the cassette differ from the wire).
    assert meta["redaction"]["findings"] == {}
    assert b"[REDACTED" not in recording.path.read_bytes()


def test_handshake_summary_is_recorded(recording: Recording) -> None:
    server = recording.cassette.server
    got = recording.proxied
    assert server.get("capabilities") == got["server_capabilities"]
    if recording.server == "everything":
        assert server["handshake"] == "initialize"
        assert server["protocolVersion"] == got["protocol_version"] == HANDSHAKE_ERA
        assert server["instructions"] == got["instructions"]
        expected: list[dict[str, Any]] = [{"method": "initialize"}]
        if recording.mode == "auto":
            expected.insert(0, {"method": "server/discover", "error": METHOD_NOT_FOUND})
            [discover] = [m for m in recording.requests("client") if m.method == "server/discover"]
            assert recording.answer_to(discover).message["error"]["code"] == METHOD_NOT_FOUND
        assert server["attempts"] == expected
    elif recording.mode == "auto":
        assert server["handshake"] == "server/discover"
        assert got["protocol_version"] == MODERN_ERA
        assert MODERN_ERA in server["supportedVersions"]
        assert server["attempts"] == [{"method": "server/discover"}]
    else:
        assert server["handshake"] == "initialize"
        assert server["protocolVersion"] == got["protocol_version"] == HANDSHAKE_ERA
        assert server["attempts"] == [{"method": "initialize"}]
    # Who the server is, whichever handshake carried it (2026-07-28 puts it in the discover
    # result's `_meta`, under "io.modelcontextprotocol/serverInfo").
    assert server.get("serverInfo") == got["server_info"], "meta.server.serverInfo"


# --- the written cassette is valid and readable -----------------------------------------------


def _schema() -> dict[str, Any]:
    path = Path(harn_mcp_mock.__file__).parent / "cassette" / "schema.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def _blob_names(document: dict[str, Any]) -> Iterator[str]:
    for entry in document["messages"]:
        if "blob" in entry:
            yield entry["blob"]["blake3"]


def test_cassette_validates_against_the_shipped_schema(recording: Recording) -> None:
    schema = _schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    document = json.loads(recording.path.read_text(encoding="utf-8"))
    errors = sorted(validator_class(schema).iter_errors(document), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []
    # Large payloads (server-everything's instructions, tool list, docs) went to the sidecar; every
    # blob named is there, and nothing else is.
    names = set(_blob_names(document))
    sidecar = cas_dir(recording.path)
    stored = {p.name for p in sidecar.iterdir()} if sidecar.exists() else set()
    assert stored == names
    if recording.server == "everything":
        assert names, "server-everything's large messages should spill into the CAS sidecar"


def _harn() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / "harn"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from harn_mcp_mock.cli.main import harn_main; harn_main()"]


def test_show_reads_the_cassette_and_names_the_server(recording: Recording) -> None:
    base = [*_harn(), "mcp", "mock", "show", "--cassette", str(recording.path)]
    shown = subprocess.run(base, capture_output=True, text=True, timeout=WAIT)
    assert shown.returncode == 0, shown.stderr
    name = recording.proxied["server_info"]["name"]
    assert re.search(rf"^server\s+{re.escape(name)}\b", shown.stdout, re.MULTILINE), shown.stdout

    as_json = subprocess.run([*base, "--json"], capture_output=True, text=True, timeout=WAIT)
    assert as_json.returncode == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert summary["server"]["name"] == name
    assert summary["complete"] is True
    assert summary["messages"] == len(recording.messages)
    assert summary["invalid"] == 0
    assert summary["client_requests"] == dict(Counter(m.method for m in recording.requests("client")))
    made = Counter(
        label.split(" ")[1] for label in recording.proxied["steps"] if label.startswith("tools/call ")
    )
    assert summary["tool_calls"] == dict(made)
    assert summary["exit"] == {"code": 0, "signal": None, "reason": "client-eof"}
