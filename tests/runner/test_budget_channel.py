"""Usage through the runner's channel (issue 35, item 4): ``HARN_USAGE_FILE`` is a FIFO the runner
makes and reads as lines arrive, so what an agent reported stays counted whatever it does to the
path afterwards; lines are strict (a malformed one is ``usage_invalid``, never a pass) and capped;
nothing an agent does there blocks the runner, and a writer after the trial fails at once.

Real agent processes throughout; every wait is bounded (a subprocess timeout, ``anyio.fail_after``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from harn_mcp_mock.runner import Budget, run_episodes
from harn_mcp_mock.runner.budget import (
    USAGE_LINE_MAX,
    Usage,
    UsageChannel,
    UsageReader,
    read_usage,
    trial_usage,
)
from harn_mcp_mock.runner.run import summarise_failures

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
WAIT = 120
SOLVE = f"""
sys.argv = [{str(SCRIPTED)!r}, "--harn-trial", "good"]
runpy.run_path({str(SCRIPTED)!r}, run_name="__main__")
"""
"""An agent's last lines: the scripted agent solves the task for real."""


def agent(folder: Path, name: str, body: str) -> list[str]:
    path = folder / f"{name}.py"
    path.write_text(
        "import json, os, runpy, signal, stat, sys\nUSAGE = os.environ['HARN_USAGE_FILE']\n" + body
    )
    return [sys.executable, str(path)]


def trial_folder(out: Path) -> Path:
    return out / "trials" / "bank" / "pay-rent" / "none" / "1"


def run_cli(tmp_path: Path, out: str, body: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """``harn mcp mock run`` in a process of its own, under a timeout (a hang fails the test)."""
    command = agent(tmp_path, "agent", body)
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent",
         "--workers", "1", "--out", out, *flags, "--", *command],
        cwd=tmp_path, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip


def only_run(out: Path) -> dict[str, Any]:
    (run,) = json.loads((out / "results.json").read_text())["runs"]
    assert isinstance(run, dict)
    return run


REPORT_5000 = (
    "with open(USAGE, 'a') as usage:\n"
    "    usage.write(json.dumps({'input_tokens': 4000, 'output_tokens': 1000, 'cost_usd': 0.05}) + '\\n')\n"
)


def test_truncating_the_usage_file_after_reporting_does_not_dodge_max_tokens(tmp_path: Path) -> None:
    body = REPORT_5000 + (
        "open(USAGE, 'w').close()\n"  # truncate what was reported
        "try:\n    os.truncate(USAGE, 0)\nexcept OSError:\n    pass\n"
    )
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "truncate", body), out=tmp_path / "out", tasks=["pay-rent"],
        workers=1, timeout=WAIT, budget=Budget(max_tokens=100),
    )  # fmt: skip
    (record,) = outcome.trials
    assert record["usage"] == {"input_tokens": 4000, "output_tokens": 1000, "cost_usd": 0.05, "calls": 1}
    (run,) = outcome.result.runs
    assert run.score.over_budget == "5000 tokens > --max-tokens 100" and not run.score.passed


