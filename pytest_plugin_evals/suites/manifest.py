"""Plugin manifests: which plugin a case evaluates.

A plugin is a folder with ``.claude-plugin/plugin.json``. A case evaluates the plugins its
``plugins:`` names (paths relative to the case folder), else the nearest plugin at or above its
suite root. With no manifest there, a bare skill layout beside the evals folder (in it or in
the folder holding it) is the plugin, as Claude Code's ``--plugin-dir`` loads it: a skill
folder (``SKILL.md``), a folder of skills (``skills/*/SKILL.md``), or a project's
``.claude/skills/`` (the ``.claude`` folder is then the plugin, its skills ``.claude:<skill>``),
or a skill collection: ``<skill>/SKILL.md`` folders and ``evals/`` at the top (skill-creator's
layout in the wild), the plugin of those skills; a skill inside a collection is the
collection's.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, LoadError, PluginInfo
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.json_lines import JSONProblem, load_json
from pytest_plugin_evals.util.manifest import manifest_path, name_in


def read_plugin(folder: Path) -> PluginInfo:
    """The plugin in ``folder``: its manifest's name and version, else the folder's name.

    Raises LoadError when the manifest exists but is not a valid JSON object.
    """
    manifest = manifest_path(folder)
    if not manifest.is_file():
        return bare_plugin(folder) or PluginInfo(folder.name, None, folder)
    try:
        data = load_json(v.read_source(manifest)).data
    except JSONProblem as exc:
        raise LoadError(manifest, f"invalid plugin manifest: {exc.message}", exc.line) from None
    if not isinstance(data, dict):
        raise LoadError(
            manifest, f"a plugin manifest must be a JSON object (got {v.kind(data)})", 1
        )
    return PluginInfo(
        name=name_in(data, folder), version=_version(data.get("version")), path=folder
    )


def _version(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def find_plugin(start: Path) -> PluginInfo | None:
    """The nearest plugin at or above ``start`` (a folder or a file), or None.

    A manifest anywhere above wins (a skill inside a plugin is the plugin's); else a bare skill
    layout in ``start`` or its parent, never the home folder's own ``.claude/skills``.
    """
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        if manifest_path(folder).is_file():
            return read_plugin(folder)
    for folder in (here, here.parent):
        found = bare_plugin(folder)
        if found is not None:
            # A skill of a collection loads with its collection (not a ``skills/`` folder's).
            inner = found.layout == "skill" and folder.parent.name != "skills"
            return (collection(folder.parent) if inner else None) or found
    return None


def bare_plugin(folder: Path) -> PluginInfo | None:
    """The skills in ``folder`` with no manifest, as Claude Code's ``--plugin-dir`` loads them."""
    if (folder / "SKILL.md").is_file():
        return PluginInfo(folder.name, None, folder, "skill")
    if _has_skills(folder):
        return PluginInfo(folder.name, None, folder, "skills")
    project = folder / ".claude"
    if folder != Path.home().resolve() and _has_skills(project):
        return PluginInfo(project.name, None, project, "claude-skills")
    return collection(folder)


#: Top folders of a repository that are never a skill of its collection.
NOT_SKILLS = frozenset({"evals", "node_modules", "results", "mocks"})


def collection_skills(folder: Path) -> list[Path]:
    """The ``SKILL.md`` of each ``<skill>/`` folder directly in ``folder``, by name."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [
        entry / "SKILL.md"
        for entry in entries
        if not entry.name.startswith(".")
        and entry.name not in NOT_SKILLS
        and (entry / "SKILL.md").is_file()
    ]


def stage_collection(plugin: PluginInfo, base: Path) -> Path:
    """A skill collection's skills copied, as they are, into ``base/<collection>/skills/``:
    the layout every agent CLI loads as a plugin folder. That folder."""
    target = base / plugin.name
    for skill_md in collection_skills(plugin.path):
        shutil.copytree(skill_md.parent, target / "skills" / skill_md.parent.name, symlinks=True)
    return target


def collection(folder: Path) -> PluginInfo | None:
    """``folder`` as a skill collection, or None: ``<skill>/SKILL.md`` folders and an
    ``evals/`` folder at its top, no manifest (a folder that merely holds skill folders, with
    no evals of its own, is no plugin)."""
    if manifest_path(folder).is_file() or folder == Path.home().resolve():
        return None
    if not (folder / "evals").is_dir():
        return None
    if not collection_skills(folder):
        return None
    return PluginInfo(folder.name, None, folder, "collection")


def _has_skills(folder: Path) -> bool:
    return any(p.is_file() for p in folder.glob("skills/*/SKILL.md"))


def no_plugin_line(suite_root: Path) -> str:
    """Why no plugin was found for a suite, in one line."""
    here = suite_root.resolve()
    return (
        f"no plugin found: no .claude-plugin/plugin.json at or above {here}, and no SKILL.md, "
        f"skills/*/SKILL.md, .claude/skills/*/SKILL.md or <skill>/SKILL.md in it or in "
        f"{here.parent} — "
        "every case ran in one arm, with no plugin loaded (no Δ)"
    )


def case_plugins(case: Case) -> list[PluginInfo]:
    """The plugins ``case`` evaluates: its ``plugins:`` entries, else the nearest one."""
    if not case.plugins:
        found = find_plugin(case.suite_root)
        return [found] if found is not None else []
    plugins = []
    for entry in case.plugins:
        folder = (case.dir / entry).resolve()
        if not folder.is_dir():
            raise LoadError(
                case.path, f'plugins: "{entry}" is not a folder (relative to {case.dir.name}/)'
            )
        plugins.append(read_plugin(folder))
    return plugins
