from __future__ import annotations

import json
from pathlib import Path

import pytest

from harn_mcp_mock.testbench import LlmFixtureError, LlmFixtures, Testbench, llm_call, request_digest


def _write(path: Path, *lines: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_fixtures_replay_in_order_then_fail_loud(tmp_path: Path) -> None:
    fixture = _write(tmp_path / "llm.jsonl", {"response": {"text": "one"}}, {"response": {"text": "two"}})
    with Testbench.builder().replay_llm(fixture).build():
        assert llm_call({"prompt": "a"}) == {"text": "one"}
        assert llm_call({"prompt": "b"}) == {"text": "two"}
        with pytest.raises(LlmFixtureError, match="no LLM fixture left: call #3"):
            llm_call({"prompt": "c"}, provider=lambda r: pytest.fail("reached a provider"))


def test_a_fixture_with_a_digest_refuses_a_different_request(tmp_path: Path) -> None:
    fixture = _write(
        tmp_path / "llm.jsonl",
        {"request_digest": request_digest({"prompt": "a"}), "response": {"text": "one"}},
    )
    with Testbench.builder().replay_llm(fixture).build(), pytest.raises(LlmFixtureError, match="diverged"):
        llm_call({"prompt": "other"})


def test_digest_matching_picks_the_entry_for_the_request() -> None:
    fixtures = LlmFixtures(
        [
            {"request_digest": request_digest({"p": 1}), "response": {"n": 1}},
            {"request_digest": request_digest({"p": 2}), "response": {"n": 2}},
        ],
        match="digest",
    )
    with Testbench.builder().llm_fixtures(fixtures).build():
        assert llm_call({"p": 2}) == {"n": 2}
        assert llm_call({"p": 1}) == {"n": 1}


def test_without_a_fixture_an_active_testbench_never_reaches_the_provider() -> None:
    with Testbench.builder().build(), pytest.raises(LlmFixtureError, match="no LLM fixture installed"):
        llm_call({"prompt": "a"}, provider=lambda r: pytest.fail("reached a provider"))


def test_record_mode_writes_a_replayable_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    bench = Testbench.builder().record_llm(out, provider=lambda r: {"echo": r["prompt"]}).build()
    with bench:
        assert llm_call({"prompt": "hi"}) == {"echo": "hi"}
    result = bench.finalize()
    assert result.written == [out]
    with Testbench.builder().replay_llm(out).build():
        assert llm_call({"prompt": "hi"}) == {"echo": "hi"}


def test_a_malformed_fixture_line_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": {}}\nnot json\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"bad.jsonl:2"):
        LlmFixtures.replay(bad)
