"""Engines that reach a live server, for ``replay --http`` in the modes that record.

The HTTP endpoint serves any :class:`~harn_mcp_mock.jsonrpc.server.Engine`; these two forward
what they must to a live server and give back, for each client message, the messages the live
server sent for it, up to its answer or to a request of its own (sampling, elicitation, roots):
the endpoint then pauses that stream until the client's answer comes in a later POST, and the
rest follows on the same stream, as with a replayed server request.

* :class:`EpisodesEngine` (``new_episodes``): the replay answers what the cassette holds; the
  rest goes through :class:`~harn_mcp_mock.replay.episodes.NewEpisodes` (the live server after
  ``--`` or at ``--url``) and is appended to the cassette when the session ends.
* recording (``once`` without a cassette, ``all``, with the server after ``--``) is
  :class:`~harn_mcp_mock.session.record.RecordEngine`, the recording engine over any upstream
  (:mod:`harn_mcp_mock.session`). With ``--url`` the recording reverse proxy records instead
  (:func:`~harn_mcp_mock.http.record_proxy.record_http`), keeping HTTP's own facts too.

The live server is waited for on the endpoint's loop (up to ``timeout`` s of silence), so a
session that records serves one request at a time: these are for tests, not for load.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from harn_mcp_mock import deepjson
from harn_mcp_mock.errors import ServerError, UpstreamTimeout
from harn_mcp_mock.jsonrpc.server import Out
from harn_mcp_mock.session.record import failed

if TYPE_CHECKING:
    from harn_mcp_mock.cassette.model import Cassette
    from harn_mcp_mock.replay.engine import ReplayReport
    from harn_mcp_mock.replay.episodes import NewEpisodes


def _is_server_request(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("method"), str) and "id" in obj


def _outs(lines: Sequence[bytes]) -> Iterator[Out]:
    for line in lines:
        try:
            yield Out(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue  # a live server's non-JSON line: nothing an HTTP client could take


class EpisodesEngine:
    """``new_episodes`` over HTTP: one :class:`NewEpisodes` session per HTTP session."""

    def __init__(self, session: NewEpisodes, *, timeout: float = 30.0) -> None:
        self.session = session
        self.timeout = timeout

    @property
    def cassette(self) -> Cassette:
        """The replayed cassette (the endpoint reads its recorded HTTP facts)."""
        return self.session.engine.cassette

    def receive(self, message: Any) -> list[Out]:
        try:
            lines = self.session.from_client(deepjson.dumps(message))
        except ServerError as exc:  # the live server could not be started or set up
            is_request = _is_server_request(message)  # (a client request has the same shape)
            return failed({orjson.dumps(message["id"])} if is_request else set(), exc)
        return list(_outs(lines)) + self._pull()

    def _pull(self) -> list[Out]:
        """What the live server sends until the forwarded requests are answered, or it asks
        the client something (then the client's answer, a later :meth:`receive`, goes on)."""
        session = self.session
        outs: list[Out] = []
        try:
            while session.waiting and session.live is not None:
                chunk = session.live.read_chunk(self.timeout)
                if chunk is None:
                    raise UpstreamTimeout(f"the live server did not answer within {self.timeout:g}s")
                batch = list(_outs(session.from_live(chunk)))
                outs += batch
                if any(_is_server_request(out.message) for out in batch):
                    break
        except (ServerError, UpstreamTimeout) as exc:
            outs += failed(session.waiting, exc)
        return outs

    def finish(self) -> ReplayReport:
        """Stop the live server and append what it recorded (see :meth:`NewEpisodes.finish`)."""
        return self.session.finish()

    def abort(self) -> None:
        self.session.abort()
