"""A short, human-readable account of what a cassette holds (``harn mcp mock show``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from harn_mcp_mock.cassette.model import Cassette
from harn_mcp_mock.cassette.unanswered import describe_unanswered, how_it_ended, unanswered_requests


def summarise(cassette: Cassette) -> dict[str, Any]:
    methods: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    errors = 0
    server_requests: Counter[str] = Counter()
    notifications: Counter[str] = Counter()
    latencies: list[float] = []
    for msg in cassette.messages:
        items = msg.message if isinstance(msg.message, list) else [msg.message]
        for item in items:
            if not isinstance(item, dict):
                continue
            method = item.get("method")
            if isinstance(method, str):
                if "id" not in item:
                    notifications[method] += 1
                elif msg.direction == "client":
                    methods[method] += 1
                    if method == "tools/call":
                        params = item.get("params") or {}
                        tools[str(params.get("name"))] += 1
                else:
                    server_requests[method] += 1
            elif "error" in item:
                errors += 1
        if isinstance(msg.latency_ms, int | float) and msg.direction == "server":
            latencies.append(float(msg.latency_ms))
    latencies.sort()
    server = cassette.server
    return {
        "path": str(cassette.path) if cassette.path else None,
        "complete": cassette.complete,
        "command": cassette.meta.get("command"),
        "server": server.get("serverInfo"),
        "handshake": server.get("handshake"),
        "protocol_version": server.get("protocolVersion") or _newest(server.get("supportedVersions")),
        "messages": len(cassette.messages),
        "invalid": sum(1 for m in cassette.messages if m.invalid is not None),
        "client_requests": dict(sorted(methods.items())),
        "tool_calls": dict(sorted(tools.items())),
        "server_requests": dict(sorted(server_requests.items())),
        "notifications": dict(sorted(notifications.items())),
        "errors": errors,
        "latency_ms_p50": latencies[len(latencies) // 2] if latencies else None,
        "redaction": cassette.meta.get("redaction"),
        "exit": cassette.meta.get("exit"),
        "unanswered": [u.to_dict() for u in unanswered_requests(cassette)],
    }


def _newest(versions: Any) -> str | None:
    if isinstance(versions, list) and versions:
        return str(max(versions))
    return None


def render_summary(summary: dict[str, Any], *, as_json: bool = False) -> str:
    if as_json:
        return orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode() + "\n"
    server = summary["server"] or {}
    lines = [
        f"cassette   {summary['path']}{'' if summary['complete'] else '  (unfinished recording)'}",
        f"server     {server.get('name', '?')} {server.get('version', '')}".rstrip(),
        f"handshake  {summary['handshake']} (protocol {summary['protocol_version']})"
        if summary["handshake"]
        else "handshake  none answered",
        f"command    {' '.join(summary['command'] or [])}",
        f"messages   {summary['messages']} ({summary['invalid']} invalid, {summary['errors']} JSON-RPC errors)",
    ]

    def table(title: str, counts: dict[str, int]) -> None:
        if counts:
            lines.append(f"{title}")
            lines.extend(f"  {count:>5}  {name}" for name, count in counts.items())

    table("client requests", summary["client_requests"])
    table("tool calls", summary["tool_calls"])
    table("server requests", summary["server_requests"])
    table("notifications", summary["notifications"])
    redaction = summary["redaction"] or {}
    findings = redaction.get("findings") or {}
    found = ", ".join(f"{k}={v}" for k, v in findings.items()) or "none found"
    lines.append(f"redaction  {redaction.get('policy')} {redaction.get('digest', '')[:20]}... ({found})")
    exit_info = summary["exit"] or {}
    lines.append(
        f"exit       code={exit_info.get('code')} signal={exit_info.get('signal')} ({exit_info.get('reason')})"
    )
    if summary["unanswered"]:
        lines.append(f"unanswered {len(summary['unanswered'])} request(s): {how_it_ended(exit_info)} first")
        lines.extend(f"  seq {u['seq']:>3}  {describe_unanswered(u)}" for u in summary["unanswered"])
    return "\n".join(lines) + "\n"
