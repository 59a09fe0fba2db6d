"""Where the real third-party MCP servers the end-to-end tests drive are installed.

* ``@modelcontextprotocol/server-everything``: npm, pinned in ``tests/e2e/package.json``,
  installed by ``make peers`` (``npm ci --prefix tests/e2e``), run with the ``node`` on PATH.
* ``mcp-server-time``: PyPI, pinned in the ``peers`` extra of ``pyproject.toml``, installed into
  the venv by ``make install`` (``pip install -e '.[dev,peers]'``).
* ``@modelcontextprotocol/server-filesystem``: npm, pinned beside server-everything.
* ``@modelcontextprotocol/server-memory`` (a knowledge graph in ``MEMORY_FILE_PATH``): npm, pinned
  beside server-everything.
* ``mcp-server-git``: PyPI, pinned in the ``peers`` extra beside mcp-server-time.
* ``@modelcontextprotocol/inspector`` (a real MCP *client*: its ``--cli`` mode): npm, pinned in
  ``tests/e2e/package.json`` beside server-everything, installed by ``make peers``.

The helpers raise :class:`PeerUnavailableError` with an install hint when a peer is missing;
the fixtures in ``tests/e2e/conftest.py`` turn that into a skip locally and a failure on CI
(:func:`in_ci`). Nothing here imports pytest.
"""

from __future__ import annotations

import json
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

__all__ = [
    "E2E_DIR",
    "EVERYTHING_PACKAGE",
    "INSPECTOR_PACKAGE",
    "WAIT",
    "PeerUnavailableError",
    "everything_package_dir",
    "everything_server_command",
    "fastmcp_client_class",
    "filesystem_server_command",
    "git_server_command",
    "in_ci",
    "inspector_cli_command",
    "memory_server_command",
    "npm_package_dir",
    "pinned_npm_version",
    "time_server_command",
]

# Seconds: only a hang guard. Every wait of the end-to-end tests ends on an event (a line, an
# answer, a process exit); this bound is reached only when something hangs, so it is generous:
# a Node server starting on a loaded 2-core machine can take tens of seconds.
WAIT = 300

E2E_DIR = Path(__file__).resolve().parent
NODE_MODULES = E2E_DIR / "node_modules"
EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING_BIN = "mcp-server-everything"
TIME_SCRIPT = "mcp-server-time"
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
INSPECTOR_BIN = "mcp-inspector"

_NPM_HINT = "run `make peers` (npm ci --prefix tests/e2e)"
_PIP_HINT = "run `make install` (pip install -e '.[dev,peers]')"


class PeerUnavailableError(RuntimeError):
    """A real peer server is not installed (the message says how to install it)."""