@pytest.mark.parametrize(
    ("name", "body", "reason"),
    [
        (
            "strings",
            "with open(USAGE, 'a') as usage:\n"
            "    usage.write(json.dumps({'input_tokens': '5000', 'output_tokens': '0'}) + '\\n')\n" + SOLVE,
            'line 1: "input_tokens" is "5000", not a whole number of at least 0',
        ),
        (
            "negative",
            "with open(USAGE, 'a') as usage:\n"
            '    usage.write(\'{"input_tokens": 5000}\\n{"input_tokens": -5000}\\n\')\n' + SOLVE,
            'line 2: "input_tokens" is -5000, not a whole number of at least 0',
        ),
        (
            "torn",  # the agent dies mid-line: the line it never finished is invalid too
            "try:\n" + SOLVE.replace("\n", "\n    ") + "\nexcept SystemExit:\n    pass\n"
            "fd = os.open(USAGE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
            'os.write(fd, b\'{"input_tokens": 5000, "output_tok\')\n'
            "os.kill(os.getpid(), signal.SIGKILL)\n",
            "line 1: torn (no newline at its end when the trial ended)",
        ),
    ],
    ids=["strings", "negative", "torn"],
)
def test_a_malformed_usage_line_is_usage_invalid_and_the_solved_trial_fails(
    tmp_path: Path, name: str, body: str, reason: str
) -> None:
    outcome = run_episodes(
        ["bank"], agent(tmp_path, name, body), out=tmp_path / "out", tasks=["pay-rent"], workers=1,
        timeout=WAIT,
    )  # fmt: skip
    (record,) = outcome.trials
    assert record["status"] == "scored" and record["usage_invalid"] == reason
    (run,) = outcome.result.runs
    assert run.score.goal_match and run.score.usage_invalid == reason and not run.score.passed
    assert summarise_failures(outcome.trials, outcome.result)["usage_invalid"] == 1
    state = json.loads((trial_folder(tmp_path / "out") / "state.json").read_text())
    assert state["usage_invalid"] == reason and state["usage"]["invalid"] == reason


@pytest.mark.parametrize(
    "swap",
    [
        "os.unlink(USAGE); os.mkfifo(USAGE)",  # a FIFO of its own: no reader ever comes
        "os.unlink(USAGE)",
        "os.unlink(USAGE); open(USAGE, 'w').write(json.dumps({'input_tokens': 0}) + '\\n')",
    ],
    ids=["own-fifo", "deleted", "own-file"],
)
@pytest.mark.parametrize("sandbox", ["none", "auto"])
def test_an_agent_that_swaps_the_usage_path_neither_hangs_the_runner_nor_drops_its_usage(
    tmp_path: Path, swap: str, sandbox: str
) -> None:
    # Without a sandbox the swap succeeds; under bubblewrap the channel is a read-only mount point
    # that cannot be removed (the swap fails, and the agent goes on).
    attempt = "try:\n    " + swap + "\nexcept OSError:\n    pass\n"
    done = run_cli(tmp_path, "out", REPORT_5000 + attempt, "--max-tokens", "100", "--sandbox", sandbox)
    assert done.returncode == 0, done.stderr
    assert only_run(tmp_path / "out")["over_budget"] == "5000 tokens > --max-tokens 100"
    record = json.loads((trial_folder(tmp_path / "out") / "trial.json").read_text())
    assert record["usage"]["input_tokens"] == 4000 and "usage_invalid" not in record
    # The resume re-judges from the record, and does not hang either.
    again = run_cli(tmp_path, "out", REPORT_5000 + swap + "\n", "--max-tokens", "10000")
    assert again.returncode == 0, again.stderr
    assert only_run(tmp_path / "out")["passed"] is False and "over_budget" not in only_run(tmp_path / "out")


def test_a_flood_of_usage_never_blocks_the_agent_or_the_runner_and_is_invalid(tmp_path: Path) -> None:
    body = (
        "line = json.dumps({'input_tokens': 1, 'output_tokens': 1, 'cost_usd': 0.0}) + '\\n'\n"
        "fd = os.open(USAGE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
        "for _ in range(40000):\n    os.write(fd, line.encode())\n"  # 2.4 MB, one write a line
        "print('flooded')\n"
    )
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "flood", body), out=tmp_path / "out", tasks=["pay-rent"], workers=1,
        timeout=WAIT,
    )  # fmt: skip
    (record,) = outcome.trials
    assert record["status"] == "scored" and record["exit_code"] == 0
    assert (trial_folder(tmp_path / "out") / "agent.stdout").read_text() == "flooded\n"
    assert record["usage_invalid"] == "more than 1048576 bytes of usage"
    line = len(json.dumps({"input_tokens": 1, "output_tokens": 1, "cost_usd": 0.0})) + 1
    assert record["usage"]["calls"] == 1048576 // line  # every whole line within the cap is counted


