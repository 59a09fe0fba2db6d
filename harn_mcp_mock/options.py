"""Options as values: how a cassette is replayed, built once where input arrives (the CLI, the
Python API, the pytest marker) and passed whole, as httpx's ``_config.py`` and vcrpy's merged
config do. Each field declares its CLI flag, so the CLI's start-up fast path and the pytest
marker's option list are derived from here and cannot drift from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from harn_mcp_mock.errors import UsageError, check_number

TYPE_CHECKING = False  # typing's own flag, without importing typing (start-up speed)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypedDict, Unpack

    from mcp.client.session import (
        ElicitationFnT,
        ListRootsFnT,
        LoggingFnT,
        MessageHandlerFnT,
        SamplingFnT,
    )
    from mcp_types import Implementation

    from harn_mcp_mock.faults.rules import FaultRule
    from harn_mcp_mock.replay.engine import Repeat

    class ReplayKeywords(TypedDict, total=False):
        """:class:`ReplayOptions`' fields as keywords, loosely typed: the keyword forms of the
        API (``replay_session(path, repeat="cycle")``), the pytest marker and parsed flags."""

        ignore_paths: Iterable[str] | str
        repeat: str
        strict_order: bool
        latency: str
        redact_policy: str | os.PathLike[str] | None
        faults: str | os.PathLike[str] | Iterable[Mapping[str, Any]] | None
        seed: int
        run_id: str

    class CallbackKeywords(TypedDict, total=False):
        """:class:`ClientCallbacks`' fields as keywords (``replay_session(path, sampling_callback=f)``)."""

        sampling_callback: SamplingFnT | None
        elicitation_callback: ElicitationFnT | None
        list_roots_callback: ListRootsFnT | None
        logging_callback: LoggingFnT | None
        message_handler: MessageHandlerFnT | None
        client_info: Implementation | None

    class SessionKeywords(ReplayKeywords, CallbackKeywords, total=False):
        """The keyword forms of a replay session: its replay options and its client callbacks."""


__all__ = [
    "CALLBACK_NAMES",
    "FAULT_FLAGS",
    "REPEATS",
    "REPLAY_FLAGS",
    "ClientCallbacks",
    "LiveTarget",
    "RecordOptions",
    "ReplayOptions",
    "parse_latency",
    "split_session_keywords",
]

REPEATS = ("last", "cycle", "error")


def parse_latency(value: str) -> float | None:
    """``none`` -> None (never sleep), ``recorded`` -> 1.0, ``scaled:X`` -> X."""
    text = value.strip().lower()
    if text == "none":
        return None
    if text == "recorded":
        return 1.0
    if text.startswith("scaled:"):
        try:
            scale = float(text.removeprefix("scaled:"))
        except ValueError:
            scale = -1.0
        if scale >= 0:
            return scale
    raise UsageError(f"bad latency {value!r}: use none, recorded or scaled:X (X >= 0)", where="--latency")


class _Value:
    """An immutable value compared by its fields (the subclass's ``__slots__``, in order): what
    :class:`ReplayOptions`, :class:`RecordOptions` and :class:`LiveTarget` share."""

    __slots__ = ()

    def _fields(self) -> tuple[str, ...]:
        fields: tuple[str, ...] = type(self).__slots__
        return fields

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: build a new one instead of setting {name}")

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields())
        return f"{type(self).__name__}({inner})"


