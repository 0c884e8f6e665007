"""A Claude Code plugin as a Gemini CLI extension, written in the run's own folders.

A plugin that ships its own ``gemini-extension.json`` is copied as it is (its ``.git`` and
the evals folder left out; of its ``mcpServers``, those the run gives otherwise or withholds are
taken out). Otherwise the extension is made from the Claude layout:

* ``gemini-extension.json``: the plugin's name (lower case, dashes), version and description;
  ``contextFileName`` when the plugin has a ``GEMINI.md``;
* ``skills/``: copied as they are (Gemini CLI reads the same ``SKILL.md`` files);
* ``commands/*.md`` → ``commands/*.toml`` (``description`` from the front matter, the body as
  ``prompt``, ``$ARGUMENTS`` → ``{{args}}``);
* MCP servers (``.mcp.json``, or ``mcpServers`` in the manifest) are not put in the
  extension: the run's settings get them, with its stand-ins (``agents/mcp.py`` decides which;
  :func:`pytest_plugin_evals.agents.mcp_settings.settings_server` translates each).

Hooks and agents have no Gemini CLI equivalent here and are left out (the run says so).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.plugins import skill_name
from pytest_plugin_evals.util import frontmatter
from pytest_plugin_evals.util.manifest import plugin_name, read_manifest


@dataclass(frozen=True)
class Extension:
    """The extension made for one run."""

    folder: Path
    name: str
    skills: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    #: The MCP servers of a plugin's own ``gemini-extension.json`` left in the extension.
    mcp_servers: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def extension_name(name: str) -> str:
    """Gemini CLI's form of a name: lower case, digits and dashes."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    return cleaned or "plugin"


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, DEL aside)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007F")


def _skill_names(folder: Path) -> tuple[str, ...]:
    return tuple(skill_name(p) for p in sorted(folder.glob("skills/*/SKILL.md")))


def _command_toml(source: Path) -> str:
    text = source.read_text(encoding="utf-8", errors="replace")
    description = ""
    body = text
    with contextlib.suppress(ValueError):
        head = frontmatter.split(text)
        if head.yaml_text is not None:
            data = frontmatter.load_yaml(head.yaml_text).data
            given = data.get("description") if isinstance(data, dict) else None
            if isinstance(given, str):
                description = given.strip()
            body = head.body
    body = body.replace("$ARGUMENTS", "{{args}}").strip() + "\n"
    lines = [f"description = {toml_string(description)}"] if description else []
    lines.append(f"prompt = {toml_string(body)}")
    return "\n".join(lines) + "\n"


def translate(
    plugin_dir: Path, target: Path, *, own_mcp: bool = True, drop_mcp: Collection[str] = ()
) -> Extension:
    """Write the extension for ``plugin_dir`` into ``target`` (a fresh folder) and describe it.

    A plugin's own ``gemini-extension.json`` keeps its ``mcpServers`` unless ``own_mcp`` is
    off (a strict run withholds them), less those named in ``drop_mcp`` (the run gives them
    otherwise, or withholds them)."""
    plugin_dir = plugin_dir.resolve()
    own = plugin_dir / "gemini-extension.json"
    if own.is_file():
        shutil.copytree(
            plugin_dir,
            target,
            ignore=shutil.ignore_patterns(".git", "evals", "node_modules"),
            symlinks=True,
        )
        shipped: Any = None
        with contextlib.suppress(OSError, ValueError):
            shipped = json.loads(own.read_text(encoding="utf-8"))
        shipped = shipped if isinstance(shipped, dict) else {}
        declared = shipped.get("mcpServers")
        kept: tuple[str, ...] = ()
        if isinstance(declared, dict):
            kept = tuple(str(k) for k in declared if own_mcp and str(k) not in drop_mcp)
            if len(kept) < len(declared):
                shipped["mcpServers"] = {k: v for k, v in declared.items() if str(k) in kept}
                copied = target / "gemini-extension.json"
                copied.unlink()
                copied.write_text(json.dumps(shipped, indent=2), encoding="utf-8")
        return Extension(
            folder=target,
            name=str(shipped.get("name") or target.name),
            skills=_skill_names(target),
            commands=tuple(sorted(p.stem for p in target.glob("commands/**/*.toml"))),
            mcp_servers=kept,
        )
    target.mkdir(parents=True)
    manifest = read_manifest(plugin_dir) or {}
    name = extension_name(plugin_name(plugin_dir))
    doc: dict[str, Any] = {"name": name, "version": str(manifest.get("version") or "0.0.0")}
    if isinstance(manifest.get("description"), str):
        doc["description"] = manifest["description"]
    notes: list[str] = []
    if (plugin_dir / "GEMINI.md").is_file():
        shutil.copyfile(plugin_dir / "GEMINI.md", target / "GEMINI.md")
        doc["contextFileName"] = "GEMINI.md"
    if (plugin_dir / "skills").is_dir():
        shutil.copytree(plugin_dir / "skills", target / "skills")
    commands: list[str] = []
    for source in sorted(plugin_dir.glob("commands/*.md")):
        (target / "commands").mkdir(exist_ok=True)
        (target / "commands" / f"{source.stem}.toml").write_text(
            _command_toml(source), encoding="utf-8"
        )
        commands.append(source.stem)
    for part in ("hooks", "agents"):
        if (plugin_dir / part).exists():
            notes.append(f"plugin {part}/ has no Gemini CLI equivalent here: not loaded")
    (target / "gemini-extension.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return Extension(
        folder=target,
        name=name,
        skills=_skill_names(target),
        commands=tuple(commands),
        notes=tuple(notes),
    )
