"""Order-free results: what a redactor writes for a message depends on what it has learned, not
on the order or the history in which it learned it.

A redactor that has redacted other messages before must write, for the next one, what a fresh
redactor writes once taught (``learn``) the same values in the same order; placeholder numbers
may differ (they count first sightings), the redacted spans may not. Values are assembled at run
time (``varied``, ``config_secret``) so that this file holds no credential-shaped text.
"""

from __future__ import annotations

import random
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harn_mcp_mock.redact import RedactionPolicy, Redactor
from tests.redact.credentials import ALNUM, config_dump, config_secret, varied

NUMBERED = re.compile(r"\[REDACTED:\d+\]")


def text_result(text: str, rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}


def text_of(message: dict[str, Any]) -> str:
    return str(message["result"]["content"][0]["text"])


def unnumbered(text: str) -> str:
    return NUMBERED.sub("[REDACTED]", text)


def taught(red: Redactor) -> Redactor:
    """A fresh redactor taught what ``red`` remembers, in the same order."""
    fresh = RedactionPolicy.default().redactor()
    for value in red.remembered():
        fresh.learn(value)
    return fresh


def filler(i: int) -> dict[str, Any]:
    """A clean message (a log line): many of them change a redactor's history, not its memory."""
    return text_result(f"step {i} finished, nothing to see in this message {'x' * i}", 1000 + i)


def test_overlapping_learned_values_are_redacted_whole_whatever_the_history() -> None:
    # Two learned values that overlap in a later text (one's tail is the other's head): the
    # memory matched them by str.find (overlaps found) while young and by a compiled expression
    # (one match per place, an overlapping one skipped) once its searches had cost enough, so a
    # redactor that had seen a few hundred messages left the second value's tail in clear.
    head = "Qx7" + varied(21, 5)
    tail = head[-10:] + varied(14, 11)
    others = ["F" + varied(20, k) for k in range(3, 14)]
    red = RedactionPolicy.default().redactor()
    red.redact_message(text_result(config_dump([head, tail, *others], random.Random(1))))
    for i in range(300):
        red.redact_message(filler(i))
    probe = text_result(f"got {head}{tail[10:]} ok", 2)
    assert unnumbered(text_of(red.redact_message(probe))) == "got [REDACTED] ok"
    assert unnumbered(text_of(taught(red).redact_message(probe))) == "got [REDACTED] ok"


def test_a_value_that_overlaps_itself_is_redacted_whole() -> None:
    # A periodic value (``ww``) in ``www``: it starts at 0 and at len(w); a search resuming
    # after the first occurrence missed the second, leaving the last ``w`` in clear.
    w = "Zq" + varied(8, 7)
    red = RedactionPolicy.default().redactor()
    red.learn(w + w)
    out = text_of(red.redact_message(text_result(f"x {w}{w}{w} y", 2)))
    assert unnumbered(out) == "x [REDACTED] y", out


_CONTEXTS = (
    "API_TOKEN={v}",
    'password: "{v}"',
    "the service connects with {v} as its credential.",
    "glued{v}glued",
    "{v}",
    "Authorization: Bearer {v}",
    '{{"client_secret": "{v}"}}',
)


@st.composite
def scenario(draw: st.DrawFn) -> tuple[list[str], list[int], list[str], int]:
    """(message texts, the order the shared redactor sees them in, values it is told first in
    one config dump, clean messages it sees after that dump)."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    values = [config_secret(rng) for _ in range(draw(st.integers(1, 12)))]
    glued = []
    # Overlaps: a value whose head is another's tail (and the text where they overlap); a value
    # holding another; a prefix of another.
    for _ in range(draw(st.integers(1, 4))):
        a = rng.choice(values)
        cut = rng.randint(4, len(a) - 1)
        b = a[-cut:] + "".join(rng.choices(ALNUM, k=rng.randint(6, 14)))  # a short tail: no format
        values += [b, "k" + a + "9", a[: max(cut, 10)]]
        glued.append(a + b[cut:])
    texts = []
    for _ in range(draw(st.integers(2, 8))):
        lines = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.4:  # overlapping values, told by nothing but the memory
                lines.append(f"connected with {rng.choice(glued)} as its credential.")
                continue
            v = rng.choice(values)
            if rng.random() < 0.2:  # two values side by side
                v += rng.choice(values)
            lines.append(rng.choice(_CONTEXTS).format(v=v))
        texts.append("\n".join(lines))
    order = draw(st.permutations(range(len(texts))))
    # Told in one dump with a dozen others (enough for the memory to compile them, once used).
    told = [*values, *(config_secret(rng) for _ in range(12))]
    history = draw(st.sampled_from(["none", "told", "told and clean messages"]))
    return texts, list(order), told if history != "none" else [], 300 if history.endswith("messages") else 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(scenario())
def test_a_redactor_writes_what_a_fresh_one_taught_its_memory_writes(
    case: tuple[list[str], list[int], list[str], int],
) -> None:
    texts, order, told, warm = case
    policy = RedactionPolicy.default()
    shared = policy.redactor()
    if told:
        shared.redact_message(text_result(config_dump(told, random.Random(0)), 0))
    for i in range(warm):
        shared.redact_message(filler(i))
    for seq, index in enumerate(order, 1):
        message = text_result(texts[index], seq)
        fresh = taught(shared)
        got = unnumbered(text_of(shared.redact_message(message)))
        want = unnumbered(text_of(fresh.redact_message(message)))
        assert got == want, (texts[index], got, want)


def test_our_corpus_in_several_orders_is_redacted_as_by_a_fresh_taught_redactor() -> None:
    # Our own corpus's secrets, one per message under its variable's name with a bare repeat,
    # in three orders through one redactor each.
    from tests.redaction_corpus import corpus

    secrets = corpus.secrets()[::2]
    for seed in range(3):
        order = list(range(len(secrets)))
        random.Random(seed).shuffle(order)
        red = RedactionPolicy.default().redactor()
        for seq, index in enumerate(order, 1):
            s = secrets[index]
            message = text_result(f"{s.env}={s.value}\nagain: {s.value}", seq)
            want = unnumbered(text_of(taught(red).redact_message(message)))
            got = unnumbered(text_of(red.redact_message(message)))
            assert got == want, (s.format, got, want)
            assert s.value not in got, s.format