class ReplayOptions(_Value):
    """How requests are matched and answered (the same for stdio, HTTP and in-memory replay).

    Immutable and compared by value. (A plain slotted class, not a dataclass: this module is on
    replay's start-up path, where each dataclass costs a few hundred microseconds.)
    """

    __slots__ = (
        "fault_rules",
        "faults",
        "ignore_paths",
        "latency",
        "redact_policy",
        "repeat",
        "run_id",
        "seed",
        "strict_order",
    )

    ignore_paths: tuple[str, ...]
    """JSON pointers left out of request matching (``--ignore-path``, repeatable)."""
    repeat: Repeat
    """What a request that used up its recordings gets: ``last``, ``cycle`` or ``error``."""
    strict_order: bool
    """Answer only in the recorded order."""
    latency: str
    """``none``, ``recorded`` or ``scaled:X``."""
    redact_policy: Path | None
    """The redaction policy file the cassette was recorded with (default: the built-in one)."""
    faults: str | tuple[Any, ...] | None
    """Fault rules to fire (``--faults``): a rules file's path, or the rules themselves (JSON
    objects, from the API or the pytest marker). docs/faults.md."""
    seed: int
    """The faults' seed (``--seed``): with the same calls, the same seed fires the same faults."""
    run_id: str
    """Keys the faults' probabilities with the seed (``--run-id``), as worlds do."""
    fault_rules: tuple[FaultRule, ...]
    """``faults``, read and checked (not part of the value: derived from ``faults``)."""

    def __init__(
        self,
        ignore_paths: tuple[str, ...] = (),
        repeat: Repeat = "last",
        strict_order: bool = False,
        latency: str = "none",
        redact_policy: Path | None = None,
        faults: str | tuple[Any, ...] | None = None,
        seed: int = 0,
        run_id: str = "run",
    ) -> None:
        if repeat not in REPEATS:
            raise UsageError(f"bad repeat {repeat!r}: use last, cycle or error", where="--repeat")
        parse_latency(latency)  # a bad value is a one-line error now, where it came in
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UsageError(f"bad seed {seed!r}: use an integer", where="--seed")
        rules: tuple[FaultRule, ...] = ()
        if faults is not None:  # checked now: a bad rule is one error naming the file and field
            from harn_mcp_mock.faults.rules import load_rules, parse_rules

            rules = tuple(
                load_rules(faults) if isinstance(faults, str) else parse_rules(_thawed(faults), name="faults")
            )
        set_ = object.__setattr__
        set_(self, "ignore_paths", ignore_paths)
        set_(self, "repeat", repeat)
        set_(self, "strict_order", strict_order)
        set_(self, "latency", latency)
        set_(self, "redact_policy", redact_policy)
        set_(self, "faults", faults)
        set_(self, "seed", seed)
        set_(self, "run_id", str(run_id))
        set_(self, "fault_rules", rules)

    def _fields(self) -> tuple[str, ...]:
        return self.names()

    @classmethod
    def build(
        cls, options: ReplayOptions | None = None, /, **keywords: Unpack[ReplayKeywords]
    ) -> ReplayOptions:
        """From loosely typed input (keywords of the API, a marker, parsed flags), laid over
        ``options`` (default: the defaults). ``faults``: a rules file's path, or a list of rules
        (JSON objects). An unknown keyword is a TypeError, as for any function."""
        unknown = sorted(set(keywords) - set(cls.names()))
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
        if options is not None and not keywords:
            return options
        given: dict[str, Any] = (
            {} if options is None else {name: getattr(options, name) for name in cls.names()}
        )
        given.update(keywords)
        ignore_paths = given.get("ignore_paths", ())
        ignore = (ignore_paths,) if isinstance(ignore_paths, str) else tuple(ignore_paths)
        redact_policy = given.get("redact_policy")
        policy = Path(redact_policy) if redact_policy is not None else None
        faults = given.get("faults")
        rules: str | tuple[Any, ...] | None
        if faults is None or isinstance(faults, str):
            rules = faults
        elif isinstance(faults, os.PathLike):
            rules = os.fspath(faults)
        else:
            rules = _frozen(list(faults))
        return cls(
            ignore,
            given.get("repeat", "last"),
            bool(given.get("strict_order", False)),
            str(given.get("latency", "none")),
            policy,
            rules,
            given.get("seed", 0),
            str(given.get("run_id", "run")),
        )

    @staticmethod
    def names() -> tuple[str, ...]:
        """The option names, in order (the pytest marker and the API take them as keywords)."""
        return (
            "ignore_paths",
            "repeat",
            "strict_order",
            "latency",
            "redact_policy",
            "faults",
            "seed",
            "run_id",
        )


