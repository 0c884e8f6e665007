"""The MCP stand-in: a stdio server on the official ``mcp`` SDK that answers from mock files.

Started by the agent through the generated MCP configuration::

    python -m pytest_plugin_evals.mocks.server <spec.json>

``spec.json`` (written by :mod:`.config`) names the server, the tools it offers (name,
description, input schema, body template, ``error``, compiled ``expect`` guards, mock folder) and
the calls file. Each call appends one JSON line to the calls file::

    {"server": "tracker", "tool": "create_issue", "name": "mcp__plugin_kit_tracker__create_issue",
     "input": {...}, "output": "...", "isError": false, "time": "2026-11-30T08:56:22.301Z"}

A call that violates ``expect:`` appends ``{"abort": {"server", "tool", "reason"}, ...}`` instead
and, with ``"onAbort": "kill-agent"``, ends the run: the agent's process group is killed (only
its parent process when that group is the harness's own), so the run stops at once. Forked from
the mock host, the stand-in is told by the host (from the run's registration) what ends the run:
the processes carrying the run's token (``kill-run``), or nothing (``record``).

Tools with ``"responder": "agent"`` are answered by :mod:`.agent` (a replayed answer, else a
model's); their lines also carry ``"responder": "agent"``, ``"replay": "hit" | "miss"`` and
``"costUsd"`` (what the model call cost), and a model's ``ABORT:`` ends the run as above.

The same stand-in also runs forked from the mock host (:mod:`.host`), which has the SDK loaded
already; the agent then starts :mod:`.stub`, which hands its stdio over.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util.process import RUN_TAG, kill_tagged
from ..util.safeload import json_data, read_text
from ..util.timestamps import utc_iso
from .agent import AgentServer
from .guards import VIOLATION_PREFIX, Guard, check
from .template import TemplateError, render


@dataclass(frozen=True)
class ToolEntry:
    name: str
    qualified: str
    body: str
    root: Path
    input_schema: dict[str, Any]
    description: str | None = None
    error: bool = False
    guards: tuple[Guard, ...] = ()
    responder: str = "fixed"


@dataclass
class StandIn:
    """What one stand-in serves, and where it writes what happened."""

    server: str
    calls_file: Path
    tools: dict[str, ToolEntry] = field(default_factory=dict)
    #: ``record``; ``kill-agent`` (this process's group, or its parent); ``kill-run`` (the
    #: processes carrying ``run_token``: a stand-in forked by the mock host).
    on_abort: str = "record"
    harness_pgid: int | None = None
    #: The run's token, from the run's registration with the mock host.
    run_token: str | None = None
    #: The calls file, opened by the mock host when the run registered (else ``calls_file``).
    calls_fd: int | None = None
    #: The ``type: agent`` tools' model, replays and recordings (None: no such tool).
    agent: AgentServer | None = None

    @classmethod
    def from_spec(cls, doc: Mapping[str, Any]) -> StandIn:
        tools = {}
        for raw in doc.get("tools", []):
            entry = ToolEntry(
                name=raw["name"],
                qualified=raw.get("qualified", raw["name"]),
                body=raw.get("body", ""),
                root=Path(raw["root"]),
                input_schema=raw["inputSchema"],
                description=raw.get("description"),
                error=bool(raw.get("error")),
                guards=tuple(Guard.from_dict(g) for g in raw.get("guards", [])),
                responder=raw.get("responder", "fixed"),
            )
            tools[entry.name] = entry
        agents = any(t.responder == "agent" for t in tools.values())
        return cls(
            server=doc["server"],
            calls_file=Path(doc["calls"]),
            tools=tools,
            on_abort=doc.get("onAbort", "record"),
            harness_pgid=doc.get("harnessPgid"),
            agent=AgentServer.from_spec(doc["server"], doc) if agents else None,
        )

    @classmethod
    def load(cls, path: Path) -> StandIn:
        return cls.from_spec(json_data(read_text(path)))

    def close(self) -> None:
        """Release what answering opened (the connections of a model playing the server)."""
        if self.agent is not None:
            self.agent.close()

    # -- answering -----------------------------------------------------------------------

    def answer(self, tool: str, arguments: Mapping[str, Any] | None) -> tuple[str, bool]:
        """The result text and error flag for one call; records it (or the abort)."""
        args = dict(arguments or {})
        entry = self.tools.get(tool)
        if entry is None:
            text = f"unknown tool {tool!r}: this stand-in serves {', '.join(sorted(self.tools))}"
            self._append({**self._call(tool, tool, args), "output": text, "isError": True})
            return text, True
        reason = check(entry.guards, args)
        if reason is not None:
            return self._abort(entry, args, VIOLATION_PREFIX + reason)
        extra: dict[str, Any] = {}
        if entry.responder == "agent" and self.agent is not None:
            answer = self.agent.answer(tool, args)
            extra = {"responder": "agent", "replay": answer.replay, "costUsd": answer.cost_usd}
            if answer.abort is not None:
                return self._abort(entry, args, answer.abort, extra)
            text, is_error = answer.text, answer.is_error
        else:
            try:
                text, is_error = render(entry.body, args, entry.root), entry.error
            except TemplateError as exc:
                text, is_error = f"mock {self.server}/{tool} could not answer: {exc}", True
        self._append(
            {
                **self._call(tool, entry.qualified, args),
                "output": text,
                "isError": is_error,
                **extra,
            }
        )
        return text, is_error

    def _abort(
        self,
        entry: ToolEntry,
        args: dict[str, Any],
        reason: str,
        extra: Mapping[str, Any] | None = None,
    ) -> tuple[str, bool]:
        """Record the abort and, with ``kill-agent``, end the run now."""
        self._append(
            {
                "abort": {"server": self.server, "tool": entry.name, "reason": reason},
                "name": entry.qualified,
                "input": args,
                "time": utc_iso(),
                **(extra or {}),
            }
        )
        if self.on_abort == "kill-run" and self.run_token:
            kill_tagged(RUN_TAG, self.run_token)
            os._exit(0)  # the run is over; the agent got no answer
        if self.on_abort == "kill-agent":
            self._stop_agent()
            os._exit(0)
        return f"run aborted by the mock: {reason}", True

    def _call(self, tool: str, qualified: str, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "server": self.server,
            "tool": tool,
            "name": qualified,
            "input": args,
            "time": utc_iso(),
        }

    def _append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if self.calls_fd is not None:
            os.write(self.calls_fd, line)
            return
        fd = os.open(self.calls_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)  # one write per line: lines of parallel stand-ins never mix
        finally:
            os.close(fd)

    def _stop_agent(self) -> None:
        """This stand-in is the agent's child (no mock host): its group goes, or its parent
        when that group is the harness's own (a ``py:`` agent's child)."""
        parent = os.getppid()
        group = os.getpgrp() if hasattr(os, "getpgrp") else None
        try:
            if group is not None and group != self.harness_pgid and group > 1:
                os.killpg(group, signal.SIGKILL)  # the agent's own group: we go with it
            elif parent > 1:
                os.kill(parent, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def build_server(stand_in: StandIn) -> Any:
    """The SDK server object serving ``stand_in`` (a ``mcp.server.lowlevel.Server``)."""
    import anyio.to_thread
    import mcp.types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in stand_in.tools.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # In a worker thread: an agent tool waits for a model, the server must stay responsive.
        text, is_error = await anyio.to_thread.run_sync(
            stand_in.answer, params.name, params.arguments
        )
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(
        stand_in.server,
        version="1.0.0",
        instructions=None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(stand_in: StandIn) -> None:
    """Serve over this process's stdin and stdout until the agent closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(stand_in)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        stand_in.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pytest_plugin_evals.mocks.server <spec.json>", file=sys.stderr)
        return 2
    try:
        stand_in = StandIn.load(Path(args[0]))
    except (OSError, ValueError, KeyError) as exc:
        print(f"mock stand-in: cannot read {args[0]}: {exc}", file=sys.stderr)
        return 2
    import anyio

    anyio.run(serve, stand_in)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
