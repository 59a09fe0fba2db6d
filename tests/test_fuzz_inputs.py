"""Hypothesis fuzzers over every loader and CLI entry that reads a file: whatever a mutated
cassette, journal, world spec or tape holds, the answer is a harn error from the one exception
tree (one line, a documented exit code), never an internal error (exit 70).

The suite runs a small fixed-seed sample (``derandomize``); ``make fuzz`` runs the ``fuzz``
profile (thousands of examples, HARN_FUZZ_EXAMPLES to change).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from harn_mcp_mock.cassette.model import journal_path, load_cassette
from harn_mcp_mock.cli.mock import app
from harn_mcp_mock.errors import HarnError
from harn_mcp_mock.tape.model import load_tape
from harn_mcp_mock.world.spec import load_spec

REPO = Path(__file__).resolve().parents[1]
CASSETTE = REPO / "cassettes" / "time.cassette.json"
WORLD = REPO / "worlds" / "notes" / "notes.world.json"
EXAMPLES = int(os.environ.get("HARN_FUZZ_EXAMPLES", "0")) or None
DOCUMENTED_EXITS = {0, 1, 2, 3, 4}

settings.register_profile(
    "suite",
    derandomize=True,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
settings.register_profile(
    "fuzz",
    max_examples=EXAMPLES or 3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
PROFILE = settings.get_profile(os.environ.get("HARN_FUZZ_PROFILE", "suite"))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["", "client", "server", "json", "text", "request", "0" * 64, "a" * 64, -1, 2**53]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``doc`` (iterative enough for our small samples)."""
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += paths(value, (*prefix, index))
    return out


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    """``doc`` with one to three values replaced, deleted or given an unknown sibling."""
    doc = orjson.loads(orjson.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)))
        if not where:
            doc = draw(json_values)
            continue
        parent = doc
        try:
            for step in where[:-1]:
                parent = parent[step]
        except (KeyError, IndexError, TypeError):
            continue
        last = where[-1]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        try:
            if action == "replace":
                parent[last] = draw(json_values)
            elif action == "delete":
                del parent[last]
            elif isinstance(parent, dict):
                parent[draw(st.text(max_size=6))] = draw(json_values)
            else:
                parent.append(draw(json_values))
        except (KeyError, IndexError, TypeError):
            continue
    return doc


def harn_or_ok(load: Any, path: Path) -> None:
    try:
        load(path)
    except HarnError as exc:
        assert "\n" not in str(exc)


def cli_exit(args: list[str]) -> int:
    result = CliRunner().invoke(app, args)
    assert result.exit_code in DOCUMENTED_EXITS, (args, result.exit_code, result.output[-2000:])
    assert "internal error" not in result.output and "Traceback" not in result.output
    return result.exit_code


CASSETTE_DOC = orjson.loads(CASSETTE.read_bytes())


@pytest.mark.slow
def test_mutated_cassettes_never_crash_the_loader_or_the_cli() -> None:
    @PROFILE
    @given(mutated(CASSETTE_DOC))
    def case(doc: Any) -> None:
        with tempfile.TemporaryDirectory(prefix="harn-fuzz-") as folder:
            path = Path(folder) / "f.cassette.json"
            path.write_bytes(orjson.dumps(doc))
            harn_or_ok(load_cassette, path)
            cli_exit(["show", "--cassette", str(path)])
            cli_exit(["verify", "--cassette", str(CASSETTE), "--candidate", str(path)])

    case()


def journal_lines(doc: dict[str, Any]) -> list[Any]:
    header = {k: v for k, v in doc.items() if k != "messages"}
    header["format"] = "harn-mcp-mock/journal"
    return [header, *doc["messages"]]


JOURNAL = journal_lines(CASSETTE_DOC)


def test_mutated_journals_never_crash_load_or_recover() -> None:
    @PROFILE
    @given(mutated(JOURNAL))
    def case(lines: Any) -> None:
        with tempfile.TemporaryDirectory(prefix="harn-fuzz-") as folder:
            path = Path(folder) / "j.cassette.json"
            records = lines if isinstance(lines, list) else [lines]
            journal_path(path).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
            harn_or_ok(load_cassette, path)
            cli_exit(["recover", "--cassette", str(path)])

    case()


WORLD_DOC = orjson.loads(WORLD.read_bytes())


@pytest.mark.slow
def test_mutated_world_specs_never_crash_check_world_or_eval() -> None:
    @PROFILE
    @given(mutated(WORLD_DOC))
    def case(doc: Any) -> None:
        with tempfile.TemporaryDirectory(prefix="harn-fuzz-") as folder:
            path = Path(folder) / "f.world.json"
            path.write_bytes(orjson.dumps(doc))
            harn_or_ok(load_spec, path)
            cli_exit(["world", "check", "--spec", str(path)])

    case()


def sample_tape(path: Path) -> list[Any]:
    from harn_mcp_mock.clock import PausedClock
    from harn_mcp_mock.store.canonical import digest
    from harn_mcp_mock.tape import TapeWriter

    clock = PausedClock(1_767_225_600_000, step_ns=1_000_000)
    with TapeWriter(path, clock=clock, script_path="examples/cron.harn", argv=["--mode=daily"]) as w:
        w.record("clock_read", source="wall", value_ms=clock.wall_ms())
        w.record("llm_call", request_digest=digest(b"req"), payloads={"response": "hello"})
        w.record("file_write", path="out.txt", content_hash=digest(b"data"), len_bytes=4)
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_mutated_tapes_never_crash_the_loader_or_fidelity() -> None:
    from harn_mcp_mock.cli.testbench import app as bench_app

    with tempfile.TemporaryDirectory(prefix="harn-fuzz-") as folder:
        good = Path(folder) / "good.tape"
        lines = sample_tape(good)

        @PROFILE
        @given(mutated(lines))
        def case(doc: Any) -> None:
            with tempfile.TemporaryDirectory(prefix="harn-fuzz-") as inner:
                path = Path(inner) / "f.tape"
                records = doc if isinstance(doc, list) else [doc]
                path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
                harn_or_ok(load_tape, path)
                result = CliRunner().invoke(bench_app, ["fidelity", str(good), str(path)])
                assert result.exit_code in DOCUMENTED_EXITS, (result.exit_code, result.output[-2000:])
                assert "internal error" not in result.output

        case()
