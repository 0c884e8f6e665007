"""What a plugin's folder holds, as the agents list it: its name, skills and commands, and
whether it has hooks. Each adapter's trust check compares what its agent loaded with this."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pytest_plugin_evals.util import frontmatter
from pytest_plugin_evals.util.manifest import plugin_name


def skill_name(skill_md: Path) -> str:
    """A skill's name: its frontmatter ``name:``, else its folder's name."""
    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
        head = frontmatter.split(skill_md.read_text(encoding="utf-8"))
        if head.yaml_text is not None:
            data = frontmatter.load_yaml(head.yaml_text).data
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(name, str) and name.strip():
                return name.strip()
    return skill_md.parent.name


def has_hooks(plugin_dir: Path) -> bool:
    """Whether the plugin has hooks (commands Claude Code runs as it goes)."""
    if (plugin_dir / "hooks" / "hooks.json").is_file():
        return True
    with contextlib.suppress(OSError, ValueError):
        manifest = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text("utf-8"))
        return isinstance(manifest, dict) and bool(manifest.get("hooks"))
    return False


def plugin_contents(plugin_dir: Path) -> tuple[str, list[str], list[str]]:
    """The plugin's name, its skill names and its command names, as Claude Code lists them."""
    skills = sorted(skill_name(p) for p in plugin_dir.glob("skills/*/SKILL.md"))
    commands = sorted(p.stem for p in plugin_dir.glob("commands/*.md"))
    return plugin_name(plugin_dir), skills, commands
