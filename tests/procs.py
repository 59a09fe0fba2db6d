"""Processes of this machine by their command line: how a test finds an agent it started when the
pid the agent says is its PID namespace's (under the runner's sandbox), or when nobody said one."""

from __future__ import annotations

import os
from collections.abc import Callable


def pids_where(match: Callable[[list[bytes]], bool]) -> list[int]:
    """The pids of the live processes whose argv (``/proc/PID/cmdline``, split) ``match`` holds."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if match(argv):
            found.append(int(name))
    return found
