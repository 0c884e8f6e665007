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
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.nodeids import case_group
from pytest_plugin_evals.plugin.keys import settings_key, shard_plan_key, shared_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.recording import META, case_key
from pytest_plugin_evals.reporting.document_read import read_plan
from pytest_plugin_evals.settings import EvalSettings, common_suite_root
from pytest_plugin_evals.shards import (
    Shard,
    ShardCase,
    ShardPlan,
    assign,
    case_cost,
    per_run_costs,
    plan_to_json,
)

if TYPE_CHECKING:
    from pytest_plugin_evals.plugin.items import EvalItem

#: The file in the session's shared folder that holds the split (written by xdist workers).
PLAN_FILE = "shard-plan.json"


def plugin_version() -> str:
    """The installed version of pytest-plugin-evals (shards of one suite must share it)."""
    try:
        return version("pytest-plugin-evals")
    except PackageNotFoundError:
        return "unknown"


def shared_settings(settings: EvalSettings) -> dict[str, Any]:
    """The settings every shard of a suite must run with, for the merge to compare."""
    return {
        "threshold": settings.threshold,
        "ablation": settings.ablation,
        "agent": ", ".join(f"{label}={spec}" for label, spec in settings.agents)
        if settings.agents
        else settings.agent,
        "runs": settings.runs,
        "model": settings.model,
        "judge": None if settings.no_judge else settings.judge,
        "judgeModel": settings.judge_model,
        "noJudge": settings.no_judge,
        "mocks": settings.mocks,
        "caseFilter": settings.case_glob,
        "tagFilters": list(settings.tags),
        "reducer": settings.reducer,
        "caseReducers": [list(pair) for pair in settings.case_reducers],
        "baselinePlugin": settings.baseline_plugin,
    }


def recorded_durations(folder: Path) -> dict[str, list[float]]:
    """The recorded runs' durations in a results folder, by case key (its ``runs/`` folder)."""
    found: dict[str, list[float]] = {}
    for meta in sorted((folder / "runs").glob(f"*/*/{META}")):
        try:
            seconds = json.loads(meta.read_text(encoding="utf-8")).get("durationSeconds")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            continue
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
            found.setdefault(meta.parent.parent.name, []).append(float(seconds))
    return found


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
        if not groups:
            return
        plan = self.plan(groups)
        mine = {c.nodeid for c in plan.cases_of(self.shard.index)}
        keep: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        others = {id(item) for item in evals if _group(item) not in mine}
        for one in items:
            (dropped if id(one) in others else keep).append(one)
        config.stash[shard_plan_key] = plan
        if hasattr(config, "workerinput"):
            _write_plan(config.stash[shared_key] / PLAN_FILE, plan)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def plan(self, groups: dict[str, list[EvalItem]]) -> ShardPlan:
        folder = self.settings.shard_durations
        per_run, typical = per_run_costs(recorded_durations(folder)) if folder else ({}, None)
        cases = []
        for nodeid, its in groups.items():
            case = its[0].case
            key = case_key(case)
            seconds = per_run.get(key, typical) if folder else None
            cases.append(ShardCase(nodeid, case.name, key, len(its), case_cost(len(its), seconds)))
        root = common_suite_root(its[0].case.suite_root for its in groups.values())
        return ShardPlan(
            index=self.shard.index,
            total=self.shard.total,
            weights="durations" if folder else "runs",
            cases=assign(cases, self.shard.total),
            version=plugin_version(),
            settings=shared_settings(self.settings),
            root=str(root or ""),
        )


def _group(item: EvalItem) -> str:
    return case_group(item.nodeid) or item.nodeid


def _write_plan(target: Path, plan: ShardPlan) -> None:
    draft = target.with_name(f"{target.name}.{os.getpid()}")
    draft.write_text(json.dumps(plan_to_json(plan)), encoding="utf-8")
    os.replace(draft, target)


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
