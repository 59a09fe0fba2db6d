"""The pytest plugin, run on small test files with pytester: marker, fixture, record modes, failures."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import deepdiff  # noqa: F401  # imported here, in-process runs reuse these modules instead of re-importing
import mcp.client.stdio  # noqa: F401
import pytest

import harn_mcp_mock.api
import harn_mcp_mock.replay.session  # noqa: F401
from harn_mcp_mock.pytest_plugin import default_cassette_path, resolve_cassette_path, sanitize_name
from tests.echo_cassette import echo_cassette

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
NOTES = str(REPO / "examples" / "servers" / "notes_server.py")
INSTALLED = any(ep.name == "harn_mcp_mock" for ep in entry_points(group="pytest11"))
PLUGIN = [] if INSTALLED else ["-p", "harn_mcp_mock.pytest_plugin"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        """
        [pytest]
        asyncio_mode = auto
        asyncio_default_fixture_loop_scope = function
        filterwarnings = error
        """
    )
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # In-process runs import the plugin module once; later runs cannot assert-rewrite it again.
    quiet = [
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",
    ]
    return pytester.runpytest(*PLUGIN, *quiet, *args)


ECHO_TEST = """
import pytest

{marker}
async def {name}(mcp_mock):
    async with mcp_mock.session() as session:
        result = await session.call_tool("echo", {{"text": "hi"}})
    assert result.content[0].text == "hi"
