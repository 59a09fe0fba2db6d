"""The options every HTTP surface shares (``replay --http``, ``record --url``, ``protocol serve``):
where to listen, which Origin and Host values to accept, the body limit, the session limits
(docs/http.md); and the live server's options ``record``, ``replay`` and ``verify`` share (its
URL, headers and timeout: a :class:`~harn_mcp_mock.options.LiveTarget`)."""

from __future__ import annotations

from typing import Annotated

import typer

HostOpt = Annotated[
    str, typer.Option("--host", help="HTTP: address to listen on (loopback unless --allow-remote).")
]
PortOpt = Annotated[
    int, typer.Option("--port", help="HTTP: port (0 picks a free one; the URL is stdout's first line).")
]
AllowRemoteOpt = Annotated[bool, typer.Option("--allow-remote", help="HTTP: allow a non-loopback --host.")]
UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="The live server is this Streamable HTTP endpoint, instead of a command after `--` "
        "(`harn mcp mock docs http`).",
    ),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar="NAME:VALUE",
        help="With --url: NAME:VALUE added to every request to the live server (repeatable; redacted).",
    ),
]
AllowOriginOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-origin",
        metavar="ORIGIN",
        help="HTTP: also accept requests with this Origin (scheme://host[:port], repeatable; "
        "* accepts any, unsafe: DNS rebinding). Loopback origins and no Origin always pass.",
    ),
]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="HOST",
        help="HTTP: also accept this Host header (NAME or NAME:PORT, repeatable) on a loopback server.",
    ),
]
MaxBodyOpt = Annotated[
    int | None,
    typer.Option("--max-body-bytes", help="HTTP: refuse request bodies over this size with 413."),
]
IdleTimeoutOpt = Annotated[
    int | None,
    typer.Option(
        "--session-idle-timeout",
        help="With --http: end a session unused for this many seconds (default 3600; 0: never).",
    ),
]
MaxSessionsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-sessions",
        help="With --http: sessions kept at once; the least recently used idle one makes room "
        "(default 1000; 0: no limit).",
    ),
]
LiveTimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait for each answer of the live server.")
]
