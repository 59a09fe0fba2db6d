"""``world init --from-cassette``: inference of collections, effects and templates, tested on
hand-made cassettes of a small stateful server (:mod:`tests.world.tags_cassette`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.scoring.world_check import check_world
from harn_mcp_mock.world.scaffold import (
    figures,
    read_recordings,
    replay,
    report_lines,
    scaffold,
    text_rule,
    verb,
    write_scaffold,
)
from tests.world.tags_cassette import (
    LANES_A,
    LANES_B,
    NOTES_B,
    SESSION_A,
    SESSION_B,
    SESSION_R,
    SHELF_A,
    SHELF_B,
    lanes_cassette,
    notes_cassette,
    shelf_cassette,
    tags_cassette,
)


@pytest.fixture
def own(tmp_path: Path) -> Path:
    return tags_cassette(tmp_path / "a.cassette.json")


def tool_of(spec: dict, name: str) -> dict:
    return next(t for t in spec["tools"] if t["name"] == name)


def test_collections_and_initial_state_come_from_what_reads_show(own: Path) -> None:
    result = scaffold([own])
    [tags] = result.collections
    assert (tags.name, tags.fields, tags.key) == ("tags", ["name", "color"], "name")
    assert result.spec["state"] == {"tags": {}}  # the first read, before any write, showed none


def test_tools_and_their_definitions_come_from_tools_list(own: Path) -> None:
    spec = scaffold([own]).spec
    assert [t["name"] for t in spec["tools"]] == [
        "add_tags",
        "remove_tags",
        "list_tags",
        "find_tags",
        "roll_dice",
    ]
    add = tool_of(spec, "add_tags")
    assert add["annotations"] == {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
    assert add["outputSchema"]["properties"]["tags"]["type"] == "array"
    assert spec["server"] == {"name": "tags", "version": "1.0"}


def test_effects_are_inferred_and_reproduce_the_recording(own: Path) -> None:
    result = scaffold([own])
    spec = result.spec
    add = tool_of(spec, "add_tags")
    [each] = add["effects"]
    assert each["op"] == "each" and each["items"] == "{args.tags}"
    assert each["effects"][0]["op"] == "insert" and each["effects"][0]["when"] == {
        "missing": "/tags/{x.name}"
    }
    assert add["text"] == {"$json": "{result.tags}", "indent": 2}  # the recorded layout
    assert tool_of(spec, "remove_tags")["effects"][0]["effects"][0]["op"] == "delete"
    assert tool_of(spec, "remove_tags")["text"] == "Tags removed"
    assert tool_of(spec, "find_tags")["result"]["tags"]["match"] == {
        "text": "{args.query}",
        "fields": ["name", "color"],
    }
    assert tool_of(spec, "list_tags")["text"] == {"$json": "{result}"}  # compact, as recorded
    assert figures(result.outcomes) == {
        "steps": len(SESSION_A),
        "reproduced": len(SESSION_A),
        "share": 1.0,
        "by_model": 7,
        "by_model_reproduced": 7,
    }


def test_what_cannot_be_inferred_is_a_todo_with_its_recorded_answers(own: Path, tmp_path: Path) -> None:
    result = scaffold([own])
    dice = tool_of(result.spec, "roll_dice")
    assert "not modelled" in dice["todo"]
    assert [r["result"]["content"][0]["text"] for r in dice["recorded"]] == ["4", "1"]
    out = tmp_path / "tags.world.json"
    write_scaffold(result, out)
    checked = check_world(out)
    assert checked.ok, checked.problems
    assert any("unmodelled tool 'roll_dice'" in note for note in checked.notes)
    assert not any("add_tags" in note for note in checked.notes)


def test_the_models_generalise_to_another_session(own: Path, tmp_path: Path) -> None:
    spec = scaffold([own]).spec
    other = read_recordings([tags_cassette(tmp_path / "b.cassette.json", SESSION_B)])
    outcomes = replay(spec, other)
    assert [o.ok for o in outcomes] == [True] * len(SESSION_B)
    assert all(o.source == "model" for o in outcomes)


def test_the_recorded_session_is_the_reference_task(own: Path) -> None:
    [task] = scaffold([own]).spec["tasks"]
    assert task["goal"] == [
        {
            "path": "/tags",
            "equals": {"bug": {"name": "bug", "color": "red"}, "idea": {"name": "idea", "color": "green"}},
        }
    ]
    assert [step["tool"] for step in task["reference"]] == [tool for tool, _ in SESSION_A]


def test_a_miss_is_reported_with_a_diff_and_the_part_to_edit(own: Path) -> None:
    spec = scaffold([own]).spec
    tool_of(spec, "list_tags")["text"] = {"$json": "{result}", "indent": 2}
    lines = report_lines(replay(spec, read_recordings([own])), spec)
    assert "MISS session 1 step 3: list_tags {} (model)" in lines
    assert "     edit tools[2] (list_tags): its text (the layout of the answer)" in lines
    assert any(line.startswith("     +") and '"text"' in line for line in lines)
    assert lines[-1].startswith("reproduced 6/9 recorded answers (67%)")


def test_text_rules_and_verbs() -> None:
    assert verb("git_status") == "git"
    assert verb("create_entities") == "create"
    assert verb("listDirectory") == "list"
    assert verb("mcp_delete_file") == "delete"


def test_text_rule_templates_argument_values(tmp_path: Path) -> None:
    from harn_mcp_mock.world.scaffold import argument_template

    assert argument_template("Created branch 'dev' from 'main'", {"branch_name": "dev"}) == (
        "Created branch '{args.branch_name}' from 'main'"
    )
    rec = read_recordings([tags_cassette(tmp_path / "a.cassette.json")])
    assert text_rule("remove_tags", rec) == "Tags removed"  # the same text every time
    assert text_rule("add_tags", rec) == {"$json": "{result.tags}", "indent": 2}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock", "world", "init", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_writes_the_spec_and_prints_the_replay(own: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "tags.world.json", tmp_path / "init.txt"
    done = run_cli("--from-cassette", str(own), "--out", str(out), "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert done.stdout == report.read_text()
    assert done.stdout.startswith(f"wrote {out}: 5 tools, collections tags (key name)\n")
    assert (
        "reproduced 9/9 recorded answers (100%); 7 answered by models, 2 by recorded answers" in done.stdout
    )
    assert json.loads(out.read_text())["name"] == "tags"


def test_cli_keeps_an_existing_spec_unless_forced(own: Path, tmp_path: Path) -> None:
    out = tmp_path / "tags.world.json"
    out.write_text('{"edited": "by hand"}')
    done = run_cli("--from-cassette", str(own), "--out", str(out))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == (
        f"harn mcp mock world init: error: {out}: exists: a spec you may have edited is kept; "
        "give --force to replace it, or another --out"
    )
    assert out.read_text() == '{"edited": "by hand"}'
    forced = run_cli("--from-cassette", str(own), "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(out.read_text())["name"] == "tags"


def test_cli_takes_several_cassettes(own: Path, tmp_path: Path) -> None:
    other = tags_cassette(tmp_path / "b.cassette.json", SESSION_B)
    done = run_cli("--from-cassette", str(own), str(other), "--out", str(tmp_path / "w.world.json"))
    assert done.returncode == 0, done.stderr
    assert "session 2 step 5: list_tags" in done.stdout
    assert f"reproduced {len(SESSION_A) + len(SESSION_B)}/{len(SESSION_A) + len(SESSION_B)}" in done.stdout


def test_cli_refuses_a_cassette_without_tools_list(tmp_path: Path) -> None:
    bare = tags_cassette(tmp_path / "bare.cassette.json", list_tools=False)
    done = run_cli("--from-cassette", str(bare), "--out", str(tmp_path / "w.world.json"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "no tools/list answer recorded" in done.stderr
    with pytest.raises(UsageError):
        scaffold([bare])


def test_cli_refuses_a_missing_cassette(tmp_path: Path) -> None:
    done = run_cli(
        "--from-cassette", str(tmp_path / "absent.cassette.json"), "--out", str(tmp_path / "w.world.json")
    )
    assert done.returncode == 3
    assert "absent.cassette.json" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "w.world.json").exists()


def test_documents_written_and_read_back_at_a_key(tmp_path: Path) -> None:
    spec = scaffold([notes_cassette(tmp_path / "a.cassette.json")]).spec
    assert spec["state"] == {"notes": {}}
    assert tool_of(spec, "write_note")["effects"] == [
        {"op": "set", "path": "/notes/{args.path}", "value": "{args.content}"}
    ]
    read = tool_of(spec, "read_note")
    assert read["requires"] == [{"exists": "/notes/{args.path}", "error": "no note at {args.path}"}]
    assert read["text"] == {"$get": "/notes/{args.path}"}
    move = tool_of(spec, "move_note")
    assert move["effects"] == [
        {"op": "move", "from": "/notes/{args.source}", "path": "/notes/{args.destination}"}
    ]
    assert move["text"] == "Moved {args.source} to {args.destination}"
    assert not any("todo" in t for t in spec["tools"])
    # keys with a / in them are one key each, in effects and in requires alike
    outcomes = replay(spec, read_recordings([notes_cassette(tmp_path / "b.cassette.json", NOTES_B)]))
    assert [o.ok for o in outcomes] == [True] * len(NOTES_B)


def test_a_miss_in_the_result_points_at_the_result_or_the_effects_before_it(own: Path) -> None:
    spec = scaffold([own]).spec
    tool_of(spec, "add_tags")["effects"] = []  # nothing is ever added: reads show nothing
    lines = report_lines(replay(spec, read_recordings([own])), spec)
    assert 'MISS session 1 step 5: find_tags {"query":"RE"} (model)' in lines
    assert "     edit tools[3] (find_tags): its text (the layout of the answer)" in lines
    spec = scaffold([own]).spec
    tool_of(spec, "add_tags")["result"] = {"tags": []}
    lines = report_lines(replay(spec, read_recordings([own])), spec)
    assert (
        "     edit tools[0] (add_tags): its result, or the effects of the calls before it (the state it reads)"
        in lines
    )


def test_recorded_resources_are_served_and_replayed(tmp_path: Path) -> None:
    cassette = tags_cassette(tmp_path / "r.cassette.json", SESSION_R)
    result = scaffold([cassette])
    [resource] = result.spec["resources"]
    assert resource["uri"] == "tags://all" and resource["name"] == "all tags"
    assert [r["result"]["contents"][0]["text"] for r in resource["recorded"]] == [
        "[]",
        '[{"name": "bug", "color": "red"}]',
    ]
    lines = report_lines(result.outcomes, result.spec)
    assert "ok   session 1 step 3: resources/read tags://all {} (recorded)" in lines
    assert lines[-1].startswith("reproduced 4/4 recorded answers (100%); 2 answered by models")
    out = tmp_path / "r.world.json"
    write_scaffold(result, out)
    checked = check_world(out)
    assert checked.ok and any("resources[0]: unmodelled resource 'tags://all'" in n for n in checked.notes)
    from harn_mcp_mock.world.engine import WorldEngine
    from harn_mcp_mock.world.spec import load_spec

    engine = WorldEngine(load_spec(out), task="recorded-session")
    listed = engine.receive({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})[0].message["result"]
    assert [r["uri"] for r in listed["resources"]] == ["harn://task", "tags://all"]
    task = engine.receive(
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "harn://task"}}
    )
    assert "recorded session" in task[0].message["result"]["contents"][0]["text"]


def test_listings_of_keyed_documents_are_modelled_as_joins(tmp_path: Path) -> None:
    """Text listings (a line per entry under a path argument), searches by glob, a nested JSON
    tree and a batch read, of a server with its own names and layouts: every answer of its
    recording comes from a model, and another session gets the same answers from the world."""
    result = scaffold([shelf_cassette(tmp_path / "a.cassette.json")])
    spec = result.spec
    assert (spec["state"]["files"], spec["state"]["folders"]) == ({}, {})
    assert tool_of(spec, "create_folder")["effects"] == [
        {"op": "set", "path": "/folders/{args.path}", "value": True}
    ]
    show = tool_of(spec, "show_folder")["text"]
    assert show["$join"] == [
        {"keys": "/files", "line": "(F) {name}"},
        {"keys": "/folders", "line": "(D) {name}"},
    ]
    assert show["under"] == "{args.path}"
    find = tool_of(spec, "find_files")["text"]
    assert (find["depth"], find["glob"], find["empty"]) == ("all", "{args.glob}", "nothing found")
    assert "$json" in tool_of(spec, "folder_tree")["text"]
    assert tool_of(spec, "open_files")["text"]["$join"][0]["missing"] == "== {key} (missing)"
    out = tmp_path / "shelf.world.json"
    write_scaffold(result, out)
    checked = check_world(out)
    assert checked.ok, checked.problems
    mine = figures(result.outcomes)
    assert mine["by_model_reproduced"] == mine["steps"] == len(SHELF_A), report_lines(result.outcomes, spec)
    other = figures(replay(spec, read_recordings([shelf_cassette(tmp_path / "b.cassette.json", SHELF_B)])))
    assert other["by_model_reproduced"] == other["steps"] == len(SHELF_B), other


def test_a_listing_with_a_marked_current_key_and_a_tool_that_selects_it(tmp_path: Path) -> None:
    """Keys a listing shows that no write made are there from the start; two line layouts that
    take turns mark the current key; a write given a listed key makes it current (or fails)."""
    result = scaffold([lanes_cassette(tmp_path / "a.cassette.json")])
    spec = result.spec
    assert spec["state"]["lanes"] == {"base": True}
    assert spec["state"]["current_lanes"] == ["base"]  # the history of current lanes
    assert tool_of(spec, "add_lane")["effects"] == [
        {"op": "set", "path": "/lanes/{args.lane_name}", "value": True}
    ]
    use = tool_of(spec, "use_lane")
    assert use["effects"] == [{"op": "insert", "path": "/current_lanes", "value": "{args.lane_name}"}]
    assert use["requires"] == [{"exists": "/lanes/{args.lane_name}", "error": "no lane {args.lane_name}"}]
    [source] = tool_of(spec, "lanes")["text"]["$join"]
    assert source == {
        "keys": "/lanes",
        "line": "- {name}",
        "mark": {"at": "/current_lanes", "line": "> {name}"},
    }
    out = tmp_path / "lanes.world.json"
    write_scaffold(result, out)
    checked = check_world(out)
    assert checked.ok, checked.problems
    mine = figures(result.outcomes)
    assert mine["by_model_reproduced"] == mine["steps"] == len(LANES_A)
    other = figures(replay(spec, read_recordings([lanes_cassette(tmp_path / "b.cassette.json", LANES_B)])))
    assert other["by_model_reproduced"] == other["steps"] == len(LANES_B), other
