"""Each trial's agent in a bubblewrap sandbox (``run --sandbox``; docs/runner.md, "Threat model").

A hostile agent of our own, run as real processes by the runner, k=2 trials at once, looks around
the machine as an agent with a shell would and reports what it found on its stdout (kept in the
trial folder as ``agent.stdout``): sibling trials' configs and tokens, the run folder, the
runner's process, the hub's socket, the spec and its fault schedule, a ``setsid`` daemon left
behind. Under ``bwrap`` none of it is reachable and the run's scores are the world's; under
``none`` the trials record that they had no isolation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import run_episodes
from harn_mcp_mock.runner.sandbox import SANDBOX_MODES, agent_spec_view, resolve_isolation
from harn_mcp_mock.shipped import resolve_spec
from tests.procs import pids_where

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = ROOT / "examples" / "agent" / "scripted_agent.py"
WAIT = 120.0

HAS_BWRAP = resolve_isolation("auto").sandboxed
needs_bwrap = pytest.mark.skipif(
    not HAS_BWRAP and not os.environ.get("CI"), reason="bubblewrap cannot run here (make install adds it)"
)

HOSTILE = r"""
import errno, json, os, signal, subprocess, sys

out_dir, runner_pid, spec_path, daemon_tag = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
facts = {}
config = os.environ["HARN_MCP_CONFIG"]
command = json.loads(os.environ["HARN_WORLD_COMMAND"])
socket_path, token = command[-2], command[-1]
hub = os.path.dirname(config)
hubs = os.path.dirname(hub)

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

facts["hub"] = listing(hub)
facts["own_config"] = os.path.basename(config)
facts["hubs"] = listing(hubs)
facts["run_folder"] = listing(out_dir)
facts["pids"] = len([p for p in os.listdir("/proc") if p.isdigit()])
try:
    os.kill(runner_pid, 0)
    facts["runner"] = "reachable"
except OSError as exc:
    facts["runner"] = errno.errorcode.get(exc.errno, str(exc.errno))
try:
    with open(f"/proc/{runner_pid}/environ", "rb") as f:
        facts["runner_environ"] = len(f.read())
except OSError as exc:
    facts["runner_environ"] = errno.errorcode.get(exc.errno, str(exc.errno))
try:
    os.unlink(socket_path)
    facts["unlink_socket"] = "deleted"
except OSError as exc:
    facts["unlink_socket"] = errno.errorcode.get(exc.errno, str(exc.errno))
with open(spec_path, "rb") as f:
    facts["spec_bytes"] = len(f.read())
with open(os.environ["HARN_SPEC"], encoding="utf-8") as f:
    view = json.load(f)
facts["fault_rules"] = sum(len(rules) for rules in view.get("fault_profiles", {}).values())
facts["tasks"] = len(view["tasks"])
forged = os.path.join(out_dir, "trials", "forged.json")
try:
    os.makedirs(os.path.dirname(forged), exist_ok=True)
    with open(forged, "w") as f:
        f.write("{}")
    facts["forge"] = "written"
except OSError as exc:
    facts["forge"] = errno.errorcode.get(exc.errno, str(exc.errno))
try:
    with open(os.path.join(os.getcwd(), "harn-sandbox-probe"), "w") as f:
        f.write("x")
    facts["cwd_write"] = "written"
    os.unlink(os.path.join(os.getcwd(), "harn-sandbox-probe"))
except OSError as exc:
    facts["cwd_write"] = errno.errorcode.get(exc.errno, str(exc.errno))
for name in ("HOME", "TMPDIR", "HARN_TRIAL_DIR"):
    path = os.path.join(os.environ.get(name, "/nonexistent"), "probe.txt")
    try:
        with open(path, "w") as f:
            f.write(name)
        facts[name] = "written"
    except OSError as exc:
        facts[name] = errno.errorcode.get(exc.errno, str(exc.errno))
with open(os.path.join(os.environ["HARN_TRIAL_DIR"], "notes.txt"), "w") as f:
    f.write("the agent's own file\n")
