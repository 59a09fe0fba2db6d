"""Build a replay engine from a cassette path and the user's options."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from harn_mcp_mock.cassette.matching import Matcher
from harn_mcp_mock.cassette.model import load_cassette
from harn_mcp_mock.options import ReplayOptions, parse_latency
from harn_mcp_mock.redact import RedactionPolicy
from harn_mcp_mock.replay.engine import ReplayEngine

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)
if TYPE_CHECKING:
    from typing import Any


def open_engine(
    cassette: str | Path,
    options: ReplayOptions | None = None,
    *,
    env: dict[str, str] | None = None,
    on_event: Callable[[str], None] | None = None,
) -> ReplayEngine:
    """Load ``cassette`` and build an engine that redacts incoming requests with its policy
    (wrapped in a :class:`~harn_mcp_mock.faults.overlay.FaultOverlay` when ``options`` has
    fault rules)."""
    return engine_factory(cassette, options, env=env, on_event=on_event)()


def engine_factory(
    cassette: str | Path,
    options: ReplayOptions | None = None,
    *,
    env: dict[str, str] | None = None,
    on_event: Callable[[str], None] | None = None,
) -> Callable[[], ReplayEngine]:
    """Load ``cassette`` and its policy once (errors raise here); each call of the result builds
    a fresh engine (its own use counts, redactor and matcher) over the same parsed cassette,
    which engines only read: a server's sessions share it instead of each parsing it again."""
    opts = options if options is not None else ReplayOptions()
    loaded = load_cassette(cassette)
    policy = (
        RedactionPolicy.load(opts.redact_policy)
        if opts.redact_policy is not None
        else RedactionPolicy.default()
    )
    recorded: Any = (loaded.meta.get("redaction") or {}).get("digest")
    if recorded and recorded != policy.digest and on_event is not None:
        on_event(
            f"the cassette was recorded with redaction policy {recorded[:20]}..., not {policy.digest[:20]}... "
            "(pass the same --redact-policy as when recording, or requests with secrets may not match)"
        )
    environ = dict(os.environ if env is None else env)
    ignore = list(opts.ignore_paths)
    latency_scale = parse_latency(opts.latency)
    # The recording's env secrets, known only by their fingerprints, are redacted from live traffic.
    fingerprints = (loaded.meta.get("redaction") or {}).get("fingerprints")

    rules = list(opts.fault_rules)

    def make() -> ReplayEngine:
        engine = ReplayEngine(
            loaded,
            redactor=policy.redactor(argv=[], env=environ, fingerprints=fingerprints),
            matcher=Matcher.with_paths(ignore),
            repeat=opts.repeat,
            strict_order=opts.strict_order,
            latency_scale=latency_scale,
            on_event=on_event,
        )
        if not rules:
            return engine
        from harn_mcp_mock.faults.overlay import FaultOverlay

        # The overlay stands in for the engine: it delegates everything but the faulted answers.
        overlay: ReplayEngine = FaultOverlay(engine, rules, seed=opts.seed, run_id=opts.run_id)  # type: ignore[assignment]
        return overlay

    return make
