"""Budgets: what each trial's agent spent, a cap per trial and a cap per run.

A command agent (or the scripted LLM endpoint it talks to, ``harn mcp mock llm``) writes one JSON
line per model call to ``HARN_USAGE_FILE``: ``{"input_tokens": 812, "output_tokens": 95,
"cost_usd": 0.0031}`` (any field may be missing, not all). That path is the trial's **usage
channel**, a FIFO the runner makes in its private folder and reads as lines arrive
(:class:`UsageChannel`), so the sum is the runner's own: an agent cannot truncate, rewrite or swap
what it already reported, and nothing it does there can block the runner. Lines are read
strictly (:class:`UsageReader`): a line that is not a JSON object of counts (a string, a
negative, NaN, an unknown shape, longer than 4096 bytes, torn by the agent's death) and usage past
1 MiB make the trial's usage *invalid*: recorded as ``usage_invalid`` and never a pass.

The trial's sum goes into its record when it ends (``trial.json``, and ``usage`` in its
``state.json`` and ``report.json``), and a trial over ``--max-tokens`` (input plus output) or
``--max-cost`` is marked ``over_budget`` (the reason), and a trial that reported no usage at all
under such a limit ``usage_unknown`` (its spending cannot be judged); eval scores both as a
failure whatever the final state; each run judges the recorded usage again by its own budget. ``--run-max-cost`` stops scheduling once
the finished trials have spent it; the same command with a larger cap resumes. An in-process
agent's :func:`report_usage` appends to a file of its trial instead (trusted code in the runner's
process), read with the same rules. ``docs/eval.md`` has the worked example.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import math
import os
import select
import stat
import threading
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harn_mcp_mock.errors import UsageError

__all__ = [
    "USAGE_BYTES_MAX",
    "USAGE_FILE",
    "USAGE_LINE_MAX",
    "Budget",
    "Usage",
    "UsageChannel",
    "UsageReader",
    "channel_path",
    "endpoint_base",
    "llm_usage",
    "read_usage",
    "record_usage",
    "report_usage",
    "route_of",
    "trial_usage",
    "usage_file",
    "write_usage_line",
]

USAGE_FILE: Final = "usage.ndjson"
"""An in-process agent's usage file, in its trial's folder."""
USAGE_LINE_MAX: Final = 4096
"""Bytes of one usage line with its newline: one write no longer than ``PIPE_BUF``, so lines of
parallel writers never interleave."""
USAGE_BYTES_MAX: Final = 1 << 20
"""Bytes of usage a trial may report (thousands of model calls); past it, its usage is invalid."""
_COUNTS: Final = ("input_tokens", "output_tokens", "cost_usd")
_CURRENT: ContextVar[Path | None] = ContextVar("harn_usage_file", default=None)


@contextlib.contextmanager
def usage_file(path: Path) -> Iterator[None]:
    """Within this block (and the tasks it starts), :func:`report_usage` appends to ``path``:
    how an in-process agent's trial gets its own usage file."""
    token = _CURRENT.set(path)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def report_usage(input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0) -> bool:
    """Report one model call's usage for the current trial: to the in-process trial's usage
    file, else to ``HARN_USAGE_FILE`` (a command agent's usage channel). False when there is
    nowhere to write: outside a run, or after the trial ended (never blocks). A count that is
    not a whole number of at least 0, or a cost that is not a finite number of at least 0, is a
    ``ValueError`` (the runner would take the line as invalid)."""
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if type(value) is not int or value < 0:
            raise ValueError(f"{name} must be a whole number of at least 0, got {value!r}")
    if _cost(cost_usd) is None:
        raise ValueError(f"cost_usd must be a finite number of at least 0, got {cost_usd!r}")
    line = {"input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost_usd}
    own = _CURRENT.get()
    if own is not None:
        return write_usage_line(own, line, create=True)
    target = os.environ.get("HARN_USAGE_FILE")
    if not target:
        return False
    return write_usage_line(target, line)


def write_usage_line(
    target: str | os.PathLike[str], record: Mapping[str, Any], *, create: bool = False
) -> bool:
    """Append ``record`` as one JSON line to ``target`` in a single write (the runner's usage
    channel or a file): True when written. Opened without blocking, so a writer after the trial
    ended fails at once (no reader: ENXIO; removed: ENOENT) and gets False; ``create``: make a
    missing file (a usage file of one's own, never the runner's channel)."""
    data = (json.dumps(dict(record), separators=(", ", ": ")) + "\n").encode()
    if len(data) > USAGE_LINE_MAX:
        raise ValueError(f"a usage line is longer than {USAGE_LINE_MAX} bytes")
    flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(target, flags, 0o600)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ENOENT):
            return False
        raise
    try:
        os.set_blocking(fd, True)  # a full pipe waits for the runner's reader, which always reads
        while data:
            data = data[os.write(fd, data) :]
    except BrokenPipeError:  # the runner closed the channel meanwhile: the trial ended
        return False
    finally:
        os.close(fd)
    return True


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    """Lines summed (one per model call)."""
    invalid: int = 0
    """Invalid lines (and usage past the cap): the trial's usage cannot be trusted, never a pass."""
    invalid_reason: str | None = None
    """The first invalid line's problem (``line 2: "input_tokens" is "5000", ...``)."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def problem(self) -> str | None:
        """Why the trial's usage is invalid (its ``usage_invalid``), None when it is valid."""
        if not self.invalid and self.invalid_reason is None:
            return None
        more = self.invalid - 1
        return f"{self.invalid_reason or 'invalid usage'}" + (
            f" (and {more} more invalid)" if more > 0 else ""
        )

    @property
    def reported(self) -> bool:
        """Whether the trial reported anything (a line summed or an invalid one)."""
        return bool(self.calls or self.problem)

    def plus(self, other: Usage) -> Usage:
        """Both sums in one (a trial's channel and its LLM endpoint's ledger); invalid when
        either is, with the first reason."""
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
            self.calls + other.calls,
            self.invalid + other.invalid,
            self.invalid_reason if self.invalid_reason is not None else other.invalid_reason,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 10),
            "calls": self.calls,
            **({"invalid_lines": self.invalid, "invalid": self.invalid_reason} if self.problem else {}),
        }

    @classmethod
    def from_dict(cls, doc: Any) -> Usage:
        """A ``usage`` as :meth:`to_dict` wrote it into ``trial.json``; one that is not is invalid
        usage (the record was changed after the runner wrote it)."""
        if not isinstance(doc, dict):
            return cls(invalid=1, invalid_reason="the trial record's usage is not an object")
        counts = [doc.get(key, 0) for key in ("input_tokens", "output_tokens", "calls", "invalid_lines")]
        cost = _cost(doc.get("cost_usd", 0))
        reason = doc.get("invalid")
        if (
            any(type(n) is not int or n < 0 for n in counts)
            or cost is None
            or not isinstance(reason, (str, type(None)))
        ):
            return cls(invalid=1, invalid_reason="the trial record's usage is malformed")
        return cls(counts[0], counts[1], cost, counts[2], counts[3] or int(reason is not None), reason)


