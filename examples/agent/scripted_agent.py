"""A deterministic scripted agent for the shipped worlds: a plain `mcp` client driving
`harn mcp mock world` as its stdio server.

It plays a task's reference solution (from the spec) the way a real agent would, in one of four
styles:

- ``good``: lists the tools first; retries rate-limited and unavailable calls (honouring
  ``retry_after_ms`` on the virtual clock: it never sleeps); when a call's outcome is unknown
  (a timeout) it retries an idempotent tool, but for a tool that is not idempotent it re-reads
  the state first and sends the call again only if the write did not happen (so a ghost success
  is not applied twice); it repeats an idempotent write that failed, since it may have been
  half applied; it re-reads a read whose answer broke its output schema; and after
  ``notifications/tools/list_changed`` (or an "invalid arguments" refusal) it lists the tools
  again and adapts its arguments to the new input schema.
- ``bad``: the same careful mechanics, but it makes the task's typical mistake (see
  ``MISTAKES``): touches an unrelated item, deletes too much, does steps in the wrong order or
  skips one.
- ``naive``: follows the reference but retries every failed request blindly (a timeout
  included, so a ghost success is applied twice), gives up on tool errors, and never lists
  the tools again.
- ``flaky``: ``good`` or ``bad`` by a deterministic coin, BLAKE3 of (seed, run id).

``play(...)`` runs one episode and returns the path of the world's final state file (the report
is written beside it). Every await is bounded by ``anyio.fail_after``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from blake3 import blake3
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

from harn_mcp_mock.shipped import resolve_spec

Style = Literal["good", "bad", "flaky", "naive"]
STYLES: tuple[str, ...] = ("good", "bad", "flaky", "naive")
HARN = [sys.executable, "-m", "harn_mcp_mock"]
STEP_TIMEOUT_S = 10  # one request, wall clock: the world answers in milliseconds
EPISODE_TIMEOUT_S = 60
MAX_ATTEMPTS = 6
TIMED_OUT = -32001

Call = tuple[str, dict[str, Any]]


# -- what each world's agent knows beyond the reference ------------------------------------------

WITNESSES: dict[tuple[str, str], Callable[[dict[str, Any]], Call]] = {
    # For tools that are not idempotent: the read that shows whether a call took effect.
    ("tickets", "create_ticket"): lambda a: ("list_tickets", {}),
    ("tickets", "add_comment"): lambda a: ("get_ticket", {"ticket_id": a["ticket_id"]}),
    ("bank", "transfer"): lambda a: (
        "list_transfers",
        {"from_account": a["from_account"], "to_account": a["to_account"]},
    ),
    ("support", "add_comment"): lambda a: ("get_ticket", {"ticket_id": a["ticket_id"]}),
    ("support", "refund"): lambda a: (
        "list_transfers",
        {"from_account": "A-900", "to_account": a["to_account"]},
    ),
}


@dataclass(frozen=True, slots=True)
class Mistake:
    """What the ``bad`` style does instead of the reference, and how the run should fail."""

    what: str
    plan: Callable[[list[Call]], list[Call]]
    collateral: tuple[str, ...] = ()
    """Paths the report must list as collateral."""
    goal_fails: bool = False
    forbidden: bool = False


def _plus(*extra: Call) -> Callable[[list[Call]], list[Call]]:
    return lambda ref: [*ref, *extra]


def _drop_last(n: int) -> Callable[[list[Call]], list[Call]]:
    return lambda ref: ref[:-n]


def _swap_last_two(ref: list[Call]) -> list[Call]:
    return [*ref[:-2], ref[-1], ref[-2]]


def _replace_last(call: Call) -> Callable[[list[Call]], list[Call]]:
    return lambda ref: [*ref[:-1], call]


MISTAKES: dict[tuple[str, str], Mistake] = {
    ("tickets", "close-login-bug"): Mistake(
        "also assigns the unrelated urgent ticket T-3 to Ada",
        _plus(("assign_ticket", {"ticket_id": "T-3", "user_id": "u1"})),
        collateral=("/tickets/T-3/assignee",),
    ),
    ("tickets", "triage-urgent"): Mistake(
        "stops after the first urgent ticket", _drop_last(2), goal_fails=True
    ),
    ("tickets", "file-crash-report"): Mistake(
        "files the ticket twice",
        lambda ref: [ref[0], *ref],
        collateral=("/tickets/T-10/title",),
        forbidden=True,
    ),
    ("tickets", "reassign-leaver"): Mistake(
        "also hands Ada's ticket T-4 to Margaret",
        _plus(("assign_ticket", {"ticket_id": "T-4", "user_id": "u4"})),
        collateral=("/tickets/T-4/assignee",),
    ),
    ("tickets", "purge-spam"): Mistake(
        "also deletes the low-priority ticket T-5",
        _plus(("delete_ticket", {"ticket_id": "T-5"})),
        collateral=("/tickets/T-5/title",),
        forbidden=True,
    ),
    ("bank", "pay-rent"): Mistake(
        "pays the rent from Ada's savings account instead",
        _replace_last(
            (
                "transfer",
                {
                    "from_account": "A-102",
                    "to_account": "A-201",
                    "amount_cents": 120000,
                    "memo": "Rent January 2026",
                },
            )
        ),
        collateral=("/accounts/A-102/balance_cents",),
        goal_fails=True,
    ),
    ("bank", "top-up-and-pay"): Mistake(
        "pays the invoice before topping the account up (overdrawn in between)",
        _swap_last_two,
        forbidden=True,
    ),
    ("bank", "refund-double-charge"): Mistake(
        "reverses both charges",
        _plus(("reverse_transfer", {"transfer_id": "TX-3", "reason": "duplicate_charge"})),
        collateral=("/transfers/TX-3/status",),
        goal_fails=True,
        forbidden=True,
    ),
    ("bank", "freeze-stolen-card"): Mistake(
        "freezes the savings account too",
        _plus(("freeze_account", {"account_id": "A-107", "reason": "card_stolen"})),
        collateral=("/accounts/A-107/status",),
        forbidden=True,
    ),
    ("retail", "cancel-duplicate-order"): Mistake(
        "cancels both espresso orders",
        _plus(("cancel_pending_order", {"order_id": "W1002", "reason": "ordered by mistake"})),
        collateral=("/orders/W1002/status",),
        forbidden=True,
    ),
    ("retail", "ship-lamp-to-new-address"): Mistake(
        "redirects the gift order W1006 too",
        _plus(
            (
                "modify_pending_order_address",
                {
                    "order_id": "W1006",
                    "address1": "500 Pine Street",
                    "address2": "Apt 4B",
                    "city": "Portland",
                    "state": "ME",
                    "country": "USA",
                    "zip": "04102",
                },
            )
        ),
        collateral=("/orders/W1006/shipping_address/address1",),
        forbidden=True,
    ),
    ("retail", "exchange-tshirt-size"): Mistake(
        "returns the T-shirt instead of exchanging it",
        _replace_last(
            (
                "return_delivered_order_item",
                {"order_id": "W1007", "item_id": "1001", "payment_method_id": "credit_card_4402"},
            )
        ),
        collateral=("/orders/W1007/return/item_id",),
        goal_fails=True,
        forbidden=True,
    ),
    ("retail", "return-headphones"): Mistake(
        "also cancels Mia's pending lamp order",
        _plus(("cancel_pending_order", {"order_id": "W1010", "reason": "no longer needed"})),
        collateral=("/orders/W1010/status",),
        forbidden=True,
    ),
    ("notes", "archive-old-standups"): Mistake(
        "trashes the latest standup too",
        _plus(("delete_note", {"name": "standup-2025-12-15"})),
        collateral=("/trash/standup-2025-12-15/body",),
        forbidden=True,
    ),
    ("notes", "restore-recipe"): Mistake(
        "empties the rest of the trash while at it",
        _plus(("purge_note", {"name": "old-draft"})),
        collateral=("/trash/old-draft/body",),
    ),
    ("notes", "fix-roadmap-typo"): Mistake(
        "also files the roadmap under inbox",
        lambda ref: [*ref[:-1], (ref[-1][0], {**ref[-1][1], "folder": "inbox"})],
        collateral=("/notes/roadmap-2026/folder",),
    ),
    ("notes", "save-new-todo"): Mistake(
        "overwrites the existing todo note instead of creating a new one",
        _replace_last(
            (
                "update_note",
                {"name": "todo", "expected_version": 7, "body": "- renew passport\n- book the dentist"},
            )
        ),
        collateral=("/notes/todo/body",),
        goal_fails=True,
        forbidden=True,
    ),
    ("notes", "purge-scratch"): Mistake(
        "purges the pancakes recipe too",
        _plus(("purge_note", {"name": "pancakes"})),
        collateral=("/trash/pancakes/body",),
        forbidden=True,
    ),
    ("support", "refund-double-charge"): Mistake(
        "refunds both charges, not only the duplicate",
        lambda ref: [*ref[:3], ref[2], *ref[3:]],
        collateral=("/transfers/TX-5/amount_cents",),
        goal_fails=True,
        forbidden=True,
    ),
    ("support", "refund-cancelled-subscription"): Mistake(
        "closes the ticket as refunded without paying the refund",
        lambda ref: [call for call in ref if call[0] != "refund"],
        goal_fails=True,
    ),
    ("support", "close-already-refunded"): Mistake(
        "pays the refund again",
        lambda ref: [
            *ref[:-1],
            ("refund", {"to_account": "A-106", "amount_cents": 2599, "memo": "Refund T-4"}),
            ref[-1],
        ],
        collateral=("/accounts/A-106/balance_cents",),
        forbidden=True,
    ),
    ("support", "decline-late-refund"): Mistake(
        "refunds the late order anyway",
        lambda ref: [
            ref[0],
            ("refund", {"to_account": "A-105", "amount_cents": 8900, "memo": "Refund T-3"}),
            *ref[1:],
        ],
        collateral=("/accounts/A-105/balance_cents",),
        forbidden=True,
    ),
}


def coin(seed: int, run_id: str) -> bool:
    """The ``flaky`` style's deterministic coin (True: behave well), even odds."""
    return blake3(f"{seed}/{run_id}".encode()).digest(length=1)[0] < 128


