"""Setting up one run's stand-ins: spec files, the MCP configuration, the agent's flags.

:func:`prepare_mocks` writes, under the run's folder, one ``<server>.spec.json`` per active
stand-in and an ``mcp.json``::

    {"mcpServers": {"plugin:<plugin>:<server>": {"type": "stdio", "command": "<python>",
                    "args": ["-m", "pytest_plugin_evals.mocks.server", "<spec.json>"]}}}

With the mock host (:mod:`.host`; always on Linux), the run is registered with it first and
each entry starts the stub instead: ``<python> -I -S stub.py <the run's socket> <server>``.

Claude Code gets it as ``--strict-mcp-config --mcp-config=<mcp.json>``: ``--strict-mcp-config``
drops every other MCP server, the plugin's own included, so a declared server without mocks
is withheld; a stand-in registered as ``plugin:<plugin>:<server>`` gets exactly the tool names
the plugin's server would (``mcp__plugin_<plugin>_<server>__<tool>``). With real servers allowed
the flag is left out: the stand-ins still replace their namesakes, the other plugin servers start.
Any other agent that speaks MCP can read the same ``mcp.json`` (``MockSetup.mcp_config``).

A stand-in with ``type: agent`` tools also finds in its spec file the judge that plays the server
(kind, model and the environment variables that backend reads: the stand-in may run with less
of the harness's environment), its replay folders and where to record new answers
(``<recordings_dir>/<server>/``). Such a spec file is readable by its owner only.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..model import Case, MockServerInfo
from ..util.environment import allowed_environment, operator_environment
from ..util.process import RUN_TAG
from .discover import SERVER_FILE, MockPlan, MockServer, MockTool, load_plan, normalize
from .host import Registration, ensure_host, supported

SERVER_MODULE = "pytest_plugin_evals.mocks.server"
STUB = Path(__file__).with_name("stub.py")

Mode = Literal["on", "off"]


@dataclass(frozen=True)
class MockSetup:
    """What one run's agent needs for its stand-ins, and where their calls will be."""

    #: The generated MCP configuration (None: the agent's MCP setup is left as it is).
    mcp_config: Path | None = None
    #: Drop every MCP server not in ``mcp_config`` (the plugin's own included).
    strict: bool = False
    #: The active stand-ins of this run.
    servers: tuple[MockServer, ...] = ()
    #: Declared servers not started in this run.
    withheld: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: Where the stand-ins append their calls (one JSON line each).
    calls_file: Path | None = None
    #: Every mock of the case shadows a plugin server (``scoring``'s ``shadow_mocks_only``).
    shadow_only: bool = False
    #: Prefixes of tool names served (or withheld) here, for counting unmocked calls.
    prefixes: tuple[str, ...] = field(default_factory=tuple)
    #: The run's own socket on the mock host (None: no host): the one file of the host a
    #: confined agent must be shown for its stand-ins to start. Its folder holds other runs'.
    socket: Path | None = None
    #: The run's token: an ``expect:`` abort kills the processes whose environment carries
    #: ``PYTEST_PLUGIN_EVALS_RUN=<run_token>`` (:meth:`environment`).
    run_token: str | None = None
    #: The run's registration with the mock host (:meth:`close` ends it).
    registration: Registration | None = field(default=None, compare=False, repr=False)

    def environment(self) -> dict[str, str]:
        """What the agent's environment must hold for an abort to stop it (the runner sets
        it in every run already)."""
        return {RUN_TAG: self.run_token} if self.run_token else {}

    def close(self) -> None:
        """The run is over: unregister it from the mock host (its socket is removed, its
        stand-ins still running are killed). Never raises; safe to call twice."""
        if self.registration is not None:
            self.registration.close()

    @property
    def active(self) -> bool:
        """Whether any stand-in serves this run (its transcript then has ``mock_calls``)."""
        return bool(self.servers)

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The mocked tools' names as the agent sees them: grant these (they are harmless)."""
        return tuple(s.qualified(t.name) for s in self.servers for t in s.tools)

    def claude_args(self) -> list[str]:
        """Flags for ``claude -p`` (add ``allowed_tools`` to its ``--allowed-tools`` as well)."""
        if self.mcp_config is None:
            return []
        strict = ["--strict-mcp-config"] if self.strict else []
        return [*strict, f"--mcp-config={self.mcp_config}"]

    def summary(self) -> tuple[tuple[MockServerInfo, ...], tuple[str, ...]]:
        """The run's servers and warnings (``calls.MockOutcome.summary`` adds the calls)."""
        servers = [
            MockServerInfo(s.name, s.kind, tuple((t.name, t.spec.type) for t in s.tools))
            for s in self.servers
        ]
        servers += [MockServerInfo(w, "shadow", withheld=True) for w in self.withheld]
        return tuple(servers), tuple(self.warnings)


