"""``--eval-shard K/N``: keep this shard's cases, and tell the session how the suite was split.

Registered (on the controller and on every xdist worker) only when the option is given. Its
``pytest_collection_modifyitems`` runs last, after ``-k``, ``-m``, ``--eval-case`` and
``--eval-tag`` have deselected theirs, so it splits the cases that are selected; the items of
the other shards' cases are deselected as ``-k`` deselects (``N deselected``). The split is
computed in every process from the same items, so each computes the same; the controller of an
xdist session, which collects nothing, reads it from the folder the session's processes share.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from pytest_plugin_evals.engine.nodeids import case_group
from pytest_plugin_evals.plugin.keys import settings_key, shard_plan_key, shared_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.recording import case_key
from pytest_plugin_evals.recording.recorded import recorded_durations
from pytest_plugin_evals.reporting.document_read import read_plan
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, shared_settings
from pytest_plugin_evals.shards import Shard, ShardPlan, plan_to_json, split
from pytest_plugin_evals.util.tempdirs import write_whole

if TYPE_CHECKING:
    from pytest_plugin_evals.plugin.items import EvalItem

#: The file in the session's shared folder that holds the split (written by xdist workers).
PLAN_FILE = "shard-plan.json"


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
        groups: dict[str, list[EvalItem]] = {}
        for item in evals:
            groups.setdefault(_group(item), []).append(item)
        plan = self.plan(groups)
        mine = {c.nodeid for c in plan.cases_of(self.shard.index)}
        dropped = {id(item): item for item in evals if _group(item) not in mine}
        config.stash[shard_plan_key] = plan
        if hasattr(config, "workerinput"):
            write_whole(config.stash[shared_key] / PLAN_FILE, json.dumps(plan_to_json(plan)))
        if dropped:
            config.hook.pytest_deselected(items=list(dropped.values()))
            items[:] = [item for item in items if id(item) not in dropped]

    def plan(self, groups: dict[str, list[EvalItem]]) -> ShardPlan:
        folder = self.settings.shard_durations
        cases = [
            (n, its[0].case.name, case_key(its[0].case), len(its)) for n, its in groups.items()
        ]
        root = common_suite_root(its[0].case.suite_root for its in groups.values())
        durations = recorded_durations(folder) if folder else None
        return split(self.shard, cases, durations, shared_settings(self.settings), str(root or ""))


def _group(item: EvalItem) -> str:
    return case_group(item.nodeid) or item.nodeid


def shard_plan(config: pytest.Config) -> ShardPlan | None:
    """The session's split: made in this process, else by its xdist workers (None: the
    session is not split, or no eval case was selected)."""
    plan = config.stash.get(shard_plan_key, None)
    if plan is not None or config.stash[settings_key].shard is None:
        return plan
    shared = config.stash.get(shared_key, None)
    if shared is None:
        return None
    try:
        text = (shared / PLAN_FILE).read_text(encoding="utf-8")
    except OSError:
        return None
    return read_plan(text)
