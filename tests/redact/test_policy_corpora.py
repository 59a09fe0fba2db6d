"""The readers of the public corpora the default policy is measured on (benchmarks/): the Go
subset trufflehog's detector tests are written in, how a wanted value is located in its input,
and the order test's comparison. The Go below is our own, written in the shapes those tests use.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # imported below

import _external_corpora as ext
import _trufflehog_corpus as truffle

from harn_mcp_mock.redact import RedactionPolicy

DETECTOR = """package acme

var keyPat = regexp.MustCompile(`\\b(acme_[a-zA-Z0-9]{30})\\b`)

func (s Scanner) Keywords() []string { return []string{"acme"} }
"""

TESTS = """package acme

import (
	"fmt"
	"testing"
)

var (
	validKey = "acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e"
	clientID = "Kx81mPq2Wz"
	secretPart = `u7Hq2` + "Vn9Lp4Rt" + "Zc6Xb1"
)

const host = "api.acme.example"

func makeInput(token string) string {
	return fmt.Sprintf("acme:\\n  token: %s\\n", token)
}

func TestAcme_Pattern(t *testing.T) {
	d := Scanner{}
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{
			name:  "raw string",
			input: `
				[DEBUG] acme key=acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e
			`,
			want: []string{validKey},
		},
		{
			name:  "sprintf with a package var",
			input: fmt.Sprintf("ACME_TOKEN=%s # host %s", validKey, host),
			want:  []string{"acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e"},
		},
		{
			name:  "helper function",
			input: makeInput("zzqx-4f9Gh2Lk8Pq1Wm7Rt3Yb"),
			want:  []string{"zzqx-4f9Gh2Lk8Pq1Wm7Rt3Yb"},
		},
		{
			name:  "joined RawV2",
			input: "acme id " + clientID + " secret " + secretPart + " at " + host,
			want:  []string{clientID + ":" + secretPart + host},
		},
		{
			name:  "invalid pattern",
			input: "acme key=acme_short",
			want:  nil,
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {})
	}
}

func TestAcme_PatternOtherShape(t *testing.T) {
	tests := []struct {
		name        string
		data        string
		shouldMatch bool
		match       string
	}{
		{name: "dotenv", data: `ACME_SECRET=Pw3nX8qLz5Tr2Mv7Kc1B`, shouldMatch: true, match: "Pw3nX8qLz5Tr2Mv7Kc1B"},
		{name: "not a key", data: `acme version 1.2.3`, shouldMatch: false},
	}
}
"""

INTEGRATION = """package acme

func TestAcme_Pattern(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{{name: "live", input: "acme_Integration0000000000000000000", want: []string{"acme_Integration0000000000000000000"}}}
}
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> truffle.TrufflehogCorpus:
    root = tmp_path_factory.mktemp("trufflehog")
    (root / "pkg" / "engine").mkdir(parents=True)
    folder = root / "pkg" / "detectors" / "acme"
    folder.mkdir(parents=True)
    (folder / "acme.go").write_text(DETECTOR)
    (folder / "acme_test.go").write_text(TESTS)
    (folder / "acme_integration_test.go").write_text(INTEGRATION)
    assert truffle.is_trufflehog(root)
    return truffle.load_trufflehog(root)


