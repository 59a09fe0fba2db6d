"""Speed of `harn mcp mock eval` over 10,000 world state files (target < 2 s).

Baseline measured in the same run: reading and parsing the same files with orjson (which eval
must do anyway). The spec is tickets-like, with four tasks: 20 users and 105 tickets with nested
fields (125 items, the middle of 50-200; ``--tickets`` changes it), and an audit log. Each state
is the initial state after a realistic run: the task done (or not), sometimes a collateral edit,
audit entries appended, an updated_at stamp. A tenth of the files are world reports, a few carry
an infrastructure error, and a third ran under a fault profile, so robustness deltas are
computed too.

Run: `.venv/bin/python benchmarks/bench_eval.py [--states N] [--tickets N]`.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.scoring import render, score_runs

TARGET_S = 2.0
STATUSES = ("open", "pending", "closed")


def spec(tickets: int) -> dict[str, Any]:
    rng = random.Random(1)
    state: dict[str, Any] = {
        "users": {
            f"u{i}": {"name": f"User {i}", "active": i % 5 != 0, "team": f"team-{i % 4}"} for i in range(20)
        },
        "tickets": {
            f"T-{i}": {
                "title": f"Ticket number {i} about component {i % 13}",
                "status": STATUSES[i % 3],
                "assignee": None if i % 4 == 0 else f"u{i % 20}",
                "priority": rng.randint(1, 4),
                "urgent": i % 7 == 0,
                "tags": [f"tag-{i % 5}", f"area-{i % 3}"],
                "meta": {
                    "created_at": f"2025-12-{1 + i % 28:02d}T10:00:00Z",
                    "votes": i % 11,
                    "score": 0.5 * (i % 9),
                },
                "updated_at": None,
            }
            for i in range(1, tickets + 1)
        },
        "audit": {"log": []},
        "counters": {"closed": 0},
    }
    tasks = [
        {
            "id": "close-login-bug",
            "goal": [
                {"path": "/tickets/T-1/status", "equals": "closed"},
                {"path": "/counters/closed", "gte": 1},
            ],
            "may_change": ["/tickets/T-1/updated_at", "/audit/**"],
            "forbidden": [{"missing": "/tickets/T-1"}],
        },
        {
            "id": "assign-urgent",
            "goal": [{"path": "/tickets/T-7/assignee", "equals": "u3"}],
            "may_change": ["/tickets/*/updated_at", "/audit/**"],
            "forbidden": [{"path": "/users/u3/active", "equals": False}],
        },
        {
            "id": "tag-ticket",
            "goal": [{"path": "/tickets/T-2/tags", "any": "needs-triage"}],
            "may_change": ["/tickets/T-2/updated_at", "/audit/**"],
            "forbidden": [],
        },
        {
            "id": "bump-priority",
            "goal": [
                {"path": "/tickets/T-3/priority", "equals": 1},
                {"not": {"exists": "/tickets/T-3/meta/lock"}},
            ],
            "may_change": ["/tickets/T-3/**", "/audit/**"],
            "forbidden": [{"path": "/tickets", "count": 0}],
        },
    ]
    return {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "tickets",
        "state": state,
        "tasks": tasks,
        "fault_profiles": {"flaky": []},
    }


def final_state(initial: dict[str, Any], task: str, rng: random.Random) -> dict[str, Any]:
    state = copy.deepcopy(initial)
    tickets = state["tickets"]
    succeed = rng.random() < 0.7
    if task == "close-login-bug" and succeed:
        tickets["T-1"]["status"] = "closed"
        tickets["T-1"]["updated_at"] = "2026-01-01T00:00:00.040Z"
        state["counters"]["closed"] += 1
    elif task == "assign-urgent" and succeed:
        tickets["T-7"]["assignee"] = "u3"
        tickets["T-7"]["updated_at"] = "2026-01-01T00:00:00.020Z"
    elif task == "tag-ticket" and succeed:
        tickets["T-2"]["tags"].append("needs-triage")
    elif task == "bump-priority" and succeed:
        tickets["T-3"]["priority"] = 1.0  # a float: same value, no change by value
        tickets["T-3"]["priority"] = 1
    for i in range(rng.randint(1, 4)):
        state["audit"]["log"].append({"seq": i, "tool": "get_ticket", "at": f"2026-01-01T00:00:00.{i:03d}Z"})
    if rng.random() < 0.1:  # collateral damage
        victim = f"T-{rng.randint(10, len(tickets))}"
        tickets[victim]["status"] = "closed"
    if rng.random() < 0.05:
        tickets[f"T-{rng.randint(10, len(tickets))}"]["urgent"] = 1  # True -> 1 or False -> 1: a change
    return state


def build(folder: Path, count: int, tickets: int) -> tuple[dict[str, Any], list[Path]]:
    the_spec = spec(tickets)
    tasks = [t["id"] for t in the_spec["tasks"]]
    # 400 distinct final states (deep copies are the slow part of building), reused round robin.
    finals = [final_state(the_spec["state"], tasks[i % len(tasks)], random.Random(i)) for i in range(400)]
    paths = []
    for i in range(count):
        task = tasks[i % len(tasks)]
        final = finals[(i + len(tasks) * (i // 400)) % len(finals)]
        faults = "flaky" if i % 3 == 0 else None
        infra = "world process crashed" if i % 997 == 0 else None
        if i % 10 == 0:
            doc = {
                "format": "harn-mcp-mock/world-report",
                "version": 1,
                "world": "tickets",
                "task": task,
                "seed": i,
                "run_id": f"r{i}",
                "faults": faults,
                "infra_error": infra,
                "final_state": final,
                "forbidden_hits": [],
                "faults_fired": [],
                "calls": [{"seq": 0, "tool": "get_ticket", "arguments": {"ticket_id": "T-1"}}],
            }
            path = folder / f"run-{i}.report.json"
        else:
            doc = {
                "format": "harn-mcp-mock/world-state",
                "version": 1,
                "world": "tickets",
                "task": task,
                "seed": i,
                "run_id": f"r{i}",
                "faults": faults,
                "infra_error": infra,
                "state": final,
            }
            path = folder / f"run-{i}.state.json"
        path.write_bytes(orjson.dumps(doc))
        paths.append(path)
    return the_spec, paths


def baseline(paths: list[Path]) -> None:
    for path in paths:
        orjson.loads(path.read_bytes())


def evaluate(the_spec: dict[str, Any], paths: list[Path]) -> str:
    return render(score_runs([the_spec], paths), "table")


def timed(fn: Any, *args: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--states", type=int, default=10_000)
    parser.add_argument(
        "--tickets", type=int, default=105, help="tickets per state (plus 20 users: 125 items, mid 50-200)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        the_spec, paths = build(Path(tmp), args.states, args.tickets)
        size = sum(p.stat().st_size for p in paths)
        base = timed(baseline, paths)
        full = timed(evaluate, the_spec, paths)
        result = score_runs([the_spec], paths)
        as_json = timed(render, result, "json")
        items = len(the_spec["state"]["tickets"]) + len(the_spec["state"]["users"])
        each = size / len(paths) / 1e3
        print(f"states: {len(paths)} files, {size / 1e6:.1f} MB, {items} items each ({each:.0f} KB)")
        print(f"scored {len(result.runs)} runs, {len(result.excluded)} excluded, groups {len(result.groups)}")
        print(f"baseline (read + parse with orjson): {base:.3f} s")
        print(f"eval (read + score + aggregate + render the table): {full:.3f} s")
        print(f"(rendering --format json as well: +{as_json:.3f} s)")
        print(f"ratio: {full / base:.2f}x the baseline")
        print(f"target: < {TARGET_S:.1f} s for 10,000 states: {'OK' if full < TARGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
