"""A world of several servers in its spec: ``servers`` (name, serverInfo, tools) over one state,
and fault rules aimed at one server. Every mistake is one line naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harn_mcp_mock.errors import FaultRulesError, WorldSpecError
from harn_mcp_mock.faults.rules import parse_rules
from harn_mcp_mock.world.spec import compile_spec

OBJ = {"type": "object"}


def two_servers(**extra: Any) -> dict[str, Any]:
    return {
        "format": "harn-mcp-mock/world",
        "version": 1,
        "name": "w",
        "state": {"n": 0},
        "tools": [{"name": "read", "inputSchema": OBJ}, {"name": "bump", "inputSchema": OBJ},
                  {"name": "ping", "inputSchema": OBJ}],
        "servers": [
            {"name": "desk", "version": "2.0.0", "instructions": "the desk", "tools": ["read", "ping"]},
            {"name": "bank", "tools": ["bump", "ping"]},
        ],
        **extra,
    }  # fmt: skip


def test_servers_compile_in_order_with_their_info_and_tools_a_tool_may_be_in_several() -> None:
    spec = compile_spec(two_servers())
    assert list(spec.servers) == ["desk", "bank"]
    assert spec.servers["desk"].info == {"name": "desk", "version": "2.0.0", "instructions": "the desk"}
    assert spec.servers["bank"].tools == ("bump", "ping")
    one = two_servers()
    del one["servers"]
    assert compile_spec(one).servers == {}


@pytest.mark.parametrize(
    ("change", "where", "what"),
    [
        (lambda s: s["servers"][1]["tools"].append("transfer"), "servers[1].tools[2]", "no tool 'transfer'"),
        (lambda s: s["servers"][0]["tools"].remove("read"), "tools[0].name", "tool 'read' is in no server"),
        (lambda s: s["servers"][1].update(name="desk"), "servers[1].name", "duplicate server 'desk'"),
        (
            lambda s: s["servers"][0]["tools"].append("ping"),
            "servers[0].tools[2]",
            "tool 'ping' listed twice",
        ),
        (lambda s: s["servers"][0].update(resources=[]), "servers[0].resources", "unknown field"),
        (lambda s: s["servers"][0].pop("tools"), "servers[0].tools", "expected a list"),
        (lambda s: s.update(servers=[]), "servers", "expected at least one server"),
        (
            lambda s: s.update(fault_profiles={"p": [{"kind": "timeout", "server": "vault"}]}),
            "fault_profiles.p[0].server",
            "no server 'vault' (servers: desk, bank)",
        ),
        (
            lambda s: s.update(fault_profiles={"p": [{"kind": "timeout", "server": "bank", "tool": "read"}]}),
            "fault_profiles.p[0].tool",
            "server 'bank' does not show tool 'read'",
        ),
    ],
)
def test_a_bad_servers_field_is_one_line_naming_the_field(change: Any, where: str, what: str) -> None:
    doc = two_servers()
    change(doc)
    with pytest.raises(WorldSpecError) as caught:
        compile_spec(doc)
    assert caught.value.where == where and what in str(caught.value)


def test_a_fault_rule_with_a_server_is_refused_in_a_world_of_one_server_and_in_a_replay() -> None:
    one = two_servers(fault_profiles={"p": [{"kind": "timeout", "server": "bank"}]})
    del one["servers"]
    with pytest.raises(WorldSpecError, match="this world is one server") as caught:
        compile_spec(one)
    assert caught.value.where == "fault_profiles.p[0].server"
    with pytest.raises(FaultRulesError, match="a replay is one server"):
        parse_rules([{"kind": "timeout", "server": "bank"}])


def test_world_check_names_the_field_of_a_tool_in_no_server(tmp_path: Path) -> None:
    doc = two_servers()
    doc["servers"][1]["tools"] = ["ping"]
    path = tmp_path / "w.world.json"
    path.write_text(json.dumps(doc))
    done = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "check", "--spec", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("w.world.json:tools[1].name: tool 'bump' is in no server (servers[].tools)")
    ), done.stderr


def test_the_shipped_schema_takes_servers_and_a_rules_server() -> None:
    import jsonschema

    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "worlds" / "world.schema.json").read_text())
    doc = two_servers(fault_profiles={"p": [{"kind": "timeout", "server": "bank"}]})
    jsonschema.validate(doc, schema)
    doc["servers"][0]["tool"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_world_server_serves_one_server_and_refuses_a_name_the_spec_lacks(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    report = tmp_path / "r.json"
    harn = [sys.executable, "-m", "harn_mcp_mock", "world", "--spec", "support"]
    done = subprocess.run(
        [*harn, "--server", "bank", "--report", str(report)], input=f"{json.dumps(init)}\n{json.dumps(listing)}\n",
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["result"]["serverInfo"] == {"name": "bank", "version": "1.0.0"}
    assert [t["name"] for t in answers[1]["result"]["tools"]] == ["get_account", "list_transfers", "refund"]
    refused = subprocess.run(
        [*harn, "--server", "vault"], input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(
        "support.world.json:--server: no server 'vault' (servers: desk, bank)"
    )