@dataclass(frozen=True)
class MockJudge:
    """The judge that plays the ``type: agent`` tools of a session's stand-ins."""

    #: The judge backend (``claude``, ``anthropic``, ``openai``; None: no judge, a call without
    #: an adopted answer is a tool error) and its model.
    kind: str | None = None
    model: str | None = None
    #: Where its credentials and endpoint are read (None: this process's environment).
    env: Mapping[str, str] | None = None
    #: The ``claude`` judge's binary (None: on PATH).
    claude_bin: str | None = None
    #: Where the model's answers are saved, under ``<recordings_dir>/<server>/`` (None: not).
    recordings_dir: Path | None = None


@dataclass(frozen=True)
class MockOptions:
    """How a session's runs get their stand-ins (``--eval-mocks``, ``--eval-allow-real-servers``
    and the judge that plays ``type: agent`` tools)."""

    #: ``off`` ignores mocks: nothing is written and the plugin's own servers start.
    mode: Mode = "on"
    #: Leave the plugin's servers that no mock replaces running (no ``--strict-mcp-config``).
    allow_real_servers: bool = False
    #: Serve the stand-ins from this process's mock host (see :mod:`.host`), so they start in
    #: milliseconds.
    shared_host: bool = True
    judge: MockJudge = MockJudge()


def prepare_mocks(
    case: Case,
    plugin_dir: Path | None,
    loads_plugin: bool,
    run_dir: Path,
    options: MockOptions = MockOptions(),
    *,
    kill_agent: bool = True,
    run_token: str | None = None,
    plan: MockPlan | None = None,
) -> MockSetup:
    """Write one run's stand-in files under ``run_dir`` and say how to start the agent.

    ``plugin_dir`` is the plugin under test (whatever the arm: its declared servers decide which
    mock folders shadow and which stand alone); ``loads_plugin`` says whether this run loads it
    (the with arm); ``options`` are the session's (:class:`MockOptions`). ``kill_agent`` lets an
    ``expect:`` violation end the run: with the mock host, the processes whose environment
    carries ``run_token`` (the run's ``PYTEST_PLUGIN_EVALS_RUN``; a new one when not given, see
    :meth:`MockSetup.environment`) are killed; without it, the stand-in's own process group (the
    agent must run in its own, as ``run_process`` starts it). With the mock host
    (``options.shared_host``) the run is registered with it here, and :meth:`MockSetup.close`
    must end that when the run is over. ``plan`` is the case's, found once (None: looked up
    here). Raises ``LoadError`` for a bad mock file and :class:`~.host.HostError` when the mock
    host cannot take the run.
    """
    if options.mode == "off":
        return MockSetup()
    allow_real_servers = options.allow_real_servers
    plan = plan if plan is not None else load_plan(case, plugin_dir)
    if not plan.servers and not plan.declared:
        return MockSetup()
    servers = plan.active(loads_plugin)
    withheld = plan.withheld if loads_plugin and not allow_real_servers else ()
    run_dir.mkdir(parents=True, exist_ok=True)
    calls_file = run_dir / "mock-calls.jsonl"
    calls_file.write_bytes(b"")
    token = run_token or uuid.uuid4().hex
    played_by = options.judge
    judge = judge_settings(
        played_by.kind, played_by.model, played_by.env, claude_bin=played_by.claude_bin
    )
    specs: dict[str, Path] = {}
    for server in servers:
        spec_path = run_dir / f"{_file_name(server.name)}.spec.json"
        spec = stand_in_spec(server, calls_file, kill_agent=kill_agent)
        if server.agent_tools:
            spec["agent"] = agent_block(server, judge, played_by.recordings_dir)
        _write_private(spec_path, json.dumps(spec, indent=1, ensure_ascii=False))
        specs[server.registered] = spec_path
    registration = None
    if options.shared_host and servers and supported():
        registration = ensure_host().register(specs, calls_file, token=token, kill=kill_agent)
    entries: dict[str, Any] = {
        name: (
            stub_command(registration.socket, name)
            if registration is not None
            else server_command(spec_path)
        )
        for name, spec_path in specs.items()
    }
    config = run_dir / "mcp.json"
    config.write_text(json.dumps({"mcpServers": entries}, indent=2), encoding="utf-8")
    prefixes = [s.tool_prefix for s in servers]
    if plugin_name := plan.plugin:
        prefixes += [f"mcp__{normalize(f'plugin:{plugin_name}:{w}')}__" for w in withheld]
    return MockSetup(
        mcp_config=config,
        strict=not allow_real_servers,
        servers=servers,
        withheld=withheld,
        warnings=tuple(w for s in servers for w in s.warnings),
        calls_file=calls_file,
        shadow_only=plan.shadow_only,
        prefixes=tuple(prefixes),
        socket=registration.socket if registration is not None else None,
        run_token=token,
        registration=registration,
    )


