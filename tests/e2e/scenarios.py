"""Client-side scenario drivers for the end-to-end tests.

Each driver launches an MCP server command over stdio with the official ``mcp`` SDK client,
walks a fixed script of requests, and returns a JSON-able ``dict`` of what the *client* saw:
every result as ``model_dump(mode="json", by_alias=True, exclude_none=True)``, plus the
server-to-client traffic the client's callbacks observed (progress, sampling, elicitation,
roots, log messages, other notifications).

The same driver can be pointed at a real server or at our recording proxy wrapped around it
(``harn mcp mock record --cassette F -- <server command>``), and the two dicts compared with
``==``. For that, values that differ between two honest runs are normalised by
:func:`normalise` with the rules below; nothing else is touched.

What is normalised, and why
---------------------------
server-everything (:func:`run_everything`, rules :data:`EVERYTHING_RULES` and the logic in
:func:`_normalise_log`):

* ``created at <time>``: the dynamic text/blob resources (and the prompt that embeds one)
  stamp ``new Date().toLocaleTimeString()`` into their text. Blobs are base64: they are
  decoded, normalised and re-encoded, so the shape of the result is kept.
* Simulated log messages (``toggle-simulated-logging``) pick a random level, so their
  level becomes ``<random>`` and their text ``<simulated log message>``.
* Log messages are reported as a sorted list of distinct messages, not a sequence: the
  server also sends them from timers (roots sync 350 ms after ``initialized``, the 5 s
  simulated-logging interval), so how many arrive depends on timing.
* ``roots/list`` requests are reported as ``roots_requested: bool``: the server asks both from
  its post-initialize timer and from ``get-roots-list``; one or two requests arrive depending
  on timing, at least one always does.

mcp-server-time (:func:`run_time`; the server is started with ``--local-timezone UTC``):

* ``get_current_time`` reports the current time: the whole ISO date-time becomes ``<now>``
  and the weekday ``<weekday>``.
* ``convert_time`` stamps today's date on the converted times: the date part becomes
  ``<date>`` and the weekday ``<weekday>``; the times and offsets are kept (the zones used,
  UTC, Asia/Kolkata and Asia/Tokyo, have no daylight saving time, so they are constant).

Ids (request ids, progress tokens) never appear in the results: the SDK hides them.

Every ``await`` runs under one ``anyio.fail_after(time_limit)`` that also covers the server's
start and shutdown.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import anyio
import mcp_types as types
from jsonschema import validate as validate_json  # type: ignore[import-untyped, unused-ignore]
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

__all__ = [
    "ELICITATION_CONTENT",
    "EVERYTHING_RULES",
    "FIXED_ROOT",
    "SAMPLING_REPLY",
    "SCENARIO_TIMEOUT_S",
    "TIME_CONVERT_RULES",
    "TIME_NOW_RULES",
    "Rule",
    "dump",
    "normalise",
    "run_everything",
    "run_time",
    "server_parameters",
]

SCENARIO_TIMEOUT_S = 30.0
"""Bound on one whole scenario: server start, every request, and shutdown."""

BASE_SERVER_ENV: Mapping[str, str] = {"TZ": "UTC", "NO_COLOR": "1"}
"""Added to the SDK's default inherited environment (PATH, HOME, ...) for every server."""

# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """Replace every match of ``pattern`` in every string (and decoded base64 blob) with ``repl``."""

    pattern: re.Pattern[str]
    repl: str

    def apply(self, text: str) -> str:
        return self.pattern.sub(self.repl, text)


def _rule(pattern: str, repl: str) -> Rule:
    return Rule(re.compile(pattern), repl)


