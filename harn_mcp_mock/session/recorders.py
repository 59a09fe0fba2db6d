"""The one place a :class:`~harn_mcp_mock.session.recorder.Recorder` is built.

Every recording (``record`` over stdio, ``record --url``, ``replay --http`` in the modes that
record, ``new_episodes``' scratch recording, a live ``verify``'s candidate and the Python
API's ``RecordTransport``) gets its recorder from :func:`new_recorder`: the redactor made from
the policy with the live server's argv and environment (or one made already), the command as
it is recorded (redacted), the policy's name and digest, the transport and the tape observer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harn_mcp_mock.clock import SYSTEM_CLOCK, Clock
from harn_mcp_mock.session.recorder import MessageRedactor, Recorder

if TYPE_CHECKING:
    from harn_mcp_mock.redact import RedactionPolicy


def new_recorder(
    cassette: str | Path,
    policy: RedactionPolicy,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    redactor: MessageRedactor | None = None,
    command: list[str] | None = None,
    transport: str = "stdio",
    clock: Clock = SYSTEM_CLOCK,
    observer: Any = None,
) -> Recorder:
    """A recorder writing ``cassette``'s journal under ``policy``.

    ``argv`` is what starts (or names) the live server; the redactor is ``policy``'s, told
    ``argv`` and ``env`` (ours when None), unless ``redactor`` is one made already (the caller
    redacts with it before the recording starts: a tape's header). ``command`` is the recorded
    command line (``argv`` redacted by default)."""
    if redactor is None:
        redactor = policy.redactor(argv=list(argv), env=dict(os.environ if env is None else env))
    if command is None:
        command = _redact_argv(redactor, list(argv))
    return Recorder(
        cassette,
        redactor,
        command=command,
        policy_name=policy.name,
        policy_digest=policy.digest,
        transport=transport,
        clock=clock,
        observer=observer,
    )


def _redact_argv(redactor: MessageRedactor, argv: list[str]) -> list[str]:
    redact_argv = getattr(redactor, "redact_argv", None)
    return list(redact_argv(argv)) if callable(redact_argv) else argv