"""


# --- passing and failing -----------------------------------------------------------------------


def test_a_test_that_replays_its_whole_cassette_passes(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi")
    project.makepyfile(test_echo=ECHO_TEST.format(marker="", name="test_hi"))
    run(project).assert_outcomes(passed=1)


def test_a_miss_fails_the_test_with_the_explanation(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_miss.cassette.json", "hi")
    project.makepyfile(
        test_echo="""
        import pytest
        from mcp.shared.exceptions import MCPError

        async def test_miss(mcp_mock):
            async with mcp_mock.session() as session:
                await session.call_tool("echo", {"text": "hi"})
                with pytest.raises(MCPError):
                    await session.call_tool("echo", {"text": "nope"})
        """
    )
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*harn-mcp-mock: the replay of *test_miss.cassette.json did not go as recorded.",
            "*1 request(s) matched no recorded interaction:",
            "*- tools/call (id *): *params.arguments.text: recorded 'hi', got 'nope'*",
            "*allow_misses=True*",
        ]
    )


def test_unused_recorded_interactions_fail_the_test_listing_each_one(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi", "bye")
    project.makepyfile(test_echo=ECHO_TEST.format(marker="", name="test_hi"))
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 recorded interaction(s) were never used:",
            '*- seq 7: tools/call {"name":"echo","arguments":{"text":"bye"}}',
            "*allow_unused=True*",
        ]
    )


def test_allow_unused_accepts_interactions_the_test_does_not_use(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi", "bye")
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker="@pytest.mark.mcp_mock(allow_unused=True)", name="test_hi")
    )
    run(project).assert_outcomes(passed=1)


def test_a_test_that_fails_on_its_own_is_not_reported_twice(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi", "bye")
    project.makepyfile(
        test_echo="""
        async def test_hi(mcp_mock):
            async with mcp_mock.session() as session:
                await session.call_tool("echo", {"text": "hi"})
            assert False, "the test's own failure"
        """
    )
    result = run(project)
    result.assert_outcomes(failed=1)
    assert "never used" not in result.stdout.str()


def test_a_session_held_by_a_fixture_is_checked_at_teardown(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi", "bye")
    project.makepyfile(
        test_echo="""
        import pytest

        @pytest.fixture
        async def session(mcp_mock):
            async with mcp_mock.session() as session:
                yield session

        async def test_hi(session):
            await session.call_tool("echo", {"text": "hi"})
        """
    )
    result = run(project)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_hi*", "*1 recorded interaction(s) were never used:"]
    )


def test_mcp_client_works_over_the_fixture_transport_and_the_report_is_kept(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_client.cassette.json", "hi")
    project.makepyfile(
        test_echo="""
        from mcp import Client

        async def test_client(mcp_mock):
            async with Client(mcp_mock.transport(), mode="auto") as client:
                result = await client.call_tool("echo", {"text": "hi"})
            assert result.content[0].text == "hi"
            assert mcp_mock.report.clean and mcp_mock.report.hits == 3
        """
    )
    run(project).assert_outcomes(passed=1)


# --- cassette paths ---------------------------------------------------------------------------


def test_each_test_gets_a_cassette_named_after_its_module_class_and_parameters(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_names="""
        from pathlib import Path
        import pytest

        HERE = Path(__file__).parent / "cassettes" / "test_names"

        class TestNames:
            @pytest.mark.parametrize("city", ["Paris", "São Paulo/BR"])
            def test_city(self, mcp_mock, city):
                expected = {"Paris": "TestNames.test_city_Paris", "São Paulo/BR": "TestNames.test_city_S_xe3o_Paulo_BR"}  # pytest escapes non-ASCII ids
                assert mcp_mock.path == HERE / (expected[city] + ".cassette.json")

        def test_plain(mcp_mock):
            assert mcp_mock.path == HERE / "test_plain.cassette.json"
        """
    )
    run(project).assert_outcomes(passed=3)


def test_a_marker_path_is_taken_from_the_cassettes_folder(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "shared" / "echo.cassette.json", "hi")
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker='@pytest.mark.mcp_mock("shared/echo.cassette.json")', name="test_a")
        + ECHO_TEST.format(marker='@pytest.mark.mcp_mock("shared/echo.cassette.json")', name="test_b")
    )
    run(project).assert_outcomes(passed=2)


@pytest.mark.parametrize(
    "path", ["../outside.cassette.json", "a/../../outside.cassette.json", "/tmp/x.cassette.json"]
)
def test_a_marker_path_that_escapes_the_cassettes_folder_is_refused(
    project: pytest.Pytester, path: str
) -> None:
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker=f"@pytest.mark.mcp_mock({path!r})", name="test_escape")
    )
    result = run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["PathEscapeError: *escapes the test's cassette folder*"])
    assert "pytest_plugin.py" not in result.stdout.str()  # one line, not the plugin's source


def test_absolute_cassette_paths_are_allowed_by_an_ini_option(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    outside = echo_cassette(tmp_path / "elsewhere" / "echo.cassette.json", "hi")
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker=f"@pytest.mark.mcp_mock({str(outside)!r})", name="test_outside")
    )
    run(project, "-o", "mcp_mock_allow_absolute_paths=true").assert_outcomes(passed=1)


def test_path_helpers_sanitise_and_contain(tmp_path: Path) -> None:
    test_file = tmp_path / "test_mod.py"
    assert sanitize_name("test_x[a b/../c]") == "test_x_a_b_.._c"
    assert len(sanitize_name("test_" + "x" * 500)) == 120
    assert (
        default_cassette_path(test_file, "test_y")
        == tmp_path / "cassettes" / "test_mod" / "test_y.cassette.json"
    )
    assert (
        resolve_cassette_path("a/b.cassette.json", test_file)
        == tmp_path / "cassettes" / "a" / "b.cassette.json"
    )


# --- record modes -----------------------------------------------------------------------------


CANARY_TEST = """
import sys
import pytest

CANARY = [sys.executable, "-c", "open('server-started', 'w').close()"]

@pytest.mark.mcp_mock(command=CANARY)
async def test_canary(mcp_mock):
    async with mcp_mock.session() as session:
        await session.list_tools()
