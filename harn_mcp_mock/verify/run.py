"""`harn mcp mock verify`: load or record the candidate, compare, filter, and build the result."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from harn_mcp_mock.cassette.model import Cassette, load_cassette
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.findings.model import Finding
from harn_mcp_mock.options import LiveTarget
from harn_mcp_mock.verify.drift import VerifyOptions, compare
from harn_mcp_mock.verify.ignore import apply_ignores, load_ignore_file
from harn_mcp_mock.verify.report import VerifyResult
from harn_mcp_mock.verify.surface import LISTS, has_pages, surface_of
from harn_mcp_mock.verify.where import locate_findings


def verify(
    cassette: str | Path,
    *,
    candidate: str | Path | None = None,
    live: LiveTarget | None = None,
    save_candidate: str | Path | None = None,
    ignore_file: str | Path | None = None,
    options: VerifyOptions | None = None,
    policy_path: str | Path | None = None,
    on_event: Callable[[str], None] | None = None,
    command: list[str] | None = None,
    url: str | None = None,
    headers: Iterable[str] = (),
    timeout: float = 30.0,
    ignore_paths: Iterable[str] = (),
    latency_ratio: float = 2.0,
    latency_floor_ms: float = 100.0,
) -> VerifyResult:
    """Compare ``cassette`` with a ``candidate`` cassette, or with what the ``live`` server (a
    :class:`~harn_mcp_mock.options.LiveTarget`: a command, or a URL with headers, and the
    seconds each answer may take) answers to its client side. ``options``: the comparison's
    :class:`~harn_mcp_mock.verify.drift.VerifyOptions`. ``command``, ``url``, ``headers``,
    ``timeout`` and ``ignore_paths``, ``latency_ratio``, ``latency_floor_ms`` are the keyword
    forms of ``live`` and ``options`` (used when those are not given)."""
    if options is None:
        options = VerifyOptions(tuple(ignore_paths), latency_ratio, latency_floor_ms)
    if live is None:
        live = LiveTarget(command or (), url, headers, timeout)
    if (candidate is not None) == bool(live):
        raise UsageError(
            "give one of --candidate B, --url U (a live Streamable HTTP server) or a live server "
            "command after `--`"
        )
    if save_candidate is not None and candidate is not None:
        raise UsageError("--save-candidate goes with a live server (--url or a command), not --candidate")
    ignores = load_ignore_file(ignore_file) if ignore_file is not None else []
    base = load_cassette(cassette)
    if candidate is not None:
        cand = load_cassette(candidate)
        label = str(candidate)
    else:
        from harn_mcp_mock.verify.live import rerun_live

        with tempfile.TemporaryDirectory(prefix="harn-verify-") as scratch:
            target = (
                Path(save_candidate)
                if save_candidate is not None
                else Path(scratch) / "candidate.cassette.json"
            )
            cand = rerun_live(base, live, target, policy_path=policy_path, on_event=on_event)
        shown = live.command or ("--url", str(live.url))  # never the header values
        label = " ".join(cand.meta.get("command") or shown)
    findings, compared = compare(base, cand, options)
    findings = _unseen_items_left_out(findings, base)
    if candidate is not None:
        _warn_cut_short(cand, str(candidate), on_event)
    else:
        from harn_mcp_mock.verify.live import pages_read_live

        pages = pages_read_live(cand)
        if pages:
            compared["list_pages_read_live"] = pages
    locate_findings(findings, base, cassette, cand, candidate)
    kept, ignored = apply_ignores(findings, ignores)
    return VerifyResult(str(cassette), label, kept, ignored, compared)


FINDING_KINDS = {
    "tools": "tool",
    "resources": "resource",
    "resourceTemplates": "resource_template",
    "prompts": "prompt",
}


def _unseen_items_left_out(findings: list[Finding], base: Cassette) -> list[Finding]:
    """Drop the findings about items of a list the baseline did not read to the end and never saw.

    Such an item may have been on the old server's unread pages, so "added" cannot be told;
    what the baseline saw is still compared with the candidate's whole list (removals stay)."""
    if not has_pages(base):
        return findings
    surface = surface_of(base)
    unseen: dict[str, set[str]] = {}
    for method in surface.cut_short:
        kind = LISTS[method]
        unseen[FINDING_KINDS[kind]] = set(surface.items.get(kind, {}))
    if not unseen:
        return findings
    return [f for f in findings if f.kind not in unseen or f.tool is None or f.tool in unseen[f.kind]]


def _warn_cut_short(cand: Cassette, label: str, on_event: Callable[[str], None] | None) -> None:
    """Warn once when the candidate cassette did not read a paginated list to the end."""
    cut = sorted(surface_of(cand).cut_short) if has_pages(cand) else []
    if cut and on_event is not None:
        on_event(
            f"warning: the candidate {label} did not read {', '.join(cut)} to the end (its last page "
            f"has a nextCursor): items on the unread pages count as removed; record a session that "
            f"reads every page, or verify live"
        )
