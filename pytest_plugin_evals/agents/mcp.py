"""The MCP servers of one run, for an agent CLI that is not Claude Code.

Claude Code gets the run's stand-ins as ``--mcp-config`` and loads the plugin's own servers
itself (``agents/claude``). The other CLIs each want their own form, but what a run gets is
decided once, here, the way Claude Code's runs get it:

* every active stand-in (``request.mocks``: a shadow in the with arm, a standalone mock in
  both), under its server's own name (a shadow takes the name of the plugin server it
  replaces, so the model sees the tools it would see);
* in the with arm, the plugin's declared servers that no stand-in replaces, with
  ``${CLAUDE_PLUGIN_ROOT}`` replaced by the plugin's folder — unless the run is strict
  (mocks on, real servers not allowed): they are then withheld, as ``--strict-mcp-config``
  withholds them from Claude Code;
* nothing under ``--eval-mocks off`` but the plugin's own servers (with arm).

Tool calls get Claude Code's names back (:meth:`McpPlan.canonical`): a plugin server's tool is
``mcp__plugin_<plugin>_<server>__<tool>``, a stand-in's the name its spec gives it, so one
suite's graders mean the same thing for every agent. :attr:`McpPlan.readable` and
:attr:`McpPlan.writable` are what a bubblewrap-confined CLI must be shown for the stand-ins to
start (the Python that runs the stub, the stub, the run's own socket on the mock host);
:attr:`McpPlan.hidden` what it must not be shown (the mock host's folder: other runs' sockets).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.mocks.discover import declared_servers, normalize
from pytest_plugin_evals.model import LoadError
from pytest_plugin_evals.util.manifest import plugin_name

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.base import RunRequest

_ROOT_VAR = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}|\$CLAUDE_PLUGIN_ROOT\b")


@dataclass(frozen=True)
class McpServer:
    """One MCP server a run's agent is given."""

    #: The name the CLI is given (the plugin's key for its servers and their shadows).
    name: str
    #: Claude's form: ``{"command", "args", "env", "cwd"}`` or ``{"type", "url", "headers"}``.
    config: Mapping[str, Any]
    #: Claude Code's prefix for its tools (``mcp__plugin_<plugin>_<server>__``).
    prefix: str
    #: A stand-in (its every tool is allowed, as Claude Code's runs allow mocked tools).
    stand_in: bool

    @property
    def command(self) -> str | None:
        value = self.config.get("command")
        return value if isinstance(value, str) else None

    @property
    def args(self) -> list[str]:
        value = self.config.get("args")
        return [str(a) for a in value] if isinstance(value, list) else []

    @property
    def env(self) -> dict[str, str]:
        value = self.config.get("env")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    @property
    def url(self) -> str | None:
        value = self.config.get("url")
        return value if isinstance(value, str) and self.command is None else None

    @property
    def headers(self) -> dict[str, str]:
        value = self.config.get("headers")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


@dataclass(frozen=True)
class McpPlan:
    """The MCP servers of one run, and what confining the agent must leave reachable."""

    servers: tuple[McpServer, ...] = ()
    #: The plugin's servers that must not start from the plugin itself: withheld (strict) or
    #: replaced by a stand-in of the same name. A CLI that loads the plugin's servers on its
    #: own (Copilot's ``--plugin-dir``) must turn these off.
    suppressed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    #: Folders to hide from a confined CLI even where the rest of the machine shows: the mock
    #: host's (its ``writable`` socket, the run's own, is shown again inside).
    hidden: tuple[Path, ...] = ()
    #: Every name a server is known by (given ones and suppressed ones) -> its tool prefix.
    prefixes: Mapping[str, str] = field(default_factory=dict)

    def canonical(self, server: str, tool: str) -> str:
        """Claude Code's name of the tool ``tool`` of the server the CLI calls ``server``."""
        prefix = self.prefixes.get(server)
        if prefix is None:
            prefix = f"mcp__{normalize(server)}__"
        return prefix + normalize(tool)

    def split(self, name: str, separators: Iterable[str] = ("__", "_")) -> tuple[str, str] | None:
        """``(server, tool)`` of a CLI's flat tool name ``<server><sep><tool>`` (optionally
        after ``mcp_`` or ``mcp__``), for a known server, the longest name first; else None.
        A server is also found by its name with every character outside ``[A-Za-z0-9_-]``
        made ``_`` (as CLIs put it into tool names); the server's own name is returned."""
        known = {**{normalize(s): s for s in self.prefixes}, **{s: s for s in self.prefixes}}
        for flat in sorted(known, key=len, reverse=True):
            for head in ("mcp__", "mcp_", ""):
                for sep in separators:
                    start = f"{head}{flat}{sep}"
                    if name.startswith(start) and len(name) > len(start):
                        return known[flat], name[len(start) :]
        return None


