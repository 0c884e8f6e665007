"""A plugin's manifest, ``.claude-plugin/plugin.json``: where it is and the plugin's name.

Loaders validate manifests strictly (``suites.manifest``); everything else reads the name
leniently through :func:`plugin_name`, so every room names a plugin the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MANIFEST_DIR = ".claude-plugin"
MANIFEST_FILE = "plugin.json"


def manifest_path(folder: Path) -> Path:
    return folder / MANIFEST_DIR / MANIFEST_FILE


def is_plugin(folder: Path) -> bool:
    return manifest_path(folder).is_file()


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest as a JSON object, or None when it is missing or not an object."""
    try:
        data = json.loads(manifest_path(folder).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def name_in(manifest: dict[str, Any] | None, folder: Path) -> str:
    """The manifest's ``name`` when it is a non-empty string, else the folder's name."""
    name = (manifest or {}).get("name")
    return name.strip() if isinstance(name, str) and name.strip() else folder.name


def plugin_name(folder: Path) -> str:
    """The plugin's name, as Claude Code names it: the manifest's, else its folder's."""
    return name_in(read_manifest(folder), folder)


def skill_root(folder: Path) -> Path:
    """Where a plugin's skills are: ``skills/``, or the folder itself when it is a skill
    (``SKILL.md`` and no ``skills/``, a bare skill loaded as a plugin)."""
    skills = folder / "skills"
    if not skills.is_dir() and (folder / "SKILL.md").is_file():
        return folder
    return skills