WRITER = """
import sys
from harn_mcp_mock.runner import report_usage
print(report_usage(input_tokens=5000, output_tokens=0))
"""


def late_write(path: str) -> str:
    """``report_usage`` in a process of its own with ``HARN_USAGE_FILE=path``: what it returned."""
    env = {**os.environ, "HARN_USAGE_FILE": path}
    return subprocess.run(
        [sys.executable, "-c", WRITER], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()


def test_a_writer_after_the_trial_fails_at_once_and_changes_nothing(tmp_path: Path) -> None:
    body = "print(USAGE)\n" + REPORT_5000.replace("4000", "40").replace("1000", "10")
    first = run_cli(tmp_path, "out", body, "--max-tokens", "100")
    assert first.returncode == 0, first.stderr
    path = (trial_folder(tmp_path / "out") / "agent.stdout").read_text().strip()
    assert late_write(path) == "False"  # the trial's channel is gone: nothing to write to
    again = run_cli(tmp_path, "out", body, "--max-tokens", "100")  # judged again from the record
    assert again.returncode == 0, again.stderr
    assert "over_budget" not in only_run(tmp_path / "out")
    record = json.loads((trial_folder(tmp_path / "out") / "trial.json").read_text())
    assert record["usage"]["input_tokens"] == 40
    # A FIFO with no reader (a channel whose runner is gone) does not block a writer either.
    fifo = tmp_path / "no-reader.usage"
    os.mkfifo(fifo)
    assert late_write(str(fifo)) == "False"


LLM_AGENT = """
import urllib.request
from harn_mcp_mock.llm import serve_llm

body = {"model": "m", "messages": [{"role": "user", "content": os.environ["HARN_TASK_PROMPT"]}], "tools": []}
with serve_llm(os.environ["HARN_SPEC"]) as url:  # HARN_USAGE_FILE: the runner's channel
    for _ in range(2):
        request = urllib.request.Request(
            url + "/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
        )
        urllib.request.urlopen(request, timeout=30).read()
"""


def test_the_scripted_llm_endpoint_reports_through_the_channel(tmp_path: Path) -> None:
    outcome = run_episodes(
        ["bank"], agent(tmp_path, "llm", LLM_AGENT), out=tmp_path / "out", tasks=["pay-rent"], workers=1,
        timeout=WAIT,
    )  # fmt: skip
    (record,) = outcome.trials
    assert record["usage"]["calls"] == 2 and record["usage"]["input_tokens"] > 0
    assert "usage_invalid" not in record


# -- the reader and the channel, in this process ----------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"input_tokens": "5"}', '"input_tokens" is "5", not a whole number of at least 0'),
        (b'{"output_tokens": true}', '"output_tokens" is true, not a whole number of at least 0'),
        (b'{"output_tokens": 2.0}', '"output_tokens" is 2.0, not a whole number of at least 0'),
        (b'{"input_tokens": -1}', '"input_tokens" is -1, not a whole number of at least 0'),
        (b'{"cost_usd": NaN}', '"cost_usd" is NaN, not a finite number of at least 0'),
        (b'{"cost_usd": 1e400}', '"cost_usd" is Infinity, not a finite number of at least 0'),
        (b'{"cost_usd": -0.5}', '"cost_usd" is -0.5, not a finite number of at least 0'),
        (b'{"cost_usd": null}', '"cost_usd" is null, not a finite number of at least 0'),
        (b'{"usage": {"input_tokens": 5}}', "has none of input_tokens, output_tokens, cost_usd"),
        (b'{"prompt_tokens": 5}', "has none of input_tokens, output_tokens, cost_usd"),
        (b"[5]", "not a JSON object"),
        (b"five", "not JSON"),
        (b'{"input_tokens": 5, "x": "\xff"}', "not UTF-8"),
        (b"[" * 3000 + b"]" * 3000, f"longer than {USAGE_LINE_MAX} bytes"),
    ],
)
def test_the_reader_takes_no_line_it_cannot_read_whole(line: bytes, reason: str) -> None:
    reader = UsageReader()
    reader.feed(b'{"input_tokens": 7, "model": "any"}\n\n' + line + b"\n" + b'{"cost_usd": 0.5}\n')
    usage = reader.finish()
    assert (usage.input_tokens, usage.cost_usd, usage.calls) == (7, 0.5, 2)
    assert usage.invalid == 1 and usage.invalid_reason == f"line 2: {reason}"
    assert trial_usage(usage)["usage_invalid"] == f"line 2: {reason}"