def in_ci() -> bool:
    """Whether we run on CI (``CI`` set to anything but empty/0/false/no)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise PeerUnavailableError(f"{path} is not a JSON object")
    return data


def pinned_npm_version(package: str) -> str:
    """The exact version ``tests/e2e/package.json`` pins ``package`` at."""
    deps = _read_json(E2E_DIR / "package.json").get("dependencies", {})
    version = deps.get(package)
    if not isinstance(version, str):
        raise KeyError(f"{package} is not a dependency in {E2E_DIR / 'package.json'}")
    return version


def everything_package_dir() -> Path:
    """The installed server-everything package, checked against the pinned version."""
    package_dir = NODE_MODULES.joinpath(*EVERYTHING_PACKAGE.split("/"))
    manifest = package_dir / "package.json"
    if not manifest.is_file():
        raise PeerUnavailableError(f"{EVERYTHING_PACKAGE} is not installed in {NODE_MODULES}: {_NPM_HINT}")
    installed = _read_json(manifest).get("version")
    pinned = pinned_npm_version(EVERYTHING_PACKAGE)
    if installed != pinned:
        raise PeerUnavailableError(
            f"{EVERYTHING_PACKAGE} {installed} is installed but {pinned} is pinned: {_NPM_HINT}"
        )
    return package_dir


def everything_server_command() -> list[str]:
    """``[node, <server-everything bin>, "stdio"]``.

    The package's bin (``dist/index.js``) takes the transport as its first argument and
    defaults to ``stdio``; it is passed explicitly.
    """
    node = shutil.which("node")
    if node is None:
        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    package_dir = everything_package_dir()
    bin_field = _read_json(package_dir / "package.json").get("bin")
    if isinstance(bin_field, dict):
        entry = bin_field.get(EVERYTHING_BIN) or next(iter(bin_field.values()), None)
    else:
        entry = bin_field
    if not isinstance(entry, str):
        raise PeerUnavailableError(f"{EVERYTHING_PACKAGE} declares no bin entry point")
    script = (package_dir / entry).resolve()
    if not script.is_file():
        raise PeerUnavailableError(f"{EVERYTHING_PACKAGE} bin {script} is missing: {_NPM_HINT}")
    return [node, str(script), "stdio"]


def time_server_command() -> list[str]:
    """``[<venv>/bin/mcp-server-time, "--local-timezone", "UTC"]`` (UTC keeps results stable)."""
    scripts = Path(sysconfig.get_path("scripts"))
    script = scripts / TIME_SCRIPT
    if os.name == "nt":  # pragma: no cover - the suite runs on POSIX; kept for completeness
        script = script.with_suffix(".exe")
    if not script.is_file():
        raise PeerUnavailableError(f"{TIME_SCRIPT} is not installed in {scripts}: {_PIP_HINT}")
    return [str(script), "--local-timezone", "UTC"]


def fastmcp_client_class() -> Any:
    """fastmcp's ``Client`` (the ``peers`` extra's ``fastmcp-slim[client]``), a client we did not write."""
    try:
        from fastmcp import Client
    except ImportError as exc:
        raise PeerUnavailableError(f"fastmcp's client is not installed ({exc}): {_PIP_HINT}") from None
    return Client


def npm_package_dir(package: str) -> Path:
    """The installed npm ``package`` in ``tests/e2e/node_modules``, checked against its pinned version."""
    package_dir = NODE_MODULES.joinpath(*package.split("/"))
    manifest = package_dir / "package.json"
    if not manifest.is_file():
        raise PeerUnavailableError(f"{package} is not installed in {NODE_MODULES}: {_NPM_HINT}")
    installed = _read_json(manifest).get("version")
    pinned = pinned_npm_version(package)
    if installed != pinned:
        raise PeerUnavailableError(f"{package} {installed} is installed but {pinned} is pinned: {_NPM_HINT}")
    return package_dir


def inspector_cli_command() -> list[str]:
    """``[node, <inspector bin>, "--cli"]``: the MCP Inspector's command-line client.

    The script is the package's ``mcp-inspector`` bin (what ``node_modules/.bin/mcp-inspector``
    links to), run with the ``node`` on PATH, never through ``npx``. Append the server command,
    then ``--method ...``. The launcher itself starts ``node`` from PATH for the CLI proper, and
    it drops a ``--`` from its argv, so a server command that needs one must be wrapped (a script).
    """
    node = shutil.which("node")
    if node is None:
        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    package_dir = npm_package_dir(INSPECTOR_PACKAGE)
    bin_field = _read_json(package_dir / "package.json").get("bin")
    entry = bin_field.get(INSPECTOR_BIN) if isinstance(bin_field, dict) else bin_field
    if not isinstance(entry, str):
        raise PeerUnavailableError(f"{INSPECTOR_PACKAGE} declares no {INSPECTOR_BIN} bin")
    script = (package_dir / entry).resolve()
    if not script.is_file():
        raise PeerUnavailableError(f"{INSPECTOR_PACKAGE} bin {script} is missing: {_NPM_HINT}")
    return [node, str(script), "--cli"]


def git_server_command(repository: Path) -> list[str]:
    """``[<venv>/bin/mcp-server-git, "--repository", repository]``."""
    script = Path(sysconfig.get_path("scripts")) / "mcp-server-git"
    if not script.is_file():
        raise PeerUnavailableError(f"mcp-server-git is not installed in {script.parent}: {_PIP_HINT}")
    return [str(script), "--repository", str(repository)]


def filesystem_server_command(root: Path) -> list[str]:
    """``[node, <server-filesystem's dist/index.js>, root]`` (root: the one allowed directory)."""
    node = shutil.which("node")
    if node is None:
        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    script = npm_package_dir("@modelcontextprotocol/server-filesystem") / "dist" / "index.js"
    if not script.is_file():
        raise PeerUnavailableError(f"{script} is missing: {_NPM_HINT}")
    return [node, str(script), str(root)]


def memory_server_command() -> list[str]:
    """``[node, <server-memory's dist/index.js>]`` (set ``MEMORY_FILE_PATH`` in its environment)."""
    node = shutil.which("node")
    if node is None:
        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    script = npm_package_dir("@modelcontextprotocol/server-memory") / "dist" / "index.js"
    if not script.is_file():
        raise PeerUnavailableError(f"{script} is missing: {_NPM_HINT}")
    return [node, str(script)]
