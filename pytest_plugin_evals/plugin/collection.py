"""A skill collection as the plugin its with arm loads.

A collection (``<skill>/SKILL.md`` folders at a repository's top, no manifest: see
``suites.manifest``) is not a layout an agent CLI loads as a plugin folder. Once per process,
its skills are copied into a temporary folder in the layout every agent CLI loads
(``suites.manifest.stage_collection``), and that folder is the with arm's plugin. Nothing is
moved or written in the repository; the copy is removed when the session ends.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import partial
from pathlib import Path

import pytest

from pytest_plugin_evals.model import PluginInfo
from pytest_plugin_evals.suites.manifest import stage_collection

_staged_key = pytest.StashKey[dict[Path, Path]]()


def plugin_folder(config: pytest.Config, plugin: PluginInfo) -> Path:
    """The folder a run loads for ``plugin``: its own, or a collection's staged copy."""
    if plugin.layout != "collection":
        return plugin.path
    staged = config.stash.setdefault(_staged_key, {})
    source = plugin.path.resolve()
    found = staged.get(source)
    if found is None or not found.is_dir():
        base = Path(tempfile.mkdtemp(prefix="plugin-evals-collection-"))
        config.add_cleanup(partial(shutil.rmtree, base, ignore_errors=True))
        found = staged[source] = stage_collection(plugin, base)
    return found
