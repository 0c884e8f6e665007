"""A Claude plugin, translated into an opencode configuration folder (``OPENCODE_CONFIG_DIR``).

* ``skills/`` and ``commands/`` are copied as they are (opencode reads both layouts; it writes
  into its configuration folder, so the plugin is copied, not linked);
* each ``agents/<agent>.md`` becomes ``agents/<plugin>:<name>.md``, an opencode subagent
  (``mode: subagent``) named as Claude Code names a plugin's agent, with the same body (its
  system prompt) and ``description``; ``model`` as the run reads models (:func:`.config.model_id`,
  only when the run's own model is an Anthropic one); ``tools`` / ``disallowedTools`` become a
  ``permission`` block that only ever denies what the run allows (:func:`.config.agent_permission`);
* ``hooks/`` (or a manifest's ``hooks``) has no opencode equivalent (its plugins are JavaScript
  modules): left out, and the run says so.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.agents.opencode.config import agent_permission, model_id
from pytest_plugin_evals.util import frontmatter
from pytest_plugin_evals.util.manifest import plugin_name, read_manifest

#: The note of a plugin with hooks.
HOOKS_NOTE = (
    "plugin hooks have no opencode equivalent (its plugins are JavaScript modules): not loaded"
)

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]")


@dataclass(frozen=True)
class ClaudeAgent:
    """One ``agents/*.md`` of a Claude plugin."""

    name: str
    description: str
    #: ``tools`` (Claude Code's names); None: every tool the run allows.
    tools: tuple[str, ...] | None
    disallowed: tuple[str, ...]
    model: str | None
    prompt: str


@dataclass(frozen=True)
class PluginFolder:
    folder: Path
    #: The translated agents, by opencode's name (``<plugin>:<agent>``).
    agents: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _tool_list(value: Any) -> tuple[str, ...] | None:
    """Claude's ``tools``: a list, or one string of names separated by commas (not those inside
    ``Bash(…)``)."""
    if value is None:
        return None
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    parts = re.split(r",(?![^()]*\))", str(value))
    return tuple(p.strip() for p in parts if p.strip())


def read_agent(path: Path) -> ClaudeAgent:
    """A Claude agent file; raises ValueError (or OSError) when it cannot be read."""
    head = frontmatter.split(path.read_text(encoding="utf-8"))
    data: Any = {}
    if head.yaml_text is not None:
        data = frontmatter.load_yaml(head.yaml_text).data or {}
    if not isinstance(data, dict):
        raise ValueError("its front matter is not a mapping")
    name = str(data.get("name") or path.stem).strip()
    model = data.get("model")
    model = str(model).strip() if model not in (None, "") else None
    return ClaudeAgent(
        name=name,
        description=str(data.get("description") or name).strip(),
        tools=_tool_list(data.get("tools")),
        disallowed=_tool_list(data.get("disallowedTools")) or (),
        model=None if model == "inherit" else model,
        prompt=head.body.strip(),
    )


def agent_markdown(
    agent: ClaudeAgent,
    *,
    run_permission: Mapping[str, Any],
    run_model: str,
    plan: McpPlan | None = None,
) -> tuple[str, list[str]]:
    """The opencode agent file for ``agent`` in a run whose permission is ``run_permission`` and
    whose model is ``run_model`` (``provider/model``), and its notes."""
    notes: list[str] = []
    permission = agent_permission(run_permission, agent.tools, plan, agent.disallowed)
    front: dict[str, Any] = {"description": agent.description, "mode": "subagent"}
    if agent.model is not None:
        if run_model.startswith("anthropic/"):
            front["model"] = model_id(agent.model)
        else:
            notes.append(
                f"agent {agent.name}: model {agent.model} not applied (the run's model is "
                f"{run_model})"
            )
    front["permission"] = permission
    text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{text}---\n{agent.prompt}\n", notes


def plugin_config_dir(
    plugin_dir: Path,
    target: Path,
    *,
    run_permission: Mapping[str, Any] | None = None,
    run_model: str | None = None,
    plan: McpPlan | None = None,
) -> PluginFolder:
    """Translate a Claude plugin into an opencode config folder at ``target`` (see the
    module's docstring). Without ``run_permission`` no agent is translated."""
    target.mkdir(parents=True, exist_ok=True)
    for part in ("skills", "commands"):
        source = plugin_dir / part
        if source.is_dir():
            shutil.copytree(source, target / part, symlinks=False)
    notes: list[str] = []
    agents: list[str] = []
    plugin = plugin_name(plugin_dir)
    if run_permission is not None:
        for path in sorted((plugin_dir / "agents").glob("*.md")):
            try:
                agent = read_agent(path)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                notes.append(f"agent {path.name} could not be read (not loaded): {exc}")
                continue
            name = _UNSAFE.sub("-", f"{plugin}:{agent.name}")
            text, agent_notes = agent_markdown(
                agent, run_permission=run_permission, run_model=run_model or "", plan=plan
            )
            (target / "agents").mkdir(exist_ok=True)
            (target / "agents" / f"{name}.md").write_text(text, encoding="utf-8")
            agents.append(name)
            notes.extend(agent_notes)
    if (plugin_dir / "hooks").exists() or _manifest_has(plugin_dir, "hooks"):
        notes.append(HOOKS_NOTE)
    return PluginFolder(target, tuple(agents), tuple(notes))


def _manifest_has(plugin_dir: Path, key: str) -> bool:
    return bool((read_manifest(plugin_dir) or {}).get(key))