def _frozen(value: Any) -> Any:
    """JSON made hashable (tuples for lists, sorted item tuples for objects) and back again by
    :func:`_thawed`: a ReplayOptions holding inline rules is still a hashable value."""
    if isinstance(value, dict):
        return ("__object__", tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "__object__":
        return {k: _thawed(v) for k, v in value[1]}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


class RecordOptions(_Value):
    """How a live server is recorded (stdio or ``--url``), built once where input arrives. The
    live server itself (its command, or its URL and headers) is a :class:`LiveTarget`.

    Immutable and compared by value, like :class:`ReplayOptions`.
    """

    __slots__ = ("allow_empty", "grace", "redact_policy")

    redact_policy: Path | None
    """The redaction policy file (default: the built-in one)."""
    grace: float
    """Seconds a stdio server gets to exit after its input closes (``--shutdown-timeout``)."""
    allow_empty: bool
    """Write the cassette even when the client sent nothing (``--allow-empty``)."""

    def __init__(
        self,
        redact_policy: str | os.PathLike[str] | None = None,
        grace: float = 5.0,
        allow_empty: bool = False,
    ) -> None:
        if not 0 <= grace < float("inf"):  # inf overflowed the clock only at the end of the session
            raise UsageError(f"bad shutdown timeout {grace!r}: use seconds >= 0", where="--shutdown-timeout")
        policy = Path(redact_policy) if redact_policy is not None else None
        for name, value in zip(self.__slots__, (bool(allow_empty), float(grace), policy), strict=True):
            object.__setattr__(self, name, value)


def parse_header_option(text: str) -> tuple[str, str]:
    """``"K:V"`` (as given to ``--header``) -> ``("K", "V")``."""
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        # Never quoted: the text may be a secret with its ':' forgotten (`X-Key=value`).
        raise UsageError("bad header (no 'NAME:' before the value): use NAME:VALUE", where="--header")
    return name.strip(), value.strip()


class LiveTarget(_Value):
    """The live server a session reaches: a stdio ``command`` (its argv) or a Streamable HTTP
    ``url`` with ``headers`` (``NAME:VALUE``, secrets to the redactor), and how long it may stay
    silent (``timeout``, seconds). What ``record``, ``replay`` in the modes that record and
    the episodes' live side take, built once where input arrives (the CLI, the Python API,
    the pytest marker). Immutable and compared by value, like :class:`ReplayOptions`."""

    __slots__ = ("command", "headers", "timeout", "url")

    command: tuple[str, ...]
    url: str | None
    headers: tuple[str, ...]
    timeout: float

    def __init__(
        self,
        command: Iterable[str] = (),
        url: str | None = None,
        headers: Iterable[str] = (),
        timeout: float = 30.0,
    ) -> None:
        if isinstance(command, str | bytes):  # one string is not an argv (its letters would be)
            raise UsageError("the live server's command is a list, e.g. ['python', 'server.py']")
        argv = tuple(str(arg) for arg in command)
        given = tuple(headers)
        check_number("--timeout", timeout, "a number of seconds above 0")
        if argv and url is not None:
            raise UsageError(
                "give the live server once: its command after `--`, or --url, not both", where="--url"
            )
        if given and url is None:
            raise UsageError("--header applies to --url only", where="--header")
        for header in given:
            parse_header_option(header)  # a bad one fails here, where it was given
        for name, value in zip(self.__slots__, (argv, given, float(timeout), url), strict=True):
            object.__setattr__(self, name, value)

    @classmethod
    def of(
        cls, live: LiveTarget | Iterable[str] | str, *, headers: Iterable[str] = (), timeout: float = 30.0
    ) -> LiveTarget:
        """``live`` as a target: itself, a URL (a ``str``) with ``headers``, or a command."""
        if isinstance(live, LiveTarget):
            return live
        if isinstance(live, str):
            return cls(url=live, headers=headers, timeout=timeout)
        return cls(command=live, headers=headers, timeout=timeout)

    def __bool__(self) -> bool:
        """True when a live server is given."""
        return bool(self.command) or self.url is not None

    @property
    def argv(self) -> list[str]:
        """What starts (or names) the live server, as a recording's command line holds it
        before redaction: the command, or ``--url URL`` and its ``--header`` options."""
        if self.url is None:
            return list(self.command)
        return ["--url", self.url, *(x for h in self.headers for x in ("--header", h))]

    def header_map(self) -> dict[str, str]:
        """The headers as a name -> value mapping."""
        return dict(parse_header_option(h) for h in self.headers)


FAULT_FLAGS: dict[str, tuple[str, str]] = {
    "--faults": ("faults", "str"),
    "--seed": ("seed", "int"),
    "--run-id": ("run_id", "str"),
}
"""The fault flags replay and world share (replay's ``--faults`` is a rules file, a world's a
profile of its spec; both use the seed and run id the same way)."""

REPLAY_FLAGS: dict[str, tuple[str, str]] = {
    "--ignore-path": ("ignore_paths", "list"),
    "--repeat": ("repeat", "str"),
    "--strict-order": ("strict_order", "flag"),
    "--latency": ("latency", "str"),
    "--redact-policy": ("redact_policy", "path"),
    **FAULT_FLAGS,
}
"""CLI flag -> (:class:`ReplayOptions` field, kind: ``str``, ``path``, ``flag`` or ``list``); the
fast path's table for ``replay`` is built from it (a test checks it names every field)."""


class ClientCallbacks:
    """What the ``mcp`` client session answers the server with (sampling, elicitation, roots)
    and is told (log messages, every other message), and the client's own name: declared once,
    handed whole to the session (:func:`harn_mcp_mock.api.session_over`)."""

    __slots__ = (
        "client_info",
        "elicitation_callback",
        "list_roots_callback",
        "logging_callback",
        "message_handler",
        "sampling_callback",
    )

    def __init__(
        self,
        sampling_callback: SamplingFnT | None = None,
        elicitation_callback: ElicitationFnT | None = None,
        list_roots_callback: ListRootsFnT | None = None,
        logging_callback: LoggingFnT | None = None,
        message_handler: MessageHandlerFnT | None = None,
        client_info: Implementation | None = None,
    ) -> None:
        self.sampling_callback = sampling_callback
        self.elicitation_callback = elicitation_callback
        self.list_roots_callback = list_roots_callback
        self.logging_callback = logging_callback
        self.message_handler = message_handler
        self.client_info = client_info


CALLBACK_NAMES = ClientCallbacks.__slots__
"""The keywords of :class:`ClientCallbacks` (the API's and the pytest fixture's keyword forms)."""


def split_session_keywords(
    keywords: Mapping[str, Any], callbacks: ClientCallbacks | None = None
) -> tuple[ReplayKeywords, ClientCallbacks]:
    """A replay session's keyword forms (:class:`SessionKeywords`), split: the replay options'
    keywords, and the client callbacks (laid over ``callbacks``)."""
    given = {name: keywords[name] for name in CALLBACK_NAMES if name in keywords}
    rest: Any = {name: value for name, value in keywords.items() if name not in given}
    if callbacks is not None:
        given = {name: getattr(callbacks, name) for name in CALLBACK_NAMES} | given
    return rest, ClientCallbacks(**given)
