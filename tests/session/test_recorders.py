"""``new_recorder`` is the one place a Recorder is built."""

import ast
from pathlib import Path

from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.session.recorders import new_recorder

PACKAGE = Path(__file__).resolve().parents[2] / "harn_mcp_mock"
HOME = PACKAGE / "session" / "recorders.py"


def test_no_module_but_recorders_builds_a_recorder() -> None:
    builders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Recorder":
                builders.append(str(path.relative_to(PACKAGE)))
    assert builders == [str(HOME.relative_to(PACKAGE))]


def test_the_recorded_command_is_the_argv_redacted_by_the_policy(tmp_path: Path) -> None:
    argv = ["server", "--token", "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2]
    recorder = new_recorder(tmp_path / "c.cassette.json", RedactionPolicy.default(), argv, env={})
    try:
        assert recorder.command[:2] == ["server", "--token"]
        assert argv[2] not in recorder.command[2]
        assert recorder.transport == "stdio"
    finally:
        recorder.discard()