# a daemon in a session of its own, with an empty environment: it must not outlive the trial
subprocess.Popen(
    ["setsid", sys.executable, "-c", "import select; select.select([], [], [])", daemon_tag],
    env={}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    start_new_session=True,
)
print(json.dumps(facts), flush=True)
"""


def _hostile(tmp_path: Path, out: Path, tag: str) -> list[str]:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE, encoding="utf-8")
    spec = resolve_spec("bank").resolve()
    return [sys.executable, str(script), str(out), str(os.getpid()), str(spec), tag]


def _alive_with(tag: str) -> list[int]:
    return pids_where(lambda argv: tag.encode() in argv)


def _facts(out: Path) -> list[dict[str, Any]]:
    found = []
    for stdout in sorted(out.glob("trials/*/*/*/*/agent.stdout")):
        lines = stdout.read_text(encoding="utf-8").strip().splitlines()
        assert lines, f"{stdout} is empty: {(stdout.parent / 'agent.stderr').read_text()}"
        found.append(json.loads(lines[-1]))
    return found


@needs_bwrap
def test_a_hostile_agent_in_the_sandbox_reaches_nothing_but_its_own_world(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tag = f"harn-daemon-{os.getpid()}-{tmp_path.name}"
    outcome = run_episodes(
        ["bank"], _hostile(tmp_path, out, tag), out=out, tasks=["pay-rent"], k=2, workers=2, sandbox="bwrap"
    )
    assert [t["isolation"] for t in outcome.trials] == ["bwrap", "bwrap"]
    results = json.loads((out / "results.json").read_text())
    assert [run["isolation"] for run in results["runs"]] == ["bwrap", "bwrap"]
    facts = _facts(out)
    assert len(facts) == 2
    for seen in facts:
        # its hub folder holds its own config and socket (and its scratch folder), nothing of a sibling
        assert [n for n in seen["hub"] if n.endswith(".json")] == [seen["own_config"]]
        assert len(seen["hubs"]) == 1  # no other run's hub, no sibling's scratch folder
        assert seen["run_folder"] == []  # an empty tmpfs: no trial of the run, no ledger, no run.json
        assert seen["runner"] == "ESRCH" and seen["runner_environ"] == "ENOENT"
        assert seen["pids"] <= 4  # its own tree, in a PID namespace of its own
        assert seen["unlink_socket"] in ("EBUSY", "EROFS", "EPERM")
        assert seen["spec_bytes"] == 0  # the spec and its effect module are hidden
        assert seen["fault_rules"] == 0 and seen["tasks"] > 0  # the agent's view: tasks, no schedule
        assert seen["cwd_write"] == "EROFS"
        assert (seen["HOME"], seen["TMPDIR"], seen["HARN_TRIAL_DIR"]) == ("written",) * 3
    assert not (out / "trials" / "forged.json").exists()  # it wrote into an empty tmpfs
    assert _alive_with(tag) == []  # the setsid daemon died with the trial's PID namespace
    for trial in out.glob("trials/bank/pay-rent/none/*"):
        assert (trial / "agent" / "notes.txt").read_text() == "the agent's own file\n"
        record = json.loads((trial / "trial.json").read_text())
        assert record["isolation"] == "bwrap" and record["status"] == "scored"
    # the socket it tried to delete still serves the next trial
    again = run_episodes(
        ["bank"], [sys.executable, str(SCRIPTED), "--harn-trial", "good"], out=tmp_path / "again",
        tasks=["pay-rent"], sandbox="bwrap",
    )  # fmt: skip
    assert [run.score.passed for run in again.result.runs] == [True]


def test_without_a_sandbox_each_trial_says_it_had_no_isolation(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tag = f"harn-daemon-none-{os.getpid()}-{tmp_path.name}"
    outcome = run_episodes(
        ["bank"], _hostile(tmp_path, out, tag), out=out, tasks=["pay-rent"], k=1, sandbox="none"
    )
    assert [t["isolation"] for t in outcome.trials] == ["none"]
    assert [run["isolation"] for run in json.loads((out / "results.json").read_text())["runs"]] == ["none"]
    (seen,) = _facts(out)
    assert seen["runner"] == "reachable" and seen["spec_bytes"] > 0  # what `none` does not hide
    assert seen["fault_rules"] == 0  # HARN_SPEC is still the agent's view
    assert _alive_with(tag) == []  # the supervisor still ends a setsid daemon
    (trial,) = out.glob("trials/bank/pay-rent/none/1")
    assert json.loads((trial / "trial.json").read_text())["isolation"] == "none"


def test_the_scripted_agent_passes_under_the_default_sandbox(tmp_path: Path) -> None:
    outcome = run_episodes(
        ["bank"], [sys.executable, str(SCRIPTED), "--harn-trial", "good"], out=tmp_path / "run", k=1
    )
    assert all(run.score.passed for run in outcome.result.runs)
    assert {t["isolation"] for t in outcome.trials} == {"bwrap" if HAS_BWRAP else "none"}


def test_the_agents_view_of_a_spec_keeps_its_profiles_and_empties_their_rules() -> None:
    spec = resolve_spec("bank")
    real = json.loads(spec.read_text(encoding="utf-8"))
    view = json.loads(agent_spec_view(spec))
    assert real["fault_profiles"] and any(real["fault_profiles"].values())
    assert view["fault_profiles"] == {name: [] for name in real["fault_profiles"]}
    assert view["tasks"] == real["tasks"] and view["tools"] == real["tools"]


def test_an_unknown_sandbox_mode_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="auto, bwrap, none"):
        run_episodes(["bank"], [sys.executable, str(SCRIPTED)], out=tmp_path / "run", sandbox="docker")
    assert not (tmp_path / "run").exists()
    assert SANDBOX_MODES == ("auto", "bwrap", "none")


def test_preload_cannot_be_sandboxed(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--preload forks"):
        run_episodes(
            ["bank"], [sys.executable, str(SCRIPTED)], out=tmp_path / "run", preload=["json"], sandbox="bwrap"
        )


def test_sandbox_bwrap_without_bubblewrap_exits_2_and_auto_says_so(tmp_path: Path) -> None:
    """A PATH without ``bwrap``: ``--sandbox bwrap`` is refused before any trial, ``auto`` runs
    the trials without isolation and says why in one line at the start."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {**os.environ, "PATH": str(bin_dir)}
    base = [sys.executable, "-m", "harn_mcp_mock", "run", "--spec", "bank", "--task", "pay-rent"]
    agent = ["--", sys.executable, str(SCRIPTED), "--harn-trial", "good"]
    refused = subprocess.run(
        [*base, "--out", str(tmp_path / "a"), "--sandbox", "bwrap", *agent],
        env=env, capture_output=True, text=True, timeout=WAIT, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "--sandbox" in refused.stderr and "bubblewrap is not installed" in refused.stderr
    assert "Traceback" not in refused.stderr
    ran = subprocess.run(
        [*base, "--out", str(tmp_path / "b"), *agent], env=env, capture_output=True, text=True, timeout=WAIT,
        check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "sandbox: none (bubblewrap is not installed" in ran.stderr
    (trial,) = (tmp_path / "b").glob("trials/bank/pay-rent/none/1")
    assert json.loads((trial / "trial.json").read_text())["isolation"] == "none"


try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False


@needs_bwrap
@pytest.mark.ray
@pytest.mark.skipif(not HAVE_RAY and not os.environ.get("CI"), reason="the ray extra is not installed")
def test_ray_workers_put_each_agent_in_the_same_sandbox(tmp_path: Path) -> None:
    """On a local Ray each trial runs in a Ray worker (its own hub, its own temporary run folder):
    the agent there sees no more than on the local backend."""
    out = tmp_path / "run"
    tag = f"harn-daemon-ray-{os.getpid()}-{tmp_path.name}"
    outcome = run_episodes(
        ["bank"], _hostile(tmp_path, out, tag), out=out, tasks=["pay-rent"], k=2, workers=2, backend="ray",
        sandbox="bwrap", timeout=120,
    )  # fmt: skip
    assert [t["isolation"] for t in outcome.trials] == ["bwrap", "bwrap"]
    facts = _facts(out)
    assert len(facts) == 2
    for seen in facts:
        assert [n for n in seen["hub"] if n.endswith(".json")] == [seen["own_config"]]
        assert len(seen["hubs"]) == 1
        assert seen["runner"] == "ESRCH" and seen["pids"] <= 4
        assert seen["spec_bytes"] == 0 and seen["fault_rules"] == 0
        assert seen["unlink_socket"] in ("EBUSY", "EROFS", "EPERM")
    assert _alive_with(tag) == []


def test_without_a_sandbox_a_deleted_hub_socket_is_replaced_for_the_next_trial(tmp_path: Path) -> None:
    """An agent run without isolation removes the hub's socket: the next trial's bridge still
    reaches its world (the hub listens again, at a fresh path), so later trials are not failed."""
    flag = tmp_path / "deleted"
    agent = tmp_path / "vandal.py"
    agent.write_text(
        "import json, os, sys\n"
        f"flag = {str(flag)!r}\n"
        "if not os.path.exists(flag):\n"
        "    open(flag, 'w').close()\n"
        "    os.unlink(json.loads(os.environ['HARN_WORLD_COMMAND'])[-2])\n"
        "    sys.exit(0)\n"
        f"os.execv(sys.executable, [sys.executable, {str(SCRIPTED)!r}, '--harn-trial', 'good'])\n",
        encoding="utf-8",
    )
    outcome = run_episodes(
        ["bank"], [sys.executable, str(agent)], out=tmp_path / "run", tasks=["pay-rent"], k=2, workers=1,
        sandbox="none",
    )  # fmt: skip
    assert flag.exists()
    assert [t["status"] for t in outcome.trials] == ["scored", "scored"]
    assert sorted(run.score.passed for run in outcome.result.runs) == [False, True]


def test_a_hubs_root_name_taken_by_a_link_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user (or an agent without a sandbox) plants a symlink at ``$TMPDIR/harn-hubs-UID``:
    the hubs go to a fresh private folder instead, never through the link."""
    import tempfile

    from harn_mcp_mock.runner import sandbox

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / f"harn-hubs-{os.getuid()}").symlink_to(elsewhere)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sandbox, "_HUBS_ROOT", [])
    root = Path(sandbox.hubs_root())
    assert root.parent == tmp_path and root.is_dir() and not root.is_symlink()
    assert root.name.startswith(f"harn-hubs-{os.getuid()}-") and (root.stat().st_mode & 0o777) == 0o700
    assert sandbox.hubs_root() == str(root) and list(elsewhere.iterdir()) == []
