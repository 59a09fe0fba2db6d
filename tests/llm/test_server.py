"""The scripted endpoint driven by the official ``openai`` and ``anthropic`` SDKs: each API,
whole and streamed, plays every bank task through a real world session, with and without the
``flaky`` faults; requests are logged in the trial folder and usage goes to HARN_USAGE_FILE."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from harn_mcp_mock import run_eval
from harn_mcp_mock.llm import serve_llm
from tests.llm.agents import chat_agent, messages_agent, responses_agent
from tests.serving import url_process

pytestmark = pytest.mark.frameworks


@pytest.fixture(autouse=True)
def _sdks_installed() -> None:
    """The SDKs are imported by the tests that run, not at collection (every xdist worker
    collects this module, and importing them costs seconds)."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")


AGENTS = {"chat": chat_agent, "responses": responses_agent, "messages": messages_agent}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", sorted(AGENTS))
def test_every_api_plays_every_bank_task_and_recovers_from_the_flaky_faults(api: str, stream: bool) -> None:
    with serve_llm("bank", "reference") as url:
        result = run_eval(AGENTS[api](url, stream=stream), "bank", k=1, faults=["flaky"], workers=1)
    assert {(g.faults, float(g.pass_rate)) for g in result.groups} == {(None, 1.0), ("flaky", 1.0)}


@pytest.mark.parametrize(("policy", "flaky"), [("naive", 0.25), ("noop", 0.0)])
def test_naive_pays_twice_under_faults_and_noop_misses_every_goal(policy: str, flaky: float) -> None:
    with serve_llm("bank", policy) as url:  # type: ignore[arg-type]
        result = run_eval(chat_agent(url), "bank", k=1, faults=["flaky"], workers=1)
    rates = {g.faults: float(g.pass_rate) for g in result.groups}
    assert rates == {None: 1.0 if policy == "naive" else 0.0, "flaky": flaky}


def test_each_request_is_logged_and_its_usage_appended(tmp_path: Path) -> None:
    usage = tmp_path / "usage.jsonl"
    with serve_llm("bank", log_dir=tmp_path / "trial", usage_file=usage) as url:
        run_eval(messages_agent(url), "bank", k=1, tasks=["freeze-stolen-card"], workers=1)
    log = [json.loads(line) for line in (tmp_path / "trial" / "llm.ndjson").read_text().splitlines()]
    assert [e["tool_calls"][0]["name"] if e["tool_calls"] else e["text"] for e in log] == [
        "mcp__bank__list_accounts",
        "mcp__bank__freeze_account",
        "Done: freeze-stolen-card (list_accounts, freeze_account).",
    ]
    assert [e["n"] for e in log] == [1, 2, 3] and log[0]["api"] == "messages"
    records = [json.loads(line) for line in usage.read_text().splitlines()]
    assert len(records) == 3
    assert all(
        set(r) == {"input_tokens", "output_tokens", "cost_usd"} and r["input_tokens"] > 0 for r in records
    )
    assert [r["input_tokens"] for r in records] == [e["input_tokens"] for e in log]


def test_the_same_request_gets_the_same_bytes() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "freeze-stolen-card"}], "tools": []}

    async def twice(url: str) -> list[bytes]:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient() as client:
                return [(await client.post(f"{url}/chat/completions", json=body)).content for _ in range(2)]

    with serve_llm("bank") as url:
        first, second = anyio.run(twice, url)
    assert first == second
    assert "no tool 'list_accounts' is offered" in json.loads(first)["choices"][0]["message"]["content"]


def test_the_command_prints_its_url_first_and_answers_the_sdk(tmp_path: Path) -> None:
    from openai import OpenAI

    with url_process(["llm", "--spec", "bank", "--policy", "noop"]) as (proc, url):
        assert url.endswith("/v1")
        client = OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=30)
        task = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "pay-rent"}])
        assert task.choices[0].message.content == "I will not act on pay-rent."
        assert [m.id for m in client.models.list()] == ["harn-scripted"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143


def test_bad_requests_are_answered_in_the_apis_error_shape() -> None:
    async def ask(url: str) -> list[Any]:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient() as client:
                bad = await client.post(f"{url}/messages", content=b"[1]")
                lost = await client.post(f"{url}/embeddings", json={})
                return [(bad.status_code, bad.json()["error"]["message"]), lost.status_code]

    with serve_llm("bank") as url:
        assert anyio.run(ask, url) == [(400, "bad request body: the body is not a JSON object"), 404]
