"""The endpoint's per-trial routes (``/t/<route>/v1``): each route's usage is kept in its own
ledger, taken once by whoever holds the route's secret (``POST /harn/usage/<secret>``), and a
request after the take is answered with its usage dropped. A real HTTP server (``serve_llm``)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.llm.server import serve_llm
from harn_mcp_mock.runner.budget import endpoint_base, route_of, take_usage

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def ask(url: str, content: str) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], "tools": []}
    request = urllib.request.Request(
        url + "/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with OPENER.open(request, timeout=30) as answer:
        usage = json.loads(answer.read())["usage"]
    assert isinstance(usage, dict)
    return usage


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def test_each_route_keeps_its_own_usage_until_its_secret_takes_it_once(tmp_path: Path) -> None:
    usage_file = tmp_path / "usage.ndjson"
    with serve_llm("bank", usage_file=usage_file) as url:
        base = endpoint_base(url)
        assert base + "/v1" == url and endpoint_base(base + "/") == base
        one, two = "secret-of-trial-one-0123456789", "secret-of-trial-two-0123456789"
        assert route_of(one) != route_of(two) and one not in route_of(one) and len(route_of(one)) == 32
        spent_one = ask(f"{base}/t/{route_of(one)}/v1", "pay-rent")
        spent_two = [ask(f"{base}/t/{route_of(two)}/v1", "pay-rent " + "x" * n) for n in (100, 300)]
        ask(url, "pay-rent")  # no route: to the endpoint's own usage file, as before
        taken = lines(take_usage(url, one))
        assert [(u["input_tokens"], u["output_tokens"]) for u in taken] == [
            (spent_one["prompt_tokens"], spent_one["completion_tokens"])
        ]
        assert [u["input_tokens"] for u in lines(take_usage(base, two))] == [
            u["prompt_tokens"] for u in spent_two
        ]
        with pytest.raises(OSError, match="HTTP 409"):  # taken once: an agent cannot empty it
            take_usage(url, one)
        ask(f"{base}/t/{route_of(one)}/v1", "pay-rent")  # after the take: answered, usage dropped
        assert take_usage(url, "a-route-nobody-used-0123456789") == b""
    assert len(usage_file.read_text().splitlines()) == 1  # only the unrouted request's line


def test_trial_llm_is_the_runs_route_when_the_runner_gave_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from harn_mcp_mock.llm import trial_llm

    monkeypatch.delenv("HARN_LLM_URL", raising=False)
    monkeypatch.delenv("HARN_USAGE_FILE", raising=False)
    with trial_llm("bank") as served:  # no route: an endpoint of the trial's own, as before
        assert served.endswith("/v1") and ask(served, "pay-rent")["prompt_tokens"] > 0
    monkeypatch.setenv("HARN_LLM_URL", "http://127.0.0.1:9/t/route/v1")
    with trial_llm("bank") as routed:
        assert routed == "http://127.0.0.1:9/t/route/v1"
