"""``world init`` on a server whose creates and adds skip what is there and answer only what
they added, and whose add to a missing item is an error (server-memory's semantics), on a
hand-made cassette (:func:`tests.world.tags_cassette.cards_cassette`)."""

from __future__ import annotations

from pathlib import Path

from harn_mcp_mock.world.scaffold import figures, read_recordings, replay, scaffold, write_candidates
from tests.world.tags_cassette import CARDS_A, CARDS_B, cards_cassette


def tool_of(spec: dict, name: str) -> dict:
    return next(t for t in spec["tools"] if t["name"] == name)


def test_skip_existing_creates_and_adds_are_all_answered_by_models(tmp_path: Path) -> None:
    result = scaffold([cards_cassette(tmp_path / "a.cassette.json")])
    assert figures(result.outcomes) == {
        "steps": len(CARDS_A),
        "reproduced": len(CARDS_A),
        "share": 1.0,
        "by_model": len(CARDS_A),
        "by_model_reproduced": len(CARDS_A),
    }
    spec = result.spec
    # the batch's values go to the list field (labels), never the scalar one (kind)
    tag = str(tool_of(spec, "tag_cards")["effects"])
    assert "/labels" in tag and "/kind" not in tag
    assert "/labels" in str(tool_of(spec, "remove_labels")["effects"])
    # a missing card is the recorded error, the failing item's name put back
    [required] = tool_of(spec, "tag_cards")["requires"]
    assert required["exists"] == "/cards/{x.card}" and required["error"] == "Card {x.card} not found"
    # only what a create or an add added is answered
    assert tool_of(spec, "make_cards")["result"]["cards"]["when"] == {"missing": "/cards/{x.name}"}


def test_the_skip_existing_models_generalise_to_another_session(tmp_path: Path) -> None:
    spec = scaffold([cards_cassette(tmp_path / "a.cassette.json")]).spec
    other = read_recordings([cards_cassette(tmp_path / "b.cassette.json", CARDS_B)])
    outcomes = replay(spec, other)
    assert [o.ok for o in outcomes] == [True] * len(CARDS_B)
    assert all(o.source == "model" for o in outcomes)


def test_a_batch_of_values_is_added_to_or_removed_from_a_list_field_only(tmp_path: Path) -> None:
    """A candidate putting the labels into the scalar ``kind`` can tie with the right one while the
    card is not in the world yet, and win the tie (server-memory's ``entityType``)."""
    result = scaffold([cards_cassette(tmp_path / "a.cassette.json")])
    rec = read_recordings([tmp_path / "a.cassette.json"])
    for name in ("tag_cards", "remove_labels"):
        tool = next(t for t in rec.tools if t["name"] == name)
        cands = write_candidates(tool, rec, result.collections)
        assert cands, name
        assert all("/kind" not in str(c["effects"]) for c in cands), name
