"""Speed of `Redactor.redact_message`, with a baseline measured in the same run.

For each message, the time per message of `redact_message` under the default policy, against
`orjson.loads(orjson.dumps(msg))` on the same message (a parse and a serialisation: what any
proxy that looks at a message pays at least), and their ratio:

- a small `tools/call` request with nothing to redact (target: well under 20 us);
- a `tools/list` result with 10 tools, nothing to redact (target: well under 20 us);
- a `tools/call` request carrying secrets (a password, a GitHub token, the server's env token);
- a `tools/call` result with a base64 image.

"first sight" redacts a new copy of the message each time, with different strings (as a live
session does); "again" redacts the very same message over and over, so strings the redactor
already found clean are skipped (as with a `tools/list` fetched in every session).

Then the corpus section (tests/redaction_corpus): the corpus's credentials planted in every
channel and recorded through the real recorder (recall: the share of formats no written byte
holds in any form; leaked: how many do), its harmless values planted in every channel (false
positives: the share that came back changed), and the time per message of `redact_message` on
the corpus's messages, against the same baseline.

With `--external DIR` (repeatable; or `--credsweeper DIR`, `--gitleaks DIR`, `--trufflehog DIR`):
the external corpora section instead of the speed tables: recall and false positives on public
labelled corpora read from a checkout of Samsung/CredSweeper, gitleaks/gitleaks or
trufflesecurity/trufflehog (benchmarks/_external_corpora.py and _trufflehog_corpus.py say what is
counted), next to ours; `--misses` lists every miss and every altered identifier, `--e2e` also
records each corpus through `harn mcp mock record`. `--orders N` adds the order test: each corpus
run through ONE redactor in its own order and in N random orders (seeded from `--seed`, printed),
each sample's output compared with a fresh redactor's taught what the shared one had learned
before it (`_external_corpora.order_diffs`).

Each timing is also taken, in the same run, with the redactor as it was before the value
memory (commit 0200645, loaded from git into a temporary package; `--before REF` takes another
commit, `--before main` the branch a change starts from): the `vs before` column is new / old
(the target: at most 1.3). The corpus messages are timed the same way.

Times are this process's CPU time (``time.process_time``), not wall time: on a shared machine
the time spent waiting for a core is left out.

Run: `.venv/bin/python benchmarks/bench_redact.py [--quick] [--before REF] [--only TEXT ...] [--external DIR ...]
[--misses] [--e2e] [--orders N [--seed S]]` (``--only clean``: the clean rows alone, without the corpus section).
"""

from __future__ import annotations

import argparse
import base64
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from harn_mcp_mock.redact import RedactionPolicy

BEFORE = "0200645"  # main before the value memory (issue 24)

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
from tests.redaction_corpus import corpus, harness  # noqa: E402 (after the path is set)


def small_call(i: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7 + i,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": f"hello world {i}"}},
    }