def _cost(value: Any) -> float | None:
    """``value`` as a cost: a finite JSON number of at least 0, else None."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        return None
    return float(value)


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except ValueError:
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class UsageReader:
    """Sums usage lines strictly as their bytes arrive (:meth:`feed`), in bounded memory.

    Each line must be a JSON object with at least one of ``input_tokens``, ``output_tokens``
    (whole numbers of at least 0) and ``cost_usd`` (a finite number of at least 0), and no longer
    than :data:`USAGE_LINE_MAX` bytes with its newline; other keys are allowed, blank lines carry
    nothing. Anything else is invalid, counted with the first reason; bytes past ``limit`` are
    dropped and make the usage invalid; a last line without its newline (:meth:`finish`) is torn."""

    def __init__(self, limit: int = USAGE_BYTES_MAX) -> None:
        self._limit = limit
        self._taken = 0
        self._partial = bytearray()
        self._long = False
        """Inside a line already found too long: its bytes are dropped up to its newline."""
        self._over = False
        self._line = 0
        self._input = self._output = self._calls = self._invalid = 0
        self._cost = 0.0
        self._reason: str | None = None

    def feed(self, data: bytes) -> None:
        if self._over:
            return
        room = self._limit - self._taken
        if len(data) > room:
            self._take(data[:room])
            self._taken = self._limit
            self._over = True
            self._bad(f"more than {self._limit} bytes of usage")
            return
        self._taken += len(data)
        self._take(data)

    def finish(self) -> Usage:
        """The sum; a last line without its newline (the writer died mid-line) is invalid."""
        if self._partial.strip() and not self._over:
            self._line += 1
            self._bad(f"line {self._line}: torn (no newline at its end when the trial ended)")
        self._partial.clear()
        return Usage(self._input, self._output, self._cost, self._calls, self._invalid, self._reason)

    def _bad(self, reason: str) -> None:
        self._invalid += 1
        if self._reason is None:
            self._reason = reason

    def _take(self, data: bytes) -> None:
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._long:
                pass  # the rest of a line already counted as too long
            elif len(self._partial) + len(piece) + 1 > USAGE_LINE_MAX:
                self._line += 1
                self._bad(f"line {self._line}: longer than {USAGE_LINE_MAX} bytes")
                self._long = True
                self._partial.clear()
            elif end < 0:
                self._partial += piece
            else:
                self._line += 1
                self._parse(bytes(self._partial + piece))
                self._partial.clear()
            if end < 0:
                return
            self._long = False
            start = end + 1

    def _parse(self, raw: bytes) -> None:
        if not raw.strip():
            self._line -= 1  # a blank line reports nothing and is not counted
            return
        where = f"line {self._line}"
        try:
            doc = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return self._bad(f"{where}: not UTF-8")
        except (ValueError, RecursionError):
            return self._bad(f"{where}: not JSON")
        if not isinstance(doc, dict):
            return self._bad(f"{where}: not a JSON object")
        if not any(key in doc for key in _COUNTS):
            return self._bad(f"{where}: has none of input_tokens, output_tokens, cost_usd")
        counts = []
        for key in ("input_tokens", "output_tokens"):
            value = doc.get(key, 0)
            if type(value) is not int or value < 0:
                return self._bad(f'{where}: "{key}" is {_shown(value)}, not a whole number of at least 0')
            counts.append(value)
        cost = _cost(doc.get("cost_usd", 0))
        if cost is None:
            return self._bad(
                f'{where}: "cost_usd" is {_shown(doc["cost_usd"])}, not a finite number of at least 0'
            )
        self._input += counts[0]
        self._output += counts[1]
        self._cost += cost
        self._calls += 1
        return None


def read_usage(path: Path, *, limit: int = USAGE_BYTES_MAX) -> Usage | None:
    """The strict sum (:class:`UsageReader`) of a usage file of an in-process trial (None when
    there is no file). A file that is not a regular one is invalid usage."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Usage(invalid=1, invalid_reason=f"the usage file cannot be read: {exc.strerror or exc}")
    reader = UsageReader(limit)
    with os.fdopen(fd, "rb", buffering=0) as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Usage(invalid=1, invalid_reason="the usage file is not a regular file")
        taken = 0
        while taken <= limit and (data := file.read(1 << 16)):
            reader.feed(data)
            taken += len(data)
    return reader.finish()


