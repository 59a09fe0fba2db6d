"""What the trufflehog loader (benchmarks/_trufflehog_corpus.py) counts as a credential: a wanted
value by its secret-bearing parts, identifiers counted apart under a named reason. The values
below are our own, written in the shapes trufflehog's detectors want."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # imported below

import _trufflehog_corpus as truffle

from harn_mcp_mock.redact import RedactionPolicy


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("clientSecretPat", "secret"),
        ("accountKey", "secret"),
        ("apikeyPat", "secret"),
        ("pwordPat", "secret"),
        ("secretIdPat", "secret"),  # a secret's own id is the secret (an AppRole secret_id)
        ("tokenNamePat", truffle.NAMES),
        ("private_key_id", truffle.IDS),  # a key's id is not the key
        ("accessKeyIdPat", truffle.IDS),
        ("project_id", truffle.IDS),
        ("ORG_ID", truffle.IDS),
        ("usernamePat", truffle.USERS),
        ("client_email", truffle.EMAILS),
        ("domainPat", truffle.HOSTS),
        ("auth_uri", truffle.HOSTS),
        ("svValuePat", None),
    ],
)
def test_a_name_says_what_its_value_is_by_its_head_word(name: str, role: str | None) -> None:
    assert truffle.name_role(name) == role


def test_a_url_or_connection_string_counts_by_its_secret_bearing_fields() -> None:
    fields = truffle.secret_fields
    assert fields("postgres://ada:Wq8z!Lp2@db.internal:5432/app?sslmode=require") == ["Wq8z!Lp2"]
    assert fields("jdbc:oracle:thin:ops/Pa55word9@dbhost:1521:orcl") == ["Pa55word9"]
    assert fields("jdbc:sqlserver://dbhost:1433;databaseName=Shop;user=ops;password=Rt5#mK9q") == ["Rt5#mK9q"]
    assert fields("Endpoint=https://cfg7.example.io;Id=ab12;Secret=Zk3Lm9Qp2Wx7") == ["Zk3Lm9Qp2Wx7"]
    assert fields("sv=2024-01-01&sr=b&sp=r&sig=Qm4%2Bz7Tn") == ["Qm4%2Bz7Tn"]
    assert fields("key: Hq7Zm2Lx9Wp4Kc== account_url: shop7.documents.example.net") == ["Hq7Zm2Lx9Wp4Kc=="]
    # A locator: no secret-bearing field.
    assert fields("jdbc:mysql://dbhost:3306/shop") == []
    assert fields("mongodb://db1.example.net:27017/?tls=true&appName=shop") == []
    # Neither a URL nor a connection string.
    assert fields("plain-token-Zq8Lp3Wv7Rt") is None
    assert fields("Kx81mPq2WzQ7https://api.example.net") is None  # a key joined with a URL


def test_a_wanted_url_whose_path_holds_a_random_segment_is_a_webhook() -> None:
    assert truffle.is_capability_url("https://hooks.example.com/services/T00AB/B00CD/q7Lm2Zx9Wp4Rt8Kc")
    assert not truffle.is_capability_url("https://api.example.com/v1/items/42")
    assert not truffle.is_capability_url("jdbc:postgresql://dbhost:5432/q7Lm2Zx9Wp4Rt8Kc")


@pytest.mark.parametrize(
    ("value", "text", "roles", "why"),
    [
        ("ops@example.org", "login ops@example.org", set(), truffle.EMAILS),
        (".example.net", "host shop.example.net", set(), truffle.HOSTS),
        ("-----BEGIN EC PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----", set(), truffle.ARMOUR),
        ("9f1c2e7ab04d", "commit 9f1c2e7ab04d", set(), truffle.HASHES),
        (
            "7d1f0c2a-4b3e-4f5a-9c8d-1e2f3a4b5c6d",
            "ref 7d1f0c2a-4b3e-4f5a-9c8d-1e2f3a4b5c6d",
            set(),
            truffle.UUIDS,
        ),
        ("abc12", "x abc12", set(), truffle.SHORT),
        ("staging", "env staging", set(), truffle.LETTERS),
        # The detector's own name for it decides before the weak forms, either way.
        (
            "7d1f0c2a-4b3e-4f5a-9c8d-1e2f3a4b5c6d",
            "acme 7d1f0c2a-4b3e-4f5a-9c8d-1e2f3a4b5c6d",
            {"keyPat"},
            None,
        ),
        ("Qx7Lm2Zp9Wt4", "acme Qx7Lm2Zp9Wt4", {"appIdPat"}, truffle.IDS),
        ("qx7lm2zp9wt4", "acme qx7lm2zp9wt4", {"tokenNamePat"}, truffle.NAMES),
        # Named a secret by one pattern and an id by another: the name in the input decides.
        (
            "d41c8e2a-77b0-4c1e-9a55-0f3e6b2c1d90",
            "ORG_ID=d41c8e2a-77b0-4c1e-9a55-0f3e6b2c1d90",
            {"keyPat", "orgPat"},
            truffle.IDS,
        ),
        ("Zq8Lp3Wv7Rt2", "ACME_KEY=Zq8Lp3Wv7Rt2", {"keyPat", "orgPat"}, None),
        # No pattern captures it: the name it stands under in the input.
        ("Mx4Tq9Lp2Vz7", 'acme_username: "Mx4Tq9Lp2Vz7"', set(), truffle.USERS),
        ("Mx4Tq9Lp2Vz7", "acme_token: Mx4Tq9Lp2Vz7", set(), None),
        # A name on the line before is not the value's name.
        ("Mx4Tq9Lp2Vz7", "acme instance:\n  Mx4Tq9Lp2Vz7", set(), None),
        # A long hex value without a hash word before it is judged like any other.
        ("9f1c2e7ab04d", "token 9f1c2e7ab04d", set(), None),
    ],
)
def test_why_a_value_is_no_credential(value: str, text: str, roles: set[str], why: str | None) -> None:
    assert truffle.why_not_a_credential(value, text, text.index(value), roles) == why


def test_a_joined_value_counts_its_secret_and_keeps_its_id_apart() -> None:
    text = "acme_id=Kx81mPq2WzQ7 acme_secret=u7Hq2Vn9Lp4RtZc6Xb1"
    captures = [("idPat", "Kx81mPq2WzQ7"), ("secretPat", "u7Hq2Vn9Lp4RtZc6Xb1")]
    got = truffle.classify_wanted("Kx81mPq2WzQ7u7Hq2Vn9Lp4RtZc6Xb1", text, captures)
    assert got.located == [("u7Hq2Vn9Lp4RtZc6Xb1", text.index("u7Hq"), True)]
    assert got.excluded == [("Kx81mPq2WzQ7", truffle.IDS)]
    assert got.unfound == 0


def test_a_rewritten_connection_url_counts_its_password_and_keeps_its_options_apart() -> None:
    # The detector normalises the URL (options reordered): not found whole in the input.
    text = "MONGO_URL=mongodb://shopper:Vq9Lx2Rt7Zm4@db1.example.net:27017/?appName=shop&tls=true"
    want = "mongodb://shopper:Vq9Lx2Rt7Zm4@db1.example.net:27017/?tls=true&appName=shop"
    got = truffle.classify_wanted(want, text, [])
    assert got.located == [("Vq9Lx2Rt7Zm4", text.index("Vq9L"), True)]
    assert {why for _v, why in got.excluded} == {truffle.OPTIONS}
    assert {v for v, _why in got.excluded} == {"tls=true", "appName=shop"}


def test_a_url_or_connection_string_wanted_whole_is_counted_by_its_fields_or_is_a_locator() -> None:
    text = 'db = "jdbc:sqlserver://dbhost:1433;databaseName=Shop;user=ops;password=Rt5#mK9q"'
    want = "jdbc:sqlserver://dbhost:1433;databaseName=Shop;user=ops;password=Rt5#mK9q"
    got = truffle.classify_wanted(want, text, [])
    assert got.located == [("Rt5#mK9q", text.index("Rt5#"), True)] and got.excluded == []
    locator = "jdbc:postgresql://dbhost:5432/shop"
    got = truffle.classify_wanted(locator, f'url: "{locator}"', [])
    assert got.located == [] and got.excluded == [(locator, truffle.LOCATOR)]
    hook = "https://hooks.example.com/services/T00AB/B00CD/q7Lm2Zx9Wp4Rt8Kc"
    got = truffle.classify_wanted(hook, f"notify {hook}", [])
    assert got.located == [(hook, 7, False)]
    # A percent-encoded signature stands in the input as it is.
    sas = "sv=2024-01-01&sr=b&sp=r&sig=Qm4%2Bz7Tn"
    got = truffle.classify_wanted(sas, f"SAS={sas}", [])
    assert got.located == [("Qm4%2Bz7Tn", len("SAS=") + sas.index("Qm4"), True)]


def test_a_wanted_json_object_counts_the_values_under_a_secrets_name() -> None:
    key = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    creds = {
        "type": "service_account",
        "project_id": "shop-prod-7",
        "private_key": key,
        "client_email": "ci@shop.example",
    }
    want = json.dumps(creds)
    text = f"GOOGLE_CREDENTIALS='{want}'"  # the key's newlines stand escaped: \\n
    got = truffle.classify_wanted(want, text, [])
    [(value, start, part)] = got.located
    # (the block's last line break is no part of the key: rule 0)
    assert value == json.dumps(key.rstrip("\n"))[1:-1] and text[start : start + len(value)] == value and part
    assert set(got.excluded) == {
        ("service_account", truffle.IDS),
        ("shop-prod-7", truffle.IDS),
        ("ci@shop.example", truffle.EMAILS),
    }


def test_a_wanted_e_mail_address_or_a_hash_under_commit_is_no_credential_even_whole() -> None:
    got = truffle.classify_wanted("ops@example.org", "acme ops@example.org Zq8Lp3Wv7Rt2", [])
    assert got.excluded == [("ops@example.org", truffle.EMAILS)] and got.located == []
    sha = "0123456789abcdef0123456789abcdef01234567"
    got = truffle.classify_wanted(sha, f"acme\ncommit {sha}", [])
    assert got.excluded == [(sha, truffle.HASHES)]


def test_the_detectors_patterns_are_read_from_its_go_source() -> None:
    source = """package acme

