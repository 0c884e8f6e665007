"""Which MCP servers a case's runs get: the plugin's declared servers and the mock folders.

* Declared servers: the plugin's ``.mcp.json`` ``mcpServers`` and the ``mcpServers`` of
  ``.claude-plugin/plugin.json`` (inline, or a path / list of paths to such files). Claude Code
  registers them as ``plugin:<plugin>:<server>``; their tools are
  ``mcp__plugin_<plugin>_<server>__<tool>``.
* Mock folders: ``<suite>/mocks/<server>/<tool>.md`` for the suite and
  ``<case>/mocks/<server>/<tool>.md`` for one case (a case's file overrides the suite's for that
  tool).
* A mock folder named after a declared server (its key, or the normalized registered name)
  *shadows* it: a stand-in under the same name, in the with arm only. A mock folder that matches
  no declared server is a *standalone* server ``mcp__<folder>__<tool>``, in both arms. A declared
  server with no mocks is *withheld* (not started) unless real servers are allowed.
* ``_tools.json`` (a saved ``tools/list`` response) gives tools their descriptions and schemas;
  a tool without an entry gets a permissive schema and a warning.
* ``_server.md`` with ``type: agent`` makes a model play the server (see :mod:`.agent`): its body
  describes the server, ``tools:`` lists what it offers, ``abort_when:`` (optional) says when the
  model may stop the run. A ``<tool>.md`` with ``type: agent`` has its tool played the same way
  (its body adds notes for that tool); a fixed ``<tool>.md`` still answers its own tool. Answers
  saved under ``mocks/.replay/<server>/`` are replayed without a model call.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..model import Case, LoadError
from ..util.manifest import manifest_path, plugin_name
from ..util.safeload import OverBound, json_data, read_text
from .spec import MockSpec, parse_mock

Kind = Literal["shadow", "standalone"]

#: The schema a tool without a ``_tools.json`` entry is served with.
PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}

TOOLS_FILE = "_tools.json"
SERVER_FILE = "_server.md"
#: The folder, beside the server folders, of adopted ``type: agent`` answers.
REPLAY_DIR = ".replay"


def normalize(name: str) -> str:
    """A server or tool name as Claude Code puts it into tool names."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


@dataclass(frozen=True)
class MockTool:
    """One mocked tool: its answer and how it is offered."""

    name: str
    spec: MockSpec
    #: The mock folder of the file (``{{file:}}`` paths resolve and stay here).
    root: Path
    description: str | None = None
    input_schema: dict[str, Any] | None = None

    @property
    def schema(self) -> dict[str, Any]:
        return self.input_schema if self.input_schema is not None else dict(PERMISSIVE_SCHEMA)


@dataclass(frozen=True)
class MockServer:
    """A stand-in server: a folder of mocks, shadowing a declared server or standalone."""

    name: str
    kind: Kind
    #: The name it is registered under (``plugin:<plugin>:<server>`` or the folder's name).
    registered: str
    tools: tuple[MockTool, ...]
    warnings: tuple[str, ...] = ()
    #: ``type: agent`` servers: the ``_server.md`` body (what the model is told the server is).
    instructions: str = ""
    #: ``type: agent`` servers: when the model may abort the run (``abort_when:``), if ever.
    abort_when: str | None = None
    #: Folders of adopted agent answers, the case's first (``<mocks>/.replay/<folder>``).
    replay_dirs: tuple[Path, ...] = ()

    @property
    def agent_tools(self) -> tuple[MockTool, ...]:
        """The tools a model answers (``type: agent``)."""
        return tuple(t for t in self.tools if t.spec.type == "agent")

    @property
    def tool_prefix(self) -> str:
        return f"mcp__{normalize(self.registered)}__"

    def qualified(self, tool: str) -> str:
        """The tool's name as the agent sees it."""
        return self.tool_prefix + normalize(tool)


@dataclass(frozen=True)
class MockPlan:
    """Everything mocks decide for one case, whatever the arm."""

    plugin: str | None = None
    #: Declared servers: key -> its configuration as written.
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)
    servers: tuple[MockServer, ...] = ()
    #: Declared servers without mocks: not started unless real servers are allowed.
    withheld: tuple[str, ...] = ()
    #: Mock files that could not be read (their tools are not offered).
    errors: tuple[LoadError, ...] = ()

    def active(self, loads_plugin: bool) -> tuple[MockServer, ...]:
        """The stand-ins of an arm: shadows only when the plugin is loaded."""
        return tuple(s for s in self.servers if loads_plugin or s.kind == "standalone")

    @property
    def shadow_only(self) -> bool:
        """Every mock shadows a plugin server (mock_calls graders are with-only indicators)."""
        return bool(self.servers) and all(s.kind == "shadow" for s in self.servers)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(w for s in self.servers for w in s.warnings)


