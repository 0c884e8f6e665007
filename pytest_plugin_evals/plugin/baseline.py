"""The baseline arm's plugin (``--eval-baseline-plugin``, checked as an option's value by
:func:`pytest_plugin_evals.settings.parsers.baseline`) in the shell: the baseline of each plugin
under test resolved once per process (:mod:`pytest_plugin_evals.suites.baseline`: a folder, or a
commit's tree checked out in the session's shared folder; it goes with that folder at the
session's end).

A baseline that cannot be had (a ref that does not resolve, a plugin missing at that ref) is
one usage line naming the option. It is found while collecting; the collecting process raises
it once collection finishes, or an xdist worker leaves it for the controller, which raises it
when that worker's collection arrives.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.model import PluginInfo
from pytest_plugin_evals.plugin.keys import settings_key, shared_key
from pytest_plugin_evals.suites.baseline import FOLDER, PROBLEM_FILE, Baselines
from pytest_plugin_evals.util.tempdirs import read_whole, write_whole

#: config: the baseline of each plugin under test (by its folder), or why there is none.
_cache_key: pytest.StashKey[Baselines] = pytest.StashKey()


def baseline_for(config: pytest.Config, plugin: PluginInfo) -> PluginInfo | None:
    """The plugin the baseline arm of ``plugin``'s cases loads; None when it cannot be had
    (the reason is the session's usage error, see :class:`BaselineHooks`)."""
    spec = config.stash[settings_key].baseline_plugin
    if spec is None:
        return None
    if _cache_key not in config.stash:
        config.stash[_cache_key] = Baselines(spec, config.stash[shared_key] / FOLDER)
    return config.stash[_cache_key].of(plugin)


class BaselineHooks:
    """Registered in every process of a session that has ``--eval-baseline-plugin``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)  # a worker writes the problem before xdist reports its items
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        found = self.config.stash.get(_cache_key, None)
        problem = None if found is None else found.problem()
        if problem is None:
            return
        if not hasattr(self.config, "workerinput"):
            raise pytest.UsageError(problem)
        write_whole(self.config.stash[shared_key] / PROBLEM_FILE, problem)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: a worker could not have the baseline (see above)."""
        shared = self.config.stash.get(shared_key, None)
        found = None if shared is None else read_whole(shared / PROBLEM_FILE)
        if found is not None:
            raise pytest.UsageError(found)