def tools_list(i: int) -> dict[str, Any]:
    def tool(n: int) -> dict[str, Any]:
        return {
            "name": f"get_forecast_{n}",
            "description": f"Get the weather forecast for a city: temperature, humidity and wind ({i}.{n}).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": f"Name of the city, e.g. Berlin ({i})"},
                    "days": {"type": "integer", "description": "How many days ahead (1-7)"},
                },
                "required": ["city"],
            },
            "annotations": {"title": f"Forecast {n}", "readOnlyHint": True},
        }

    return {"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool(n) for n in range(10)]}}


GITHUB = "ghp_" + "".join("aB3dE5gH7jK9"[(k * 5) % 12] for k in range(36))
ENV_TOKEN = "svc-token-" + "Xy7Zq2Wv9Tr4"


def with_secrets(i: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 8 + i,
        "method": "tools/call",
        "params": {
            "name": "deploy",
            "arguments": {
                "user": "ada",
                "password": f"hunter{i}",
                "note": f"clone with {GITHUB} then call the service with {ENV_TOKEN} ({i})",
            },
        },
    }


def image_result(i: int) -> dict[str, Any]:
    data = base64.b64encode(bytes((k * 7919 + i) % 251 for k in range(3000))).decode()
    return {
        "jsonrpc": "2.0",
        "id": 9 + i,
        "result": {"content": [{"type": "image", "data": data, "mimeType": "image/png"}], "isError": False},
    }


def per_call(make_fn: Callable[[], Callable[[Any], Any]], items: list[Any], repeat: int) -> float:
    """Best of ``repeat`` runs over ``items``, each with a new ``make_fn()``: microseconds of this
    process's CPU time per item (``time.process_time``: on a shared machine the time the process
    waits for a core is not counted, so a loaded machine moves the figures far less)."""
    best = float("inf")
    for _ in range(repeat):
        fn = make_fn()
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def before_policy(ref: str = BEFORE) -> Any:
    """The default policy of the redactor at ``ref`` (:data:`BEFORE` unless ``--before`` says),
    loaded from git into a temporary package (``None`` outside a git checkout that has it)."""
    import importlib
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        listing = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", ref, "harn_mcp_mock/redact"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = Path(tempfile.mkdtemp(prefix="redact-before-"))
    package = folder / "harn_redact_before"
    for name in listing:
        data = subprocess.run(
            ["git", "show", f"{ref}:{name}"], cwd=root, capture_output=True, check=True
        ).stdout
        target = package / Path(name).relative_to("harn_mcp_mock/redact")
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".py"):
            data = data.replace(b"harn_mcp_mock.redact", b"harn_redact_before")
        target.write_bytes(data)
    sys.path.insert(0, str(folder))
    module = importlib.import_module("harn_redact_before")
    return module.RedactionPolicy.default()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer messages and repeats")
    parser.add_argument(
        "--before",
        default=BEFORE,
        metavar="REF",
        help=f"the commit the `vs before` column compares to ({BEFORE})",
    )
    parser.add_argument("--external", action="append", default=[], metavar="DIR", help="a corpus checkout")
    parser.add_argument("--credsweeper", metavar="DIR", help="a Samsung/CredSweeper checkout")
    parser.add_argument("--gitleaks", metavar="DIR", help="a gitleaks/gitleaks checkout")
    parser.add_argument("--trufflehog", metavar="DIR", help="a trufflesecurity/trufflehog checkout")
    parser.add_argument(
        "--orders", type=int, default=0, metavar="N", help="order test: N random orders per external corpus"
    )
    parser.add_argument("--seed", type=int, help="the first order's seed (default: random, printed)")
    parser.add_argument("--misses", action="store_true", help="list every external miss")
    parser.add_argument("--e2e", action="store_true", help="also record the corpora end to end")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="only the rows whose label holds TEXT (no corpus)",
    )
    parser.add_argument(
        "--against",
        metavar="TREE",
        type=Path,
        help="also time the redactor of an older checkout TREE, alternating (new/old ratios; see against_section)",
    )
    args = parser.parse_args()
    n, repeat = (300, 3) if args.quick else (2000, 7)
    if args.against is not None:
        against_section(args.against, quick=args.quick)
        return

    policy = RedactionPolicy.default()
    external = [(d, None) for d in args.external]
    external += [
        (d, k)
        for k, d in (
            ("credsweeper", args.credsweeper),
            ("gitleaks", args.gitleaks),
            ("trufflehog", args.trufflehog),
        )
        if d
    ]
    if external:
        corpora = load_external(external)  # bad folders are reported before anything runs
        corpus_section(policy, 1)
        external_section(policy, corpora, misses=args.misses, e2e=args.e2e)
        if args.orders:
            order_section(policy, corpora, args.orders, args.seed)
        return
    env = {"SERVICE_TOKEN": ENV_TOKEN, "HOME": "/home/ada", "PATH": "/usr/local/bin:/usr/bin"}
    argv = ["weather-server", "--port", "8080"]

    def roundtrip(msg: Any) -> Any:
        return orjson.loads(orjson.dumps(msg))

    before = before_policy(args.before)
    print(
        f"{'message':46} {'bytes':>6} {'redact us':>10} {'before us':>10} {'vs before':>9} {'baseline us':>12} {'ratio':>6}"
    )
    for label, make in [
        ("small tools/call, clean", small_call),
        ("tools/list with 10 tools, clean", tools_list),
        ("tools/call with 3 secrets", with_secrets),
        ("tools/call result, base64 image", image_result),
    ]:
        if args.only and not any(text in label for text in args.only):
            continue
        fresh = [make(i) for i in range(n)]
        same = [make(0)] * n
        size = len(orjson.dumps(fresh[0]))
        for mode, items in (("first sight", fresh), ("again", same)):
            # A new redactor for each run: its caches start empty.
            ours, old = alternating(policy, before, argv, env, items, repeat)
            base = per_call(lambda: roundtrip, items, repeat)
            print(
                f"{label + ', ' + mode:46} {size:>6} {ours:>10.2f} {old:>10.2f} {ours / old:>9.2f}"
                f" {base:>12.2f} {ours / base:>6.2f}"
            )
    if not args.only:
        corpus_section(policy, repeat, before)