"""


def test_mode_none_never_starts_a_server_even_when_the_cassette_is_missing(project: pytest.Pytester) -> None:
    project.makepyfile(test_canary=CANARY_TEST)
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*test_canary.cassette.json: no such cassette (record it with --mcp-record-mode=once*"]
    )
    assert not (project.path / "server-started").exists()


@pytest.mark.slow
def test_mode_once_records_a_missing_cassette_and_later_runs_replay_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeconftest(
        f"""
        import sys
        import pytest

        @pytest.fixture
        def mcp_mock_config():
            return {{"command": [sys.executable, {NOTES!r}]}}
        """
    )
    project.makepyfile(
        test_notes="""
        import os

        async def test_notes(mcp_mock):
            async with mcp_mock.session() as session:
                result = await session.call_tool("read_note", {"name": "welcome"})
            assert result.structured_content["words"] == 9
            assert mcp_mock.recorded is (os.environ["EXPECT_RECORDING"] == "1")
        """
    )
    cassette = project.path / "cassettes" / "test_notes" / "test_notes.cassette.json"
    monkeypatch.setenv("EXPECT_RECORDING", "1")
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    recorded = json.loads(cassette.read_text())
    assert recorded["exit"]["reason"] == "client-closed"
    monkeypatch.setenv("EXPECT_RECORDING", "0")
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    run(project).assert_outcomes(passed=1)
    assert json.loads(cassette.read_text()) == recorded


@pytest.mark.slow
def test_mode_new_episodes_adds_new_calls_to_the_cassette_and_keeps_replaying_the_old(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeconftest(
        f"""
        import sys
        import pytest

        @pytest.fixture
        def mcp_mock_config():
            return {{"command": [sys.executable, {NOTES!r}], "allow_unused": True}}
        """
    )
    project.makepyfile(
        test_notes="""
        import os

        async def test_notes(mcp_mock):
            async with mcp_mock.session() as session:
                await session.call_tool("read_note", {"name": "welcome"})
                if os.environ["WITH_NEW"] == "1":
                    result = await session.call_tool("write_note", {"name": "n", "text": "a b c"})
                    assert result.structured_content["words"] == 3
        """
    )
    cassette = project.path / "cassettes" / "test_notes" / "test_notes.cassette.json"
    monkeypatch.setenv("WITH_NEW", "0")
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    monkeypatch.setenv("WITH_NEW", "1")
    run(project).assert_outcomes(failed=1)  # mode none: the new call is a miss
    run(project, "--mcp-record-mode=new_episodes").assert_outcomes(passed=1)
    calls = [m["message"]["params"]["name"] for m in json.loads(cassette.read_text())["messages"]
             if m["message"].get("method") == "tools/call"]  # fmt: skip
    assert calls == ["read_note", "write_note"]
    run(project).assert_outcomes(passed=1)  # and now it replays offline


def test_a_recording_mode_without_a_command_says_what_is_missing(project: pytest.Pytester) -> None:
    project.makepyfile(test_echo=ECHO_TEST.format(marker="", name="test_hi"))
    result = run(project, "--mcp-record-mode=rewrite")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*record mode all records *, so it needs the live server: @pytest.mark.mcp_mock(command=*"]
    )


def test_an_unknown_record_mode_is_rejected_listing_the_choices(project: pytest.Pytester) -> None:
    project.makepyfile(test_echo=ECHO_TEST.format(marker="", name="test_hi"))
    result = run(project, "--mcp-record-mode=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'sometimes'*none*once*all*"])


def test_an_unknown_marker_option_is_an_error_naming_the_valid_ones(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker="@pytest.mark.mcp_mock(record='all')", name="test_hi")
    )
    result = run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*unknown mcp_mock option 'record'; valid options: allow_answer_mismatches, *"]
    )


@pytest.mark.parametrize(
    ("keywords", "said"),
    [
        ("repeat='cycl'", "mcp_mock repeat: bad repeat 'cycl': use last, cycle or error"),
        ("latency='fast'", "mcp_mock latency: bad latency 'fast': use none, recorded or scaled:X (X >= 0)"),
        ("ignore_paths=['params/x']", "mcp_mock ignore_paths: JSON pointer 'params/x' must start with '/'"),
        ("strict_order='yes'", "mcp_mock strict_order must be True or False, not 'yes'"),
    ],
)
def test_a_bad_marker_value_is_a_set_up_error_naming_the_keyword_not_a_cli_flag(
    project: pytest.Pytester, keywords: str, said: str
) -> None:
    """Checked at set-up, before the cassette is looked for (it does not exist here), and named
    as the user wrote it: ``repeat``, not ``--repeat``."""
    project.makepyfile(
        test_echo=ECHO_TEST.format(marker=f"@pytest.mark.mcp_mock({keywords})", name="test_hi")
    )
    result = run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"UsageError: @pytest.mark.mcp_mock: {said}"])
    assert "--" not in result.stdout.str().split("UsageError:", 1)[1].splitlines()[0]


def test_the_marker_is_registered(project: pytest.Pytester) -> None:
    result = run(project, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mcp_mock(path=None, *"])


@pytest.mark.slow
def test_the_docs_example_records_once_then_replays(project: pytest.Pytester) -> None:
    """The first example of docs/pytest-plugin.md, verbatim but for the server's absolute path."""
    doc = (REPO / "docs" / "pytest-plugin.md").read_text()
    example = doc.split("```python\n", 1)[1].split("```", 1)[0]
    project.makepyfile(test_notes=example.replace('"examples/servers/notes_server.py"', repr(NOTES)))
    run(project, "--mcp-record-mode=once").assert_outcomes(passed=1)
    cassette = (
        project.path / "cassettes" / "test_notes" / "test_the_welcome_note_has_nine_words.cassette.json"
    )
    assert cassette.exists()
    run(project).assert_outcomes(passed=1)


