"""The scripted LLM endpoint: an ASGI app answering OpenAI Chat Completions, OpenAI Responses and
Anthropic Messages requests with the moves of :mod:`~harn_mcp_mock.llm.policy`.

Routes go by the path's end, so every SDK's base URL works (``http://127.0.0.1:P/v1`` for the
OpenAI SDKs, the same or without ``/v1`` for Anthropic's): ``.../chat/completions``,
``.../responses``, ``.../messages`` (and ``.../messages/count_tokens``), ``.../models``.

Each request is appended to ``llm.ndjson`` in the log folder (``HARN_TRIAL_DIR`` when set), and
its token counts to ``HARN_USAGE_FILE`` (JSON lines ``{"input_tokens", "output_tokens",
"cost_usd"}``, one write each): in a run, the trial's usage channel, which the runner reads as
lines arrive (:class:`~harn_mcp_mock.runner.budget.UsageChannel`); a request after the trial ended
is answered, its usage dropped.

**Per-trial routes** (one endpoint serving every trial of a run, ``harn mcp mock run --llm URL``):
a request under ``/t/<route>/`` (``http://127.0.0.1:P/t/<route>/v1``, the ``HARN_LLM_URL`` the
runner hands each trial) is answered as any other, and its usage line is kept in memory in that
route's **ledger** instead of ``HARN_USAGE_FILE``. The runner makes a secret per trial and names
the route by its digest (:func:`~harn_mcp_mock.runner.budget.route_of`); when the trial's agent
has ended it takes the ledger with ``POST /harn/usage/<secret>``
(:func:`~harn_mcp_mock.runner.budget.llm_usage`): the lines, summed by the runner with the
rules of its usage channel. Only the runner knows the secret, so an agent can neither read nor
close another trial's ledger, nor its own: a ledger is taken once (a second take is refused, 409),
and a request on a route already taken is answered with its usage dropped. The endpoint keeps no
state besides the ledgers: the runner needs no registration, and any number of runs may share it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from harn_mcp_mock.http.server import HttpServer, Receive, Scope, Send, read_body, send_json, send_plain
from harn_mcp_mock.llm.policy import POLICIES, Conversation, Move, Policy, next_move
from harn_mcp_mock.llm.wire import Api, read_request, render, stream, tokens
from harn_mcp_mock.world.spec import WorldSpec

LOG_NAME = "llm.ndjson"
MODEL = "harn-scripted"
LEDGERS_MAX = 4096
"""Routes with a ledger not yet taken; a request on one more is refused (503)."""
_ROUTE = re.compile(r"^/t/([A-Za-z0-9_-]{16,64})(/.*)$")
_TAKE = re.compile(r"^/harn/usage/([A-Za-z0-9_-]{16,128})$")


def _api(path: str) -> Api | Literal["count_tokens", "models"] | None:
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages/count_tokens"):
        return "count_tokens"
    if path.endswith("/messages"):
        return "messages"
    if path.endswith("/models"):
        return "models"
    return None


class LlmEndpoint:
    """The ASGI app: a world spec, a policy, and where requests and usage are written."""

    def __init__(
        self,
        spec: WorldSpec,
        policy: Policy = "reference",
        *,
        log_dir: Path | None = None,
        usage_file: Path | None = None,
        create_usage: bool = True,
    ) -> None:
        """``usage_file``: where each request's usage line goes; ``create_usage``: make the file
        when it is missing (False for ``HARN_USAGE_FILE``: the runner's channel, never made here)."""
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r} (policies: {', '.join(POLICIES)})")
        self.spec = spec
        self.policy = policy
        self.log_dir = log_dir
        self.usage_file = usage_file
        self.create_usage = create_usage
        self.requests = 0
        self._lock = threading.Lock()
        self._ledgers: dict[str, bytearray] = {}
        """Each route's usage lines, until the runner takes them."""
        self._taken: set[str] = set()

    @classmethod
    def from_env(cls, spec: WorldSpec, policy: Policy = "reference") -> LlmEndpoint:
        """Logging to ``HARN_TRIAL_DIR`` and usage to ``HARN_USAGE_FILE``, when they are set."""
        trial = os.environ.get("HARN_TRIAL_DIR")
        usage = os.environ.get("HARN_USAGE_FILE")
        return cls(
            spec,
            policy,
            log_dir=Path(trial) if trial else None,
            usage_file=Path(usage) if usage else None,
            create_usage=False,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = str(scope.get("path", ""))
        take = _TAKE.match(path)
        if take is not None:
            await self._take(scope, send, take.group(1))
            return
        route = None
        routed = _ROUTE.match(path)
        if routed is not None:
            route, path = routed.group(1), routed.group(2)
            with self._lock:
                full = route not in self._ledgers and len(self._ledgers) >= LEDGERS_MAX
            if full:
                await _error(send, 503, f"more than {LEDGERS_MAX} trials' usage not yet taken")
                return
        api = _api(path)
        if api == "models" and scope["method"] == "GET":
            listed = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "harn"}]}
            await send_json(send, 200, json.dumps(listed).encode(), [])
            return
        if api is None or api == "models" or scope["method"] != "POST":
            await _error(send, 404, f"no such endpoint: {scope['method']} {scope.get('path')}")
            return
        raw = await read_body(receive)
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            await _error(send, 400, f"bad request body: {exc}")
            return
        if api == "count_tokens":
            await send_json(send, 200, json.dumps({"input_tokens": tokens(raw.decode())}).encode(), [])
            return
        conversation = read_request(api, body)
        move = next_move(self.spec, self.policy, conversation)
        answer = render(api, move, raw, str(body.get("model") or MODEL))
        self._log(api, body, conversation, move, answer, route)
        if not body.get("stream"):
            await send_json(send, 200, json.dumps(answer).encode(), [])
            return
        usage = api != "chat" or bool((body.get("stream_options") or {}).get("include_usage"))
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in stream(api, answer, include_usage=usage):
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def _take(self, scope: Scope, send: Send, secret: str) -> None:
        """``POST /harn/usage/<secret>``: the route's ledger (its usage lines), once."""
        if scope["method"] != "POST":
            await _error(send, 405, "POST to take a trial's usage")
            return
        from harn_mcp_mock.runner.budget import route_of

        route = route_of(secret)
        with self._lock:
            if route in self._taken:
                data = None
            else:
                self._taken.add(route)
                data = bytes(self._ledgers.pop(route, b""))
        if data is None:
            await _error(send, 409, "this trial's usage was already taken")
            return
        await send_plain(send, 200, data, [(b"content-type", b"application/x-ndjson")])

    def _log(
        self,
        api: str,
        body: dict[str, Any],
        conversation: Conversation,
        move: Move,
        answer: dict[str, Any],
        route: str | None = None,
    ) -> None:
        usage = answer["usage"]
        input_tokens = usage.get("input_tokens", usage.get("prompt_tokens", 0))
        output_tokens = usage.get("output_tokens", usage.get("completion_tokens", 0))
        with self._lock:
            self.requests += 1
            entry = log_entry(self.requests, conversation, move, self.policy) | {
                "api": api,
                "model": body.get("model"),
                "stream": bool(body.get("stream")),
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "request": body,
            }
            if self.log_dir is not None:
                append_log(self.log_dir, entry)
            if route is not None:  # a trial's route: its ledger, until the runner takes it
                record = {"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": 0.0}
                self._ledger(route, record)
            elif self.usage_file is not None:
                from harn_mcp_mock.runner.budget import write_usage_line

                record = {"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": 0.0}
                write_usage_line(self.usage_file, record, create=self.create_usage)  # never blocks

    def _ledger(self, route: str, record: dict[str, Any]) -> None:
        """Append one usage line to the route's ledger (the lock held). Past the channel's cap
        nothing more is kept: the runner's reader finds the ledger over it (invalid usage)."""
        from harn_mcp_mock.runner.budget import USAGE_BYTES_MAX

        if route in self._taken:
            return  # the trial ended: answered, its usage dropped
        ledger = self._ledgers.setdefault(route, bytearray())
        if len(ledger) <= USAGE_BYTES_MAX:
            ledger += (json.dumps(record, separators=(", ", ": ")) + "\n").encode()