def test_the_reader_takes_lines_in_any_pieces_and_stops_at_its_cap() -> None:
    data = b'{"input_tokens": 1}\n' * 10
    reader = UsageReader(limit=len(data))
    for i in range(len(data)):  # byte by byte: the same sum
        reader.feed(data[i : i + 1])
    assert reader.finish() == Usage(10, 0, 0.0, calls=10)
    capped = UsageReader(limit=len(data) - 5)
    capped.feed(data + b'{"input_tokens": 1}\n' * 1000)
    usage = capped.finish()
    assert usage.calls == 9 and usage.problem == f"more than {len(data) - 5} bytes of usage"
    long = UsageReader()
    long.feed(b"x" * (USAGE_LINE_MAX * 3))
    long.feed(b'\n{"input_tokens": 3}\n')  # the line after a long one is read again
    assert long.finish() == Usage(
        3, 0, 0.0, calls=1, invalid=1, invalid_reason="line 1: longer than 4096 bytes"
    )


def test_a_record_whose_usage_was_changed_after_the_runner_wrote_it_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    from harn_mcp_mock.errors import UsageError
    from harn_mcp_mock.runner.folder import TrialRecord

    record = TrialRecord("bank", "t", "none", 1, "t.none.t1", 1, "scored", usage=Usage(5000, 0, 0.0, 1))
    doc = record.to_json()
    assert TrialRecord.from_json(doc, tmp_path / "trial.json").usage == record.usage
    invalid = Usage(1, 0, 0.0, 1, 1, 'line 2: "input_tokens" is "4"')  # a usage_invalid round-trips
    again = TrialRecord.from_json({**doc, "usage": invalid.to_dict()}, tmp_path / "trial.json")
    assert again.usage is not None and again.usage.problem == invalid.problem
    with pytest.raises(UsageError, match=r"trial.json:usage.input_tokens: expected an integer"):
        TrialRecord.from_json({**doc, "usage": {"input_tokens": "5000"}}, tmp_path / "trial.json")


def test_an_in_process_usage_file_is_read_by_the_same_rules(tmp_path: Path) -> None:
    path = tmp_path / "usage.ndjson"
    path.write_text('{"input_tokens": 4}\n{"input_tokens": "4"}\n')
    usage = read_usage(path)
    assert usage is not None and usage.calls == 1 and usage.problem is not None
    os.mkfifo(tmp_path / "fifo")
    fifo = read_usage(tmp_path / "fifo")  # never blocks on a FIFO
    assert fifo is not None and fifo.problem == "the usage file is not a regular file"


async def test_the_channel_reads_as_lines_arrive_and_outlives_its_path(tmp_path: Path) -> None:
    from harn_mcp_mock.runner.budget import write_usage_line

    channel = UsageChannel(str(tmp_path / "t.usage")).open()
    try:
        assert os.stat(channel.path).st_mode & 0o777 == 0o200  # write only, once the runner opened it
        with anyio.fail_after(30):
            assert await anyio.to_thread.run_sync(write_usage_line, channel.path, {"input_tokens": 5})
        os.unlink(channel.path)  # an agent removes it: what it wrote stays counted
        os.mkfifo(channel.path)  # and puts its own there: the runner never opens it
    finally:
        with anyio.fail_after(30):
            usage = await anyio.to_thread.run_sync(channel.close)
    assert usage == Usage(5, 0, 0.0, calls=1)
    assert channel.close() is usage and not await anyio.to_thread.run_sync(os.path.lexists, channel.path)
