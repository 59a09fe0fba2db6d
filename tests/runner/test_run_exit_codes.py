"""``run``'s exit codes for a stop signal, with a real runner and agent: 143 for SIGTERM, 129 for
SIGHUP (130 for SIGINT is in test_run.py; 0, 1, 2, 3 and 75 in test_run.py, test_run_preflight.py
and test_budget.py). The docs' table and ``--help`` list them all (tests/cli/test_help.py)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HARN = [sys.executable, "-m", "harn_mcp_mock"]
WAIT = 300


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_run_stopped_by_a_signal_exits_128_plus_it_and_says_what_is_left(
    tmp_path: Path, sig: signal.Signals
) -> None:
    os.mkfifo(tmp_path / "ready")
    fifo = os.open(tmp_path / "ready", os.O_RDWR | os.O_NONBLOCK)
    (tmp_path / "agent.py").write_text(
        "import signal\n"
        f"with open({str(tmp_path / 'ready')!r}, 'w') as f:\n"
        "    f.write('up\\n')\n"
        "signal.pause()\n"
    )
    args = ["run", "--spec", "bank", "--task", "pay-rent", "--k", "2", "--workers", "1", "--out", "out"]
    proc = subprocess.Popen(
        [*HARN, *args, "--sandbox", "none", "--", sys.executable, "agent.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert select.select([fifo], [], [], WAIT)[0]  # the first agent is up
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        os.close(fifo)
    assert proc.returncode == 128 + sig, err
    assert "2 trial(s) not run: run the same command again to resume" in err
