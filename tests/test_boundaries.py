"""The package's boundaries, read off the source: every package pins ``__all__``, no module
imports a private name from another subpackage, no two modules import each other (directly or
round a longer loop, function-level imports included), and every third-party module the package
imports is a declared dependency.

Imports under ``if TYPE_CHECKING:`` are for the type checker only and are not counted.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

# One xdist worker runs this module: its tests share one parse of the package (``_imports`` is
# cached per process), ~1 s of CPU a test otherwise.
pytestmark = pytest.mark.xdist_group("test_boundaries")

ROOT = Path(__file__).resolve().parents[1]

PACKAGE = ROOT / "harn_mcp_mock"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth, skipping ``if TYPE_CHECKING:`` bodies."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


@cache
def _imports(module: str) -> tuple[tuple[str, str | None], ...]:
    """(imported module, imported name or None) for every runtime import of ``module`` (parsed
    once per test process: every test below reads them)."""
    return tuple(_parse_imports(module))


def _parse_imports(module: str) -> Iterator[tuple[str, str | None]]:
    path = MODULES[module]
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
            continue
        if node.level:
            base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        for alias in node.names:
            yield source, alias.name


def _target(source: str, name: str | None) -> str:
    """The module an import loads: ``from pkg import mod`` loads ``pkg.mod`` when it is one."""
    if name is not None and f"{source}.{name}" in MODULES:
        return f"{source}.{name}"
    return source


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module in MODULES:
        for source, name in _imports(module):
            target = _target(source, name)
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def _subpackage(module: str) -> str:
    """``harn_mcp_mock.<first part>``: the unit a private name must not leave."""
    return ".".join(module.split(".")[:2])


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _cycles(graph: dict[str, set[str]], nodes: list[str]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_pins_its_public_names_in_all(package: str) -> None:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    assert isinstance(names, list | tuple), f"{package} has no __all__"
    assert list(names) == sorted(set(names), key=list(names).index), f"{package}.__all__ repeats a name"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it does not have: {missing}"


def test_no_module_imports_a_private_name_from_another_subpackage() -> None:
    crossings = []
    for module in MODULES:
        for source, name in _imports(module):
            if not source.startswith("harn_mcp_mock."):
                continue
            target = _target(source, name)
            if _subpackage(target) == _subpackage(module) or target.count(".") < 1:
                continue
            if _subpackage(target) == target and MODULES.get(target, Path()).name != "__init__.py":
                # a module at the package root (a shared leaf such as _version): not a subpackage
                continue
            parts = target.split(".")[1:] + ([name] if name is not None and target == source else [])
            if any(_private(part) for part in parts):
                crossings.append(f"{module} imports {target}{'' if name is None else ':' + name}")
    assert not crossings, "\n".join(crossings)


def test_no_module_imports_a_private_name_of_another_module() -> None:
    """Inside a subpackage too: what two modules share is public in one of them, or lives in a
    ``_``-named helper module (``http/server.py`` holds what the HTTP endpoints share)."""
    crossings = []
    for module in MODULES:
        for source, name in _imports(module):
            if not source.startswith("harn_mcp_mock.") or name is None or _target(source, name) != source:
                continue
            if _private(name) and source != module:
                crossings.append(f"{module} imports {source}:{name}")
    assert not crossings, "\n".join(crossings)


def test_no_two_modules_import_each_other_even_round_a_longer_loop() -> None:
    cycles = _cycles(_graph(), list(MODULES))
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-") for req in requirements}


def test_every_third_party_module_the_package_imports_is_a_declared_dependency() -> None:
    stdlib = set(sys.stdlib_module_names)
    owners = metadata.packages_distributions()
    declared = _declared_distributions()
    undeclared = set()
    for module in MODULES:
        for source, _name in _imports(module):
            top = source.split(".")[0]
            if not top or top in stdlib or top == "harn_mcp_mock":
                continue
            dists = {d.lower().replace("_", "-") for d in owners.get(top, [top])}
            if not dists & declared:
                undeclared.add(f"{top} (from {module}; distribution {sorted(dists)})")
    assert not undeclared, "imported but not declared in pyproject.toml:\n" + "\n".join(sorted(undeclared))


def test_the_package_version_is_the_one_pyproject_declares() -> None:
    from harn_mcp_mock import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert __version__ == project["version"]


def test_no_two_subpackages_import_each_other() -> None:
    # The layers of docs/architecture.md: a subpackage imports only those below it.
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in _graph().items():
        for target in targets:
            a, b = _subpackage(module), _subpackage(target)
            if a != b and a != "harn_mcp_mock" and b != "harn_mcp_mock":
                graph[a].add(b)
    loops = _cycles(graph, sorted({_subpackage(m) for m in MODULES}))
    assert not loops, "subpackages that import each other:\n" + "\n".join(" <-> ".join(c) for c in loops)


def test_the_agents_protocol_sits_above_the_mcp_side_which_never_imports_it() -> None:
    users = sorted(
        module
        for module, targets in _graph().items()
        if not module.startswith(("harn_mcp_mock.agents", "harn_mcp_mock.cli"))
        and any(t.startswith("harn_mcp_mock.agents") for t in targets)
    )
    assert users == []


def test_the_tests_mirror_the_package() -> None:
    # tests/<subpackage>/test_<module>.py; end-to-end runs against real third-party peers live
    # in tests/e2e/, mypy's check of the public API in tests/typing/, and tests of root modules
    # (api, options, formats...) at the top.
    subpackages = {name.split(".")[1] for name in PACKAGES if name.count(".") == 1}
    folders = {p.parent.name for p in (ROOT / "tests").glob("*/test_*.py")}
    assert folders - subpackages == {"e2e", "typing"}
    # Each file is named after the module (or sub-package) it tests: test_<module>.py, or
    # test_<module>_<aspect>.py when one module's tests are split by topic.
    stray = []
    for test in sorted((ROOT / "tests").glob("*/test_*.py")):
        package = ROOT / "harn_mcp_mock" / test.parent.name
        if not package.is_dir():
            continue
        modules = {p.stem.lstrip("_") for p in package.glob("*.py")}
        modules |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
        name = test.stem.removeprefix("test_")
        if not any(name == m or name.startswith(m + "_") for m in modules):
            stray.append(str(test.relative_to(ROOT)))
    assert stray == []


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--cassette", "cassettes/time.cassette.json"],
        ["world", "--spec", "worlds/notes/notes.world.json"],
    ],
)
def test_replay_and_world_answer_initialize_without_importing_heavy_modules(argv: list[str]) -> None:
    import subprocess

    init = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    script = (
        "import runpy, sys\n"
        f"sys.argv = ['harn-mcp-mock', *{argv!r}]\n"
        "try:\n    runpy.run_module('harn_mcp_mock', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=init, capture_output=True, cwd=ROOT, timeout=60, check=False
    )
    assert b'"id":1' in done.stdout, done.stderr.decode()
    [line] = [x for x in done.stderr.decode().splitlines() if x.startswith("MODULES ")]
    loaded = set(line.split()[1:])
    heavy = {"typing", "mcp", "mcp_types", "httpx", "httpx2", "starlette", "uvicorn", "pydantic", "typer"}
    heavy |= {"deepdiff", "jsonschema", "rich", "blake3", "asyncio", "tempfile", "zipfile", "threading"}
    assert loaded & heavy == set()


def test_xdist_groups_reach_the_scheduler(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` (``make test``), an ``xdist_group`` mark must reach the node id
    (``id@group``): that suffix is how pytest-xdist sends a group to one worker. pytest 9.2 with
    pytest-xdist 3.8 drops it without a word (pytest-dev/pytest-xdist#1386), and every worker then
    builds each module fixture of the grouped modules again (~20 s of CPU in `make test-fast`);
    pyproject.toml keeps pytest below 9.2 until xdist follows."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs under pytest-xdist's --dist loadgroup")
    assert request.node.nodeid.endswith("@test_boundaries"), (
        f"pytest {pytest.__version__} did not apply this module's xdist_group mark: {request.node.nodeid}"
    )