def substitute_root(value: Any, root: str) -> Any:
    """``value`` with ``${CLAUDE_PLUGIN_ROOT}`` replaced by ``root``, all the way down."""
    if isinstance(value, str):
        return _ROOT_VAR.sub(lambda _: root, value)
    if isinstance(value, list):
        return [substitute_root(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute_root(v, root) for k, v in value.items()}
    return value


def plugin_prefix(plugin: str, server: str) -> str:
    """Claude Code's tool prefix for a plugin's server."""
    return f"mcp__{normalize(f'plugin:{plugin}:{server}')}__"


def plan_for(request: RunRequest) -> McpPlan:
    """The MCP servers of ``request``'s run (see the module's docstring)."""
    mocks = request.mocks
    servers: list[McpServer] = []
    notes: list[str] = []
    prefixes: dict[str, str] = {}
    readable: list[Path] = []
    writable: list[Path] = []
    hidden: list[Path] = []
    replaced: set[str] = set()
    if mocks is not None and mocks.servers:
        entries = _mcp_entries(mocks.mcp_config)
        for server in mocks.servers:
            entry = entries.get(server.registered)
            if entry is None:
                continue
            servers.append(McpServer(server.name, entry, server.tool_prefix, stand_in=True))
            prefixes[server.name] = server.tool_prefix
            if server.kind == "shadow":
                replaced.add(server.name)
        readable = _stand_in_paths(servers)
        if mocks.socket is not None:
            writable, hidden = [mocks.socket], [mocks.socket.parent]
    strict = mocks is not None and mocks.strict
    withheld = set(mocks.withheld) if mocks is not None else set()
    if request.plugin_dir is not None:
        try:
            declared = declared_servers(request.plugin_dir)
        except LoadError as exc:
            declared = {}
            notes.append(f"the plugin's MCP servers could not be read: {exc}")
        plugin = plugin_name(request.plugin_dir)
        root = str(request.plugin_dir)
        for key, config in declared.items():
            prefixes.setdefault(key, plugin_prefix(plugin, key))
            if key in replaced or key in withheld or strict:
                continue
            given = substitute_root(dict(config), root)
            if not (isinstance(given.get("command"), str) or isinstance(given.get("url"), str)):
                notes.append(f"MCP server {key}: no command or url, left out")
                continue
            servers.append(McpServer(key, given, prefixes[key], stand_in=False))
        suppressed = tuple(k for k in declared if k in replaced or k in withheld or strict)
    else:
        suppressed = ()
    return McpPlan(
        servers=tuple(servers),
        suppressed=suppressed,
        notes=tuple(notes),
        readable=tuple(readable),
        writable=tuple(writable),
        hidden=tuple(hidden),
        prefixes=prefixes,
    )


def _mcp_entries(config: Path | None) -> dict[str, dict[str, Any]]:
    """The entries of the stand-ins' ``mcp.json`` (written by ``mocks.config``), by name."""
    import json

    if config is None:
        return {}
    try:
        doc = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = doc.get("mcpServers") if isinstance(doc, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, dict)}


def _stand_in_paths(servers: Iterable[McpServer]) -> list[Path]:
    """What a confined agent must read for its stand-ins to start: the Python that runs them —
    its environment and the installation it was made from, which may well be in the hidden
    home (pyenv, uv, conda) — and the files its arguments name (the stub). The run's socket is
    the setup's (``MockSetup.socket``), not guessed from the arguments."""
    prefixes = (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)
    readable: list[Path] = [Path(p) for p in prefixes]
    for server in servers:
        if server.command:
            readable.append(Path(server.command))
        for arg in server.args:
            path = Path(arg)
            if path.is_absolute() and path.suffix == ".py":
                readable.append(path)
    return list(dict.fromkeys(readable))