var (
	keyPat = regexp.MustCompile(detectors.PrefixRegex([]string{"acme"}) + `\\b([a-z0-9]{32})\\b`)
	orgPat = regexp.MustCompile(`\\b((?i)org-[a-z0-9]{8})\\b`)
	mailPat = regexp.MustCompile(common.EmailPattern)
	badPat = regexp.MustCompile(`[[:alpha:]]{4}\\z`)
)
"""
    common = {"common.EmailPattern": r"\b([a-z0-9.]+@[a-z0-9.]+)\b"}
    patterns = truffle.detector_patterns(source, common)
    assert set(patterns) == {"keyPat", "orgPat", "mailPat", "badPat"}
    text = "acme key: q7lm2zx9wp4rt8kcq7lm2zx9wp4rt8kc ORG-AB12CD34 by ci@shop.example"
    captures = truffle.captures_of(text, patterns)
    assert ("keyPat", "q7lm2zx9wp4rt8kcq7lm2zx9wp4rt8kc") in captures
    assert ("orgPat", "ORG-AB12CD34") in captures  # (?i) set mid-pattern applies
    assert truffle.pattern_roles("ORG-AB12CD34", captures) == {"orgPat"}
    # A capture much longer than the value (a whole JSON object) says nothing of it.
    assert truffle.pattern_roles("ab12", [("keyPat", "{ ab12 and much more text }")]) == set()


DETECTOR = """package acme

