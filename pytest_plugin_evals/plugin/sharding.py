"""``--eval-shard K/N``: keep this shard's cases (:func:`~..engine.selected.shard_split`).

Registered (on the controller and on every xdist worker) only when the option is given. Its
``pytest_collection_modifyitems`` runs last, after ``-k``, ``-m``, ``--eval-case`` and
``--eval-tag`` have deselected theirs, so it splits the cases that are selected; the items of
the other shards' cases are deselected as ``-k`` deselects (``N deselected``).
"""

from __future__ import annotations

import pytest

from pytest_plugin_evals.engine.selected import shard_split, tell_plan, told_plan
from pytest_plugin_evals.plugin.keys import settings_key, shard_plan_key, shared_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.shards import Shard, ShardPlan


class ShardSelection:
    """Keeps this shard's cases (see the module's docstring)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings, shard: Shard) -> None:
        self.config = config
        self.settings = settings
        self.shard = shard

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        evals = eval_items(items)
        if not evals:
            return  # no eval item was made
        runs = [(i.nodeid, i.case, i.agent_label, i.run, i.two_arm) for i in evals]
        plan, others = shard_split(self.shard, runs, self.settings)
        config.stash[shard_plan_key] = plan
        if hasattr(config, "workerinput"):
            tell_plan(config.stash[shared_key], plan)
        dropped = {id(item): item for item in evals if item.nodeid in others}
        if dropped:
            config.hook.pytest_deselected(items=list(dropped.values()))
            items[:] = [item for item in items if id(item) not in dropped]


def shard_plan(config: pytest.Config) -> ShardPlan | None:
    """The session's split: made in this process, else by its xdist workers (None: the
    session is not split, or no eval case was selected)."""
    plan = config.stash.get(shard_plan_key, None)
    if plan is not None or config.stash[settings_key].shard is None:
        return plan
    shared = config.stash.get(shared_key, None)
    return None if shared is None else told_plan(shared)
