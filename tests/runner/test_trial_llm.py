"""One standalone ``harn mcp mock llm`` serving every trial of a run (issue 36, item 4):
``run --llm URL`` hands each trial its own route (``HARN_LLM_URL`` = ``URL/t/<route>/v1``) and
counts what the endpoint answered on that route into the trial's usage, so ``--max-tokens``
judges the model calls the runner did not have to trust the agent to report.

Real processes throughout: the endpoint is ``harn mcp mock llm`` in a process of its own, each
agent a Python process (in the sandbox where bubblewrap runs) that talks to it over HTTP and then
solves its task through its world; every wait is bounded (a subprocess timeout, the run's
``--timeout``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serving import url_process

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
WAIT = 180
AGENT = f"""
import json, os, runpy, sys, urllib.request

URL = os.environ["HARN_LLM_URL"]
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))


def call(pad):
    content = os.environ["HARN_TASK_PROMPT"] + " " + "x" * pad
    body = {{"model": "m", "messages": [{{"role": "user", "content": content}}], "tools": []}}
    request = urllib.request.Request(
        URL + "/chat/completions", json.dumps(body).encode(), {{"content-type": "application/json"}}
    )
    with OPENER.open(request, timeout=30) as answer:
        return json.loads(answer.read())["usage"]


trial = int(os.environ["HARN_RUN_ID"].rsplit(".t", 1)[1])
plan = json.loads(sys.argv[1])  # each trial's calls (the padding of each), and a rendezvous
spent = [call(pad) for pad in plan["before"].get(str(trial), [])]
if plan.get("meet"):  # trial 1 waits for trial 2 here: both are running at once
    with open(plan["meet"], "w" if trial == 1 else "r") as meet:
        meet.write("1") if trial == 1 else meet.read()
spent += [call(pad) for pad in plan["after"].get(str(trial), [])]
print(json.dumps({{"tokens": sum(u["prompt_tokens"] + u["completion_tokens"] for u in spent),
                  "calls": len(spent)}}))
sys.argv = [{str(SCRIPTED)!r}, "--harn-trial", "good"]
runpy.run_path({str(SCRIPTED)!r}, run_name="__main__")
"""


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """A standalone ``harn mcp mock llm`` (its own process) for the module's runs."""
    with url_process(["llm", "--spec", "bank"]) as (_proc, url):
        yield url


def run_cli(
    tmp_path: Path, llm: str | None, plan: dict[str, Any], *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "agent.py").write_text(AGENT)
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent",
         "--out", "out", "--timeout", "120", *(["--llm", llm] if llm else []), *flags, "--",
         sys.executable, str(tmp_path / "agent.py"), json.dumps(plan)],
        cwd=tmp_path, capture_output=True, text=True, timeout=WAIT, env=env,
    )  # fmt: skip


