"""RunOptions: one value for a run, built once where the input arrives; the keyword forms of
run_episodes and run_eval are a shim over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harn_mcp_mock.errors import UsageError
from harn_mcp_mock.runner.backend import BackendOptions
from harn_mcp_mock.runner.run import RunOptions, run_episodes
from harn_mcp_mock.runner.trial import TrialSettings


def test_build_takes_the_keyword_forms() -> None:
    built = RunOptions.build(
        tasks=["b", "a"], k=3, workers=2, ray_address="ray://x", faults=["slow"], timeout=9, preload=["json"]
    )
    assert built == RunOptions(
        tasks=("b", "a"),
        k=3,
        faults=("slow",),
        trial=TrialSettings(timeout=9, preload=("json",)),
        backend_options=BackendOptions(workers=2, address="ray://x"),
    )
    assert built.workers == 2
    assert RunOptions.build() == RunOptions()


def test_keywords_are_laid_over_an_options_value() -> None:
    base = RunOptions(k=4, backend_options=BackendOptions(workers=3))
    assert RunOptions.build(base, seed=7) == RunOptions(
        k=4, seed=7, backend_options=BackendOptions(workers=3)
    )
    assert RunOptions.build(base, ray_address="r").backend_options == BackendOptions(workers=3, address="r")
    assert RunOptions.build(base) is base


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="'kk'"):
        RunOptions.build(kk=2)
    with pytest.raises(TypeError, match="'backend_options'"):
        RunOptions.build(backend_options=BackendOptions())
    with pytest.raises(TypeError, match="'trial'"):
        RunOptions.build(trial=TrialSettings())


def test_options_value_and_keywords_refuse_alike(tmp_path: Path) -> None:
    for call in (
        lambda: run_episodes(["notes"], ["true"], out=tmp_path, backend="slurm"),
        lambda: run_episodes(["notes"], ["true"], out=tmp_path, options=RunOptions(backend="slurm")),
    ):
        with pytest.raises(UsageError, match="unknown backend 'slurm'"):
            call()
    with pytest.raises(UsageError, match="runs on the local backend only"):
        run_episodes(["notes"], ["true"], out=tmp_path, options=RunOptions(backend="ray"), preload=["json"])
    with pytest.raises(UsageError, match="--ray-address is for --backend ray"):
        run_episodes(["notes"], ["true"], out=tmp_path, ray_address="ray://x")
    assert not any(tmp_path.iterdir())


def test_an_in_process_agent_is_refused_another_backend_from_a_loop_too(tmp_path: Path) -> None:
    import anyio

    from harn_mcp_mock.runner.run import run_episodes_async

    async def agent(session: object, trial: object) -> None: ...

    async def main() -> None:
        await run_episodes_async(["notes"], agent, out=tmp_path, backend="ray")

    with pytest.raises(UsageError, match="an in-process agent runs on the local backend only"):
        anyio.run(main)
    with pytest.raises(UsageError, match="an in-process agent runs on the local backend only"):
        run_episodes(["notes"], agent, out=tmp_path, options=RunOptions(backend="ray"))
    assert not any(tmp_path.iterdir())
