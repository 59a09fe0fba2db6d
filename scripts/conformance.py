#!/usr/bin/env python3
"""Differential conformance: the official MCP conformance suite, live vs. through record vs. replay.

1. start a real MCP server over Streamable HTTP on 127.0.0.1, on a free port: server-everything
   (pinned in tests/conformance/package-lock.json) and, as a second run, our fixture server
   (tests/conformance/fixture_server.py, the project's ``mcp`` SDK) that has the tools,
   resources and prompts the suite's scenarios call;
2. run ``conformance server`` (``@modelcontextprotocol/conformance``) against it: results L;
3. run it again through ``harn mcp mock record --url <live>`` (the recording proxy): results P;
   stop the proxy (SIGINT) so the cassette is written;
4. run it against ``harn mcp mock replay --cassette <that> --http``: results R;
5. compare every check of every scenario: P must equal L and R must equal L (status and error
   message, with the server's URL, UUIDs and numbers in URLs normalised). A check that fails
   against the live server is fine as long as the proxy and the replay give the same result.
   The exception is a scenario about the HTTP surface itself (``OWN_GUARD``: DNS-rebinding
   protection), which the proxy and the replay answer with their own guard: they must pass it.

Prints a table (scenario, check, live, proxy, replay) and exits 1 on any difference, naming it;
2 when something could not be run at all. ``make test-conformance`` runs it (docs/http.md).

Every wait is bounded: the servers must print their URL within ``--start-timeout`` seconds,
each suite run must finish within ``--suite-timeout``, a stopped server must exit within
``--stop-timeout``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITE_DIR = REPO / "tests" / "conformance"
NODE_BIN = SUITE_DIR / "node_modules" / ".bin"
EVERYTHING = SUITE_DIR / "everything-http.mjs"
FIXTURE = SUITE_DIR / "fixture_server.py"
SERVERS = ("everything", "fixture")
URL_LINE = re.compile(r"(http://127\.0\.0\.1:\d+/mcp)\s*$")
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
TARGETS = ("live", "proxy", "replay")

STATUS_ONLY: frozenset[tuple[str, str]] = frozenset()
"""(scenario, check id) pairs whose error message is not stable between runs: only the status
is compared for them. None needed so far (see docs/http.md#conformance)."""


def harn_command() -> list[str]:
    """The ``harn`` CLI of this interpreter's environment (the project's .venv)."""
    local = Path(sys.executable).with_name("harn")
    if local.exists():
        return [str(local)]
    found = shutil.which("harn")
    return (
        [found]
        if found
        else [sys.executable, "-c", "from harn_mcp_mock.cli.main import harn_main; harn_main()"]
    )


def node_env() -> dict[str, str]:
    """The environment with the pinned Node 22 first on PATH (the suite needs Node >= 22)."""
    env = dict(os.environ)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("NO_COLOR", "1")
    return env


# --- processes ---------------------------------------------------------------------------------


@dataclass
class Service:
    """A server subprocess whose stdout is read by a thread, line by line."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] | None = None
    process: subprocess.Popen[str] | None = None
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        stderr = self.log.open("w", encoding="utf-8")
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=self.env,
                cwd=REPO,
                start_new_session=True,  # Ctrl-C on the runner does not hit it twice
            )
        finally:
            stderr.close()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def url(self, timeout: float) -> str:
        """The first ``http://127.0.0.1:PORT/mcp`` its stdout prints (bounded by ``timeout``)."""
        limit = time.monotonic() + timeout
        while True:
            left = limit - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                raise RunError(f"{self.name} printed no URL within {timeout:g}s; see {self.log}") from None
            if line is None:
                code = self.process.wait(timeout=5) if self.process else None
                raise RunError(f"{self.name} exited ({code}) before printing a URL; see {self.log}")
            self.seen.append(line)
            match = URL_LINE.search(line)
            if match:
                return match.group(1)

    def stop(self, timeout: float, sig: int = signal.SIGINT) -> int:
        """Signal it and wait for its exit (SIGKILL after ``timeout``); its exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
                raise RunError(f"{self.name} did not exit within {timeout:g}s of signal {sig}") from None
        return self.process.returncode


class RunError(Exception):
    """Something could not be run at all (exit 2)."""


@contextmanager
def running(service: Service, timeout: float, stop_timeout: float) -> Iterator[str]:
    service.start()
    try:
        yield service.url(timeout)
    finally:
        if service.process is not None and service.process.poll() is None:
            service.stop(stop_timeout)


# --- the suite ---------------------------------------------------------------------------------


Checks = dict[str, list[dict[str, Any]]]
"""scenario -> its checks (as checks.json has them)."""


def run_suite(url: str, out: Path, args: argparse.Namespace) -> Checks:
    """Run ``conformance server`` against ``url``; the checks of each scenario."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [str(NODE_BIN / "conformance"), "server", "--url", url, "-o", str(out)]
    runs: list[list[str]] = (
        [[*argv, "--scenario", s] for s in args.scenario]
        if args.scenario
        else [[*argv, "--suite", args.suite]]
    )
    with (out / "suite.log").open("w", encoding="utf-8") as log:
        for run in runs:
            try:
                # exit 1 just means some checks failed: compared below, not an error here
                subprocess.run(
                    run,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=node_env(),
                    cwd=SUITE_DIR,
                    timeout=args.suite_timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise RunError(
                    f"the suite did not finish within {args.suite_timeout:g}s against {url}"
                ) from None
    results: Checks = {}
    for directory in sorted(out.iterdir()):
        match = RESULT_DIR.match(directory.name)
        checks_file = directory / "checks.json"
        if not match or not checks_file.exists():
            continue
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        results[match.group("scenario")] = checks if isinstance(checks, list) else []
    if not results:
        raise RunError(f"the suite wrote no results for {url}; see {out / 'suite.log'}")
    return results


def normalise(text: str, url: str) -> str:
    """``text`` without what differs between targets: their URL, host:port, and UUIDs."""
    host = url.split("/")[2]
    text = text.replace(url, "<URL>").replace(host, "<HOST>")
    return UUID.sub("<UUID>", text)


@dataclass(frozen=True)
class Outcome:
    status: str
    message: str

    def show(self) -> str:
        return self.status


MISSING = Outcome("-", "")


def outcomes(scenario: str, checks: list[dict[str, Any]], url: str) -> dict[str, Outcome]:
    """Each verdict check by its id (repeated ids get ``#2``, ``#3``...).

    ``INFO`` checks are left out: they are the suite's trace of what it saw (each request,
    response and SSE event), not verdicts. Their number depends on things a replay need not
    copy (replay numbers every SSE event so that a stream can be resumed, where a server
    without an event store sends events without ids), and a difference that matters shows in
    the verdicts (e.g. ``server-sse-streams-functional`` is ``INFO`` only when a server
    answered JSON where streams were expected).
    """
    found: dict[str, Outcome] = {}
    for check in checks:
        if check.get("status") == "INFO":
            continue
        base = str(check.get("id"))
        key, n = base, 1
        while key in found:
            n += 1
            key = f"{base}#{n}"
        message = (
            "" if (scenario, base) in STATUS_ONLY else normalise(str(check.get("errorMessage") or ""), url)
        )
        found[key] = Outcome(str(check.get("status")), message)
    return found


OWN_GUARD = frozenset({"dns-rebinding-protection"})
"""Scenarios about the HTTP surface itself, not the recorded server: the proxy and the replay
answer them with their own guard (harn_mcp_mock/http/guard.py: Origin and Host checks), so they
must pass whatever the live server does (server-everything does not check Host)."""


@dataclass
class Row:
    scenario: str
    check: str
    cells: dict[str, Outcome]

    def differences(self) -> list[str]:
        live = self.cells["live"]
        problems: list[str] = []
        for target in ("proxy", "replay"):
            other = self.cells[target]
            if self.scenario in OWN_GUARD:
                if other.status != "SUCCESS":
                    problems.append(f"{target}: status {other.status}; our own HTTP guard must pass it")
                continue
            if other.status != live.status:
                problems.append(f"{target}: status {other.status} where live gave {live.status}")
            elif other.message != live.message:
                problems.append(f"{target}: message {other.message!r} where live gave {live.message!r}")
        return problems


def compare(results: dict[str, Checks], urls: dict[str, str]) -> list[Row]:
    rows: list[Row] = []
    scenarios = sorted(set().union(*(r.keys() for r in results.values())))
    for scenario in scenarios:
        per_target = {t: outcomes(scenario, results[t].get(scenario, []), urls[t]) for t in TARGETS}
        checks: list[str] = []
        for t in TARGETS:
            checks.extend(c for c in per_target[t] if c not in checks)
        for check in checks:
            rows.append(Row(scenario, check, {t: per_target[t].get(check, MISSING) for t in TARGETS}))
    return rows


def render(rows: Sequence[Row]) -> str:
    header = ("scenario", "check", *TARGETS, "")
    table = [
        (r.scenario, r.check, *(r.cells[t].show() for t in TARGETS), "DIFF" if r.differences() else "same")
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in [header, *table]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *table]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


# --- the three runs ----------------------------------------------------------------------------


def live_server(name: str, work: Path) -> Service:
    node = NODE_BIN / "node"
    if not node.exists() or not (NODE_BIN / "conformance").exists():
        raise RunError("tests/conformance/node_modules is missing: run `npm ci --prefix tests/conformance`")
    if name == "fixture":
        return Service("fixture server", [sys.executable, str(FIXTURE)], work / "live-server.log")
    return Service(
        "server-everything", [str(node), str(EVERYTHING)], work / "live-server.log", env=node_env()
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", default="all", help="the suite's --suite: all (default), active, pending")
    parser.add_argument("--scenario", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument(
        "--server", action="append", choices=SERVERS, help="live server(s) to compare against (default: both)"
    )
    parser.add_argument("--work", type=Path, help="keep the results, logs and cassettes here")
    parser.add_argument("--json", type=Path, help="write the compared results here as JSON")
    parser.add_argument("--start-timeout", type=float, default=30.0)
    parser.add_argument("--suite-timeout", type=float, default=120.0)
    parser.add_argument("--stop-timeout", type=float, default=20.0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="harn-conformance-") as tmp:
        root = args.work or Path(tmp)
        payload: dict[str, list[dict[str, str]]] = {}
        problems: list[str] = []
        summary: list[str] = []
        for server in args.server or SERVERS:
            work = root / server
            work.mkdir(parents=True, exist_ok=True)
            try:
                rows = run_all(server, work, args)
            except RunError as exc:
                print(f"conformance ({server}): {exc}", file=sys.stderr)
                return 2
            print(f"== live server: {server}\n{render(rows)}\n")
            payload[server] = [
                {"scenario": r.scenario, "check": r.check, **{t: r.cells[t].status for t in TARGETS}}
                for r in rows
            ]
            problems += [f"{server}: {r.scenario} / {r.check}: {p}" for r in rows for p in r.differences()]
            passed = sum(r.cells["live"].status == "SUCCESS" for r in rows)
            scenarios = len({r.scenario for r in rows})
            summary.append(f"{server}: {scenarios} scenarios, {len(rows)} checks, {passed} SUCCESS live")
        if args.json is not None:
            args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        took = time.monotonic() - started
        if problems:
            print(f"conformance: {len(problems)} difference(s) from the live server:", file=sys.stderr)
            for problem in problems:
                print(f"  {problem}", file=sys.stderr)
            print(f"(results kept under {root})" if args.work else "", file=sys.stderr)
            return 1
        print(f"conformance: {'; '.join(summary)}: proxy and replay match the live server ({took:.1f}s)")
        return 0


def run_all(server: str, work: Path, args: argparse.Namespace) -> list[Row]:
    cassette = work / "conformance.cassette.json"
    for stale in (cassette, cassette.with_name(cassette.name + ".journal")):
        stale.unlink(missing_ok=True)
    results: dict[str, Checks] = {}
    urls: dict[str, str] = {}
    harn = harn_command()
    with running(live_server(server, work), args.start_timeout, args.stop_timeout) as live:
        urls["live"] = live
        results["live"] = run_suite(live, work / "live", args)
        proxy = Service(
            "record proxy",
            [*harn, "mcp", "mock", "record", "--cassette", str(cassette), "--url", live],
            work / "proxy.log",
        )
        proxy.start()
        try:
            urls["proxy"] = proxy.url(args.start_timeout)
            results["proxy"] = run_suite(urls["proxy"], work / "proxy", args)
        finally:
            code = proxy.stop(args.stop_timeout)
        if code != 0 or not cassette.exists():
            raise RunError(f"the record proxy exited {code} without a cassette; see {work / 'proxy.log'}")
    report = work / "replay-report.json"
    replay = Service(
        "replay",
        [
            *harn,
            "mcp",
            "mock",
            "replay",
            "--cassette",
            str(cassette),
            "--http",
            "--port",
            "0",
            "--report",
            str(report),
        ],
        work / "replay.log",
    )
    with running(replay, args.start_timeout, args.stop_timeout) as url:
        urls["replay"] = url
        results["replay"] = run_suite(url, work / "replay", args)
        replay.stop(args.stop_timeout)
    if report.exists():
        summary = json.loads(report.read_text(encoding="utf-8"))
        misses = summary.get("misses") or []
        print(
            f"replay: {summary.get('requests')} requests, {summary.get('hits')} hits, {len(misses)} misses",
            file=sys.stderr,
        )
    return compare(results, urls)


if __name__ == "__main__":
    sys.exit(main())
