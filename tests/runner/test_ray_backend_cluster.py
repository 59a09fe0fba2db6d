"""``--backend ray`` on a Ray cluster of several nodes on this one machine (a head and two worker
nodes, ``ray.cluster_utils.Cluster``, loopback only): trials spread over the nodes; a worker node
killed while its trial runs loses no trial and doubles none; the results are the local backend's
for the same seed. The agent plays each task's reference over the stdio bridge (stdlib only)."""

from __future__ import annotations

import json
import os
import select
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.runner import run_episodes
from tests.procs import pids_where

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.xdist_group("runner/test_ray_backend_cluster")]
ray = pytest.importorskip("ray")

WAIT = 240.0

PLAYER = r"""
import json, os, subprocess, sys
from pathlib import Path
ready, go = sys.argv[1], sys.argv[2]
if ready != "-":
    with open(ready, "w") as f:
        f.write(f"{os.getpid()}\n")
    fd = os.open(go, os.O_RDONLY)
    os.read(fd, 1)  # wait for the test's word
spec = json.loads(Path(os.environ["HARN_SPEC"]).read_text())
task = next(t for t in spec["tasks"] if t["id"] == os.environ["HARN_TASK_ID"])
world = subprocess.Popen(json.loads(os.environ["HARN_WORLD_COMMAND"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def ask(msg):
    world.stdin.write((json.dumps(msg) + "\n").encode()); world.stdin.flush()
    return json.loads(world.stdout.readline())
ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})
for i, step in enumerate(task["reference"]):
    ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
         "params": {"name": step["tool"], "arguments": step["arguments"]}})
world.stdin.close(); world.wait()
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    workers = [made.add_node(num_cpus=1), made.add_node(num_cpus=1)]
    made.wait_for_nodes()
    ray.init(address=made.address, log_to_driver=False, configure_logging=False)
    try:
        yield made, workers
    finally:
        ray.shutdown()
        made.shutdown()


def _portable(results: Path, out: Path) -> Any:
    return json.loads(results.read_text().replace(str(out.resolve()), "OUT"))


def _players(script: Path) -> list[int]:
    """The pids of the agent processes running ``script`` (not the bubblewrap around them)."""
    return pids_where(
        lambda argv: len(argv) > 1 and argv[1] == str(script).encode() and not argv[0].endswith(b"bwrap")
    )


def _player(tmp_path: Path) -> list[str]:
    path = tmp_path / "player.py"
    path.write_text(PLAYER, encoding="utf-8")
    return [sys.executable, str(path)]


def test_trials_spread_over_the_nodes_and_score_as_on_the_local_backend(cluster: Any, tmp_path: Path) -> None:
    agent = [*_player(tmp_path), "-", "-"]
    common: dict[str, Any] = {"tasks": ["pay-rent", "top-up-and-pay"], "k": 2, "seed": 9, "faults": ["flaky"]}
    remote = run_episodes(["bank"], agent, out=tmp_path / "ray", backend="ray", **common)
    run_episodes(["bank"], agent, out=tmp_path / "local", workers=2, **common)
    assert len(remote.trials) == 8 and {r["status"] for r in remote.trials} == {"scored"}
    assert len({r["ray_node"] for r in remote.trials}) == 2  # both worker nodes ran trials
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    assert remote.result.groups[0].pass_rate == 1  # the reference, played: every goal met


def test_a_worker_node_killed_mid_trial_loses_no_trial_and_doubles_none(cluster: Any, tmp_path: Path) -> None:
    made, workers = cluster
    os.mkfifo(tmp_path / "ready")
    os.mkfifo(tmp_path / "go")
    ready = os.open(tmp_path / "ready", os.O_RDWR | os.O_NONBLOCK)
    go = os.open(tmp_path / "go", os.O_RDWR | os.O_NONBLOCK)
    agent = [*_player(tmp_path), str(tmp_path / "ready"), str(tmp_path / "go")]
    seen: list[str] = []
    outcomes: list[Any] = []
    import threading

    run = threading.Thread(
        target=lambda: outcomes.append(
            run_episodes(
                ["bank"], agent, out=tmp_path / "ray", backend="ray", tasks=["pay-rent"], k=3, seed=4,
                on_trial=lambda record, done, total: seen.append(record["run_id"]),
            )
        )
    )  # fmt: skip
    run.start()
    got = ""
    while got.count("\n") < 2:  # a trial runs on each worker node
        assert select.select([ready], [], [], WAIT)[0], "the trials never started"
        got += os.read(ready, 100).decode()
    # both wait for the word to go on; found by their command line, as the pids they say are their
    # PID namespace's under the sandbox
    agents = [os.pidfd_open(pid) for pid in _players(tmp_path / "player.py")]
    assert len(agents) == 2
    made.remove_node(workers[0])  # the node dies with its trial's agent and world
    # The word is given only once the killed node's agent has ended (its worker gone, the trial's
    # supervisor killed it): a node still shutting down cannot finish its trial, so the trial is
    # lost and run again, deterministically. The other node's agent is still waiting.
    ended, _, _ = select.select(agents, [], [], WAIT)
    assert len(ended) == 1, "the killed node's agent never ended"
    workers[0] = made.add_node(num_cpus=1)  # (for the tests that come after; not used by this run)
    os.write(go, b"x" * 16)  # let every agent go on (the ones to come too)
    run.join(WAIT)
    assert not run.is_alive()
    (outcome,) = outcomes
    while select.select([ready], [], [], 0)[0]:  # every agent wrote its line before it went on
        got += os.read(ready, 4096).decode()
    assert got.count("\n") == 4  # three trials, and the one whose node died, run again elsewhere
    assert sorted(seen) == ["pay-rent.none.t1", "pay-rent.none.t2", "pay-rent.none.t3"]
    assert [r["status"] for r in outcome.trials] == ["scored"] * 3
    assert outcome.result.groups[0].pass_rate == 1
    local = run_episodes(
        ["bank"], [*_player(tmp_path), "-", "-"], out=tmp_path / "local", tasks=["pay-rent"], k=3, seed=4
    )
    assert local.result.groups[0].pass_rate == 1
    assert _portable(tmp_path / "ray" / "results.json", tmp_path / "ray") == _portable(
        tmp_path / "local" / "results.json", tmp_path / "local"
    )
    for fd in (ready, go, *agents):
        os.close(fd)