def test_the_go_test_cases_are_evaluated_from_literals_vars_sprintf_concatenation_and_helpers(
    corpus: truffle.TrufflehogCorpus,
) -> None:
    cases = {c.name.split(":", 1)[1]: c for c in corpus.cases}
    assert set(cases) == {
        "raw string",
        "sprintf with a package var",
        "helper function",
        "joined RawV2",
        "invalid pattern",
        "dotenv",
        "not a key",
    }  # the integration test file is left out
    assert cases["sprintf with a package var"].text == (
        "ACME_TOKEN=acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e # host api.acme.example"
    )
    assert cases["helper function"].text == "acme:\n  token: zzqx-4f9Gh2Lk8Pq1Wm7Rt3Yb\n"
    assert cases["joined RawV2"].text == "acme id Kx81mPq2Wz secret u7Hq2Vn9Lp4RtZc6Xb1 at api.acme.example"
    assert cases["joined RawV2"].wants == ["Kx81mPq2Wz:u7Hq2Vn9Lp4RtZc6Xb1api.acme.example"]
    assert cases["raw string"].wants == ["acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e"]
    assert cases["invalid pattern"].wants == []
    assert cases["dotenv"].wants == ["Pw3nX8qLz5Tr2Mv7Kc1B"]
    assert cases["not a key"].wants == []
    assert dict(corpus.skipped) == {}
    assert [(e.value, e.reason) for e in corpus.excluded] == [("api.acme.example", truffle.HOSTS)]
    assert dict(corpus.before_skipped) == {
        "parts of joined wanted strings that are a URL, host or e-mail address": 1
    }


def test_wanted_values_are_located_whole_or_by_their_parts_once_per_detector(
    corpus: truffle.TrufflehogCorpus,
) -> None:
    values = {v.value: v for v in corpus.values}
    # The same key wanted by two cases is one value with two contexts; a joined RawV2 value is
    # counted by its parts found in the input, the host left out (no secret).
    assert set(values) == {
        "acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e",
        "zzqx-4f9Gh2Lk8Pq1Wm7Rt3Yb",
        "Kx81mPq2Wz",
        "u7Hq2Vn9Lp4RtZc6Xb1",
        "Pw3nX8qLz5Tr2Mv7Kc1B",
    }
    assert len(values["acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e"].contexts) == 2
    assert corpus.parts == 2
    # A vendor prefix is one the detector's own source names; a random leading run is not.
    assert values["acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG0e"].vendor
    assert not values["zzqx-4f9Gh2Lk8Pq1Wm7Rt3Yb"].vendor
    for v in corpus.values:
        for case, start in v.contexts:
            assert corpus.cases[case].text[start : start + len(v.value)] == v.value


def test_joined_parts_take_the_longest_pieces_found_and_json_values_not_under_a_name() -> None:
    assert truffle.joined_parts("abcd1234efgh5678", "id=abcd1234 key=efgh5678") == (
        ["abcd1234", "efgh5678"],
        0,
    )
    assert truffle.joined_parts("abcd1234:nowhere99", "id=abcd1234") == (["abcd1234"], 1)
    assert truffle.joined_parts('{"username":"ada","password":"Zq8Lp3Wv7Rt"}', "ada Zq8Lp3Wv7Rt") == (
        ["Zq8Lp3Wv7Rt"],
        0,
    )


def test_the_order_test_reports_a_sample_whose_shared_output_differs_from_a_taught_fresh_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    samples = [
        ext.Sample("a", "export API_TOKEN=Zq8Lp3Wv7Rt2Mx9Kc4Bn6"),
        ext.Sample("b", "the same value Zq8Lp3Wv7Rt2Mx9Kc4Bn6 again"),
    ]
    policy = RedactionPolicy.default()
    # In the corpus's order the shared redactor learned the value from "a"; the fresh one for "b"
    # is taught it too: the same output.
    assert ext.order_diffs(samples, policy, None) == []
    # A fresh redactor not taught what the shared one learned leaves "b" in clear: reported.
    monkeypatch.setattr(ext._FormIndex, "found_in", lambda _self, _text: set())
    [diff] = ext.order_diffs(samples, policy, None)
    assert (diff.sample, diff.position, diff.learned_before, diff.taught) == ("b", 1, 1, 0)
    assert diff.shared == "the same value [REDACTED:1] again" and diff.leaks is False
    assert diff.fresh == "the same value Zq8Lp3Wv7Rt2Mx9Kc4Bn6 again"
    assert (
        ext.renumbered("[REDACTED:7] x [REDACTED:9] [REDACTED:7]")
        == "[REDACTED:1] x [REDACTED:2] [REDACTED:1]"
    )
