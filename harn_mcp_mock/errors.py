"""The one exception tree of harn-mcp-mock.

Every error the library raises on purpose derives from :class:`HarnError`, carries the
process exit code the CLI uses for it, and renders as one line that names the file,
line or field at fault (never a secret, never a traceback)::

    HarnError                         exit 2  (inputs could not be used)
    ├── UsageError                    exit 2  bad flags or arguments
    ├── CassetteError                 exit 3  a cassette could not be read or written
    │   ├── CassetteFormatError               not JSON, or not the shape the schema says
    │   ├── CassetteVersionError              written by a newer format version
    │   ├── CassetteIntegrityError            a CAS blob is missing or altered
    │   └── CassetteBusyError                 another live process is recording the cassette
    ├── TapeError                     exit 3  an event tape could not be read or written
    │   ├── TapeFormatError                   not NDJSON, or not the shape docs/tape.md describes
    │   ├── TapeVersionError                  written by a newer tape format version
    │   └── TapeIntegrityError                a payload's bytes do not match its content hash
    ├── PathEscapeError               exit 2  a path leaves the folder it must stay in
    ├── OutputError                   exit 2  a file asked for (a report, a state, a page) cannot be
    │                                         written there (a folder, a path under a file, no room)
    ├── RedactionPolicyError          exit 2  a redaction policy file is invalid
    ├── WorldSpecError                exit 2  a world spec violates its schema or cannot run
    ├── FaultRulesError               exit 2  a fault rules file (replay --faults) is invalid
    ├── EvalError                     exit 2  eval input that cannot be scored (file, world, task, k)
    ├── ProtocolError                 exit 2  a Harn Agents Protocol rule was broken (defined with its
    │                                         error envelope in agents/envelopes.py)
    ├── JcsError                      exit 2  a value RFC 8785 cannot canonicalise (agents/jcs.py)
    ├── HarnessStoreError             exit 3  the mock Harness's SQLite file cannot be opened or used
    ├── ServerError                   exit 4  the MCP server could not be started or failed
    │   ├── ServerStartError                  the command could not be spawned
    │   ├── ServerExited                      a live server's output ended before it answered
    │   └── UpstreamTimeout                   a live server did not answer in time
    ├── NothingRecordedError          exit 5  a recording saw no client message: the cassette
    │                                         was left as it was (``record --allow-empty``)
    ├── TestbenchError                exit 2  the testbench was misused (nested, contradictory flags)
    ├── LlmFixtureError               exit 1  an LLM call had no fixture left, or diverged
    ├── ProcessTapeDivergenceError    exit 1  a subprocess call differs from the replayed tape
    └── NetworkDeniedError            exit 1  egress refused (also a ``ConnectionRefusedError``)

Exit codes 0 and 1 stay free for "success" and "the check found a problem" (verify, eval),
and ``record`` exits with the server's own exit code. ``run`` exits 75 (:data:`EX_TEMPFAIL`,
no exception: a run's outcome) when a trial ended as an infrastructure error or nothing was scored.
"""

from __future__ import annotations

import errno
import math
from pathlib import Path


