"""`harn protocol conform`: exit codes, one-line connection errors, JSON and --report, --check, --list."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harn_mcp_mock.agents.conform import CHECKS
from harn_mcp_mock.cli.protocol import app
from tests.agents.test_conform import answers_400_for_bad_versions
from tests.agents.test_conform_servers import KEY, serve_mock

# One worker runs this module, so its module-scoped fixture (a recording, a server, a cluster) is
# made once, not once per pytest-xdist worker (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("agents/test_conform_cli")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_mock(tmp_path_factory.mktemp("conform-cli") / "harness.sqlite3") as served:
        yield served


def conform(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["conform", *args])
    return result.exit_code, result.output


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_an_unreachable_url_is_exit_2_with_one_line() -> None:
    target = closed_port_url()
    code, output = conform("--url", target, "--api-key", KEY)
    assert code == 2
    assert output.count("\n") == 1 and "Traceback" not in output
    assert output.startswith(f"harn protocol: error: cannot reach {target}: ConnectError")
    assert KEY not in output


def test_json_output_parses_and_check_selects(url: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code, output = conform(
        "--url", url, "--api-key", KEY, "--format", "json", "--check", "core.version.*",
        "--check", "receipts.hash", "--report", str(report),
    )  # fmt: skip
    assert code == 0, output
    data = json.loads(output)
    assert [r["id"] for r in data["results"]] == [
        "core.version.missing.426", "core.version.unsupported.426", "core.version.supported_list",
        "receipts.hash",
    ]  # fmt: skip
    assert data["ok"] is True and data["summary"] == {
        "total": 4, "pass": 4, "fail": 0, "warn": 0, "skip": 0, "error": 0,
    }  # fmt: skip
    assert json.loads(report.read_text()) == {
        **data,
        "duration_ms": json.loads(report.read_text())["duration_ms"],
    }
    assert KEY not in output


def test_a_failing_harness_is_exit_1_and_the_table_names_the_check(tmp_path: Path) -> None:
    with serve_mock(tmp_path / "h.sqlite3", answers_400_for_bad_versions) as broken:
        code, output = conform("--url", broken, "--api-key", KEY, "--check", "core.version.*")
    assert code == 1
    row = next(line for line in output.splitlines() if line.startswith("core.version.unsupported.426"))
    assert "FAIL" in row and "expected 426 unsupported_protocol_version, got GET /v1/tasks -> 400" in row
    assert (
        output.rstrip()
        .splitlines()[-1]
        .startswith("DOES NOT CONFORM at level core: 3 checks, 0 passed, 2 failed")
    )


def test_the_table_is_the_default_and_the_level_is_cumulative(url: str) -> None:
    code, output = conform("--url", url, "--api-key", KEY, "--level", "receipts")
    assert code == 0, output
    ids = [line.split()[0] for line in output.splitlines()[1:] if line.startswith(("core.", "receipts."))]
    assert ids == [c.id for c in CHECKS if c.level.value in ("core", "receipts")]
    assert "CONFORMS at level receipts" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--api-key", KEY], "pass the Harness base URL with --url"),
        (["--url", "http://127.0.0.1:1"], "pass --api-key KEY"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--level", "gold"], "unknown level 'gold'"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--format", "xml"], "unknown format 'xml'"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--task-input", "[1]"], "must be a JSON object"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--check", "nope.*"], "no check matches 'nope.*'"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--timeout", "-1"], "--timeout: must be a number"),
        (["--url", "http://127.0.0.1:1", "--api-key", KEY, "--timeout", "0"], "--timeout: must be a number"),
        (
            ["--url", "http://127.0.0.1:1", "--api-key", KEY, "--timeout", "nan"],
            "--timeout: must be a number",
        ),
    ],
)
def test_usage_errors_are_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.delenv("HARN_PROTOCOL_API_KEY", raising=False)
    code, output = conform(*args)
    assert code == 2
    assert message in output and output.count("\n") == 1


def test_list_prints_every_check_with_its_level_and_sentence() -> None:
    code, output = conform("--list")
    assert code == 0
    lines = output.splitlines()
    assert [line.split()[0] for line in lines] == [c.id for c in CHECKS]
    assert "Servers MUST reject unsupported protocol versions with 426" in output


def test_a_custom_task_input_is_submitted(url: str) -> None:
    code, output = conform(
        "--url", url, "--api-key", KEY, "--task-input", '{"text": "custom probe"}', "--check", "core.task.*",
    )  # fmt: skip
    assert code == 0, output