def alternating(
    policy: Any, before: Any, argv: list[str], env: dict[str, str], items: list[Any], repeat: int
) -> tuple[float, float]:
    """(new, old) microseconds per message: best of ``repeat`` runs each, the two alternating
    (a shared machine's load drifts; alternating spreads it over both). ``old`` is ``nan``
    without the old code."""
    new = old = float("inf")
    for _ in range(repeat):
        new = min(new, per_call(lambda: policy.redactor(argv=argv, env=env).redact_message, items, 1))
        if before is not None:
            old = min(old, per_call(lambda: before.redactor(argv=argv, env=env).redact_message, items, 1))
    return new, (old if before is not None else float("nan"))


def corpus_section(policy: RedactionPolicy, repeat: int, before: Any = None) -> None:
    """Recall and false positives on our own corpus, and the time per message of its messages
    (with ``before``, a policy of the redactor at another commit, timed in the same run)."""
    secrets, harmless = corpus.secrets(), corpus.harmless()
    with tempfile.TemporaryDirectory() as folder:
        from pathlib import Path

        harness.record_corpus(Path(folder), secrets, policy)
        leaked = harness.leaked(Path(folder), secrets)
    changed = harness.false_positives(harmless, policy)
    recall = 100 * (len(secrets) - len(leaked)) / len(secrets)
    print()
    print(f"corpus: {len(secrets)} credential formats, {len(harmless)} harmless values")
    print(f"recall {recall:.1f}% ({len(leaked)} leaked{': ' + ', '.join(leaked) if leaked else ''})")
    print(f"false positives {100 * len(changed) / len(harmless):.2f}% ({len(changed)} of {len(harmless)})")
    clean = [m for h in harmless[::4] for m in harness.harmless_messages(h.value)[:5]]
    dirty = [m for i, s in enumerate(secrets) for _d, m in harness.channel_messages(s, free=True, seq=i + 1)]
    dirty = [m for m in dirty if len(orjson.dumps(m)) < 4096]  # the timing is per message, not per blob

    def roundtrip(msg: Any) -> Any:
        return orjson.loads(orjson.dumps(msg))

    print(
        f"{'corpus messages':46} {'count':>6} {'redact us':>10} {'before us':>10} {'vs before':>9}"
        f" {'baseline us':>12} {'ratio':>6}"
    )
    for label, items, env in (
        ("harmless values, every channel", clean, harness.SERVER_ENV),
        (
            "credentials, every channel, env known",
            dirty,
            {**harness.SERVER_ENV, **{s.env: s.value for s in secrets}},
        ),
    ):
        ours = per_call(lambda env=env: policy.redactor(argv=["srv"], env=env).redact_message, items, repeat)
        base = per_call(lambda: roundtrip, items, repeat)
        if before is not None:
            old = per_call(
                lambda env=env: before.redactor(argv=["srv"], env=env).redact_message, items, repeat
            )
            then = f"{old:>10.2f} {ours / old:>9.2f}"
        else:
            then = f"{'':>10} {'':>9}"
        print(f"{label:46} {len(items):>6} {ours:>10.2f} {then} {base:>12.2f} {ours / base:>6.2f}")


def load_external(dirs: list[tuple[str, str | None]]) -> list[Any]:
    """The corpora in ``dirs`` (folder, kind or None to detect it); exits with one line on a bad one."""
    from pathlib import Path

    import _external_corpora as ext  # benchmarks/ is on sys.path when run as a script
    import _trufflehog_corpus as truffle

    corpora = []
    for folder, kind in dirs:
        try:
            if kind == "trufflehog" or (kind is None and truffle.is_trufflehog(Path(folder))):
                if not truffle.is_trufflehog(Path(folder)):
                    raise ValueError("no pkg/detectors and pkg/engine")
                corpora.append(truffle.load_trufflehog(Path(folder)))
                continue
            corpora.append(ext.load(Path(folder), kind))
        except (ValueError, OSError) as exc:
            flag = f"--{kind}" if kind else "--external"
            sys.exit(f"bench_redact: {flag} {folder}: not a corpus checkout ({exc})")
    return corpora