def log_entry(n: int, conversation: Conversation, move: Move, policy: str) -> dict[str, Any]:
    """One request's line of ``llm.ndjson``: the tool calls so far with what the host handed the
    model for each (``result``: the text, or null when none came), and the move answered."""
    return {
        "n": n,
        "policy": policy,
        "calls": [
            {
                "name": call.name,
                "arguments": call.arguments,
                "result": None if result is None else result.text,
                "is_error": None if result is None else result.is_error,
            }
            for call, result in conversation.calls
        ],
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in move.calls],
        "text": move.text,
    }


def append_log(log_dir: Path, entry: dict[str, Any]) -> None:
    """Append one line to ``log_dir/llm.ndjson``."""
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / LOG_NAME).open("a", encoding="utf-8") as log:
        log.write(json.dumps(entry, separators=(",", ":")) + "\n")


async def _error(send: Send, status: int, message: str) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    await send_json(send, status, json.dumps(body).encode(), [])


@contextlib.contextmanager
def serve_llm(
    spec: WorldSpec | str | Path,
    policy: Policy = "reference",
    *,
    port: int = 0,
    log_dir: Path | None = None,
    usage_file: Path | None = None,
) -> Iterator[str]:
    """Serve the endpoint on loopback in a thread; yields its base URL (``http://127.0.0.1:P/v1``).

    ``spec`` is a spec, a spec file or a shipped world's name. Without ``log_dir`` and
    ``usage_file``, ``HARN_TRIAL_DIR`` and ``HARN_USAGE_FILE`` say where to write.
    """
    world = load_world(spec)
    if log_dir is None and usage_file is None:
        app = LlmEndpoint.from_env(world, policy)
    else:
        app = LlmEndpoint(world, policy, log_dir=log_dir, usage_file=usage_file)
    server = HttpServer(app, port=port, path="/v1")
    ready = threading.Event()
    thread = threading.Thread(target=server.run, kwargs={"on_ready": lambda _url: ready.set()}, daemon=True)
    thread.start()
    if not ready.wait(timeout=30):
        server.stop()
        raise RuntimeError("the scripted LLM endpoint did not start")
    try:
        yield server.url
    finally:
        server.stop()
        thread.join()


@contextlib.contextmanager
def trial_llm(spec: WorldSpec | str | Path, policy: Policy = "reference") -> Iterator[str]:
    """The model endpoint of this trial, as a base URL (``.../v1``): the trial's own route to the
    run's endpoint (``HARN_LLM_URL``, ``run --llm URL``: its policy is that endpoint's) when set,
    else :func:`serve_llm` for the length of the block. Either way the runner counts its usage."""
    routed = os.environ.get("HARN_LLM_URL")
    if routed:
        yield routed
        return
    with serve_llm(spec, policy) as url:
        yield url


def load_world(spec: WorldSpec | str | Path) -> WorldSpec:
    """A spec as given, or loaded from a file or a shipped world's name."""
    if isinstance(spec, WorldSpec):
        return spec
    from harn_mcp_mock.shipped import resolve_spec
    from harn_mcp_mock.world.spec import load_spec

    return load_spec(resolve_spec(spec))