var (
	keyPat = regexp.MustCompile(detectors.PrefixRegex([]string{"acme"}) + `\\b(acme_[a-zA-Z0-9]{30})\\b`)
	idPat  = regexp.MustCompile(detectors.PrefixRegex([]string{"acme"}) + `\\b(AC[0-9]{10})\\b`)
)
"""

TESTS = """package acme

func TestAcme_Pattern(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{name: "key and account", input: "acme account AC0123456789 key acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG", want: []string{"AC0123456789:acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG"}},
		{name: "locator", input: "acme jdbc:postgresql://dbhost:5432/shop", want: []string{"jdbc:postgresql://dbhost:5432/shop"}},
		{name: "url with password", input: "acme postgres://ada:Wq8zLp2Xv9@dbhost:5432/app", want: []string{"postgres://ada:Wq8zLp2Xv9@dbhost:5432/app"}},
	}
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
    return truffle.load_trufflehog(root)


def test_the_loader_counts_both_ways_and_lists_what_it_leaves_apart(corpus: truffle.TrufflehogCorpus) -> None:
    assert sorted(v.value for v in corpus.values) == ["Wq8zLp2Xv9", "acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG"]
    assert sorted((e.value, e.reason) for e in corpus.excluded) == [
        ("AC0123456789", truffle.IDS),
        ("jdbc:postgresql://dbhost:5432/shop", truffle.LOCATOR),
    ]
    for e in corpus.excluded:  # where each stands, for the count of what the redactor altered
        [(case, start)] = e.contexts
        assert corpus.cases[case].text[start : start + len(e.value)] == e.value
    # As counted before: the account id a credential, the locator counted whole.
    assert sorted(v.value for v in corpus.before) == [
        "AC0123456789",
        "Wq8zLp2Xv9",
        "acme_Q7wd2LmZ8rT4kPx9vB3nY6sC1hJ5fG",
        "jdbc:postgresql://dbhost:5432/shop",
    ]
    res = truffle.measure_trufflehog(corpus, RedactionPolicy.default())
    assert res.values == 2 and res.before is not None and res.before.values == 4
    assert dict(res.apart) == {truffle.IDS: [1, res.apart[truffle.IDS][1]], truffle.LOCATOR: [1, 0]}
    lines: list[str] = []
    truffle.report_trufflehog(res, verbose=True, out=lines.append)
    report = "\n".join(lines)
    assert "AS COUNTED BEFORE" in report and "4 values" in report
    assert "SECRET-BEARING" in report and "2 distinct labelled values" in report
    assert f"1 {truffle.LOCATOR} (altered 0)" in report
    assert f"EXCLUDED {truffle.LOCATOR}: acme 'jdbc:postgresql://dbhost:5432/shop'" in report
    # The values counted apart are left out of the non-credential identifiers.
    apart = [s for s in corpus.samples(apart=True) if s.text.startswith("acme jdbc")]
    assert [(lb.start, lb.end) for lb in apart[0].labels] == [
        (5, 5 + len("jdbc:postgresql://dbhost:5432/shop"))
    ]


def test_a_wanted_strings_line_break_or_closing_quote_at_its_end_is_trimmed() -> None:
    # rule 0: what a detector's expression takes along past the value is no part of the secret
    text = '{"secret": "live_Qm4z7TnXw2Lp9Rk3Vb8Hy5"}'
    assert truffle.trimmed('live_Qm4z7TnXw2Lp9Rk3Vb8Hy5"', text) == "live_Qm4z7TnXw2Lp9Rk3Vb8Hy5"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOg\n-----END RSA PRIVATE KEY-----"
    assert truffle.trimmed(pem + "\n", pem) == pem
    assert truffle.trimmed(pem + "\\n", pem) == pem  # escaped, as it stands in JSON
    # a quote the value opens and closes, or one that opens nothing in the input, stays
    assert truffle.trimmed('"Qm4z7TnXw2"', 'k="Qm4z7TnXw2"') == '"Qm4z7TnXw2"'
    assert truffle.trimmed("Qm4z'7TnXw2'", "k=Qm4z'7TnXw2'") == "Qm4z'7TnXw2'"
    assert truffle.trimmed("pass'", "k=pass'") == "pass'"