def external_section(policy: RedactionPolicy, corpora: list[Any], *, misses: bool, e2e: bool) -> None:
    from pathlib import Path

    import _external_corpora as ext  # benchmarks/ is on sys.path when run as a script
    import _trufflehog_corpus as truffle

    for loaded in corpora:
        print()
        start = time.process_time()
        if isinstance(loaded, truffle.TrufflehogCorpus):
            truffle.report_trufflehog(truffle.measure_trufflehog(loaded, policy), verbose=misses)
            samples = loaded.samples()
        else:
            ext.report(ext.measure(loaded, policy), verbose=misses)
            samples = loaded.samples
        print(f"  ({time.process_time() - start:.1f} s of CPU)")
        if e2e:
            with tempfile.TemporaryDirectory() as tmp:
                total, found = ext.record_end_to_end(samples, Path(tmp))
            print(
                f"  end to end (harn mcp mock record): {total - found} of {total} labelled values absent from every written byte"
            )


# --- --against TREE: this checkout's redactor and an older one's, in one run ---------------------

_AGAINST_PROBE = r"""
import json, sys, time
import orjson
from harn_mcp_mock.redact import RedactionPolicy
rows = orjson.loads(open(sys.argv[1], "rb").read())
policy = RedactionPolicy.default()
out = {}
for row in rows:
    argv, env, messages, per_redactor = row["argv"], row["env"], row["messages"], row["per_redactor"]
    best = float("inf")
    for _ in range(row["repeat"]):
        if per_redactor:  # one new redactor per message (a dump that teaches its values)
            reds = [policy.redactor(argv=argv, env=env) for _ in messages]
            t = time.process_time()
            for red, m in zip(reds, messages):
                red.redact_message(m)
        else:  # one redactor for the whole stream (as a recording)
            red = policy.redactor(argv=argv, env=env)
            t = time.process_time()
            for m in messages:
                red.redact_message(m)
        best = min(best, time.process_time() - t)
    out[row["label"]] = best / len(messages) * 1e6
import harn_mcp_mock
print(json.dumps({"package": harn_mcp_mock.__file__, "rows": out}))
"""


def clean_dump(size: int) -> str:
    """A config dump with no secret (ports, regions, paths, flags), of ``size`` characters: what a
    dump of secrets is compared with."""
    lines, i = [], 0
    while sum(map(len, lines)) + len(lines) < size:
        region = f"eu-west-{i % 9} zone {i % 4} tier standard"
        lines.append(f"SERVICE_{i}_REGION={region}")
        lines.append(f"The service runs in {region} as its placement.")
        i += 1
    return "\n".join(lines)[:size]


def against_rows(quick: bool) -> list[dict[str, Any]]:
    """The rows ``--against`` times: the speed table's messages (a stream through one redactor,
    first sight and again), the corpus section's, and a 200-secret config dump next to a clean
    dump of the same size (one new redactor per dump)."""
    import random

    from tests.redact.credentials import config_dump, config_secret

    n, repeat = (300, 3) if quick else (2000, 7)
    env = {"SERVICE_TOKEN": ENV_TOKEN, "HOME": "/home/ada", "PATH": "/usr/local/bin:/usr/bin"}
    argv = ["weather-server", "--port", "8080"]
    rows = []
    for label, make in [
        ("small tools/call, clean", small_call),
        ("tools/list with 10 tools, clean", tools_list),
        ("tools/call with 3 secrets", with_secrets),
        ("tools/call result, base64 image", image_result),
    ]:
        for mode, items in (("first sight", [make(i) for i in range(n)]), ("again", [make(0)] * n)):
            rows.append({"label": f"{label}, {mode}", "messages": items, "per_redactor": False})
    # The corpus section's messages: harmless values and credentials in every channel.
    secrets, harmless = corpus.secrets(), corpus.harmless()
    clean = [m for h in harmless[::4] for m in harness.harmless_messages(h.value)[:5]]
    dirty = [m for i, s in enumerate(secrets) for _d, m in harness.channel_messages(s, free=True, seq=i + 1)]
    dirty = [m for m in dirty if len(orjson.dumps(m)) < 4096]
    known = {**harness.SERVER_ENV, **{s.env: s.value for s in secrets}}
    for label, items, server_env in (
        ("corpus: harmless values, every channel", clean, harness.SERVER_ENV),
        ("corpus: credentials, every channel, env known", dirty, known),
    ):
        rows.append(
            {"label": label, "messages": items, "per_redactor": False, "argv": ["srv"], "env": server_env}
        )
    dumps = []
    for seed in range(3 if quick else 8):
        rng = random.Random(seed)
        dumps.append(config_dump([config_secret(rng) for _ in range(200)], rng))
    size = len(dumps[0])

    def result(text: str, i: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}}

    rows.append(
        {
            "label": "config dump, 200 secrets each repeated bare",
            "messages": [result(d, i) for i, d in enumerate(dumps)],
        }
    )
    rows.append(
        {
            "label": "config dump, clean, same size",
            "messages": [result(clean_dump(size), i) for i in range(len(dumps))],
        }
    )
    for row in rows:
        row.setdefault("per_redactor", True)
        row.setdefault("argv", argv)
        row.setdefault("env", env)
        row["repeat"] = repeat if not row["per_redactor"] else repeat * 2
    return rows


