"""The run folder is one typed, versioned format: the files a real run writes hold to
docs/run-folder.schema.json (generated from the types, so it cannot go stale), and the one loader
(resume, report, --baseline) reads them typed and refuses bad files in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner import run_episodes
from harn_mcp_mock.runner.folder import TrialRecord, load_results, load_run_folder
from harn_mcp_mock.runner.schema import render_schema
from harn_mcp_mock.scoring import EvalResult

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DOC = ROOT / "docs" / "run-folder.schema.json"
SCHEMA = json.loads(SCHEMA_DOC.read_text())

# One worker runs the module: its run folder (a module fixture) is made once.
pytestmark = pytest.mark.xdist_group("runner/test_folder")


def agent_script(folder: Path, name: str, body: str) -> list[str]:
    path = folder / f"{name}.py"
    path.write_text("import sys\n" + body, encoding="utf-8")
    return [sys.executable, str(path)]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("folder")
    agent = agent_script(tmp, "idle", "sys.exit(0)\n")
    run_episodes(["bank"], agent, out=tmp / "out", tasks=["pay-rent"], k=2, faults=["flaky"])
    tempfail = agent_script(tmp, "tempfail", "sys.exit(75)\n")
    run_episodes(["bank"], tempfail, out=tmp / "infra", tasks=["pay-rent"], max_retries=0)
    return tmp


def test_the_files_of_a_real_run_hold_to_the_schema(run_dir: Path) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    validator.check_schema(SCHEMA)
    for out in (run_dir / "out", run_dir / "infra"):
        trials = [
            file
            for name in ("trial", "state", "report")
            for file in sorted(out.glob(f"trials/*/*/*/*/{name}.json"))
        ]
        files = [out / "run.json", out / "results.json", *trials]
        for file in files:
            errors = list(validator.iter_errors(json.loads(file.read_text())))
            assert not errors, (file, errors[0].message)
    folder = load_run_folder(run_dir / "out")
    trials = list(folder.trials())
    assert [(t.profile, t.trial) for _, t in trials] == [("none", 1), ("none", 2), ("flaky", 1), ("flaky", 2)]
    assert {t.status for _, t in trials} == {"scored"} and folder.run.options["k"] == 2
    assert isinstance(folder.results, EvalResult) and len(folder.results.runs) == 4
    for _, record in trials:  # each with its world, and the digests of the files the runner wrote
        assert record.world_report is not None and record.world_report.report is not None
        assert record.world_report.report["run_id"] == record.run_id
        assert set(record.files or ()) == {
            "state.json",
            "report.json",
            "tape.ndjson",
            "agent.stdout",
            "agent.stderr",
            "mcp.json",
        }
    (infra,) = [t for _, t in load_run_folder(run_dir / "infra").trials()]
    assert (infra.status, infra.exit_code, infra.infra_error) == (
        "infra_error",
        75,
        "the agent exited 75 (EX_TEMPFAIL)",
    )
    assert infra.world_report is not None and infra.world_report.report is None
    assert infra.world_report.state["infra_error"] == "the agent exited 75 (EX_TEMPFAIL)"


def test_a_record_keeps_fields_it_does_not_know_and_refuses_a_newer_version(tmp_path: Path) -> None:
    doc = {"format": "harn-mcp-mock/trial", "version": 1, "world": "bank", "task": "t", "profile": "none",
           "trial": 1, "run_id": "t.none.t1", "seed": 3, "status": "scored", "exit_code": 0,
           "infra_error": None, "attempts": 1, "duration_ms": 5, "budget": {"tokens": 10}}  # fmt: skip
    record = TrialRecord.from_json(doc, tmp_path / "trial.json")
    assert record.extra == {"budget": {"tokens": 10}} and record.to_json() == doc
    with pytest.raises(UsageError, match=r"trial.json:version: written by a newer harn-mcp-mock"):
        TrialRecord.from_json({**doc, "version": 2}, tmp_path / "trial.json")
    with pytest.raises(UsageError, match=r"trial.json:status: expected one of scored, timeout, infra_error"):
        TrialRecord.from_json({**doc, "status": "won"}, tmp_path / "trial.json")
    with pytest.raises(UsageError, match=r"trial.json:seed: expected an integer"):
        TrialRecord.from_json({**doc, "seed": "3"}, tmp_path / "trial.json")


def test_the_loader_names_the_file_that_is_not_what_it_should_be(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a run folder"):
        load_run_folder(tmp_path)
    (tmp_path / "run.json").write_text('{"format": "harn-mcp-mock/run", "version": 1, "specs": {}}')
    with pytest.raises(UsageError, match=r"run.json:specs: expected a list of specs"):
        load_run_folder(tmp_path)
    (tmp_path / "results.json").write_text("[]")
    with pytest.raises(UsageError, match=r"results.json: not an eval result"):
        load_results(tmp_path)
    assert load_results(run_dir / "out").groups
    doc = json.loads((run_dir / "out" / "results.json").read_text())
    assert load_results(run_dir / "out").to_dict() == doc  # read back typed, written the same
    (tmp_path / "results.json").write_text(json.dumps({**doc, "runs": [{**doc["runs"][0], "file": 3}]}))
    with pytest.raises(UsageError, match=r"results.json:runs\[0\].file: expected a string"):
        load_results(tmp_path)


def test_a_finished_trial_is_read_only_with_the_files_the_runner_wrote(run_dir: Path, tmp_path: Path) -> None:
    import shutil

    from harn_mcp_mock.runner.folder import StaleTrial

    out = tmp_path / "out"
    shutil.copytree(run_dir / "out", out)
    trial = out / "trials" / "bank" / "pay-rent" / "none" / "1"
    report = json.loads((trial / "report.json").read_text())
    (trial / "report.json").write_text(json.dumps({**report, "passed": True}))
    with pytest.raises(StaleTrial, match=r"1/report.json: changed since the runner wrote it"):
        list(load_run_folder(out).trials())
    (trial / "report.json").unlink()
    with pytest.raises(StaleTrial, match=r"1/report.json: is missing or not a regular file"):
        list(load_run_folder(out).trials())


def test_the_committed_schema_is_the_one_generated_from_the_types() -> None:
    assert SCHEMA_DOC.read_text(encoding="utf-8") == render_schema(), (
        "docs/run-folder.schema.json is stale: run "
        "`python -m harn_mcp_mock.runner.schema > docs/run-folder.schema.json`"
    )
    out = subprocess.run(
        [sys.executable, "-m", "harn_mcp_mock.runner.schema"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == render_schema()
    trial = SCHEMA["$defs"]["trial"]["properties"]
    assert {f.name for f in TrialRecord.json_fields()} <= set(trial)  # every field of the type
    assert trial["usage"] == {
        "oneOf": [{"type": "null"}, {"$ref": "#/$defs/usage"}],
        "description": trial["usage"]["description"],
    }