def trial(tmp_path: Path, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Trial ``n``'s record and what its agent saw the endpoint answer (its stdout)."""
    folder = tmp_path / "out" / "trials" / "bank" / "pay-rent" / "none" / str(n)
    record = json.loads((folder / "trial.json").read_text())
    seen = json.loads((folder / "agent.stdout").read_text().splitlines()[0])
    return record, seen


def runs(tmp_path: Path) -> list[dict[str, Any]]:
    found = json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    assert isinstance(found, list)
    return sorted(found, key=lambda r: r["run_id"])


def test_max_tokens_100_judges_what_the_agent_spent_on_a_standalone_endpoint(
    tmp_path: Path, endpoint: str
) -> None:
    done = run_cli(tmp_path, endpoint, {"before": {"1": [2000]}, "after": {}}, "--max-tokens", "100")
    assert done.returncode == 0, done.stderr
    record, seen = trial(tmp_path, 1)
    assert seen["tokens"] > 500 and record["usage"]["calls"] == 1
    assert record["usage"]["input_tokens"] + record["usage"]["output_tokens"] == seen["tokens"]
    (run,) = runs(tmp_path)
    assert run["goal_match"] and not run["passed"]  # solved, but over budget
    assert run["over_budget"] == f"{seen['tokens']} tokens > --max-tokens 100"
    assert "1 over_budget" in done.stdout


def test_without_llm_the_same_agent_on_the_endpoint_is_usage_unknown_never_a_silent_pass(
    tmp_path: Path, endpoint: str
) -> None:
    # The case: the agent calls the standalone endpoint's own URL; the run cannot see it.
    env = {**os.environ, "HARN_LLM_URL": endpoint}
    done = run_cli(tmp_path, None, {"before": {"1": [2000]}, "after": {}}, "--max-tokens", "100", env=env)
    assert done.returncode == 0, done.stderr
    record, seen = trial(tmp_path, 1)
    assert seen["tokens"] > 500 and "usage" not in record
    (run,) = runs(tmp_path)
    assert run["goal_match"] and not run["passed"]
    assert run["usage_unknown"] == "no usage reported: --max-tokens 100 cannot be judged"
    assert "1 usage_unknown" in done.stdout


def test_two_trials_at_once_on_one_endpoint_each_get_their_own_usage(tmp_path: Path, endpoint: str) -> None:
    meet = tmp_path / "meet"
    os.mkfifo(meet)  # trial 1 opens it to write, trial 2 to read: each waits for the other
    plan = {"before": {"1": [40], "2": [400, 10]}, "after": {"1": [4], "2": [1000]}, "meet": str(meet)}
    done = run_cli(tmp_path, endpoint, plan, "--k", "2", "--workers", "2", "--max-tokens", "500")
    assert done.returncode == 0, done.stderr
    (one, seen_one), (two, seen_two) = trial(tmp_path, 1), trial(tmp_path, 2)
    assert (one["usage"]["calls"], two["usage"]["calls"]) == (2, 3)
    assert one["usage"]["input_tokens"] + one["usage"]["output_tokens"] == seen_one["tokens"]
    assert two["usage"]["input_tokens"] + two["usage"]["output_tokens"] == seen_two["tokens"]
    assert seen_one["tokens"] < 500 < seen_two["tokens"]
    first, second = runs(tmp_path)
    assert first["passed"] and "over_budget" not in first
    assert second["over_budget"] == f"{seen_two['tokens']} tokens > --max-tokens 500"


def test_an_endpoint_that_cannot_be_reached_is_refused_before_any_trial(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run_cli(tmp_path, f"http://127.0.0.1:{port}/v1", {"before": {}, "after": {}})
    assert done.returncode == 2, done.stderr
    assert f"--llm: cannot reach http://127.0.0.1:{port}/v1" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_an_endpoint_that_fails_to_give_a_trials_usage_makes_it_invalid(tmp_path: Path) -> None:
    """Up when the run starts (it lists its models), refusing the usage when the trial ends."""
    import http.server
    import threading

    class Half(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"object": "list", "data": []}'
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.send_error(500, "ledger lost")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Half)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        done = run_cli(
            tmp_path, f"http://127.0.0.1:{server.server_address[1]}/v1", {"before": {}, "after": {}}
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)
    assert done.returncode == 0, done.stderr
    (run,) = runs(tmp_path)
    assert run["goal_match"] and not run["passed"]
    assert run["usage_invalid"].startswith("the LLM endpoint's usage could not be taken: HTTP 500")


@pytest.mark.ray
def test_on_ray_each_trial_gets_its_route_and_its_usage(tmp_path: Path, endpoint: str) -> None:
    pytest.importorskip("ray")
    from harn_mcp_mock.runner import Budget, run_episodes

    (tmp_path / "agent.py").write_text(AGENT)
    plan = {"before": {"1": [40], "2": [3000]}, "after": {}}
    outcome = run_episodes(
        ["bank"], [sys.executable, str(tmp_path / "agent.py"), json.dumps(plan)], out=tmp_path / "out",
        tasks=["pay-rent"], k=2, workers=2, backend="ray", timeout=120, llm=endpoint,
        budget=Budget(max_tokens=500),
    )  # fmt: skip
    (one, seen_one), (two, seen_two) = trial(tmp_path, 1), trial(tmp_path, 2)
    assert one["ray_node"] and (one["usage"]["calls"], two["usage"]["calls"]) == (1, 1)
    assert one["usage"]["input_tokens"] + one["usage"]["output_tokens"] == seen_one["tokens"]
    assert two["usage"]["input_tokens"] + two["usage"]["output_tokens"] == seen_two["tokens"]
    assert [run.score.passed for run in outcome.result.runs] == [True, False]  # 2: over budget


def test_llm_is_refused_for_an_in_process_agent_and_without_an_http_url(tmp_path: Path) -> None:
    from harn_mcp_mock.errors import UsageError
    from harn_mcp_mock.runner import Trial, run_episodes

    async def agent(session: object, trial: Trial) -> None:
        return None

    with pytest.raises(UsageError, match="--llm: is for an agent command"):
        run_episodes(["bank"], agent, out=tmp_path / "a", llm="http://127.0.0.1:1/v1")
    with pytest.raises(UsageError, match="--llm: expected the http:// URL"):
        run_episodes(["bank"], [sys.executable, "-c", "pass"], out=tmp_path / "b", llm="127.0.0.1:1")
    assert not (tmp_path / "b").exists()  # refused before the run folder is made
