"""The StashKeys of the pytest shell whose values are the core's (or a module that imports no
other module of the shell), and the session's token read from one of them (:func:`session_tag`):
every module may import this one, and it imports none of them back.

A key whose value is an object of a shell module lives with that object (``session_key`` in
:mod:`.session`, ``maker_key`` in :mod:`.runs`, ``earlier_key`` in
:mod:`.compare`, ``case_picks_key`` in :mod:`.picks`), so the shell's import graph has no circle
(``tests/architecture/test_shell_imports.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest
    from pytest import StashKey

    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.engine.budget import Budget
    from pytest_plugin_evals.graders.assertions import SoftChecks
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.reporting.result import SessionResult
    from pytest_plugin_evals.runner import RunOutcome
    from pytest_plugin_evals.settings import EvalSettings
    from pytest_plugin_evals.shards import ShardPlan
    from pytest_plugin_evals.suites.picks import CasePick
    from pytest_plugin_evals.util.stop_sign import StopSign

#: session: each item's place in the session (:func:`.runs._positions` computes it; the
#: rounds of ``--eval-runs auto`` reorder the items, and say where they now are).
positions_key: StashKey[dict[str, int]]

#: The ``user_properties`` key every eval item reports its record under (one JSON string; see
#: :mod:`pytest_plugin_evals.records`). JUnit shows it as a ``<property>``.
RECORD_PROPERTY = "plugin_evals"

#: The report attribute listing the runs a process made ahead of their items and still has
#: going, as ``[node id, seconds since it began]`` (pytest-xdist carries a report's attributes
#: to the controller, whose progress line counts them in flight).
AHEAD_ATTRIBUTE = "eval_runs_ahead"
#: config: what lists them (``engine.run_ahead.RunAhead.in_flight``), while runs are made ahead.
runs_ahead_key: StashKey[Callable[[], list[list[Any]]]]

#: config: the validated ``--eval-*`` settings.
settings_key: StashKey[EvalSettings]
#: config: the session's timestamp (``2026-11-30T07-07-59-533Z``), shared with xdist workers.
stamp_key: StashKey[str]
#: config: the folder the session's processes share (made when first written to).
shared_key: StashKey[Path]
#: config (the controller, or the one process at ``-n 0``): the session's one budget (cost
#: ceiling, rate-limit pause, run slots); a worker reaches it over the channel ``workerinput``
#: carries under :data:`BUDGET_CHANNEL`.
budget_key: StashKey[Budget]
BUDGET_CHANNEL = "eval_budget"
#: config: the sign that stops runs from starting (a rejected credential), in the shared folder.
stop_key: StashKey[StopSign]
#: config: the (name, dir) of each eval item's case deselected so far in this process.
deselected_key: StashKey[set[tuple[str, str]]]
#: config: the cases collected but not selected, once collection is done.
unselected_key: StashKey[tuple[tuple[str, str], ...]]
#: config (controller only): the session's result, once computed.
result_key: StashKey[SessionResult]
#: config: the mock files already reported as load errors (each is reported once).
reported_mocks_key: StashKey[set[str]]
#: config: the agent the ``eval_agent`` fixture made (for runs made ahead of their setup).
agent_key: StashKey[Agent]
#: config: under ``--eval-agents``, the agents made so far in this process, by label.
agents_key: StashKey[dict[str, Agent]]
#: config: the judge the ``eval_judge`` fixture made (None: no judge), once it made it.
judge_key: StashKey[Judge | None]
#: config: the second judge (``--eval-judge-second``), once the ``eval_judge`` fixture made it.
second_judge_key: StashKey[Judge | None]
#: config: how the selected cases were split (``--eval-shard``), once this process split them.
shard_plan_key: StashKey[ShardPlan]
#: item: the item that runs after it in this process (pytest's ``nextitem``).
next_item_key: StashKey[pytest.Item]
#: item: the soft checks of the ``eval_checks`` fixture.
soft_checks_key: StashKey[SoftChecks]
#: item: the run an eval item made.
outcome_key: StashKey[RunOutcome]
#: Set on an item whose run was made ahead of its setup (its setup reports the run's time).
made_ahead_key: StashKey[bool]


#: config: the case folders whose runs the command line names (``evals/x::x[1]``), each with
#: its picks (a folder another argument collects whole is not in it).
case_picks_key: StashKey[dict[Path, list[CasePick]]]


def __getattr__(name: str) -> Any:
    """The key declared as ``name``, made once, when first read."""
    if not name.endswith("_key") or name not in globals()["__annotations__"]:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pytest import StashKey

    return globals().setdefault(name, StashKey())


def session_tag(config: pytest.Config) -> str:
    """The session's token in every run's environment: its shared folder's unique name."""
    shared: StashKey[Path] = __getattr__("shared_key")
    return config.stash[shared].name
