"""CPU time of redaction's set-up on replay's start-up path, phase by phase, in fresh processes.

Each run is a new interpreter that imports the redaction modules, loads the default policy,
builds a request redactor over this process's environment (as `harn mcp mock replay` does) and
redacts a first `initialize` and a second `tools/call`; it reports the CPU time
(``time.process_time_ns``) of each phase:

- import: ``harn_mcp_mock.redact`` (after the package and the modules replay imports anyway);
- policy: ``RedactionPolicy.default().compiled()``;
- scanners: composing the redactor's scanners (``Scanner.__init__``);
- env: the scan of the environment for literal secrets (scanners it builds left out);
- other: the rest of the redactor's construction;
- first / second: redacting the first and the second request.

Give several source trees (a checkout's root, or a folder with an older ``harn_mcp_mock``) to
compare them: runs alternate between them, so load on a shared machine hits them alike.
Medians over the runs.

Run: `.venv/bin/python benchmarks/bench_redact_setup.py [--runs N] [TREE ...]` (default: this
checkout). Byte-compile first (`python -m compileall -q harn_mcp_mock`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("import", "policy", "scanners", "env", "other", "first", "second")
PROBE = r"""
import json, os, time
T = time.process_time_ns
import harn_mcp_mock, harn_mcp_mock._record, harn_mcp_mock.store.pointer
t = T(); import harn_mcp_mock.redact as R; t_import = T() - t
from harn_mcp_mock.redact import scanner as S, pipeline as P
acc = {"scanners": 0, "env": 0}
init = S.Scanner.__init__
def timed_init(self, *a, **k):
    t = T(); init(self, *a, **k); acc["scanners"] += T() - t
S.Scanner.__init__ = timed_init
literal = P.Redactor._literal_secrets
def timed_literal(self, *a, **k):
    s0 = acc["scanners"]; t = T(); r = literal(self, *a, **k)
    acc["env"] += T() - t - (acc["scanners"] - s0); return r
P.Redactor._literal_secrets = timed_literal
t = T(); policy = R.RedactionPolicy.default(); policy.compiled(); t_policy = T() - t
t = T(); red = policy.redactor(argv=[], env=dict(os.environ), fingerprints=None); t_red = T() - t
first = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
         "capabilities": {}, "clientInfo": {"name": "bench", "version": "1.0"}}}
second = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello 1"}}}
t = T(); red.redact_message(first); t_first = T() - t
t = T(); red.redact_message(second); t_second = T() - t
print(json.dumps({"import": t_import, "policy": t_policy, "scanners": acc["scanners"], "env": acc["env"],
                  "other": t_red - acc["scanners"] - acc["env"], "first": t_first, "second": t_second}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("trees", nargs="*", type=Path, default=[ROOT])
    args = parser.parse_args()
    results: dict[Path, list[dict[str, int]]] = {t: [] for t in args.trees}
    for _ in range(args.runs):
        for tree in args.trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            out = subprocess.run(  # -P: import from the tree, not the cwd
                [sys.executable, "-P", "-c", PROBE], env=env, capture_output=True, text=True, check=True
            )
            results[tree].append(json.loads(out.stdout))
    print(f"CPU ms, median of {args.runs} fresh processes; load average {os.getloadavg()[0]:.1f}")
    print("phase".ljust(10) + "".join(str(t)[-28:].rjust(30) for t in args.trees))
    for phase in (*PHASES, "total"):
        cells = []
        for tree in args.trees:
            runs = results[tree]
            values = [
                sum(r[p] for p in PHASES if p != "second") if phase == "total" else r[phase] for r in runs
            ]
            cells.append(f"{statistics.median(values) / 1e6:.3f}".rjust(30))
        print(phase.ljust(10) + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