def _write_private(path: Path, text: str) -> None:
    """Write a spec file only its owner can read (it may carry the judge's credentials)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


#: The variables each judge backend reads (the ``claude`` CLI gets the runs' allowlist).
JUDGE_ENV_PREFIXES = {"anthropic": ("ANTHROPIC_",), "openai": ("OPENAI_",)}


def judge_settings(
    kind: str | None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    claude_bin: str | None = None,
) -> dict[str, Any] | None:
    """What a stand-in needs to build the judge that plays its server; None without a judge.

    ``environ`` (default ``os.environ``) gives the variables the backend reads: ``ANTHROPIC_*``
    for ``anthropic``, ``OPENAI_*`` for ``openai``, the runs' allowlisted environment for
    ``claude`` (as the judge itself runs it)."""
    name = (kind or "").strip().lower()
    if not name:
        return None
    env = operator_environment() if environ is None else environ
    prefixes = JUDGE_ENV_PREFIXES.get(name)
    picked = (
        {k: v for k, v in env.items() if k.startswith(prefixes)}
        if prefixes
        else allowed_environment(env)
    )
    settings: dict[str, Any] = {"kind": name, "model": model, "env": picked}
    if claude_bin:
        settings["claudeBin"] = claude_bin
    return settings


def agent_block(
    server: MockServer, judge: dict[str, Any] | None, recordings_dir: Path | None
) -> dict[str, Any]:
    """The spec's ``agent`` block: what the model is told, its replays, judge and recordings."""
    adopt_to = server.replay_dirs[-1] if server.replay_dirs else None
    folder = adopt_to.name if adopt_to is not None else _file_name(server.name)
    return {
        "instructions": server.instructions,
        "replay": [str(d) for d in server.replay_dirs],
        "adoptTo": str(adopt_to) if adopt_to is not None else None,
        "recordings": str(recordings_dir / folder) if recordings_dir is not None else None,
        "judge": judge,
    }


def _agent_tool(server: MockServer, tool: MockTool) -> dict[str, Any]:
    own = tool.spec.path.name != SERVER_FILE  # a <tool>.md of its own: its body adds notes
    return {
        "notes": tool.spec.body if own else "",
        "abortWhen": tool.spec.abort_when or server.abort_when,
    }


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "server"


def server_command(spec_path: Path) -> dict[str, Any]:
    """The MCP configuration entry that starts a stand-in for ``spec_path`` itself (no mock
    host: only where the host is not supported, or ``shared_host=False``)."""
    args = ["-m", SERVER_MODULE, str(spec_path)]
    return {"type": "stdio", "command": sys.executable, "args": args}


def stub_command(socket: Path, server: str) -> dict[str, Any]:
    """The MCP configuration entry that starts the stub for ``server``: it hands its stdio to
    the mock host on the run's ``socket`` (``python -I -S stub.py <socket> <server>``)."""
    return {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-I", "-S", str(STUB), str(socket), server],
    }


def stand_in_spec(server: MockServer, calls_file: Path, *, kill_agent: bool) -> dict[str, Any]:
    """The JSON a stand-in process reads: its tools, answers, guards and calls file."""
    return {
        "server": server.name,
        "registered": server.registered,
        "calls": str(calls_file),
        "onAbort": "kill-agent" if kill_agent else "record",
        "harnessPgid": os.getpgrp() if hasattr(os, "getpgrp") else None,
        "tools": [
            {
                "name": t.name,
                "qualified": server.qualified(t.name),
                "description": t.description,
                "inputSchema": t.schema,
                "body": t.spec.body,
                "error": t.spec.error,
                "guards": [g.to_dict() for g in t.spec.guards],
                "root": str(t.root.resolve()),
                "path": str(t.spec.path),
                "responder": t.spec.type,
                **(_agent_tool(server, t) if t.spec.type == "agent" else {}),
            }
            for t in server.tools
        ],
    }