def channel_path(folder: str, token: str) -> str:
    """Where a trial's usage channel is: named by the trial's token in the runner's private
    folder (beside its ``HARN_MCP_CONFIG`` file)."""
    return os.path.join(folder, f"{token}.usage")


_FINAL_DRAIN = 1 << 22
"""Bytes read at most once a channel closes (what its pipe holds): a writer that escaped the
trial and writes on cannot keep the runner reading."""


class UsageChannel:
    """A trial's usage channel: a FIFO the runner makes (:meth:`open`), whose path the agent gets
    as ``HARN_USAGE_FILE``, read by a thread of the runner as lines arrive, strictly
    (:class:`UsageReader`), capped at ``limit`` bytes (the rest is drained and dropped, so a
    writer never waits on a full pipe for long). :meth:`close`, once the agent's processes are
    gone, removes the path, reads what is left and returns the sum.

    The runner holds a write end of its own, so the reader never sees end of file while the trial
    runs, and opens nothing by path after :meth:`open`: an agent that removes the FIFO, puts a
    file or a FIFO of its own there, or never writes, cannot make it wait, and what it reported
    before stays counted. The FIFO's mode is ``0200`` once the runner opened it (write only)."""

    def __init__(self, path: str, *, limit: int = USAGE_BYTES_MAX) -> None:
        self.path = path
        self._reader = UsageReader(limit)
        self._fds: list[int] = []
        self._made = False
        self._stop_w = -1
        self._thread: threading.Thread | None = None
        self._usage: Usage | None = None

    def open(self) -> UsageChannel:
        os.mkfifo(self.path, 0o600)
        self._made = True
        try:
            nofollow = getattr(os, "O_NOFOLLOW", 0)
            read = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow)
            self._fds.append(read)
            self._fds.append(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow))
            if not stat.S_ISFIFO(os.fstat(read).st_mode):
                raise OSError(errno.EEXIST, "not the FIFO the runner made", self.path)
            os.chmod(self.path, 0o200)
            stop_r, self._stop_w = os.pipe()
            self._fds += [stop_r, self._stop_w]
            self._thread = threading.Thread(
                target=self._run, args=(read, stop_r), name="harn-usage", daemon=True
            )
            self._thread.start()
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> UsageChannel:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, read: int, stop_r: int) -> None:
        poller = select.poll()
        poller.register(read, select.POLLIN)
        poller.register(stop_r, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            self._drain(read, None if stop_r in ready else USAGE_BYTES_MAX)
            if stop_r in ready:
                return

    def _drain(self, read: int, most: int | None) -> None:
        """Read what the pipe holds now (up to ``most`` bytes; at the end: :data:`_FINAL_DRAIN`)."""
        left = _FINAL_DRAIN if most is None else most
        while left > 0:
            try:
                data = os.read(read, 1 << 16)
            except BlockingIOError:
                return
            if not data:  # no writer left (cannot happen while the runner holds its own)
                return
            left -= len(data)
            self._reader.feed(data)

    def close(self) -> Usage:
        """Remove the channel's path (a writer after this finds nothing, at once), read what its
        pipe holds, close it; the trial's usage (a line left without its newline is torn)."""
        if self._usage is not None:
            return self._usage
        with contextlib.suppress(OSError):
            if self._made:  # whatever is at the path now (the FIFO, or what an agent put there)
                os.unlink(self.path)
        if self._thread is not None:
            os.write(self._stop_w, b"\0")
            self._thread.join()  # it only reads what is already there: no wait on a writer
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []
        self._usage = self._reader.finish()
        return self._usage


# --- an LLM endpoint serving every trial (run --llm URL) ---------------------------------------


def route_of(secret: str) -> str:
    """The route of a trial whose runner holds ``secret`` on a ``harn mcp mock llm`` serving every
    trial (``HARN_LLM_URL`` = ``URL/t/<route>/v1``): a digest of it (32 URL-safe characters), so
    the route tells nothing of the secret that takes its usage (:func:`llm_usage`)."""
    digest = hashlib.sha256(b"harn-llm-route\0" + secret.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:32]


def endpoint_base(url: str) -> str:
    """An endpoint's URL without its ``/v1`` and trailing slash: where ``/t/<route>/v1`` goes."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def take_usage(endpoint: str, secret: str, *, timeout: float = 10.0) -> bytes:
    """The usage lines of the route ``route_of(secret)`` on the endpoint (``http://HOST:P``, with
    or without ``/v1``), taken from its ledger (once: a second take is refused). ``OSError``
    when the endpoint cannot be reached or refuses (``HTTP 409: ...``)."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{endpoint_base(endpoint)}/harn/usage/{secret}", b"", method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # straight to it, no proxy
    try:
        with opener.open(request, timeout=timeout) as answer:
            data: bytes = answer.read()
    except urllib.error.HTTPError as exc:
        with exc:  # its response, closed
            raise OSError(f"HTTP {exc.code}: {exc.reason}") from None
    return data


def llm_usage(endpoint: str, secret: str) -> Usage:
    """What a trial's model calls spent on its route of the endpoint, taken once its agent has
    ended and read by the channel's strict rules (:class:`UsageReader`); invalid when the endpoint
    cannot give it (down, or the ledger already taken): the trial's spending is then not known."""
    try:
        data = take_usage(endpoint, secret)
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc
        return Usage(invalid=1, invalid_reason=f"the LLM endpoint's usage could not be taken: {reason}")
    reader = UsageReader()
    reader.feed(data)
    return reader.finish()


def trial_usage(usage: Usage | None) -> dict[str, Any]:
    """The fields of ``trial.json`` for the trial's usage: ``usage`` when it reported any, and
    ``usage_invalid`` (why it cannot pass) when a line was invalid."""
    if usage is None or not usage.reported:
        return {}
    return {"usage": usage.to_dict(), **({"usage_invalid": usage.problem} if usage.problem else {})}


def record_usage(record: Mapping[str, Any]) -> Usage | None:
    """A trial's usage from its record (:func:`trial_usage`), None when it reported none."""
    doc = record.get("usage")
    if doc is None:
        return None
    return Usage.from_dict(doc)


@dataclass(frozen=True, slots=True)
class Budget:
    """``--max-tokens``, ``--max-cost`` (per trial) and ``--run-max-cost`` (per run)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    run_max_cost: float | None = None

    def __post_init__(self) -> None:
        for flag, value in (
            ("--max-tokens", self.max_tokens),
            ("--max-cost", self.max_cost),
            ("--run-max-cost", self.run_max_cost),
        ):
            if value is not None and (_cost(value) is None or value <= 0):
                raise UsageError(f"must be a number above 0, got {value!r}", where=flag)

    @property
    def per_trial(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def over(self, usage: Usage | None) -> str | None:
        """Why a trial with this usage is over budget (None: within it, or no limit)."""
        if usage is None:
            return None
        if self.max_tokens is not None and usage.tokens > self.max_tokens:
            return f"{usage.tokens} tokens > --max-tokens {self.max_tokens}"
        if self.max_cost is not None and usage.cost_usd > self.max_cost:
            return f"${usage.cost_usd:.4f} > --max-cost ${self.max_cost:g}"
        return None

    def unknown(self, usage: Usage | None) -> str | None:
        """Why a trial's spending cannot be judged against this budget (its ``usage_unknown``:
        never a pass): a per-trial limit is set and the trial reported no usage at all. None when
        it reported some (valid or not) or there is no per-trial limit."""
        if not self.per_trial or (usage is not None and usage.reported):
            return None
        limits = [
            *([f"--max-tokens {self.max_tokens}"] if self.max_tokens is not None else []),
            *([f"--max-cost ${self.max_cost:g}"] if self.max_cost is not None else []),
        ]
        return f"no usage reported: {' and '.join(limits)} cannot be judged"
