"""Plugin manifests: which plugin a case evaluates.

A plugin is a folder with ``.claude-plugin/plugin.json``. A case evaluates the plugins its
``plugins:`` names (paths relative to the case folder), else the nearest plugin at or above its
suite root.
"""

from __future__ import annotations

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
        return PluginInfo(folder.name, None, folder)
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
    """The nearest plugin at or above ``start`` (a folder or a file), or None."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        if manifest_path(folder).is_file():
            return read_plugin(folder)
    return None


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