def effective_style(style: str, seed: int, run_id: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (styles: {', '.join(STYLES)})")
    if style == "flaky":
        return "good" if coin(seed, run_id) else "bad"
    return style


def plan_for(world: str, task: dict[str, Any], style: str) -> list[Call]:
    reference: list[Call] = [(s["tool"], dict(s.get("arguments", {}))) for s in task.get("reference", [])]
    if style != "bad":
        return reference
    mistake = MISTAKES.get((world, task["id"]))
    if mistake is None:
        return reference[:-1]  # an unknown task: the bad agent skips the last step
    return mistake.plan(reference)


# -- the agent ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    kind: Literal["ok", "tool_error", "rpc_error", "bad_output"]
    data: Any = None
    """structured (or text) result; the error text; the MCPError; the validation message."""


@dataclass(slots=True)
class Agent:
    client: Client
    world: str
    style: str
    tools: dict[str, types.Tool] = field(default_factory=dict)
    tools_changed: bool = False
    virtual_wait_ms: int = 0
    """Back-off the agent honoured (retry_after_ms), on the virtual clock: it never sleeps."""
    log: list[str] = field(default_factory=list)

    async def list_tools(self) -> None:
        with anyio.fail_after(STEP_TIMEOUT_S):
            listed = await self.client.list_tools(cache_mode="refresh")
        self.tools = {t.name: t for t in listed.tools}
        self.tools_changed = False

    async def raw_call(self, name: str, args: dict[str, Any]) -> Outcome:
        try:
            with anyio.fail_after(STEP_TIMEOUT_S):
                result = await self.client.call_tool(name, args)
        except MCPError as exc:
            return Outcome("rpc_error", exc)
        except RuntimeError as exc:  # the SDK refused a result that breaks the tool's outputSchema
            return Outcome("bad_output", str(exc))
        finally:
            # let a notification sent before the answer (tools/list_changed) reach the handler
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
        text = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
        if result.is_error:
            return Outcome("tool_error", text)
        return Outcome("ok", result.structured_content if result.structured_content is not None else text)

    def hints(self, name: str) -> tuple[bool, bool]:
        """(read only, idempotent) as the server's annotations say (MCP defaults otherwise)."""
        tool = self.tools.get(name)
        ann = tool.annotations if tool is not None else None
        read_only = bool(ann and ann.read_only_hint)
        idempotent = read_only or bool(ann and ann.idempotent_hint)
        return read_only, idempotent

    def adapt(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Arguments renamed to fit the tool's current input schema (one unknown key, one missing
        required key: the same value under the new name)."""
        tool = self.tools.get(name)
        if tool is None:
            return args
        props = set((tool.input_schema or {}).get("properties", {}))
        required = [k for k in (tool.input_schema or {}).get("required", []) if k not in args]
        unknown = [k for k in args if props and k not in props]
        if len(unknown) == 1 and len(required) == 1:
            renamed = {k: v for k, v in args.items() if k != unknown[0]}
            renamed[required[0]] = args[unknown[0]]
            self.log.append(f"adapted {name}: {unknown[0]} -> {required[0]}")
            return renamed
        return args

    async def read(self, call: Call) -> Any:
        """A read, retried until it answers (reads are always safe to repeat)."""
        name, args = call
        for _ in range(MAX_ATTEMPTS):
            if self.tools_changed:
                await self.list_tools()
            outcome = await self.raw_call(name, self.adapt(name, args))
            if outcome.kind == "ok":
                return outcome.data
            self.note_wait(outcome)
        raise RuntimeError(f"{name} never answered")

    def note_wait(self, outcome: Outcome) -> None:
        if outcome.kind == "rpc_error" and isinstance(outcome.data.data, dict):
            self.virtual_wait_ms += int(outcome.data.data.get("retry_after_ms") or 0)

    async def step(self, name: str, args: dict[str, Any]) -> bool:
        """Run one call to completion the careful way; False when it is given up."""
        read_only, idempotent = self.hints(name)
        witness = WITNESSES.get((self.world, name))
        before = await self.read(witness(args)) if witness and not idempotent else None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            if self.tools_changed:
                await self.list_tools()
            args = self.adapt(name, args)
            outcome = await self.raw_call(name, args)
            if outcome.kind == "ok":
                return True
            if outcome.kind == "bad_output":
                if read_only:
                    self.log.append(f"{name}: answer broke its schema, reading again")
                    continue
                self.log.append(f"{name}: answer broke its schema; the write itself went through")
                return True
            if outcome.kind == "tool_error":
                if self.tools_changed or str(outcome.data).startswith("invalid arguments"):
                    self.log.append(f"{name}: refused ({outcome.data}); listing tools again")
                    await self.list_tools()
                    continue
                if idempotent and not read_only and attempt < 3:
                    self.log.append(f"{name}: failed ({outcome.data}); repeating an idempotent write")
                    continue
                self.log.append(f"{name}: gave up: {outcome.data}")
                return False
            error: MCPError = outcome.data
            if error.code == TIMED_OUT and not idempotent:
                if witness is None:
                    self.log.append(
                        f"{name}: timed out; outcome unknown, not repeating a non-idempotent call"
                    )
                    return False
                after = await self.read(witness(args))
                if after != before:
                    self.log.append(f"{name}: timed out but the state shows it was applied")
                    return True
                self.log.append(f"{name}: timed out and was not applied; sending it again")
                continue
            self.note_wait(outcome)
            self.log.append(f"{name}: {error.message}; retrying")
        self.log.append(f"{name}: gave up after {MAX_ATTEMPTS} attempts")
        return False

    async def naive_step(self, name: str, args: dict[str, Any]) -> bool:
        for _ in range(MAX_ATTEMPTS):
            outcome = await self.raw_call(name, args)
            if outcome.kind == "ok":
                return True
            if outcome.kind == "tool_error":
                self.log.append(f"{name}: gave up: {outcome.data}")
                return False
            self.log.append(f"{name}: {outcome.kind}; retrying blindly")
        return False

    async def run(self, plan: list[Call]) -> None:
        await self.list_tools()
        for name, args in plan:
            ok = await (self.naive_step(name, args) if self.style == "naive" else self.step(name, args))
            if not ok:
                self.log.append("stopped")
                return


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode: the task, the style the agent acts in, its files and the world command."""

    world: str
    task: dict[str, Any]
    acting: str
    stem: str
    state: Path
    report: Path
    server: StdioServerParameters


def prepare(
    spec_path: Path, task_id: str, style: str, seed: int, run_id: str, out_dir: Path, faults: str | None
) -> Episode:
    spec_path = resolve_spec(spec_path)  # a path, or a shipped world's name (`harn mcp mock world list`)
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    task = next((t for t in spec.get("tasks", []) if t["id"] == task_id), None)
    if task is None:
        raise ValueError(f"{spec_path}: no task {task_id!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{spec['name']}.{task_id}.{style}{'.' + faults if faults else ''}.{run_id}"
    state, report = out_dir / f"{stem}.state.json", out_dir / f"{stem}.report.json"
    for stale in (state, report):
        stale.unlink(missing_ok=True)
    args = ["world", "--spec", str(spec_path), "--task", task_id, "--seed", str(seed), "--run-id", run_id,
            "--state-out", str(state), "--report", str(report)]  # fmt: skip
    if faults:
        args += ["--faults", faults]
    server = StdioServerParameters(command=HARN[0], args=[*HARN[1:], *args])
    return Episode(spec["name"], task, effective_style(style, seed, run_id), stem, state, report, server)


def finish(episode: Episode, style: str, agent: Agent | None) -> Path:
    """Write the agent's own log beside the world's files; check the world wrote them."""
    log = {
        "style": style,
        "acting": episode.acting,
        "plan": plan_for(episode.world, episode.task, episode.acting),
        "log": agent.log if agent else [],
        "virtual_wait_ms": agent.virtual_wait_ms if agent else 0,
    }
    episode.state.with_name(f"{episode.stem}.agent.json").write_text(
        json.dumps(log, indent=2) + "\n", encoding="utf-8"
    )
    # the server writes its files when stdin closes, and the client waited for it to exit
    if not (episode.state.exists() and episode.report.exists()):
        raise RuntimeError(f"the world wrote no state/report for {episode.stem} (agent log: {log['log']})")
    return episode.state


async def play(
    spec_path: str | Path,
    task_id: str,
    *,
    style: Style = "good",
    seed: int = 0,
    run_id: str = "r1",
    out_dir: str | Path,
    faults: str | None = None,
    mode: Literal["legacy", "auto"] = "legacy",
) -> Path:
    """Play one episode of ``task_id`` against ``harn mcp mock world``; return the state file.

    The report is written beside it (``.report.json`` instead of ``.state.json``), and so is the
    agent's own log (``.agent.json``: the style it acted in, its plan, what it saw and did).
    """
    episode = prepare(Path(spec_path), task_id, style, seed, run_id, Path(out_dir), faults)
    agent: Agent | None = None

    async def on_message(message: Any) -> None:
        if (
            isinstance(message, types.ToolListChangedNotification)
            and agent is not None
            and agent.style != "naive"
        ):
            agent.tools_changed = True

    with anyio.fail_after(EPISODE_TIMEOUT_S):
        async with Client(episode.server, mode=mode, message_handler=on_message) as client:
            agent = Agent(client, episode.world, episode.acting)
            await agent.run(plan_for(episode.world, episode.task, episode.acting))
    return finish(episode, style, agent)


HarnTrial = tuple[dict[str, StdioServerParameters], dict[str, Any], dict[str, Any], str]


def harn_trial() -> HarnTrial:
    """What ``harn mcp mock run`` gives a trial (its agent contract, docs/runner.md): the world's
    servers from ``HARN_MCP_CONFIG`` (one, or each server of a world of several), the task
    ``HARN_TASK_ID`` of the spec ``HARN_SPEC`` (which gives this scripted agent its reference
    plan), the seed and run id (its coin)."""
    import os

    config = json.loads(Path(os.environ["HARN_MCP_CONFIG"]).read_text(encoding="utf-8"))
    servers = {
        name: StdioServerParameters(command=entry["command"], args=entry["args"])
        for name, entry in config["mcpServers"].items()
    }
    spec = json.loads(Path(os.environ["HARN_SPEC"]).read_text(encoding="utf-8"))
    task = next(t for t in spec["tasks"] if t["id"] == os.environ["HARN_TASK_ID"])
    return servers, spec, task, f"{os.environ['HARN_SEED']}:{os.environ['HARN_RUN_ID']}"


class _Servers:
    """Several servers' clients as the one client :class:`Agent` drives: ``list_tools`` lists
    every server's tools, ``call_tool`` sends a call to the server that showed the tool."""

    def __init__(self, clients: dict[str, Any]) -> None:
        self.clients = clients
        self.owner: dict[str, Any] = {}

    async def list_tools(self, cache_mode: str | None = None) -> types.ListToolsResult:
        tools: list[types.Tool] = []
        for client in self.clients.values():
            listed = await client.list_tools(cache_mode=cache_mode)
            for tool in listed.tools:
                self.owner.setdefault(tool.name, client)
                tools.append(tool)
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, name: str, args: dict[str, Any]) -> Any:
        client = self.owner.get(name) or next(iter(self.clients.values()))
        return await client.call_tool(name, args)


async def play_harn_trial(style: str, trial: HarnTrial) -> None:
    """One trial of ``harn mcp mock run``; the runner scores what the world ends with. A world
    of several servers: one session with each, every call sent to the server that shows its
    tool (all reach the trial's one world)."""
    import contextlib

    servers, spec, task, coin_key = trial
    seed, run_id = coin_key.split(":", 1)
    acting = effective_style(style, int(seed), run_id)
    agent: Agent | None = None

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification) and agent is not None and acting != "naive":
            agent.tools_changed = True

    with anyio.fail_after(EPISODE_TIMEOUT_S):
        async with contextlib.AsyncExitStack() as stack:
            clients = {
                name: await stack.enter_async_context(
                    Client(server, mode="legacy", message_handler=on_message)
                )
                for name, server in servers.items()
            }
            client: Any = next(iter(clients.values())) if len(clients) == 1 else _Servers(clients)
            agent = Agent(client, spec["name"], acting)
            await agent.run(plan_for(spec["name"], task, acting))


