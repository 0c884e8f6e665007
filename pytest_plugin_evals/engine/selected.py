"""What the session does once collection is done, as plain data: the split of its selected
runs into shards (``--eval-shard``: every process computes the same from the same runs), the
earlier session ``--eval-compare`` reads (:mod:`~pytest_plugin_evals.reporting.earlier` says
which is comparable), the plan ``--eval-plan`` prints (:mod:`~pytest_plugin_evals.reporting.plan`),
and the files by which an xdist worker, which collects, tells the controller, which does not,
in the session's shared folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest_plugin_evals.reporting.earlier as earlier
from pytest_plugin_evals.engine.nodeids import case_group
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.recording import case_key
from pytest_plugin_evals.recording.recorded import recorded_durations
from pytest_plugin_evals.reporting.document_read import read_plan
from pytest_plugin_evals.reporting.plan import plan_lines
from pytest_plugin_evals.reporting.result import SessionResult, relative
from pytest_plugin_evals.settings import (
    EvalSettings,
    common_suite_root,
    results_dir,
    shared_settings,
)
from pytest_plugin_evals.shards import Shard, ShardPlan, plan_to_json, split
from pytest_plugin_evals.util.tempdirs import read_whole, write_whole

#: The split, in the session's shared folder (written by xdist workers).
PLAN_FILE = "shard-plan.json"
#: The suite root and selected cases a worker collected, in the session's shared folder.
ROOT_FILE = "compare-suite-root.json"
#: A selected run item: its node id, its case, its agent's label, its run, whether two arms.
Run = tuple[str, Case, str | None, int, bool]
#: The selected cases as an earlier session names them (name, folder, agent's label).
Cases = list[earlier.CaseKey]


def shard_split(
    shard: Shard, runs: Sequence[Run], settings: EvalSettings
) -> tuple[ShardPlan, set[str]]:
    """The split of the selected ``runs`` by case (weighed by the durations recorded under
    ``--eval-shard-durations``, else by their runs), and the node ids of the runs of the cases
    other shards hold."""
    groups: dict[str, list[Case]] = {}
    for nodeid, case, *_ in runs:
        groups.setdefault(case_group(nodeid) or nodeid, []).append(case)
    cases = [(n, cs[0].name, case_key(cs[0]), len(cs)) for n, cs in groups.items()]
    root = common_suite_root(cs[0].suite_root for cs in groups.values())
    folder = settings.shard_durations
    durations = recorded_durations(folder) if folder else None
    plan = split(shard, cases, durations, shared_settings(settings), str(root or ""))
    mine = {c.nodeid for c in plan.cases_of(shard.index)}
    return plan, {run[0] for run in runs if (case_group(run[0]) or run[0]) not in mine}


def tell_plan(shared: Path, plan: ShardPlan) -> None:
    write_whole(shared / PLAN_FILE, json.dumps(plan_to_json(plan)))


def told_plan(shared: Path) -> ShardPlan | None:
    """The split a worker wrote (None: none did)."""
    text = read_whole(shared / PLAN_FILE)
    return None if text is None else read_plan(text)


def compared_cases(runs: Sequence[Run]) -> tuple[Path, Cases] | None:
    """The suite root of the selected ``runs`` and their cases as an earlier session names
    them (None: no suite root, nothing to compare)."""
    root = common_suite_root(run[1].suite_root for run in runs)
    return None if root is None else (root, earlier.selected_cases((r[1], r[2]) for r in runs))


def tell_cases(shared: Path, root: Path, cases: Cases) -> None:
    write_whole(shared / ROOT_FILE, json.dumps({"root": str(root), "cases": cases}))


def told_cases(shared: Path) -> tuple[Path, Cases] | None:
    """The suite root and cases a worker wrote (None: it collected no eval item)."""
    text = read_whole(shared / ROOT_FILE)
    if text is None:
        return None
    written = json.loads(text)  # this session's own worker wrote it
    return Path(written["root"]), [(str(n), str(d), str(a)) for n, d, a in written["cases"]]


def find_earlier(
    settings: EvalSettings, root: Path, cases: Cases, stamp: str, where: str
) -> tuple[Path | None, SessionResult | None, list[str]]:
    """``--eval-compare``'s earlier session for these ``cases`` under ``root`` (never this
    session's own), and what the summary says of it; an ``EarlierError`` when it cannot be read."""
    s = settings
    kind = earlier.same_kind(s.agent, s.agents, s.baseline_plugin, s.aa)
    own, wanted = results_dir(s, root, stamp), replace(kind, cases=frozenset(cases))
    return earlier.earlier_session(s.compare or "", where, root / "results", own, wanted)


def session_plan(runs: Sequence[Run], settings: EvalSettings, stamp: str) -> list[str]:
    """``--eval-plan``'s lines for the selected ``runs``, from the newest earlier session of the
    same cases under the suite's ``results/`` (:mod:`~pytest_plugin_evals.stats.planning`)."""
    found = compared_cases(runs)
    before = None
    if found is not None:
        root, cases = found
        own = results_dir(settings, root, stamp)
        wanted = earlier.Wanted(cases=frozenset(cases), replays=True)
        before = earlier.pick(root / "results", own, wanted).result
    items = [
        (c.name, relative(str(c.dir), str(c.suite_root)), run, two_arm)
        for _, c, _, run, two_arm in runs
    ]
    return plan_lines(items, before, settings.min_effect, settings.runs_auto, settings.margin)