# -- declared servers ------------------------------------------------------------------------


def declared_servers(plugin_dir: Path) -> dict[str, dict[str, Any]]:
    """The plugin's MCP servers, by key: ``.mcp.json`` first, then plugin.json's."""
    found: dict[str, dict[str, Any]] = {}
    mcp_json = plugin_dir / ".mcp.json"
    if mcp_json.is_file():
        found.update(_server_map(_read_json(mcp_json), mcp_json))
    manifest_file = manifest_path(plugin_dir)
    manifest = _read_json(manifest_file, required=False)
    inline = manifest.get("mcpServers") if isinstance(manifest, dict) else None
    for entry in inline if isinstance(inline, list) else [inline]:
        if isinstance(entry, dict):
            found.update(_server_map({"mcpServers": entry}, manifest_file))
        elif isinstance(entry, str) and entry.endswith(".json"):
            target = (plugin_dir / entry).resolve()
            if target.is_file():
                found.update(_server_map(_read_json(target), target))
        # anything else (an MCPB bundle, null) cannot be mocked and declares nothing here
    return found


def _server_map(doc: Any, path: Path) -> dict[str, dict[str, Any]]:
    if not isinstance(doc, dict):
        raise LoadError(path, "an MCP configuration must be a JSON object")
    servers = doc.get(
        "mcpServers", doc if doc and all(isinstance(v, dict) for v in doc.values()) else {}
    )
    if not isinstance(servers, dict):
        raise LoadError(path, "mcpServers must be an object of server name -> configuration")
    return {str(k): v for k, v in servers.items() if isinstance(v, dict)}


