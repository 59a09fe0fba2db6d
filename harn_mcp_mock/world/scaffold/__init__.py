"""``world init --from-cassette``: scaffold a world spec from recordings of a real server.

The recording is read as a list of steps (a tool call and the answer it got). From it:

- the tools (name, title, description, schemas, annotations) come from ``tools/list``;
- the state's *collections* are the lists of objects that read tools' results show (a list
  whose objects share a key field such as ``id`` or ``name`` is kept as an object keyed by it;
  one without is kept as a list), and their initial contents are what reads showed before the
  first write;
- each tool gets candidate models, from its name (create, add, delete, read, search, ...), its
  annotations and its arguments' shapes against the collections (a batch of new items, a batch
  of keys, a batch of items referring to an item by key with values to add or remove, a key
  list or a query to filter by) and result and text templates in the recorded shape
  (``$json`` with the recorded indentation, key order from the recorded results, constant or
  argument-templated texts, error texts with the argument values put back as references) and,
  for documents kept at path-like keys, join-style listings (:mod:`.listings`: a text line per
  key under a path argument, a nested JSON tree, a block per key a list argument names);
- the candidates are *tested on the recording itself*: starting from a world where every tool
  answers only its recorded answers (``recorded``), each tool's model is kept when the whole
  session, replayed step by step, reproduces at least as many answers with it (writes first,
  then reads: a read model needs the writes' effects). A tool no model reproduces keeps its
  recorded answers and a ``todo`` (``world check`` names it).

:func:`replay` runs a recording against a spec and says, step by step, whether the world's
answer equals the recorded one, with a diff pointing at the part of the spec to edit.

Modules: :mod:`.recording` (steps and answers), :mod:`.collections` (collections, documents,
marks), :mod:`.candidates` and :mod:`.listings` (candidate models), :mod:`.build` (testing
them on the recording), :mod:`.report` (what ``world init`` prints).
"""

from __future__ import annotations

from harn_mcp_mock.world.scaffold.build import Outcome, Scaffold, replay, scaffold, similarity
from harn_mcp_mock.world.scaffold.candidates import (
    document_candidates,
    mark_candidates,
    read_candidates,
    text_rule,
    write_candidates,
)
from harn_mcp_mock.world.scaffold.collections import (
    Collection,
    Documents,
    Marks,
    find_collections,
    find_documents,
    find_marks,
    initial_state,
    is_read,
    verb,
)
from harn_mcp_mock.world.scaffold.listings import batch_read_candidates, listing_candidates, tree_candidates
from harn_mcp_mock.world.scaffold.recording import (
    Recording,
    Step,
    argument_template,
    normal,
    read_recordings,
    text_of,
    value_of,
)
from harn_mcp_mock.world.scaffold.report import (
    answer_diff,
    figures,
    part_to_edit,
    report_lines,
    write_scaffold,
)

__all__ = [
    "Collection",
    "Documents",
    "Marks",
    "Outcome",
    "Recording",
    "Scaffold",
    "Step",
    "answer_diff",
    "argument_template",
    "batch_read_candidates",
    "document_candidates",
    "figures",
    "find_collections",
    "find_documents",
    "find_marks",
    "initial_state",
    "is_read",
    "listing_candidates",
    "mark_candidates",
    "normal",
    "part_to_edit",
    "read_candidates",
    "read_recordings",
    "replay",
    "report_lines",
    "scaffold",
    "similarity",
    "text_of",
    "text_rule",
    "tree_candidates",
    "value_of",
    "verb",
    "write_candidates",
    "write_scaffold",
]
