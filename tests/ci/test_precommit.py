"""The pre-commit hooks, run by pre-commit itself on a scratch git repository whose
`.pre-commit-config.yaml` pins this project at a commit, as a user's does (docs/ci.md): a cassette
with a planted secret fails the commit, a clean one passes; a commit that breaks a cassette's tool
surface fails the verify hook.

pre-commit builds the hooks' environment (a virtualenv with this project pip-installed) once per
repository and commit. `pre-commit try-repo` would build it anew on every call (it uses a new
store each time), so the tests pin one commit instead: `HEAD`, or, in a checkout with changes, a
commit of the working tree made once per run in a clone (what try-repo itself does), shared by
every xdist worker with the pre-commit home."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from tests.ci.test_action import drifted
from tests.lint.poisoned import FAKE_GITHUB_TOKEN

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
HOOKS = ("harn-mcp-mock-lint", "harn-mcp-mock-verify")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture(scope="session")
def hooks_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit home for the whole run, shared by the xdist workers (the root of their
    temporary folders): the hooks' environment is built once; pre-commit locks its own store."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    home = root / "pre-commit-home"
    home.mkdir(exist_ok=True)
    return home


@pytest.fixture(scope="session")
def hooks_repo(hooks_home: Path) -> tuple[str, str]:
    """The repository and commit a config pins to get this checkout's hooks: ``HEAD`` of this
    checkout, or a commit of its working tree (tracked files) in a clone, made once per run."""
    if not (ROOT / ".git").exists():
        pytest.skip("the hooks are installed from a git repository: needs this project as a git checkout")
    if not git(ROOT, "status", "--porcelain", "--untracked-files=no"):
        return str(ROOT), git(ROOT, "rev-parse", "HEAD")
    shadow = hooks_home.parent / "hooks-repo"
    with FileLock(f"{shadow}.lock", timeout=120):
        if not (shadow / ".git").exists():
            building = hooks_home.parent / "hooks-repo.partial"
            shutil.rmtree(building, ignore_errors=True)
            git(ROOT, "clone", "-q", "--no-checkout", str(ROOT), str(building))
            git(building, "checkout", "-q", "HEAD")
            patch = subprocess.run(
                ["git", "diff", "HEAD", "--binary"], cwd=ROOT, check=True, capture_output=True, timeout=60
            ).stdout
            subprocess.run(["git", "apply", "--index"], cwd=building, input=patch, check=True, timeout=60)
            git(building, "commit", "-q", "-m", "the working tree under test")
            building.rename(shadow)
        return str(shadow), git(shadow, "rev-parse", "HEAD")


def run_hook(
    repo: Path, home: Path, pinned: tuple[str, str], hook: str, *files: str
) -> subprocess.CompletedProcess[str]:
    """``pre-commit run HOOK --files ...`` in ``repo``, its config pinning this project's hooks."""
    url, rev = pinned
    config = {"repos": [{"repo": url, "rev": rev, "hooks": [{"id": hook_id} for hook_id in HOOKS]}]}
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))  # YAML reads JSON
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "PIP_NO_COMPILE": "1"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [*PRE_COMMIT, "run", hook, "--verbose", "--files", *files],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow  # the first hook run builds the hooks' environment (pip installs the project)
def test_the_lint_hook_refuses_a_planted_secret_and_passes_a_clean_cassette(
    tmp_path: Path, hooks_home: Path, hooks_repo: tuple[str, str]
) -> None:
    repo = tmp_path / "project"
    (repo / "tests" / "cassettes").mkdir(parents=True)
    git(repo, "init", "-q")
    clean = repo / "tests" / "cassettes" / "time.cassette.json"
    shutil.copy(ROOT / "cassettes" / "time.cassette.json", clean)
    git(repo, "add", ".")
    done = run_hook(repo, hooks_home, hooks_repo, "harn-mcp-mock-lint", "tests/cassettes/time.cassette.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout
    doc = json.loads(clean.read_text())
    doc["command"] = ["mcp-server-time", "--token", FAKE_GITHUB_TOKEN]  # a hand edit left a secret
    leaky = repo / "tests" / "cassettes" / "leaky.cassette.json"
    leaky.write_text(text := json.dumps(doc))
    git(repo, "add", ".")
    done = run_hook(repo, hooks_home, hooks_repo, "harn-mcp-mock-lint", "tests/cassettes/leaky.cassette.json")
    assert done.returncode == 1
    column = text.index(json.dumps(FAKE_GITHUB_TOKEN)) + 1  # one line: where the secret's string opens
    assert f"leaky.cassette.json:1:{column}: ERR S1" in done.stdout and "(at /command/2)" in done.stdout
    assert FAKE_GITHUB_TOKEN not in done.stdout + done.stderr


@pytest.mark.slow  # the first hook run builds the hooks' environment (pip installs the project)
def test_the_verify_hook_refuses_a_breaking_change_to_a_committed_cassette(
    tmp_path: Path, hooks_home: Path, hooks_repo: tuple[str, str]
) -> None:
    repo = tmp_path / "project"
    (repo / "cassettes").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    cassette = repo / "cassettes" / "time.cassette.json"
    shutil.copy(ROOT / "cassettes" / "time.cassette.json", cassette)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "record")
    done = run_hook(repo, hooks_home, hooks_repo, "harn-mcp-mock-verify", "cassettes/time.cassette.json")
    assert done.returncode == 0, done.stdout + done.stderr
    drifted(ROOT / "cassettes" / "time.cassette.json", cassette)
    git(repo, "add", ".")
    done = run_hook(repo, hooks_home, hooks_repo, "harn-mcp-mock-verify", "cassettes/time.cassette.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "I1" in done.stdout and "locale" in done.stdout


def documented_configs() -> list[dict[str, object]]:
    """The `.pre-commit-config.yaml` examples of docs/ci.md, parsed."""
    import re

    import yaml

    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [
        yaml.safe_load(block)
        for block in re.findall(r"```yaml\n(# \.pre-commit-config\.yaml\n.*?)```", doc, re.DOTALL)
    ]


def test_the_documented_rev_is_a_commit_of_this_project_that_has_both_hooks() -> None:
    import yaml

    remote = [repo for config in documented_configs() for repo in config["repos"] if repo["repo"] != "local"]  # type: ignore[index, attr-defined]
    assert len(remote) == 1
    rev = remote[0]["rev"]
    assert len(rev) == 40 and int(rev, 16) >= 0, "pin a full commit until releases are tagged"
    if not (ROOT / ".git").exists():
        pytest.skip("needs this project as a git checkout")
    shown = subprocess.run(
        ["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, f"docs/ci.md pins {rev}, which has no .pre-commit-hooks.yaml here"
    ids = {hook["id"] for hook in yaml.safe_load(shown.stdout)}
    assert {hook["id"] for hook in remote[0]["hooks"]} <= ids


def test_the_documented_local_hooks_run_as_written(tmp_path: Path, hooks_home: Path) -> None:
    import yaml

    (local,) = [c for c in documented_configs() if c["repos"][0]["repo"] == "local"]  # type: ignore[index]
    repo = tmp_path / "project"
    (repo / "cassettes").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(local))
    shutil.copy(ROOT / "cassettes" / "time.cassette.json", repo / "cassettes" / "time.cassette.json")
    doc = json.loads((ROOT / "cassettes" / "time.cassette.json").read_text())
    doc["command"] = ["mcp-server-time", "--token", FAKE_GITHUB_TOKEN]
    (repo / "cassettes" / "leaky.cassette.json").write_text(text := json.dumps(doc))
    git(repo, "add", ".")
    # `language: system` runs the commands the project's environment has: this venv's.
    env = {**os.environ, "PRE_COMMIT_HOME": str(hooks_home), "PRE_COMMIT_COLOR": "never"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"

    def run(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PRE_COMMIT, "run", "--files", *files],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    clean = run("cassettes/time.cassette.json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    leaky = run("cassettes/leaky.cassette.json")
    assert leaky.returncode == 1, leaky.stdout + leaky.stderr
    column = text.index(json.dumps(FAKE_GITHUB_TOKEN)) + 1  # one line: where the secret's string opens
    assert f"leaky.cassette.json:1:{column}: ERR S1" in leaky.stdout and "(at /command/2)" in leaky.stdout
    assert FAKE_GITHUB_TOKEN not in leaky.stdout + leaky.stderr
