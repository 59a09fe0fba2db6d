"""``run_http_session`` (http/run.py) in the modes that record: recording a stdio server while
an HTTP client talks to it (``replay --http --mode all -- CMD``), one session at a time, and a
live server that fails under a session that records: raw HTTP against scripted servers."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import orjson

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.errors import HarnError
from harn_mcp_mock.http.run import run_http_session
from harn_mcp_mock.http.server import HttpServer
from harn_mcp_mock.options import LiveTarget
from harn_mcp_mock.stdio.run import ReplayOutcome
from tests.http.conftest import ACCEPT, INIT

REPO = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(REPO / "tests" / "servers" / "fake_server.py"), "echo"]
WAIT = 60.0


@contextmanager
def recording(
    cassette: Path,
    command: list[str],
    mode: str = "all",
    url: str | None = None,
    headers: tuple[str, ...] | list[str] = (),
    **more: Any,
) -> Iterator[tuple[str, list[ReplayOutcome | HarnError]]]:
    """``run_http_session(mode=...)`` in a thread; (URL, its outcome or error once stopped)."""
    ready = threading.Event()
    urls: list[str] = []
    servers: list[HttpServer] = []
    outcomes: list[ReplayOutcome | HarnError] = []

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    def serve() -> None:
        try:
            outcomes.append(
                run_http_session(
                    cassette,
                    mode=mode,
                    live=LiveTarget(command, url, headers),
                    on_ready=on_ready,
                    on_server=servers.append,
                    **more,
                )
            )
        except HarnError as exc:  # the test looks at it
            outcomes.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(WAIT) and urls, f"the server never listened: {outcomes}"
    try:
        yield urls[0], outcomes
    finally:
        servers[0].stop()
        thread.join(WAIT)
        assert not thread.is_alive()


def test_the_first_session_is_recorded_and_a_second_one_is_told_why_not(tmp_path: Path) -> None:
    cassette = tmp_path / "echo.cassette.json"
    with recording(cassette, ECHO) as (url, outcomes), httpx2.Client(timeout=WAIT) as client:
        first = client.post(url, json=INIT, headers=ACCEPT)
        assert first.status_code == 200 and first.json()["result"] == {"echo": INIT["params"]}
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}
        assert client.post(url, json=call, headers=session).json()["result"] == {"echo": {"name": "x"}}
        second = client.post(url, json=INIT, headers=ACCEPT)
        assert "records one session of the stdio server" in second.json()["error"]["message"]
        assert not cassette.exists()  # written when the session ends
        assert client.delete(url, headers=session).status_code == 200
        assert cassette.exists()
    (outcome,) = outcomes
    assert isinstance(outcome, ReplayOutcome) and outcome.report is None and outcome.mode.value == "all"
    recorded = load_cassette(cassette)
    methods = [m.method for m in recorded.messages if m.direction == "client"]
    assert methods == ["initialize", "tools/call"]  # the refused session left nothing there
    assert orjson.loads(cassette.read_bytes())["exit"]["reason"] == "client-eof"


def test_a_live_server_that_exits_mid_recording_answers_the_client_with_an_error(tmp_path: Path) -> None:
    cassette = tmp_path / "dies.cassette.json"
    dies = [*ECHO[:-1], "die-on", "1"]  # answers initialize, exits on reading the next request
    with recording(cassette, dies) as (url, _outcomes), httpx2.Client(timeout=WAIT) as client:
        first = client.post(url, json=INIT, headers=ACCEPT)
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}
        answer = client.post(url, json=call, headers=session).json()
        assert answer["id"] == 2 and answer["error"]["code"] == -32603
        assert (
            "the live server did not answer: the live server exited while recording"
            in answer["error"]["message"]
        )
    recorded = load_cassette(cassette)  # what it said before exiting is kept
    assert [m.method for m in recorded.messages if m.direction == "client"] == ["initialize", "tools/call"]


def test_a_live_server_that_cannot_start_answers_the_miss_with_an_error(tmp_path: Path) -> None:
    from tests.echo_cassette import echo_cassette

    cassette = echo_cassette(tmp_path / "echo.cassette.json", "hi")
    before = cassette.read_bytes()
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    missing = [str(tmp_path / "no-such-server")]
    with (
        recording(cassette, missing, "new_episodes") as (url, outcomes),
        httpx2.Client(timeout=WAIT) as client,
    ):
        first = client.post(url, json=init, headers=ACCEPT)
        assert first.json()["result"]["serverInfo"]["name"] == "echo"  # replayed
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        call = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "new"}},
        }
        answer = client.post(url, json=call, headers=session).json()
        assert answer["id"] == 5 and answer["error"]["code"] == -32603
        assert "no-such-server" in answer["error"]["message"]
    (outcome,) = outcomes
    assert isinstance(outcome, ReplayOutcome) and outcome.report is not None and outcome.report.requests >= 1
    assert cassette.read_bytes() == before  # nothing was recorded, nothing appended


def test_a_stdio_server_that_cannot_start_tells_the_session_and_leaves_no_journal(tmp_path: Path) -> None:
    cassette = tmp_path / "none.cassette.json"
    with (
        recording(cassette, [str(tmp_path / "no-such-server")]) as (url, _),
        httpx2.Client(timeout=WAIT) as client,
    ):
        answer = client.post(url, json=INIT, headers=ACCEPT).json()
        assert "the live server could not be started" in answer["error"]["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no cassette, no journal, no claim


def test_a_stdio_server_that_dies_before_a_word_keeps_the_cassette_and_says_so_once(
    tmp_path: Path,
) -> None:
    """`replay --http --mode all -- python servr.py` (a typo: python exits 2 at once): the old
    cassette stays, the session ends with its DELETE without an ASGI traceback, and the run ends
    with the one NothingRecordedError saying why."""
    from harn_mcp_mock.errors import NothingRecordedError
    from tests.echo_cassette import echo_cassette

    cassette = echo_cassette(tmp_path / "echo.cassette.json", "hi")
    before = cassette.read_bytes()
    typo = [sys.executable, str(tmp_path / "no_such_server.py")]
    with recording(cassette, typo) as (url, outcomes), httpx2.Client(timeout=WAIT) as client:
        first = client.post(url, json=INIT, headers=ACCEPT)
        assert first.json()["error"]["code"] == -32603
        ended = client.delete(url, headers={**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]})
        assert ended.status_code == 200
    [outcome] = outcomes
    assert isinstance(outcome, NothingRecordedError)
    assert "nothing recorded: the server sent no message (server exit 2" in str(outcome)
    assert cassette.read_bytes() == before


def test_new_episodes_at_a_url_sends_the_headers_and_never_writes_their_values(tmp_path: Path) -> None:
    """``replay --http --mode new_episodes --url U --header "Authorization:Bearer T"``: the
    upstream refuses requests without the header; its value is redacted from what is appended."""
    from tests.http.test_record_proxy import TOKEN, serve_upstream

    cassette = tmp_path / "auth.cassette.json"
    auth = [f"Authorization:Bearer {TOKEN}"]
    add = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
    }
    with serve_upstream() as upstream:
        with (
            recording(cassette, [], "once", url=upstream, headers=auth) as (url, _),
            httpx2.Client(timeout=WAIT) as client,
        ):
            first = client.post(url, json=INIT, headers=ACCEPT)
            assert first.status_code == 200, first.text
            session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            client.delete(url, headers=session)
        with (
            recording(cassette, [], "new_episodes", url=upstream, headers=auth) as (url, outcomes),
            httpx2.Client(timeout=WAIT) as client,
        ):
            first = client.post(url, json=INIT, headers=ACCEPT)
            session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            answer = client.post(url, json=add, headers=session)
            assert "5" in answer.text, answer.text  # forwarded: the upstream took the header
            client.delete(url, headers=session)
    (outcome,) = outcomes
    assert isinstance(outcome, ReplayOutcome) and outcome.report is not None and outcome.report.recorded == 1
    assert [m.method for m in load_cassette(cassette).messages if m.direction == "client"][-1] == "tools/call"
    on_disk = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert TOKEN not in on_disk


SECRET = "sk-tape-" + "Wb4" * 8  # FAKE_TOKEN: the fake server's `secrets` mode answers with it
LATE = "l4te-" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 13 + 1) % 31] for i in range(14))
SECRETS = [sys.executable, str(REPO / "tests" / "servers" / "fake_server.py"), "secrets"]


def _call(i: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _serve_session(args: list[str], messages: list[dict[str, Any]]) -> None:
    """``replay --http ARGS`` as a process: one session of ``messages`` (after INIT), ended by
    DELETE, then SIGTERM (the files are written, exit 143)."""
    import signal

    from tests.serving import url_process

    with url_process(["replay", "--http", *args]) as (proc, url), httpx2.Client(timeout=WAIT) as client:
        first = client.post(url, json=INIT, headers=ACCEPT)
        assert first.status_code == 200, first.text
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        for message in messages:
            assert client.post(url, json=message, headers=session).status_code == 200
        assert client.delete(url, headers=session).status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT) == 128 + signal.SIGTERM, proc.stderr.read() if proc.stderr else ""


def _taped(tape: Path) -> list[tuple[Any, Any]]:
    """(request, response) of each exchange, every payload checked against its digest."""
    from harn_mcp_mock.store import digest
    from harn_mcp_mock.tape import load_tape

    out = []
    for rec in load_tape(tape).records:
        if rec.fields.get("notification"):
            assert digest(rec.payload("payload")) == rec.fields["request_digest"]
            continue
        request, response = rec.payload("request"), rec.payload("response")
        assert (rec.fields["request_digest"], rec.fields["response_digest"]) == (
            digest(request),
            digest(response),
        )
        out.append((orjson.loads(request), orjson.loads(response)))
    return out


def _answers(cassette: Path) -> dict[Any, Any]:
    messages = load_cassette(cassette).messages
    return {m.message["id"]: m.message for m in messages if m.direction == "server" and m.kind == "response"}


def _no_secret_on_disk(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and LATE.encode() not in data, path


def test_a_recording_over_http_tapes_its_exchanges_redacted_as_the_cassette(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("FAKE_TOKEN", SECRET)
    cassette, tape = tmp_path / "s.cassette.json", tmp_path / "s.tape"
    args = ["--mode", "all", "--cassette", str(cassette), "--emit-tape", str(tape), "--", *SECRETS]
    _serve_session(args, [_call(2, "note", text=f"see {LATE}"), _call(3, "login", password=LATE)])
    exchanges = _taped(tape)
    assert [req["id"] for req, _ in exchanges] == [1, 2, 3]
    answers = _answers(cassette)
    assert [resp for _, resp in exchanges] == [answers[i] for i in (1, 2, 3)]
    assert "token is [REDACTED:" in str(exchanges[1][1])
    _no_secret_on_disk(tmp_path)  # LATE, taped before request 3 told it, redacted again


def test_new_episodes_over_http_tapes_every_exchange_served_replayed_or_live(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("FAKE_TOKEN", SECRET)
    cassette, tape = tmp_path / "s.cassette.json", tmp_path / "s.tape"
    _serve_session(["--mode", "all", "--cassette", str(cassette), "--", *SECRETS], [_call(2, "whoami")])
    args = ["--mode", "new_episodes", "--cassette", str(cassette), "--emit-tape", str(tape), "--", *SECRETS]
    session = [_call(2, "whoami"), _call(3, "note", text=f"see {LATE}"), _call(4, "login", password=LATE)]
    _serve_session(args, session)
    exchanges = _taped(tape)
    assert [req["id"] for req, _ in exchanges] == [1, 2, 3, 4]  # replayed 1, 2; live 3, 4
    answers = _answers(cassette)
    assert [resp for _, resp in exchanges] == [answers[i] for i in (1, 2, 3, 4)]
    assert "token is [REDACTED:" in str(exchanges[2][1])
    _no_secret_on_disk(tmp_path)


def test_once_at_a_url_over_http_tapes_as_record_url_does(tmp_path: Path) -> None:
    """``replay --http --mode once --url U --emit-tape T`` with no cassette records through the
    reverse proxy of ``record --url``, and tapes what the client and the upstream exchanged."""
    from tests.http.test_record_proxy import TOKEN, serve_upstream

    cassette, tape = tmp_path / "auth.cassette.json", tmp_path / "auth.tape"
    auth = [f"Authorization:Bearer {TOKEN}"]
    with serve_upstream() as upstream:
        with (
            recording(cassette, [], "once", url=upstream, headers=auth, emit_tape=tape) as (url, outcomes),
            httpx2.Client(timeout=WAIT) as client,
        ):
            first = client.post(url, json=INIT, headers=ACCEPT)
            assert first.status_code == 200, first.text
            session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            added = client.post(url, json=_call(2, "add", a=2, b=3), headers=session)
            assert "5" in added.text, added.text
            client.delete(url, headers=session)
    (outcome,) = outcomes
    assert isinstance(outcome, ReplayOutcome) and outcome.report is None  # it recorded
    exchanges = _taped(tape)
    assert [req["id"] for req, _ in exchanges] == [1, 2]
    answers = _answers(cassette)
    assert [resp for _, resp in exchanges] == [answers[1], answers[2]]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
