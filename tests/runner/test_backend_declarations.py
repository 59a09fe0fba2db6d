"""Each backend declares itself once (runner/backend.py): the CLI's --backend help, the check of
a backend's options and the capability checks of a run are made from the declarations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.backend import (
    BACKENDS,
    BackendOptions,
    LocalBackend,
    backend_help,
    backend_info,
    backends_with,
    check_backend_options,
    get_backend,
)


def test_the_backend_help_is_made_from_the_declarations() -> None:
    assert backend_help() == "local (this machine) or ray (Ray tasks; needs [ray])."
    assert list(BACKENDS) == ["local", "ray"]


def test_the_cli_shows_the_declared_help_and_ray_address_flag() -> None:
    from typer.main import get_command

    from harn_mcp_mock.cli.mock import app

    run = get_command(app).commands["run"]  # type: ignore[attr-defined]
    helps = {opt: param.help for param in run.params for opt in getattr(param, "opts", [])}
    assert helps["--backend"] == backend_help()
    (backend,) = [param for param in run.params if "--backend" in getattr(param, "opts", [])]
    assert backend.metavar == "[local|ray]"  # the choices, from the declarations
    assert helps["--ray-address"] == BACKENDS["ray"].options[0].help


def test_an_option_of_another_backend_is_refused_naming_its_flag() -> None:
    with pytest.raises(UsageError, match=r"--ray-address is for --backend ray") as caught:
        LocalBackend(BackendOptions(address="ray://x"))
    assert caught.value.where == "--ray-address"
    with pytest.raises(UsageError, match=r"--ray-address is for --backend ray"):
        get_backend("local", BackendOptions(workers=2, address="ray://x"))
    check_backend_options(BACKENDS["ray"], BackendOptions(workers=2, address="ray://x"))  # its own


def test_an_unknown_backend_names_the_declared_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown backend 'slurm' \(backends: local, ray\)") as caught:
        backend_info("slurm")
    assert caught.value.where == "--backend"


def test_capabilities_name_the_backends_that_have_them() -> None:
    assert backends_with("preload") == "the local backend"
    assert backends_with("in_process") == "the local backend"
    assert BACKENDS["local"].isolation_here and not BACKENDS["ray"].isolation_here


def test_the_declarations_import_nothing_of_the_runner_but_themselves() -> None:
    code = (
        "import sys, harn_mcp_mock.runner.backend\n"
        "print(sorted(m for m in sys.modules if m.startswith('harn_mcp_mock.runner')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert done.stdout.strip() == "['harn_mcp_mock.runner', 'harn_mcp_mock.runner.backend']"
