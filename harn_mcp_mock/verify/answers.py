"""The baseline's client side as an MCP client would give it to a live server.

:class:`BaselineAnswers` answers the live server's own requests (sampling, elicitation, roots)
from what the client answered when the baseline was recorded; :class:`RoundTrips` carries the
live server's 2026-07-28 multi-round-trip state into the baseline's retries. Both are the same
whatever the transport (see :mod:`harn_mcp_mock.verify.live`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import orjson

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.jsonrpc.codes import METHOD_NOT_FOUND


class BaselineAnswers:
    """The baseline's client answers to server requests, looked up by key, then by method."""

    def __init__(self, base: Cassette, matcher: Matcher) -> None:
        self.matcher = matcher
        self.by_key: dict[bytes, list[dict[str, Any]]] = defaultdict(list)
        self.by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
        answers = base.responses_by_request()
        for msg in base.messages:
            if msg.direction == "server" and msg.kind == "request" and isinstance(msg.message, dict):
                reply = answers.get(msg.seq)
                if reply is not None and isinstance(reply.message, dict):
                    self.by_key[matcher.key(msg.message)].append(reply.message)
                    self.by_method[str(msg.message.get("method"))].append(reply.message)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        pool = self.by_key.get(self.matcher.key(request)) or self.by_method.get(str(request.get("method")))
        if pool:
            recorded = pool.pop(0) if len(pool) > 1 else pool[0]
            return {k: (request["id"] if k == "id" else v) for k, v in recorded.items()}
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {
                "code": METHOD_NOT_FOUND,
                "message": "harn-mcp-mock verify: the baseline holds no answer to this request",
            },
        }


class RoundTrips:
    """Carries 2026-07-28 multi-round-trip state from the live server into the baseline's retries.

    :meth:`outgoing` is given each baseline client message before it is sent: it notes the
    recorded answer to a request and rewrites a retry's ``params.requestState`` and
    ``params.inputResponses`` keys to what the live server issued. :meth:`incoming` is given
    each live response: where the recorded answer and the live one both carry a
    ``requestState`` (or ``inputRequests``), the recorded value is mapped to the live one.
    """

    def __init__(self, base: Cassette) -> None:
        self._recorded = base.responses_by_request()
        self._pending: dict[bytes, dict[str, Any]] = {}
        self.states: dict[str, str] = {}
        self.keys: dict[str, str] = {}

    def outgoing(self, seq: int, message: Any) -> Any:
        if not isinstance(message, dict):
            return message
        reply = self._recorded.get(seq)
        if "id" in message and reply is not None and isinstance(reply.message, dict):
            self._pending[orjson.dumps(message["id"])] = reply.message
        params = message.get("params")
        if not isinstance(params, dict) or not ("requestState" in params or "inputResponses" in params):
            return message
        params = dict(params)
        state = params.get("requestState")
        if isinstance(state, str) and state in self.states:
            params["requestState"] = self.states[state]
        responses = params.get("inputResponses")
        if isinstance(responses, dict) and self.keys:
            params["inputResponses"] = {self.keys.get(k, k): v for k, v in responses.items()}
        return {**message, "params": params}

    def incoming(self, message: Any) -> None:
        if not isinstance(message, dict) or "id" not in message:
            return
        recorded = self._pending.pop(orjson.dumps(message["id"]), None)
        was, now = (recorded or {}).get("result"), message.get("result")
        if not isinstance(was, dict) or not isinstance(now, dict):
            return
        if isinstance(was.get("requestState"), str) and isinstance(now.get("requestState"), str):
            self.states[was["requestState"]] = now["requestState"]
        asked, asks = was.get("inputRequests"), now.get("inputRequests")
        if isinstance(asked, dict) and isinstance(asks, dict) and len(asked) == len(asks):
            self.keys.update(zip(asked, asks, strict=True))
