"""Output formats come from one registry per command, and ``text`` is the terminal format's name."""

from __future__ import annotations

import re

import pytest
from typer.main import get_command

from harn_mcp_mock.cli import mock
from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.scoring.render import RESULT_FORMATS
from harn_mcp_mock.verify.report import REPORT_FORMATS


def _format_help(command: str) -> list[str]:
    click_command = get_command(mock.app).commands[command]  # type: ignore[attr-defined]
    [option] = [p for p in click_command.params if "--format" in getattr(p, "opts", ())]
    return re.findall(r"[a-z]+", option.help.split("(")[0])


def test_verify_and_eval_offer_exactly_their_registered_formats_text_first() -> None:
    assert _format_help("verify") == list(REPORT_FORMATS.names)
    assert _format_help("eval") == list(RESULT_FORMATS.names)
    assert REPORT_FORMATS.names[0] == RESULT_FORMATS.names[0] == "text"


def test_table_is_still_eval_s_text_format() -> None:
    assert RESULT_FORMATS.get("table") is RESULT_FORMATS.get("text")


def test_an_unknown_format_is_one_usage_error_naming_the_choices() -> None:
    with pytest.raises(
        UsageError, match="unknown report format 'yaml': use text, json, markdown, junit, sarif, github"
    ):
        REPORT_FORMATS.get("yaml")