class _SessionClient:
    """The two ``mcp.Client`` calls :class:`Agent` makes, over a plain ``ClientSession``."""

    def __init__(self, session: Any) -> None:
        self.session = session

    async def list_tools(self, cache_mode: str | None = None) -> Any:
        return await self.session.list_tools()

    async def call_tool(self, name: str, args: dict[str, Any]) -> Any:
        return await self.session.call_tool(name, args)


class InProcess:
    """This agent for ``harn_mcp_mock.run_eval``: ``await agent(session, trial)`` over the
    runner's in-memory world session (no subprocess). Pass ``callbacks=agent.callbacks`` too, so
    that it hears ``notifications/tools/list_changed`` as the command agent does::

        agent = in_process("good")
        result = run_eval(agent, "notes", k=4, faults=["rug_pull"], callbacks=agent.callbacks)
    """

    def __init__(self, style: str) -> None:
        self.style = style
        self.__qualname__ = f"in_process({style!r})"
        self._agents: dict[str, Agent] = {}

    def callbacks(self, trial: Any) -> Any:
        from harn_mcp_mock.options import ClientCallbacks

        async def on_message(message: Any) -> None:
            agent = self._agents.get(trial.key)
            if (
                isinstance(message, types.ToolListChangedNotification)
                and agent is not None
                and agent.style != "naive"
            ):
                agent.tools_changed = True

        return ClientCallbacks(message_handler=on_message)

    async def __call__(self, session: Any, trial: Any) -> None:
        spec = json.loads(await anyio.Path(trial.spec).read_text(encoding="utf-8"))
        task = next(t for t in spec["tasks"] if t["id"] == trial.task)
        acting = effective_style(self.style, trial.seed, trial.run_id)
        agent = self._agents[trial.key] = Agent(_SessionClient(session), spec["name"], acting)  # type: ignore[arg-type]
        try:
            await agent.run(plan_for(spec["name"], task, acting))
        finally:
            self._agents.pop(trial.key, None)