_WEEKDAY = _rule(r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b", "<weekday>")

EVERYTHING_RULES: tuple[Rule, ...] = (
    # "Resource 7: This is a plaintext resource created at 3:17:34 PM" (locale-dependent format).
    _rule(r"(created at )[^\"\n]+", r"\1<time>"),
)
TIME_NOW_RULES: tuple[Rule, ...] = (
    _rule(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?", "<now>"),
    _WEEKDAY,
)
TIME_CONVERT_RULES: tuple[Rule, ...] = (
    _rule(r"\d{4}-\d{2}-\d{2}(?=T\d{2}:\d{2})", "<date>"),
    _WEEKDAY,
)


def normalise(value: Any, rules: Sequence[Rule]) -> Any:
    """Return a copy of the JSON value ``value`` with ``rules`` applied to every string in it.

    Keys are kept. A string under a ``"blob"`` key that is base64 of UTF-8 text is decoded,
    normalised and re-encoded, so resource blobs are normalised like texts.
    """
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "blob" and isinstance(item, str):
                out[key] = _normalise_blob(item, rules)
            else:
                out[key] = normalise(item, rules)
        return out
    if isinstance(value, list | tuple):
        return [normalise(item, rules) for item in value]
    if isinstance(value, str):
        for rule in rules:
            value = rule.apply(value)
        return value
    return value


def _normalise_blob(blob: str, rules: Sequence[Rule]) -> str:
    try:
        text = base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return blob
    normalised = normalise(text, rules)
    return base64.b64encode(normalised.encode("utf-8")).decode("ascii")


def dump(model: BaseModel) -> Any:
    """The JSON form a result is compared in."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# server-everything's simulated logger: "Debug-level message", ..., "Alert level-message".
_SIMULATED_LOG = re.compile(
    r"^(?:Debug|Info|Notice|Warning|Error|Critical|Alert|Emergency)[- ]level[- ]message"
)


def _normalise_log(params: types.LoggingMessageNotificationParams) -> dict[str, Any]:
    entry: dict[str, Any] = normalise(dump(params), EVERYTHING_RULES)
    data = entry.get("data")
    if isinstance(data, str) and _SIMULATED_LOG.match(data):
        entry["level"] = "<random>"
        entry["data"] = "<simulated log message>"
    return entry


def _distinct_sorted(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for entry in entries:
        seen.setdefault(repr(sorted(entry.items())), entry)
    return [seen[key] for key in sorted(seen)]


# ---------------------------------------------------------------------------------------------
# Fixed client-side answers to server-initiated requests
# ---------------------------------------------------------------------------------------------

SAMPLING_REPLY = types.CreateMessageResult(
    role="assistant",
    content=types.TextContent(type="text", text="harn-e2e fixed sampling reply"),
    model="harn-e2e-fixed-model",
    stop_reason="endTurn",
)

FIXED_ROOT = types.Root(uri="file:///harn-e2e/workspace", name="harn-e2e-root")  # type: ignore[arg-type]

# A valid answer to server-everything's `trigger-elicitation-request` form (checked against the
# requested schema before it is sent).
ELICITATION_CONTENT: dict[str, str | int | float | bool | list[str] | None] = {
    "name": "Ada Lovelace",
    "check": True,
    "firstLine": "It was a dark and stormy night.",
    "email": "ada@example.com",
    "homepage": "https://example.com/ada",
    "birthdate": "1815-12-10",
    "integer": 42,
    "number": 3.14,
    "untitledSingleSelectEnum": "Joey",
    "untitledMultipleSelectEnum": ["Guitar", "Piano"],
    "titledSingleSelectEnum": "hero-2",
    "titledMultipleSelectEnum": ["fish-1"],
    "legacyTitledEnum": "pet-3",
}


@dataclass
class _Observed:
    """What the client's callbacks saw during one scenario."""

    progress: list[list[float | str | None]] = field(default_factory=list)
    sampling_requests: list[Any] = field(default_factory=list)
    elicitation_requests: list[Any] = field(default_factory=list)
    roots_requests: int = 0
    logs: list[dict[str, Any]] = field(default_factory=list)
    notifications: Counter[str] = field(default_factory=Counter)
    stream_errors: list[str] = field(default_factory=list)

    async def on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling_requests.append(dump(params))
        return SAMPLING_REPLY

    async def on_elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.elicitation_requests.append(dump(params))
        schema = getattr(params, "requested_schema", None)
        if schema is None:  # URL-mode elicitation: not part of the scenario.
            return types.ErrorData(code=types.INVALID_REQUEST, message="harn-e2e: only form elicitation")
        requested = schema if isinstance(schema, Mapping) else dump(schema)
        content = {k: v for k, v in ELICITATION_CONTENT.items() if k in requested.get("properties", {})}
        validate_json(content, requested)
        return types.ElicitResult(action="accept", content=content)

    async def on_list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.roots_requests += 1
        return types.ListRootsResult(roots=[FIXED_ROOT])

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(_normalise_log(params))

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.stream_errors.append(f"{type(message).__name__}: {message}")
            return
        method = message.method
        if method != "notifications/message":  # log messages are reported, deduplicated, by on_log
            self.notifications[method] += 1

    def progress_callback(self) -> Callable[[float, float | None, str | None], Any]:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append([progress, total, message])

        return on_progress


# ---------------------------------------------------------------------------------------------
# Launching
# ---------------------------------------------------------------------------------------------


def server_parameters(command: Sequence[str], env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """``StdioServerParameters`` for ``command``, with :data:`BASE_SERVER_ENV` plus ``env``."""
    if not command:
        raise ValueError("empty server command")
    return StdioServerParameters(
        command=command[0], args=list(command[1:]), env={**BASE_SERVER_ENV, **(env or {})}
    )


def _client(
    command: Sequence[str],
    mode: str,
    env: Mapping[str, str] | None,
    errlog: IO[str] | None,
    **callbacks: Any,
) -> Client:
    params = server_parameters(command, env)
    # `Client(params)` spawns with stdio_client(params) and the default errlog (sys.stderr); a
    # caller that wants the server's stderr elsewhere gets the same transport with its errlog.
    server: Any = params if errlog is None else stdio_client(params, errlog=errlog)  # type: ignore[arg-type]
    return Client(server, mode=mode, **callbacks)


def _connection_facts(client: Client) -> dict[str, Any]:
    info = client.server_info
    return {
        "protocol_version": client.protocol_version,
        "server_info": dump(info) if info is not None else None,
        "server_capabilities": dump(client.server_capabilities),
        "instructions": client.instructions,
    }


def _is_modern(client: Client) -> bool:
    return client.protocol_version in MODERN_PROTOCOL_VERSIONS


def _error(exc: MCPError) -> dict[str, Any]:
    return {"error": {"code": exc.code, "message": exc.error.message}}


def _pick_tool(available: Sequence[str], *candidates: str) -> str:
    """The first of ``candidates`` the server lists (tool names have changed across releases)."""
    for name in candidates:
        if name in available:
            return name
    raise AssertionError(
        f"none of the tools {candidates} is listed by the server; it lists {sorted(available)}"
    )


# ---------------------------------------------------------------------------------------------
# server-everything
# ---------------------------------------------------------------------------------------------


async def run_everything(
    command: list[str],
    *,
    mode: str = "auto",
    env: Mapping[str, str] | None = None,
    errlog: IO[str] | None = None,
    time_limit: float = SCENARIO_TIMEOUT_S,
) -> dict[str, Any]:
    """Drive ``@modelcontextprotocol/server-everything`` (stdio) through every capability.

    ``command`` starts the server (or a stdio proxy in front of it); ``mode`` is passed to
    ``mcp.Client`` (``"auto"``: ``server/discover`` then ``initialize`` on -32601; ``"legacy"``:
    ``initialize`` only). server-everything speaks only the handshake era, so both modes end
    on ``2025-11-25`` and give equal results. Returns the normalised client-side view.
    """
    seen = _Observed()
    steps: dict[str, Any] = {}
    with anyio.fail_after(time_limit):
        async with _client(
            command,
            mode,
            env,
            errlog,
            sampling_callback=seen.on_sampling,
            elicitation_callback=seen.on_elicitation,
            list_roots_callback=seen.on_list_roots,
            logging_callback=seen.on_log,
            message_handler=seen.on_message,
        ) as client:
            connection = _connection_facts(client)
            modern = _is_modern(client)

            if not modern:
                steps["ping"] = dump(await client.session.send_ping())
                # `Client.set_logging_level` is deprecated (2026-07-28 drops logging/setLevel) and
                # warns; the request itself is valid on this handshake-era session. Everything from
                # "debug" up is delivered, so the server's random-level messages all arrive.
                steps["logging/setLevel"] = dump(
                    await client.session.send_request(
                        types.SetLevelRequest(params=types.SetLevelRequestParams(level="debug")),
                        types.EmptyResult,
                    )
                )

            listed = await client.list_tools()
            steps["tools/list"] = dump(listed)
            tools = [tool.name for tool in listed.tools]

            async def call(label: str, name: str, arguments: dict[str, Any], **kwargs: Any) -> None:
                steps[f"tools/call {label}"] = dump(await client.call_tool(name, arguments, **kwargs))

            # First, so the server's own roots sync (a 350 ms timer after `initialized`) usually
            # finds the roots already fetched; either way `roots_requested` is all that is kept.
            await call("get-roots-list", _pick_tool(tools, "get-roots-list", "listRoots"), {})
            await call("echo", _pick_tool(tools, "echo"), {"message": "hello from harn e2e ✓"})
            await call("get-sum", _pick_tool(tools, "get-sum", "add"), {"a": 2, "b": 3.5})
            await call(
                "get-structured-content",
                _pick_tool(tools, "get-structured-content", "structuredContent"),
                {"location": "Chicago"},
            )
            await call(
                "trigger-long-running-operation",
                _pick_tool(tools, "trigger-long-running-operation", "longRunningOperation"),
                {"duration": 0.03, "steps": 3},
                progress_callback=seen.progress_callback(),
            )
            await call(
                "trigger-sampling-request",
                _pick_tool(tools, "trigger-sampling-request", "sampleLLM"),
                {"prompt": "Say hello to the harn e2e suite", "maxTokens": 16},
            )
            await call(
                "trigger-elicitation-request",
                _pick_tool(tools, "trigger-elicitation-request", "startElicitation"),
                {},
            )
            await call("get-tiny-image", _pick_tool(tools, "get-tiny-image", "getTinyImage"), {})
            await call(
                "get-annotated-message",
                _pick_tool(tools, "get-annotated-message", "annotatedMessage"),
                {"messageType": "success", "includeImage": False},
            )
            if "get-resource-links" in tools:
                await call("get-resource-links", "get-resource-links", {"count": 2})
            if "toggle-simulated-logging" in tools:
                # On, then straight off: the server sends one random-level message at once.
                await call("toggle-simulated-logging on", "toggle-simulated-logging", {})
                await call("toggle-simulated-logging off", "toggle-simulated-logging", {})

            resources = await client.list_resources()
            steps["resources/list"] = dump(resources)
            templates = await client.list_resource_templates()
            steps["resources/templates/list"] = dump(templates)
            if resources.resources:
                first = min(resources.resources, key=lambda r: str(r.uri))
                steps["resources/read static"] = dump(await client.read_resource(str(first.uri)))
            for template in templates.resource_templates:
                uri = template.uri_template.replace("{resourceId}", "7")
                steps[f"resources/read {uri}"] = dump(await client.read_resource(uri))

            prompts = await client.list_prompts()
            steps["prompts/list"] = dump(prompts)
            prompt_args: dict[str, dict[str, str]] = {
                "simple-prompt": {},
                "args-prompt": {"city": "Paris", "state": "TX"},
                "completable-prompt": {"department": "Engineering", "name": "Alice"},
                "resource-prompt": {"resourceType": "Text", "resourceId": "3"},
            }
            for prompt in prompts.prompts:
                if prompt.name in prompt_args:
                    got = await client.get_prompt(prompt.name, prompt_args[prompt.name])
                    steps[f"prompts/get {prompt.name}"] = dump(got)

            completable = types.PromptReference(type="ref/prompt", name="completable-prompt")
            steps["completion/complete prompt department"] = dump(
                await client.complete(completable, {"name": "department", "value": "E"})
            )
            steps["completion/complete prompt name"] = dump(
                await client.complete(
                    completable, {"name": "name", "value": ""}, context_arguments={"department": "Sales"}
                )
            )
            if templates.resource_templates:
                template_ref = types.ResourceTemplateReference(
                    type="ref/resource", uri=templates.resource_templates[0].uri_template
                )
                steps["completion/complete resource template"] = dump(
                    await client.complete(template_ref, {"name": "resourceId", "value": "4"})
                )

            if not modern:
                steps["ping (last)"] = dump(await client.session.send_ping())

    return {
        "scenario": "server-everything",
        **normalise(connection, EVERYTHING_RULES),
        "steps": normalise(steps, EVERYTHING_RULES),
        "progress": seen.progress,
        "sampling_requests": seen.sampling_requests,
        "elicitation_requests": seen.elicitation_requests,
        "roots_requested": seen.roots_requests > 0,
        "logs": _distinct_sorted(seen.logs),
        "notifications": dict(sorted(seen.notifications.items())),
        "stream_errors": seen.stream_errors,
    }


# ---------------------------------------------------------------------------------------------
# mcp-server-time
# ---------------------------------------------------------------------------------------------

CONVERSIONS: tuple[tuple[str, str, str], ...] = (
    ("UTC", "09:30", "Asia/Kolkata"),  # +5.5h: a fractional offset
    ("Asia/Tokyo", "23:15", "UTC"),  # -9.0h, from a zone ahead of UTC
)


async def run_time(
    command: list[str],
    *,
    mode: str = "auto",
    env: Mapping[str, str] | None = None,
    errlog: IO[str] | None = None,
    time_limit: float = SCENARIO_TIMEOUT_S,
) -> dict[str, Any]:
    """Drive ``mcp-server-time`` (start it with ``--local-timezone UTC``).

    ``mode="auto"`` negotiates 2026-07-28 through ``server/discover`` (the server serves both
    eras); ``mode="legacy"`` uses the ``initialize`` handshake (2025-11-25). Returns the
    normalised client-side view.
    """
    seen = _Observed()
    steps: dict[str, Any] = {}
    with anyio.fail_after(time_limit):
        async with _client(command, mode, env, errlog, message_handler=seen.on_message) as client:
            connection = _connection_facts(client)
            if not _is_modern(client):
                steps["ping"] = dump(await client.session.send_ping())
            steps["tools/list"] = dump(await client.list_tools())

            now = await client.call_tool("get_current_time", {"timezone": "UTC"})
            steps["tools/call get_current_time UTC"] = normalise(dump(now), TIME_NOW_RULES)

            for source, time, target in CONVERSIONS:
                converted = await client.call_tool(
                    "convert_time", {"source_timezone": source, "time": time, "target_timezone": target}
                )
                steps[f"tools/call convert_time {source} {time} {target}"] = normalise(
                    dump(converted), TIME_CONVERT_RULES
                )

            # A tool error (isError result) and a protocol error (JSON-RPC -32602).
            bad_zone = await client.call_tool(
                "convert_time",
                {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Nowhere/Atlantis"},
            )
            steps["tools/call convert_time invalid zone"] = dump(bad_zone)
            try:
                unknown = await client.call_tool("no_such_tool", {})
            except MCPError as exc:
                steps["tools/call no_such_tool"] = _error(exc)
            else:
                steps["tools/call no_such_tool"] = dump(unknown)

    return {
        "scenario": "mcp-server-time",
        **connection,
        "steps": steps,
        "notifications": dict(sorted(seen.notifications.items())),
        "stream_errors": seen.stream_errors,
    }