# --- what a failure shows --------------------------------------------------------------------


@pytest.mark.parametrize("client", ["session", "mcp.Client"])
def test_an_uncaught_miss_shows_the_miss_not_the_plugin_or_exception_groups(
    project: pytest.Pytester, client: str
) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_miss.cassette.json", "hi")
    opened = (
        "mcp_mock.session() as session"
        if client == "session"
        else "__import__('mcp').Client(mcp_mock.transport()) as session"
    )
    project.makepyfile(
        test_echo=f"""
        async def test_miss(mcp_mock):
            async with {opened}:
                await session.call_tool("echo", {{"text": "nope"}})
        """
    )
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "MCPError: harn-mcp-mock replay: no recorded interaction matches this tools/call request: *"
            "params.arguments.text: recorded 'hi', got 'nope'",
            '  at test_echo.py:3: await session.call_tool("echo", {"text": "nope"})',
        ]
    )
    output = result.stdout.str()
    assert "ExceptionGroup" not in output and "Exception Group" not in output
    assert "pytest_plugin.py" not in output and "harn_mcp_mock/api.py" not in output
    assert "site-packages" not in output


def test_a_miss_escapes_the_session_block_as_itself_so_tests_can_catch_it(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_miss.cassette.json", "hi")
    project.makepyfile(
        test_echo="""
        import pytest
        from mcp.shared.exceptions import MCPError

        @pytest.mark.mcp_mock(allow_misses=True, allow_unused=True)
        async def test_miss(mcp_mock):
            with pytest.raises(MCPError, match="got 'nope'"):
                async with mcp_mock.session() as session:
                    await session.call_tool("echo", {"text": "nope"})
        """
    )
    run(project).assert_outcomes(passed=1)


def test_a_harn_error_is_its_one_line_and_the_tests_line_without_the_plugin_source(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_echo=ECHO_TEST.format(marker="", name="test_canary"))
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "CassetteError: *test_canary.cassette.json: no such cassette*",
            "  at test_echo.py:5: async with mcp_mock.session() as session:",
        ]
    )
    assert "pytest_plugin.py" not in result.stdout.str()


@pytest.mark.slow
def test_the_documented_asyncio_config_gives_no_warning(pytester: pytest.Pytester) -> None:
    """The pyproject block docs/pytest-plugin.md tells users to add, verbatim, under ``-W error``."""
    doc = (REPO / "docs" / "pytest-plugin.md").read_text()
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    assert "asyncio_mode" in block
    pytester.makefile(".toml", pyproject=block)
    echo_cassette(pytester.path / "cassettes" / "test_echo" / "test_hi.cassette.json", "hi")
    pytester.makepyfile(
        test_echo=ECHO_TEST.format(marker="", name="test_hi")
        + """

@pytest.fixture
async def greeting():
    return "hi"


async def test_an_async_fixture(greeting):
    assert greeting == "hi"
"""
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)
    assert "Warning" not in result.stdout.str() + result.stderr.str()


def test_an_xfail_test_still_sees_the_miss_as_its_own_type(project: pytest.Pytester) -> None:
    echo_cassette(project.path / "cassettes" / "test_echo" / "test_miss.cassette.json", "hi")
    project.makepyfile(
        test_echo="""
        import pytest
        from mcp.shared.exceptions import MCPError

        @pytest.mark.xfail(raises=MCPError, strict=True)
        @pytest.mark.mcp_mock(allow_misses=True, allow_unused=True)
        async def test_miss(mcp_mock):
            async with mcp_mock.session() as session:
                await session.call_tool("echo", {"text": "nope"})
        """
    )
    run(project).assert_outcomes(xfailed=1)
