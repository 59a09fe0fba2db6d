"""Recall and precision of the default policy, measured on the redaction corpus.

The corpus (tests/redaction_corpus/corpus.py) holds fake, format-valid credentials of more than
120 formats and more than 3,000 harmless look-alikes; the harness plants them in every channel
the recorder sees, records them through the real recorder and scans every written byte (see
tests/redaction_corpus/harness.py). Targets: 0 leaked, at most 1% of harmless values changed.
"""

from __future__ import annotations

import base64
from functools import cache
from pathlib import Path

import orjson
import pytest

from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.redact import RedactionPolicy
from tests.redaction_corpus import corpus, harness
from tests.redaction_corpus.corpus import Harmless, Secret

# One worker runs the module: its recordings (module fixtures) are made once.
pytestmark = pytest.mark.xdist_group("redact/test_pipeline_corpus")


# Built when a test first asks (not at collection: every xdist worker collects this module).
@cache
def secrets() -> list[Secret]:
    return corpus.secrets()


@cache
def harmless() -> list[Harmless]:
    return corpus.harmless()


# Recording the whole corpus takes seconds (the command line alone holds every secret): the
# inner loop records every 8th secret, `make test` the whole corpus.
SAMPLE, ALL = slice(None, None, 8), slice(None)


def test_the_corpus_is_big_enough_and_deterministic() -> None:
    assert len(secrets()) >= 120
    assert len(harmless()) >= 3000
    assert corpus.secrets() == secrets() and corpus.harmless() == harmless()
    assert {s.tell for s in secrets()} == {"format", "context"}


def test_the_sample_spans_both_tells_and_many_formats() -> None:
    sample = secrets()[SAMPLE]
    assert {s.tell for s in sample} == {"format", "context"}
    assert len({s.format for s in sample}) == len(sample) >= 25


@pytest.fixture(scope="module", params=[pytest.param("sample"), pytest.param("all", marks=pytest.mark.slow)])
def planted(request: pytest.FixtureRequest) -> list[Secret]:
    return secrets()[SAMPLE if request.param == "sample" else ALL]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, planted: list[Secret]) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    harness.record_corpus(folder, planted)
    return folder


def test_no_credential_of_the_corpus_reaches_any_written_byte(recorded: Path, planted: list[Secret]) -> None:
    assert harness.leaked(recorded, planted) == []


def test_the_recordings_hold_placeholders_sidecar_blobs_and_a_redacted_command(
    recorded: Path, planted: list[Secret]
) -> None:
    blobs = [
        p for p in recorded.rglob("*") if p.is_file() and any(q.name.endswith(".cas") for q in p.parents)
    ]
    assert blobs, "the >4 KiB outputs went to sidecar blobs"
    for name in ("env", "argv", "argv2", "cold"):
        cassette = load_cassette(recorded / f"{name}.cassette.json")
        assert b"[REDACTED:" in orjson.dumps([m.message for m in cassette.messages])
        assert cassette.meta["redaction"]["findings"]
    argv = load_cassette(recorded / "argv.cassette.json").meta["command"]
    assert argv[0] == "srv" and len(argv) > len(planted)
    values = [a.partition("=")[2] if a.startswith("--") and "=" in a else a for a in argv[1:]]
    assert all(v.startswith("--") or "[REDACTED:" in v for v in values), (
        "every value of the command line holds a placeholder, every flag name stays"
    )


def test_the_scan_is_not_vacuous_without_redaction(tmp_path: Path) -> None:
    some = secrets()[::20]
    harness.record_corpus(tmp_path, some, RedactionPolicy.from_dict({"extends": "none"}))
    assert harness.leaked(tmp_path, some) == [s.format for s in some]


@pytest.mark.parametrize(
    "part",
    [pytest.param(slice(None, None, 5), id="sample"), pytest.param(ALL, id="all", marks=pytest.mark.slow)],
)
def test_at_most_one_percent_of_harmless_values_come_back_changed(part: slice) -> None:
    values = harmless()[part]
    changed = harness.false_positives(values)
    assert len(changed) * 100 <= len(values), [(h.kind, h.value[:40]) for h in changed[:20]]


def test_a_text_blob_is_decoded_redacted_and_encoded_again() -> None:
    token = next(s.value for s in secrets() if s.format == "github-pat-classic")
    red = RedactionPolicy.default().redactor()
    for mime in ("text/plain", "application/json", None):
        blob = base64.b64encode(f'{{"note": "clone with {token}"}}'.encode()).decode()
        item = {"uri": "file:///a", "blob": blob} | ({"mimeType": mime} if mime else {})
        out = red.redact_message({"jsonrpc": "2.0", "id": 1, "result": {"contents": [item]}})
        text = base64.b64decode(out["result"]["contents"][0]["blob"]).decode()
        assert text == '{"note": "clone with [REDACTED:1]"}', mime


def test_binary_media_blobs_are_left_alone() -> None:
    red = RedactionPolicy.default().redactor()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20).decode()
    text_as_image = base64.b64encode(b"password=hunter2-hunter2").decode()
    for item in (
        {"uri": "file:///a.png", "mimeType": "image/png", "blob": png},
        {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": png},
        {"uri": "file:///c.png", "mimeType": "image/png", "blob": text_as_image},
        {"uri": "file:///d.wav", "mimeType": "audio/wav", "blob": png},
    ):
        message = {"jsonrpc": "2.0", "id": 1, "result": {"contents": [item]}}
        assert red.redact_message(message) == message, item["uri"]
