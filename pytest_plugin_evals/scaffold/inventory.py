"""What ``init`` reads of a plugin: its skills, commands, agents and MCP servers.

The plugin is resolved as a session resolves it (``suites.manifest``): a manifest, else a bare
skill layout (a ``SKILL.md``, ``skills/*/SKILL.md``, a project's ``.claude/skills/``, a skill
collection's ``<skill>/SKILL.md`` folders). Each
skill's name and description come from its ``SKILL.md`` frontmatter (the folder's name when it
names none), each command's and agent's from theirs. What a file says is the author's text, but
it is bounded before it goes into a prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.mocks.discover import declared_servers
from pytest_plugin_evals.model import LoadError
from pytest_plugin_evals.suites.manifest import collection_skills, find_plugin
from pytest_plugin_evals.util.frontmatter import Unterminated, YAMLProblem, load_yaml, split

#: How much of a file ``init`` reads, and of a description or a skill's body it shows the judge.
READ_LIMIT = 64_000
DESCRIPTION_LIMIT = 1_000
BODY_LIMIT = 6_000


@dataclass(frozen=True)
class Part:
    """A skill, a command or an agent: its name, what it says it is for, its file."""

    name: str
    description: str
    path: Path
    #: A skill's instructions (its SKILL.md body), bounded; empty for the others.
    body: str = ""

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass(frozen=True)
class Inventory:
    """The plugin under test, as ``init`` read it."""

    name: str
    root: Path
    skills: tuple[Part, ...]
    commands: tuple[Part, ...]
    agents: tuple[Part, ...]
    servers: tuple[str, ...]

    def summary(self) -> str:
        """``release-helper: 1 skill (next-version), 1 command (ship), no agents, …``."""

        def count(parts: tuple[str, ...], one: str, many: str) -> str:
            if not parts:
                return f"no {many}"
            listed = ", ".join(parts[:8]) + (", …" if len(parts) > 8 else "")
            return f"{len(parts)} {one if len(parts) == 1 else many} ({listed})"

        return (
            f"{self.name}: "
            f"{count(tuple(p.name for p in self.skills), 'skill', 'skills')}, "
            f"{count(tuple(p.name for p in self.commands), 'command', 'commands')}, "
            f"{count(tuple(p.name for p in self.agents), 'agent', 'agents')}, "
            f"{count(self.servers, 'MCP server', 'MCP servers')}"
        )


def read_inventory(root: Path) -> Inventory:
    """The plugin at ``root`` (a plugin folder or a skill layout)."""
    plugin = find_plugin(root)
    home = plugin.path if plugin is not None else root
    name = plugin.name if plugin is not None else root.name
    if (home / "SKILL.md").is_file():
        skill_files = [home / "SKILL.md"]
    else:
        skill_files = sorted(p for p in home.glob("skills/*/SKILL.md") if p.is_file())
    if not skill_files and (plugin is None or plugin.layout == "collection"):
        skill_files = collection_skills(home)  # a skill collection: <skill>/SKILL.md
    skills = tuple(_part(p, p.parent.name, body=True) for p in skill_files)
    commands = tuple(_part(p, p.stem) for p in sorted(home.glob("commands/*.md")) if p.is_file())
    agents = tuple(_part(p, p.stem) for p in sorted(home.glob("agents/*.md")) if p.is_file())
    try:
        servers = tuple(sorted(declared_servers(home)))
    except LoadError:
        servers = ()
    return Inventory(name, home, skills, commands, agents, servers)


def _part(path: Path, fallback: str, *, body: bool = False) -> Part:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(READ_LIMIT)
    except OSError:
        text = ""
    try:
        parts = split(text)
        data = load_yaml(parts.yaml_text).data if parts.yaml_text is not None else None
        rest = parts.body
    except (YAMLProblem, Unterminated):
        data, rest = None, text
    fields = data if isinstance(data, dict) else {}
    name = fields.get("name")
    description = fields.get("description")
    return Part(
        name=name.strip() if isinstance(name, str) and name.strip() else fallback,
        description=(description.strip() if isinstance(description, str) else "")[
            :DESCRIPTION_LIMIT
        ],
        path=path,
        body=rest.strip()[:BODY_LIMIT] if body else "",
    )
