"""The scripted model's moves, read from conversations as hosts send them."""

from __future__ import annotations

import pytest

from harn_mcp_mock.llm.policy import (
    Conversation,
    ToolCall,
    ToolResult,
    find_task,
    next_move,
    offered_name,
    outcome,
    shows,
)
from harn_mcp_mock.llm.server import load_world

BANK = load_world("bank")
PAY_RENT = BANK.tasks["pay-rent"].description
TOOLS = [f"mcp__bank__{t}" for t in BANK.tools]


def conversation(*calls: tuple[str, dict[str, object], str], text: str = PAY_RENT) -> Conversation:
    conv = Conversation(texts=["You are careful.", f"Please: {text}"], tools=TOOLS)
    conv.calls = [(ToolCall(f"mcp__bank__{n}", a), ToolResult(r)) for n, a, r in calls]
    return conv


def test_the_task_is_found_by_its_description_whitespace_and_all_or_by_its_id() -> None:
    task = find_task(BANK, ["intro", "Pay Ada's January rent\n  exactly once: " + PAY_RENT.split(": ", 1)[1]])
    assert task is not None and task.id == "pay-rent"
    by_id = find_task(BANK, ["do the task refund-double-charge now"])
    assert by_id is not None and by_id.id == "refund-double-charge"
    assert find_task(BANK, ["hello"]) is None


def test_an_offered_name_may_carry_a_hosts_prefix() -> None:
    assert offered_name("transfer", ["transfer", "mcp__bank__transfer"]) == "transfer"
    assert (
        offered_name("transfer", ["mcp__bank__transfer", "mcp__bank__reverse_transfer"])
        == "mcp__bank__transfer"
    )
    assert offered_name("transfer", ["bank_transfer"]) == "bank_transfer"
    assert offered_name("transfer", ["reverse_transfer_x"]) is None


@pytest.mark.parametrize(
    ("text", "is_error", "seen"),
    [
        ('{"accounts": []}', False, "ok"),
        ("Error: rate limited: retry after 1.5 s", True, "rate_limited"),
        ("An error occurred: timed out after 30 s: the operation may have completed", False, "timeout"),
        ("service unavailable: the service is down for now, retry later", True, "unavailable"),
        (
            "core banking error E5031 (the call may have partly applied: check before retrying)",
            True,
            "partial",
        ),
        ("An error occurred while running the tool. Please try again.", False, "error"),
        ("no account A-999", True, "error"),
        ("Frozen.", False, "ok"),
    ],
)
def test_a_results_text_says_what_happened(text: str, is_error: bool, seen: str) -> None:
    assert outcome(ToolResult(text, is_error)) == seen


def test_a_read_shows_a_write_when_an_item_carries_every_argument() -> None:
    write = {
        "from_account": "A-101",
        "to_account": "A-201",
        "amount_cents": 120000,
        "memo": "Rent January 2026",
    }
    ledger = '{"transfers": [{"id": "TX-7", "from": "A-101", "to": "A-201", "amount_cents": 120000, "memo": "Rent January 2026"}]}'
    assert shows(ToolResult(ledger), write)
    assert not shows(ToolResult(ledger.replace("January 2026", "December 2025")), write)
    assert shows(ToolResult(f"[TextContent(text='{ledger}')]"), write)  # a host's wrapping


def test_the_reference_plays_the_plan_one_call_a_turn_then_answers() -> None:
    first = next_move(BANK, "reference", conversation())
    assert first.calls == (ToolCall("mcp__bank__get_account", {"account_id": "A-101"}),)
    done = conversation(
        ("get_account", {"account_id": "A-101"}, '{"id": "A-101"}'),
        ("list_transfers", {"from_account": "A-101", "to_account": "A-201"}, '{"transfers": []}'),
        ("transfer", {}, '{"id": "TX-7", "status": "completed"}'),
    )
    last = next_move(BANK, "reference", done)
    assert last.calls == () and last.text.startswith("Done: pay-rent")
    assert next_move(BANK, "reference", done) == last  # the same conversation, the same move


def test_after_a_timeout_the_reference_reads_the_ledger_and_does_not_pay_twice() -> None:
    timeout = "timed out after 30 s: the operation may have completed, check before retrying"
    ledger = '{"transfers": [{"id": "TX-7", "from": "A-101", "to": "A-201", "amount_cents": 120000, "memo": "Rent January 2026"}]}'
    calls = [
        ("get_account", {"account_id": "A-101"}, "rate limited: retry after 1.5 s"),
        ("get_account", {"account_id": "A-101"}, '{"id": "A-101"}'),
        ("list_transfers", {}, '{"transfers": []}'),
        ("transfer", {}, timeout),
    ]
    check = next_move(BANK, "reference", conversation(*calls))
    assert check.calls == (
        ToolCall("mcp__bank__list_transfers", {"from_account": "A-101", "to_account": "A-201"}),
    )
    assert next_move(BANK, "reference", conversation(*calls, ("list_transfers", {}, ledger))).text.startswith(
        "Done"
    )
    again = next_move(BANK, "reference", conversation(*calls, ("list_transfers", {}, '{"transfers": []}')))
    assert again.calls[0].name == "mcp__bank__transfer"
    # naive sends it again at once
    naive = next_move(BANK, "naive", conversation(*calls))
    assert naive.calls[0].name == "mcp__bank__transfer"


def test_naive_gives_up_on_a_tool_error_and_noop_does_nothing() -> None:
    freeze = BANK.tasks["freeze-stolen-card"].description
    partial = (
        "freeze_account",
        {},
        "core banking error E5031 (the call may have partly applied: check before retrying)",
    )
    listed = ("list_accounts", {}, '{"accounts": []}')
    assert (
        next_move(BANK, "reference", conversation(listed, partial, text=freeze))
        .calls[0]
        .name.endswith("freeze_account")
    )
    assert next_move(BANK, "naive", conversation(listed, partial, text=freeze)).text.startswith(
        "I could not finish"
    )
    assert next_move(BANK, "noop", conversation()).calls == ()


def test_without_a_task_or_the_tool_it_answers_in_words() -> None:
    assert "no bank task" in next_move(BANK, "reference", conversation(text="hello")).text
    conv = conversation()
    conv.tools = ["Read", "Bash"]
    assert "no tool 'get_account' is offered" in next_move(BANK, "reference", conv).text
