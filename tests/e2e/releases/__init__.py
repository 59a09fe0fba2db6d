"""Real releases of real MCP servers, old and new, for the release-pair tests of `verify`.

Each release is installed by the test set-up, never by hand:

* npm releases: aliases in ``tests/e2e/package.json`` (``"server-everything-2025.11.25":
  "npm:@modelcontextprotocol/server-everything@2025.11.25"``), the newest under its own name,
  pinned by ``tests/e2e/package-lock.json`` and installed by ``make peers``;
* PyPI releases: the newest in the ``peers`` extra (the project's venv); each older one in its own
  venv ``.venv/releases/<name>-<version>`` made by ``make releases`` (``make install`` runs it) from
  ``tests/e2e/releases/requirements/<name>-<version>.txt`` (their own, older ``mcp``).

:func:`release_command` gives the stdio command of one release; it raises
:class:`~tests.e2e.peers.PeerUnavailableError` with the install hint when the release is missing.
"""

from __future__ import annotations

import shutil
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.peers import NODE_MODULES, PeerUnavailableError, _read_json

__all__ = ["GROUND_TRUTH", "PAIRS", "RELEASES", "Release", "release_command"]

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
GROUND_TRUTH = HERE / "ground_truth"
RELEASE_VENVS = ROOT / ".venv" / "releases"
_HINT = "run `make install` (it runs `make releases` and `make peers`)"


@dataclass(frozen=True, slots=True)
class Release:
    name: str
    """The package's name (PyPI or npm)."""
    version: str
    kind: str
    """``time``, ``git``, ``filesystem`` or ``everything``: how it is started."""
    where: str
    """``venv`` (the project's own), ``release-venv`` (``.venv/releases/...``) or the npm folder."""

    @property
    def id(self) -> str:
        return f"{self.name.rsplit('/', 1)[-1]}-{self.version}"


RELEASES: dict[str, Release] = {
    r.id: r
    for r in (
        Release("mcp-server-time", "0.6.2", "time", "release-venv"),
        Release("mcp-server-time", "2026.10.19", "time", "venv"),
        Release("mcp-server-git", "2025.1.14", "git", "release-venv"),
        Release("mcp-server-git", "2026.10.10", "git", "release-venv"),
        Release("mcp-server-git", "2026.10.19", "git", "venv"),
        Release(
            "@modelcontextprotocol/server-filesystem",
            "2025.3.28",
            "filesystem",
            "server-filesystem-2025.3.28",
        ),
        Release(
            "@modelcontextprotocol/server-filesystem",
            "2026.8.31",
            "filesystem",
            "@modelcontextprotocol/server-filesystem",
        ),
        Release(
            "@modelcontextprotocol/server-everything",
            "2025.11.25",
            "everything",
            "server-everything-2025.11.25",
        ),
        Release(
            "@modelcontextprotocol/server-everything",
            "2026.1.26",
            "everything",
            "server-everything-2026.1.26",
        ),
        Release(
            "@modelcontextprotocol/server-everything",
            "2026.8.31",
            "everything",
            "@modelcontextprotocol/server-everything",
        ),
    )
}

PAIRS: list[tuple[str, str]] = [
    ("mcp-server-time-0.6.2", "mcp-server-time-2026.10.19"),
    ("mcp-server-git-2025.1.14", "mcp-server-git-2026.10.19"),
    ("mcp-server-git-2026.10.10", "mcp-server-git-2026.10.19"),
    ("server-filesystem-2025.3.28", "server-filesystem-2026.8.31"),
    ("server-everything-2025.11.25", "server-everything-2026.8.31"),
    ("server-everything-2026.1.26", "server-everything-2026.8.31"),
]
"""(old, new): each recorded with the old release and verified live against the new one."""


def _python_script(release: Release) -> Path:
    if release.where == "venv":
        scripts = Path(sysconfig.get_path("scripts"))
        hint = "run `make install` (the `peers` extra)"
    else:
        scripts = RELEASE_VENVS / release.id / "bin"
        hint = _HINT
    script = scripts / release.name
    if not script.is_file():
        raise PeerUnavailableError(f"{release.name} {release.version} is not installed in {scripts}: {hint}")
    return script


def _node_script(release: Release) -> list[str]:
    node = shutil.which("node")
    if node is None:
        raise PeerUnavailableError("`node` is not on PATH: install Node.js 20+")
    package = NODE_MODULES.joinpath(*release.where.split("/"))
    manifest = package / "package.json"
    installed = _read_json(manifest).get("version") if manifest.is_file() else None
    if installed != release.version:
        raise PeerUnavailableError(
            f"{release.name} {release.version} is not installed in {package} (found {installed}): {_HINT}"
        )
    return [node, str(package / "dist" / "index.js")]


def release_command(release_id: str, workdir: Path) -> list[str]:
    """The stdio command of one release; ``workdir``: the git repository or filesystem root it serves."""
    release = RELEASES[release_id]
    if release.kind == "time":
        return [str(_python_script(release)), "--local-timezone", "UTC"]
    if release.kind == "git":
        return [str(_python_script(release)), "--repository", str(workdir)]
    if release.kind == "filesystem":
        return [*_node_script(release), str(workdir)]
    return [*_node_script(release), "stdio"]
