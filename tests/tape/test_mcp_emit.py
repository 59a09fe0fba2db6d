"""`--emit-tape` on record, replay and world: one event tape catches MCP traffic, redacted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from harn_mcp_mock.cli.fidelity import fidelity_main
from harn_mcp_mock.tape import load_tape
from harn_mcp_mock.world.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
FAKE = str(ROOT / "tests" / "servers" / "fake_server.py")  # answers each line in order, echoing $FAKE_TOKEN
TICKETS = str(ROOT / "worlds" / "tickets" / "tickets.world.json")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 60


def msg(i: int, method: str, **params: object) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + b"\n"


INIT = msg(
    0, "initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"}
)


def run(args: list[str], stdin: bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    import os

    done = subprocess.run(
        [*HARN, *args], input=stdin, capture_output=True, timeout=WAIT, env={**os.environ, **env}
    )
    assert done.returncode == 0, done.stderr
    return done


def test_record_and_replay_write_the_same_mcp_exchanges_with_secrets_redacted(tmp_path: Path) -> None:
    secret = "sk-tape-" + "Zq7" * 8
    session = (
        INIT
        + msg(1, "tools/call", name="whoami", arguments={})
        + msg(2, "tools/call", name="read_note", arguments={"name": "welcome"})
    )
    cassette = tmp_path / "n.cassette.json"
    run(
        [
            "record",
            "-q",
            "--cassette",
            str(cassette),
            "--emit-tape",
            str(tmp_path / "rec.tape"),
            "--",
            sys.executable,
            FAKE,
            "secrets",
        ],
        session,
        FAKE_TOKEN=secret,
    )
    run(["replay", "--cassette", str(cassette), "--emit-tape", str(tmp_path / "rep.tape")], session)
    recorded, replayed = load_tape(tmp_path / "rec.tape"), load_tape(tmp_path / "rep.tape")
    methods = [r.fields.get("method") for r in recorded.records if r.kind == "mcp_json_rpc"]
    assert methods == ["initialize", "tools/call", "tools/call"]
    assert [r.fields.get("method") for r in replayed.records if r.kind == "mcp_json_rpc"] == methods
    assert [r.fields["response_digest"] for r in recorded.records][1:] == [
        r.fields["response_digest"] for r in replayed.records
    ][1:]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_world_tape_is_byte_identical_for_the_same_seed_and_calls_and_fidelity_agrees(
    tmp_path: Path,
) -> None:
    calls = INIT + msg(1, "tools/call", name="assign_ticket", arguments={"ticket_id": "T-1", "user_id": "u1"})
    calls += msg(2, "tools/call", name="list_tickets", arguments={"status": "open"})
    for name in ("a", "b"):
        run(
            [
                "world",
                "--spec",
                TICKETS,
                "--seed",
                "5",
                "--run-id",
                "x",
                "--emit-tape",
                str(tmp_path / f"{name}.tape"),
            ],
            calls,
        )
    assert (tmp_path / "a.tape").read_bytes() == (tmp_path / "b.tape").read_bytes()
    tape = load_tape(tmp_path / "a.tape")
    assert (
        tape.records[0].virtual_time_ms == load_spec(TICKETS).start_ms
    )  # the world's virtual clock, not the wall clock
    assert fidelity_main(tmp_path / "a.tape", tmp_path / "b.tape", "byte-identical", None) == 0
    slow = [
        "world",
        "--spec",
        TICKETS,
        "--seed",
        "5",
        "--run-id",
        "x",
        "--faults",
        "flaky",
        "--emit-tape",
        str(tmp_path / "c.tape"),
    ]
    run(slow, calls)
    report = tmp_path / "fidelity.json"
    assert fidelity_main(tmp_path / "a.tape", tmp_path / "c.tape", "semantic", report) == 2
    assert orjson.loads(report.read_bytes())["divergences"]


def test_a_replay_tape_and_report_hold_no_value_a_later_request_told(tmp_path: Path) -> None:
    late = "l4te-" + "".join("abcdefghjkmnpqrstuvwxyz23456789"[(i * 5 + 2) % 31] for i in range(14))
    session = (
        INIT
        + msg(
            1,
            "tools/call",
            name="convert_time",
            arguments={"source_timezone": "Europe/Paris", "time": f"see {late}", "target_timezone": "UTC"},
        )
        + msg(2, "tools/call", name="login", arguments={"password": late})
    )
    tape, report = tmp_path / "rep.tape", tmp_path / "report.json"
    cassette = ROOT / "cassettes" / "time.cassette.json"
    run(["replay", "--cassette", str(cassette), "--emit-tape", str(tape), "--report", str(report)], session)
    # Request 1 (a miss) reached the tape and the report's misses before request 2 told `late`.
    for path in (tape, report):
        assert late.encode() not in path.read_bytes(), path
    assert "see [REDACTED:" in str(orjson.loads(report.read_bytes())["misses"])
    records = [r for r in load_tape(tape).records if r.kind == "mcp_json_rpc"]
    assert b"see [REDACTED:" in records[1].payload("request")


def test_record_tapes_the_request_the_server_died_on_as_unanswered(tmp_path: Path) -> None:
    session = INIT + msg(1, "tools/list") + msg(2, "tools/call", name="whoami", arguments={})
    done = subprocess.run(
        [
            *HARN,
            *("record", "-q", "--cassette", str(tmp_path / "d.cassette.json")),
            *("--emit-tape", str(tmp_path / "d.tape"), "--", sys.executable, FAKE, "die-on", "2"),
        ],
        input=session,
        capture_output=True,
        timeout=WAIT,
    )
    assert done.returncode == 3, done.stderr  # the server's exit code
    records = [r.fields for r in load_tape(tmp_path / "d.tape").records if r.kind == "mcp_json_rpc"]
    assert [(f.get("method"), f.get("unanswered", False)) for f in records] == [
        ("initialize", False),
        ("tools/list", False),
        ("tools/call", True),
    ]
