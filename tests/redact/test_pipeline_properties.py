"""Properties over random JSON: a planted secret never survives, the input is never changed, and
the quick first pass never lets through what the exact pass would redact."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harn_mcp_mock.redact import RedactionPolicy, Redactor
from tests.redact.credentials import IN_CONTEXT, TOKENS, varied

ENV_SECRET = "env-" + varied(14, 5)
ARGV_SECRET = "argv-" + varied(14, 11)
ENV = {"SERVICE_TOKEN": ENV_SECRET, "HOME": "/home/ada", "LANG": "C.UTF-8"}
ARGV = ["server", "--api-key", ARGV_SECRET, "--port", "8080"]

# (what is planted, the part that must not survive)
FORMATS = [(token, token) for token in TOKENS.values()] + list(IN_CONTEXT.values())
LITERALS = [(ENV_SECRET, ENV_SECRET), (ARGV_SECRET, ARGV_SECRET)]

# Characters that end a word for every token format (a token glued to letters is not a token).
SEPARATORS = st.sampled_from(
    [" ", "\n", "\t", ":", ",", ";", "(", ")", '"', "'", "/", "=", "?", "&", "<", ">", "[", "|"]
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
keys = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        ["id", "params", "result", "text", "data", "cursor", "name", "value", "progressToken", "items"]
    ),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=25,
)


def _plant(draw: st.DrawFn, value: Any, planted: Any) -> Any:
    """``value`` with ``planted`` put somewhere inside it (a copy)."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _plant(draw, value[key], planted)}
    if isinstance(value, list) and value and draw(st.booleans()):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], _plant(draw, value[at], planted), *value[at + 1 :]]
    where = draw(st.sampled_from(["replace", "key", "nested"]))
    if where == "key" and isinstance(value, dict):
        return {**value, draw(keys): planted}
    if where == "nested":
        return {draw(keys): [value, {draw(keys): planted}]}
    return planted


@st.composite
def messages_with_a_secret(draw: st.DrawFn) -> tuple[Any, str]:
    carrier, secret = draw(st.sampled_from(FORMATS + LITERALS))
    inside = draw(st.sampled_from(["alone", "in text"]))
    if inside == "in text":
        before, after = draw(st.text(max_size=20)), draw(st.text(max_size=20))
        if (carrier, secret) in LITERALS:
            carrier = before + carrier + after  # a literal secret is found even glued to other text
        else:
            carrier = before + draw(SEPARATORS) + carrier + draw(SEPARATORS) + after
    base = draw(json_values)
    envelope = draw(st.sampled_from(["bare", "request", "response", "batch"]))
    message = _plant(draw, base, carrier)
    if envelope == "request":
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "t", "arguments": message},
        }
    elif envelope == "response":
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "x"}], "structuredContent": message},
        }
    elif envelope == "batch":
        message = [{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": message}}]
    return message, secret


def fresh() -> Redactor:
    return RedactionPolicy.default().redactor(argv=ARGV, env=ENV)


class ExactOnly(Redactor):
    """A redactor that skips the quick first pass and always runs the exact one."""

    def _scan_top(self, obj: Any, out: list[str]) -> bool:
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages_with_a_secret())
def test_a_planted_secret_never_survives_redaction_and_the_input_is_untouched(case: tuple[Any, str]) -> None:
    message, secret = case
    before = orjson.dumps(message)
    out = fresh().redact_message(message)
    assert orjson.dumps(message) == before
    assert secret not in orjson.dumps(out).decode()
    assert b"[REDACTED:" in orjson.dumps(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(messages_with_a_secret().map(lambda case: case[0]), json_values))
@pytest.mark.slow
def test_the_quick_pass_never_lets_through_what_the_exact_pass_would_redact(message: Any) -> None:
    policy = RedactionPolicy.default()
    quick = policy.redactor(argv=ARGV, env=ENV)
    exact = ExactOnly(policy, argv=ARGV, env=ENV)
    before = orjson.dumps(message)
    got, want = quick.redact_message(message), exact.redact_message(message)
    assert orjson.dumps(got) == orjson.dumps(want)
    assert (got is message) == (orjson.dumps(want) == before)
    assert quick.findings == exact.findings


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.sampled_from(FORMATS + LITERALS), st.text(max_size=60))
def test_redact_text_removes_a_planted_secret_between_any_separators(
    before: str, planted: tuple[str, str], after: str
) -> None:
    carrier, secret = planted
    text = f"{before} {carrier}\n{after}"
    assert secret not in fresh().redact_text(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(FORMATS + LITERALS), min_size=1, max_size=4))
def test_one_secret_keeps_one_number_across_many_messages(planted: list[tuple[str, str]]) -> None:
    red = fresh()
    numbers: dict[str, set[str]] = {}
    for carrier, secret in planted * 2:
        out = red.redact_message({"jsonrpc": "2.0", "id": 1, "result": {"text": carrier}})
        text = out["result"]["text"]
        numbers.setdefault(secret, set()).update(part.split("]")[0] for part in text.split("[REDACTED:")[1:])
    for secret_numbers in numbers.values():
        assert len(secret_numbers) == 1


NEIGHBOURS = st.lists(
    st.sampled_from(
        [*"aZ09_-.+/= \n:\"'@()[]éſK\u212a", "ghp_", "sk-", "AKIA", "eyJ", "xox", "Bearer ", "Basic "]
    ),
    max_size=8,
).map("".join)
PATTERNS = RedactionPolicy.default().compiled().patterns
SAMPLES = [carrier for carrier, _secret in FORMATS]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATTERNS), NEIGHBOURS, st.sampled_from(SAMPLES), NEIGHBOURS)
def test_a_rules_cheap_gates_never_hide_a_match_and_contained_rules_match_run_by_run(
    rule: Any, before: str, sample: str, after: str
) -> None:
    from harn_mcp_mock.redact.gates import Text

    text = before + sample + after
    group = "secret" if "secret" in rule.regex.groupindex else 0
    judge = getattr(rule, "judge", None)  # a rule whose candidates are weighed in code (prefixed-token)
    expected = [
        m.span(group)
        for m in rule.regex.finditer(text)
        if m.end(group) > m.start(group) and (judge is None or judge(m[group]))
    ]
    assert [(a, b) for a, b, _name in rule(Text(text))] == expected
    assert rule.any(Text(text)) == bool(expected)
    if rule.contained:
        whole = Text(text)
        by_run = [
            (start + a, start + b)
            for start, end in whole.runs(rule.run)
            for a, b, _name in rule(Text(text[start:end]))
        ]
        assert by_run == expected
