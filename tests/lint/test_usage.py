"""The usage record behind lint's H1: a complete run replaces it, a partial run adds to it, and a
project that never opened a cassette gets no file."""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.lint.usage import USAGE_FILE, merge_usage, read_usage, record_use, start_usage


def test_complete_runs_replace_the_record_and_partial_runs_add_to_it(tmp_path: Path) -> None:
    cache = tmp_path / ".pytest_cache"
    start_usage(cache)
    merge_usage(cache, complete=True)
    assert not (cache / USAGE_FILE).exists()  # no cassette opened, no record made
    a, b = tmp_path / "a.cassette.json", tmp_path / "b.cassette.json"
    record_use(cache, a)
    merge_usage(cache, complete=True)
    assert read_usage(cache / USAGE_FILE) == {str(a.resolve())}
    start_usage(cache)
    record_use(cache, b)
    merge_usage(cache, complete=False)  # `pytest -k b`: a is still used by the tests not run
    assert read_usage(cache / USAGE_FILE) == {str(a.resolve()), str(b.resolve())}
    start_usage(cache)
    record_use(cache, b)
    merge_usage(cache, complete=True)
    assert read_usage(cache / USAGE_FILE) == {str(b.resolve())}
    start_usage(cache)
    merge_usage(cache, complete=True)  # a complete run that opened none: every cassette is unused
    assert read_usage(cache / USAGE_FILE) == set()
    assert read_usage(tmp_path / "missing.json") is None