def against_section(tree: Path, *, quick: bool) -> None:
    """Times every row of :func:`against_rows` with this checkout's redactor and with the one of
    ``tree`` (a checkout of an older harn_mcp_mock, e.g. ``git worktree add /tmp/base 4f362c6``),
    each in a fresh interpreter that imports its tree's package (``-P``, ``PYTHONPATH``), the two
    alternating round after round (a shared machine's load drifts; alternating spreads it over
    both); best per row over the rounds. Prints new, old, new/old and, for the dumps, the 200-secret
    dump against the clean one of the same size, for each tree."""
    import json
    import os
    import subprocess

    if not (tree / "harn_mcp_mock" / "redact").is_dir():
        sys.exit(f"bench_redact: --against {tree}: no harn_mcp_mock/redact there")
    here = Path(__file__).resolve().parent.parent
    rows = against_rows(quick)
    rounds = 3 if quick else 5
    best: dict[Path, dict[str, float]] = {here: {}, tree.resolve(): {}}
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(orjson.dumps(rows))
        f.flush()
        for _ in range(rounds):
            for root in best:
                env = {**os.environ, "PYTHONPATH": str(root)}
                done = subprocess.run(
                    [sys.executable, "-P", "-c", _AGAINST_PROBE, f.name],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                found = json.loads(done.stdout)
                if not Path(found["package"]).resolve().is_relative_to(root):
                    sys.exit(f"bench_redact: --against: {root}'s probe imported {found['package']}")
                for label, us in found["rows"].items():
                    best[root][label] = min(best[root].get(label, float("inf")), us)
    new, old = best[here], best[tree.resolve()]
    print(f"this checkout vs {tree}: CPU us per message, best of {rounds} alternating rounds")
    print(f"{'message':50} {'new us':>10} {'old us':>10} {'new/old':>8}")
    for row in rows:
        label = row["label"]
        print(f"{label:50} {new[label]:>10.2f} {old[label]:>10.2f} {new[label] / old[label]:>8.2f}")
    dump, clean = "config dump, 200 secrets each repeated bare", "config dump, clean, same size"
    size = len(rows[-1]["messages"][0]["result"]["content"][0]["text"])
    print(
        f"200-secret dump / clean dump of {size} characters: new {new[dump] / new[clean]:.1f}x,"
        f" old {old[dump] / old[clean]:.1f}x (target: at most 5x)"
    )


def order_section(policy: RedactionPolicy, corpora: list[Any], n: int, seed: int | None) -> None:
    """The order test on every external corpus: its own order, then ``n`` random ones."""
    import random

    import _external_corpora as ext  # benchmarks/ is on sys.path when run as a script
    import _trufflehog_corpus as truffle

    first = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    seeds: list[int | None] = [None, *range(first, first + n)]
    print()
    print(
        f"order test: each corpus in its own order and {n} random ones (seeds {first}..{first + n - 1}; --seed {first})"
    )
    for loaded in corpora:
        samples = loaded.samples() if isinstance(loaded, truffle.TrufflehogCorpus) else loaded.samples
        start = time.process_time()
        diffs = {s: ext.order_diffs(samples, policy, s) for s in seeds}
        ext.report_orders(loaded.kind, samples, diffs)
        print(f"  ({time.process_time() - start:.1f} s of CPU)")


if __name__ == "__main__":
    main()
