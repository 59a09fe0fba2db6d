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
    args = parser.parse_args()
    n, repeat = (300, 3) if args.quick else (2000, 7)

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