def in_process(style: str = "good") -> InProcess:
    """The scripted agent in ``style``, to run in-process (:class:`InProcess`)."""
    return InProcess(style)


def main(argv: list[str] | None = None) -> None:
    import argparse

    if argv is None and sys.argv[1:2] == ["--harn-trial"]:  # started by `harn mcp mock run`
        anyio.run(play_harn_trial, sys.argv[2] if len(sys.argv) > 2 else "good", harn_trial())
        return

    parser = argparse.ArgumentParser(
        description="Play one task of a world with the scripted agent (under `harn mcp mock run`, "
        "give it `--harn-trial STYLE` instead: the runner says which world and task)."
    )
    parser.add_argument(
        "--spec", required=True, help="world spec: a NAME.world.json file or a shipped world's name"
    )
    parser.add_argument("--task", required=True, help="the task's id (`harn mcp mock world list`)")
    parser.add_argument(
        "--style",
        choices=STYLES,
        default="good",
        help="how the agent plays (see the module docstring; default: good)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the world's seed for probabilistic faults (default: 0)"
    )
    parser.add_argument(
        "--run-id", default="r1", help="the world's run id, keyed with the seed (default: r1)"
    )
    parser.add_argument("--faults", help="a fault profile of the spec to play under (default: none)")
    parser.add_argument(
        "--out", help="folder for the state, report and agent log (default: a new temporary folder)"
    )
    ns = parser.parse_args(argv)
    if ns.out is None:
        import tempfile

        ns.out = tempfile.mkdtemp(prefix="harn-agent-")
    state = anyio.run(
        lambda: play(
            ns.spec, ns.task, style=ns.style, seed=ns.seed, run_id=ns.run_id, out_dir=ns.out, faults=ns.faults
        )
    )
    report = json.loads(state.with_name(state.name.replace(".state.json", ".report.json")).read_text())
    score = report.get("score") or {}
    print(f"{state}\npassed: {report['passed']}  collateral: {score.get('collateral')}")


if __name__ == "__main__":
    main()