class HarnError(Exception):
    """Base of every deliberate error. ``str(err)`` is one line fit for a terminal."""

    exit_code: int = 2

    def __init__(self, message: str, *, path: str | Path | None = None, where: str | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.where = where
        super().__init__(self.render())

    def render(self) -> str:
        prefix = ""
        if self.path is not None:
            prefix = self.path + (f":{self.where}" if self.where else "") + ": "
        elif self.where:
            prefix = f"{self.where}: "
        return (prefix + self.message).replace("\n", " ")


class UsageError(HarnError):
    exit_code = 2


class CassetteError(HarnError):
    exit_code = 3


class CassetteFormatError(CassetteError):
    pass


class CassetteVersionError(CassetteError):
    pass


class CassetteIntegrityError(CassetteError):
    pass


class CassetteBusyError(CassetteError):
    """Another live process holds the cassette's recording claim; ``holder`` names it when known."""

    def __init__(
        self, message: str, *, path: str | Path | None = None, where: str | None = None, holder: object = None
    ) -> None:
        super().__init__(message, path=path, where=where)
        self.holder = holder
        """The :class:`~harn_mcp_mock.cassette.claim.Holder` of the claim (None when unreadable)."""


class TapeError(HarnError):
    exit_code = 3


class TapeFormatError(TapeError):
    pass


class TapeVersionError(TapeError):
    pass


class TapeIntegrityError(TapeError):
    pass


class PathEscapeError(HarnError):
    exit_code = 2


class OutputError(HarnError, OSError):
    """A file the command was asked to write (``--report``, ``--state-out``, ``--out``...) could
    not be written: one line naming it and why. An ``OSError`` too, with its cause's ``errno`` and
    ``strerror``, so code that handles a failed write still does."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | Path | None = None, cause: OSError | None = None) -> None:
        HarnError.__init__(self, message, path=path)
        self.errno = cause.errno if cause is not None else None
        self.strerror = cause.strerror if cause is not None else message

    def __str__(self) -> str:
        return self.render()


class RedactionPolicyError(HarnError):
    exit_code = 2


class WorldSpecError(HarnError):
    exit_code = 2


class FaultRulesError(HarnError):
    """A fault rules file for ``replay --faults`` is not valid (names the file and the field)."""

    exit_code = 2


class EvalError(HarnError):
    """Input eval cannot use: an unreadable or invalid file, an unknown world, task or fault
    profile, a bad spec, or a ``k`` above some task's number of runs."""

    exit_code = 2


class HarnessStoreError(HarnError):
    """The mock Harness's SQLite file cannot be opened, or is not a Harness store."""

    exit_code = 3


class ServerError(HarnError):
    exit_code = 4


class ServerExited(ServerError):
    """A live server's output ended before it answered what it was asked."""


class UpstreamTimeout(ServerError):
    """A live server did not answer a request within the time allowed (the drivers that
    can go on, e.g. ``verify`` against a live server, catch it and move on)."""


class ServerStartError(ServerError):
    pass


class NothingRecordedError(HarnError):
    """The client sent no message while recording (stdin from /dev/null, a client that never
    spoke, Ctrl-C before it did), or a stdio server none before it failed (a typo in its path):
    an existing cassette is kept unchanged and no new one is written."""

    exit_code = 5


class TestbenchError(HarnError):
    __test__ = False  # not a pytest test class
    exit_code = 2


class LlmFixtureError(HarnError):
    exit_code = 1


class ProcessTapeDivergenceError(HarnError):
    exit_code = 1


class NetworkDeniedError(HarnError, ConnectionRefusedError):
    """Raised instead of connecting: a ``ConnectionRefusedError`` (``OSError``), so libraries handle it."""

    exit_code = 1

    def __init__(self, host: str, port: int | str | None) -> None:
        self.host = host
        self.port = port
        target = f"{host}:{port}" if port is not None else host
        HarnError.__init__(
            self, f"network egress to {target} denied by the testbench (allow it with --allow-host {host})"
        )
        self.errno = errno.ECONNREFUSED
        self.strerror = self.message

    def __str__(self) -> str:
        return self.message


def sole_exception(exc: BaseException) -> BaseException:
    """The one error inside nested exception groups (anyio task groups wrap what their tasks
    raise), so a user sees it and can catch it; ``exc`` itself when it is no group or holds several."""
    leaves: list[BaseException] = []
    pending = [exc]
    while pending:
        current = pending.pop()
        if isinstance(current, BaseExceptionGroup):
            pending.extend(reversed(current.exceptions))
        else:
            leaves.append(current)
    return leaves[0] if len(leaves) == 1 else exc


def check_number(flag: str, value: float, what: str, *, zero: bool = False) -> None:
    """A :class:`UsageError` naming ``flag`` unless ``value`` is a finite number above 0 (or 0
    too, with ``zero``): "must be WHAT, got VALUE". Commands check their numbers with it before
    they read a file or start a server."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise UsageError(f"must be {what}, got {value!r}", where=flag)
