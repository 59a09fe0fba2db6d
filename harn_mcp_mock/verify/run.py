"""`harn mcp mock verify`: load or record the candidate, compare, filter, and build the result."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.errors import UsageError, check_number
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.verify.drift import VerifyOptions, compare
from harn_mcp_mock.verify.ignore import apply_ignores, load_ignore_file
from harn_mcp_mock.verify.report import VerifyResult
from harn_mcp_mock.verify.where import locate_findings


def verify(
    cassette: str | Path,
    *,
    candidate: str | Path | None = None,
    command: list[str] | None = None,
    url: str | None = None,
    headers: Iterable[str] = (),
    save_candidate: str | Path | None = None,
    ignore_file: str | Path | None = None,
    ignore_paths: Iterable[str] = (),
    latency_ratio: float = 2.0,
    latency_floor_ms: float = 100.0,
    timeout: float = 30.0,
    policy_path: str | Path | None = None,
    on_event: Callable[[str], None] | None = None,
) -> VerifyResult:
    check_number("--latency-ratio", latency_ratio, "a ratio above 0")
    check_number("--latency-floor-ms", latency_floor_ms, "a number of milliseconds, 0 or more", zero=True)
    check_number("--timeout", timeout, "a number of seconds above 0")
    given = [candidate is not None, bool(command), url is not None]
    if sum(given) != 1:
        raise UsageError(
            "give one of --candidate B, --url U (a live Streamable HTTP server) or a live server "
            "command after `--`"
        )
    header_list = list(headers)
    if header_list and url is None:
        raise UsageError("--header goes with --url", where="--header")
    if save_candidate is not None and candidate is not None:
        raise UsageError("--save-candidate goes with a live server (--url or a command), not --candidate")
    ignores = load_ignore_file(ignore_file) if ignore_file is not None else []
    base = load_cassette(cassette)
    if candidate is not None:
        cand = load_cassette(candidate)
        label = str(candidate)
    elif url is not None:
        from harn_mcp_mock.verify.live import rerun_live_http

        with tempfile.TemporaryDirectory(prefix="harn-verify-") as scratch:
            target = (
                Path(save_candidate)
                if save_candidate is not None
                else Path(scratch) / "candidate.cassette.json"
            )
            cand = rerun_live_http(
                base,
                url,
                target,
                headers=header_list,
                policy_path=policy_path,
                timeout=timeout,
                on_event=on_event,
            )
        label = " ".join(cand.meta.get("command") or ["--url", url])
    else:
        from harn_mcp_mock.verify.live import rerun_live

        assert command
        policy = RedactionPolicy.load(policy_path) if policy_path is not None else RedactionPolicy.default()
        with tempfile.TemporaryDirectory(prefix="harn-verify-") as scratch:
            target = (
                Path(save_candidate)
                if save_candidate is not None
                else Path(scratch) / "candidate.cassette.json"
            )
            cand = rerun_live(base, command, target, policy=policy, timeout=timeout, on_event=on_event)
        label = " ".join(cand.meta.get("command") or command)
    options = VerifyOptions(tuple(ignore_paths), latency_ratio, latency_floor_ms)
    findings, compared = compare(base, cand, options)
    locate_findings(findings, base, cassette, cand, candidate)
    kept, ignored = apply_ignores(findings, ignores)
    return VerifyResult(str(cassette), label, kept, ignored, compared)