def _read_json(path: Path, *, required: bool = True) -> Any:
    try:
        return json_data(read_text(path))
    except FileNotFoundError:
        if required:
            raise LoadError(path, "file not found") from None
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(path, f"cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LoadError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except OverBound as exc:
        raise LoadError(path, exc.message, exc.line) from None


# -- _tools.json -----------------------------------------------------------------------------


def load_tools_json(path: Path) -> dict[str, dict[str, Any]]:
    """A saved ``tools/list`` response: tool name -> ``{description, inputSchema}``.

    Accepts ``{"tools": [...]}``, a JSON-RPC ``{"result": {"tools": [...]}}`` and a bare list.
    """
    doc = _read_json(path)
    if isinstance(doc, dict) and isinstance(doc.get("result"), dict):
        doc = doc["result"]
    tools = doc.get("tools") if isinstance(doc, dict) else doc
    if not isinstance(tools, list):
        raise LoadError(
            path, 'expected a tools/list response: {"tools": [{"name", "inputSchema"}]}'
        )
    entries: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise LoadError(path, f"tools[{index}] must be an object with a name")
        schema = tool.get("inputSchema", tool.get("input_schema"))
        if schema is not None and not (isinstance(schema, dict) and schema.get("type") == "object"):
            raise LoadError(
                path,
                f"tools[{index}] ({tool['name']}): inputSchema must be a JSON Schema "
                'with "type": "object"',
            )
        description = tool.get("description")
        entries[tool["name"]] = {
            "description": description if isinstance(description, str) else None,
            "inputSchema": schema,
        }
    return entries


# -- mock folders ----------------------------------------------------------------------------


def _server_dirs(mocks_dir: Path) -> dict[str, Path]:
    if not mocks_dir.is_dir():
        return {}
    return {
        d.name: d
        for d in sorted(mocks_dir.iterdir())
        if d.is_dir() and not d.name.startswith((".", "_"))
    }


def _tool_files(server_dir: Path) -> dict[str, Path]:
    return {
        p.stem: p
        for p in sorted(server_dir.glob("*.md"))
        if p.is_file() and not p.name.startswith(("_", "."))
    }


def _server_spec(path: Path) -> MockSpec:
    """A ``_server.md``: it must be ``type: agent`` and list its tools."""
    spec = parse_mock(path)
    if spec.type != "agent":
        raise LoadError(path, f"{SERVER_FILE} describes a type: agent server (set type: agent)", 1)
    if not spec.tools:
        raise LoadError(
            path,
            f"{SERVER_FILE} must list the tools the model answers (tools: [name, ...])",
            spec.type_line,
        )
    return spec


def _build_server(
    name: str, kind: Kind, registered: str, dirs: list[Path], errors: list[LoadError]
) -> MockServer | None:
    """The server from its folders, suite first then case (a case's tool file wins).

    A mock file that cannot be read is left out (its tool is not offered) and its error is
    appended to ``errors``: it is reported once, and the cases still run. A ``_server.md`` that
    cannot be read leaves the whole server out."""
    files: dict[str, Path] = {}
    entries: dict[str, dict[str, Any]] = {}
    server: MockSpec | None = None
    for folder in dirs:
        files.update(_tool_files(folder))
        if (folder / TOOLS_FILE).is_file():
            entries.update(load_tools_json(folder / TOOLS_FILE))
        if (folder / SERVER_FILE).is_file():
            try:
                server = _server_spec(folder / SERVER_FILE)
            except LoadError as error:
                errors.append(error)
                return None
    names = sorted({*files, *(server.tools if server else ())})
    if not names:
        return None
    tools: list[MockTool] = []
    missing: list[str] = []
    for tool in names:
        path = files.get(tool)
        spec = server  # a tool without a file of its own is played by _server.md's model
        if path is not None:
            try:
                spec = parse_mock(path, root=path.parent)
            except LoadError as error:
                errors.append(error)
                continue
        if spec is None:
            continue
        entry = entries.get(tool)
        if entry is None:
            missing.append(tool)
        tools.append(
            MockTool(
                name=tool,
                spec=spec,
                root=spec.path.parent,
                description=entry["description"] if entry else None,
                input_schema=entry["inputSchema"] if entry else None,
            )
        )
    warnings = []
    if missing:
        warnings.append(
            f"{name}: no {TOOLS_FILE} entry for {', '.join(missing)} — served with a permissive "
            f"schema and no description; save the server's tools/list response as "
            f"mocks/{name}/{TOOLS_FILE} so the model sees the real tool"
        )
    return MockServer(
        name,
        kind,
        registered,
        tuple(tools),
        tuple(warnings),
        instructions=server.body if server else "",
        abort_when=server.abort_when if server else None,
        replay_dirs=tuple(d.parent / REPLAY_DIR / d.name for d in reversed(dirs)),
    )


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        if path.resolve() not in [p.resolve() for p in seen]:
            seen.append(path)
    return seen


def discover_mocks(case_dir: Path, suite_root: Path, plugin_dir: Path | None) -> MockPlan:
    """The mock plan of one case. Raises :class:`LoadError` for a bad mock or MCP file."""
    declared = declared_servers(plugin_dir) if plugin_dir is not None else {}
    plugin = plugin_name(plugin_dir) if plugin_dir is not None else None
    layers = _unique([suite_root / "mocks", case_dir / "mocks"])
    folders: dict[str, list[tuple[int, Path]]] = {}
    for depth, layer in enumerate(layers):
        for name, folder in _server_dirs(layer).items():
            folders.setdefault(name, []).append((depth, folder))
    servers: list[MockServer] = []
    withheld: list[str] = []
    errors: list[LoadError] = []
    claimed: set[str] = set()
    for key in declared:
        registered = f"plugin:{plugin}:{key}"
        names = [n for n in (key, normalize(key), normalize(registered)) if n in folders]
        dirs = [d for _, d in sorted(f for n in dict.fromkeys(names) for f in folders[n])]
        claimed.update(names)
        server = _build_server(key, "shadow", registered, dirs, errors) if dirs else None
        if server is None:
            withheld.append(key)
        else:
            servers.append(server)
    for name, layered in folders.items():
        if name in claimed:
            continue
        server = _build_server(name, "standalone", name, [d for _, d in sorted(layered)], errors)
        if server is not None:
            servers.append(server)
    servers.sort(key=lambda s: s.name)  # listed by name, as the reference lists them
    return MockPlan(plugin, declared, tuple(servers), tuple(withheld), tuple(errors))


def load_plan(case: Case, plugin_dir: Path | None) -> MockPlan:
    """The case's mock plan (call at collection to report bad mocks as load errors)."""
    plan = discover_mocks(case.dir, case.suite_root, plugin_dir)
    if case.mocks:
        plan = replace(plan, servers=(*plan.servers, package_server(case)))
    return plan


def package_server(case: Case) -> MockServer:
    """A package.json eval's ``mocks`` (tool name → result) as a standalone stand-in, named
    after the package: its tools reach the agent as ``mcp__<package>__<tool>``."""
    name = case.path.parent.name
    with contextlib.suppress(OSError, ValueError, AttributeError):
        name = str(json_data(read_text(case.path)).get("name") or name)
    tools = tuple(
        MockTool(
            name=tool,
            spec=MockSpec(
                path=case.path,
                body=result if isinstance(result, str) else json.dumps(result, ensure_ascii=False),
            ),
            root=case.dir,
        )
        for tool, result in sorted(case.mocks.items())
    )
    return MockServer(name=name, kind="standalone", registered=normalize(name), tools=tools)
