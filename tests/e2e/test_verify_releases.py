"""`verify` on six pairs of real releases of real servers, against a ground truth.

Each old release is recorded through `harn mcp mock record` with the official SDK client (a short
session: list, then a few read-only calls; ``tests/e2e/releases/sessions.py``) and verified live
against the new release. The ground truth is the releases' own surfaces (captured by
``tests/e2e/releases/capture.py``), every change between them classified by hand
(``tests/e2e/releases/classification.json``; how: ``tests/e2e/releases/README.md``). The
releases are installed by the test set-up (``make install``: npm aliases in package.json, and
``make releases`` for the older PyPI releases, each in its own venv).
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.verify.surface import surface_of
from tests.conftest import require_peer
from tests.e2e.peers import WAIT
from tests.e2e.releases import PAIRS, RELEASES, release_command
from tests.e2e.releases.sessions import make_repository, run_session
from tests.e2e.releases.truth import CLASSES, Change, changes, classify

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e/test_verify_releases")]

HARN = [sys.executable, "-m", "harn_mcp_mock"]
PAIR_IDS = [f"{old}->{new}" for old, new in PAIRS]
SEVERITY = {"INFO": 0, "WARN": 1, "ERR": 2}


class Recordings:
    """One recording per release (and per page walk) for the whole module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = make_repository(root / "work")

    def command(self, release_id: str) -> list[str]:
        return require_peer(lambda: release_command(release_id, self.work))

    @cache  # noqa: B019 - one instance per module
    def cassette(self, release_id: str, walk: bool = False) -> Path:
        cassette = self.root / f"{release_id}{'-walked' if walk else ''}.cassette.json"
        record = [*HARN, "record", "--quiet", "--cassette", str(cassette), "--", *self.command(release_id)]
        run_session(record, RELEASES[release_id].kind, self.work, walk=walk)
        assert cassette.exists()
        return cassette

    def verify(self, cassette: Path, release_id: str) -> tuple[int, dict[str, Any], str]:
        done = subprocess.run(
            [
                *HARN,
                "verify",
                "--cassette",
                str(cassette),
                "--format",
                "json",
                "--",
                *self.command(release_id),
            ],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert done.stdout.startswith("{"), done.stderr
        return done.returncode, json.loads(done.stdout), done.stderr


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> Recordings:
    return Recordings(tmp_path_factory.mktemp("releases"))


def _maps_to(finding: dict[str, Any], change: Change) -> bool:
    """Whether ``finding`` is about ``change``: the same item, and the same place in it."""
    if finding.get("tool") != change.item:
        return False
    if finding["rule"].startswith("B"):
        return change.kind != "server"  # a behaviour finding is about a call of the item
    if finding["kind"] != change.kind:
        return False
    if change.pointer == "":
        return True  # a whole item added or removed: every finding about it
    pointer = finding["pointer"]
    return (
        pointer in ("", "/name") or change.pointer.startswith(pointer) or pointer.startswith(change.pointer)
    )


def _seen(base: Path) -> dict[str, set[str]]:
    """What the baseline's session saw: kind -> item keys (listed items, and the calls it made)."""
    surface = surface_of(load_cassette(base))
    kinds = {
        "tools": "tool",
        "resources": "resource",
        "resourceTemplates": "resource_template",
        "prompts": "prompt",
    }
    seen = {kinds[key]: set(items) for key, items in surface.items.items()}
    return seen


def _visible(change: Change, seen: dict[str, set[str]]) -> bool:
    return change.kind == "server" or (change.item or "") in seen.get(change.kind, set())


def judge(pair: str, base: Path, old: str, new: str, report: dict[str, Any]) -> list[str]:
    """What the report gets wrong against the ground truth (empty: nothing)."""
    truth = [(c, classify(pair, c)) for c in changes(old, new)]
    seen = _seen(base)
    problems = []
    for f in report["findings"]:
        matched = [(c, e) for c, e in truth if _maps_to(f, c)]
        where = f"{f['severity']} {f['rule']} {f.get('tool')} {f['pointer']}"
        if not matched:
            problems.append(f"false finding (no such change between the releases): {where}: {f['message']}")
        elif f["severity"] == "ERR" and all(e is not None and e["class"] == "compatible" for _, e in matched):
            problems.append(f"ERR for a change that breaks no client: {where}: {f['message']}")
    for change, entry in truth:
        assert entry is not None, change
        if not _visible(change, seen):
            continue
        found = [SEVERITY[f["severity"]] for f in report["findings"] if _maps_to(f, change)]
        need = {"breaking": 2, "conditional": 1, "output": 1}.get(entry["class"])
        if need is not None and max(found, default=-1) < need:
            problems.append(
                f"{entry['class']} change {change} reported as {max(found, default=None)}: {entry['why']}"
            )
        if entry.get("report") and not found:
            problems.append(f"no finding for {change}: {entry['why']}")
    return problems


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_the_ground_truth_classifies_every_change_between_the_releases(pair: tuple[str, str]) -> None:
    old, new = pair
    unclassified = [str(c) for c in changes(old, new) if classify(f"{old} -> {new}", c) is None]
    assert unclassified == []
    classes = {e["class"] for c in changes(old, new) if (e := classify(f"{old} -> {new}", c))}
    assert classes <= set(CLASSES)


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_a_release_pair_gives_the_ground_truths_verdict(releases: Recordings, pair: tuple[str, str]) -> None:
    old, new = pair
    base = releases.cassette(old)
    code, report, stderr = releases.verify(base, new)
    assert judge(f"{old} -> {new}", base, old, new, report) == []
    seen = _seen(base)
    breaking = [
        c
        for c in changes(old, new)
        if _visible(c, seen) and (e := classify(f"{old} -> {new}", c)) and e["class"] == "breaking"
    ]
    assert code == (1 if breaking else 0), stderr


@pytest.mark.parametrize("release", list(RELEASES))
def test_a_release_verified_against_itself_is_clean(releases: Recordings, release: str) -> None:
    code, report, stderr = releases.verify(releases.cassette(release), release)
    assert (code, report["findings"]) == (0, []), stderr


def test_a_recording_that_walks_every_page_reports_every_removed_resource(releases: Recordings) -> None:
    old, new = "server-everything-2025.11.25", "server-everything-2026.8.31"
    base = releases.cassette(old, walk=True)
    code, report, _ = releases.verify(base, new)
    removed = {f["tool"] for f in report["findings"] if f["rule"] == "R1" and f["kind"] == "resource"}
    assert (code, len(removed)) == (1, 100)
    assert judge(f"{old} -> {new}", base, old, new, report) == []


def test_verify_reads_the_rest_of_a_list_the_recording_left_unfinished(releases: Recordings) -> None:
    # The recording read page 1 of server-everything's 10 pages of resources: verify reads pages
    # 2-10 from the live server itself, says so, and reports none of their 90 resources as added.
    release = "server-everything-2025.11.25"
    base = releases.cassette(release)
    assert surface_of(load_cassette(base)).cut_short.keys() == {"resources/list"}
    code, report, stderr = releases.verify(base, release)
    assert (code, report["findings"]) == (0, [])
    assert report["compared"]["list_pages_read_live"] == 9
    assert stderr.count("did not read resources/list to the end") == 1
