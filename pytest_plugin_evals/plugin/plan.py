"""``--eval-plan``: print how many runs and cases a decision needs, and start no agent.

Once collection is done, the eval items are deselected (no run is made) and the plan is made
from the selected cases and the newest earlier session under ``<evals folder>/results/``: each
case's run-score variance, cost and latency where that session ran it, stated defaults where
not (:mod:`pytest_plugin_evals.stats.planning`). The summary prints it, and a session that only
planned exits 0.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pytest_plugin_evals.plugin.keys import stamp_key
from pytest_plugin_evals.plugin.session import settle
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir


class PlanHooks:
    """Deselects the eval items and says the plan (``reporting.plan``)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        module = sys.modules.get("pytest_plugin_evals.plugin.items")
        if module is None:
            return
        evals = [i for i in items if isinstance(i, module.EvalItem)]
        if not evals:
            return
        self.lines = self.plan(evals)
        self.config.hook.pytest_deselected(items=evals)
        items[:] = [i for i in items if not isinstance(i, module.EvalItem)]

    def plan(self, evals: list[Any]) -> list[str]:
        """The plan of the eval items, from the newest earlier session of the same cases."""
        from pytest_plugin_evals.reporting.earlier import Wanted, case_key, pick
        from pytest_plugin_evals.reporting.plan import plan_lines
        from pytest_plugin_evals.reporting.result import relative

        cases = [(i.case.name, relative(str(i.case.dir), str(i.case.suite_root))) for i in evals]
        root = common_suite_root(i.case.suite_root for i in evals)
        before = None
        if root is not None:
            own = results_dir(self.settings, root, self.config.stash[stamp_key])
            keys = (
                case_key(name, folder, i.agent_label)
                for (name, folder), i in zip(cases, evals, strict=True)
            )
            before = pick(root / "results", own, Wanted(cases=frozenset(keys), replays=True)).result
        items = [(*case, i.run, i.two_arm) for case, i in zip(cases, evals, strict=True)]
        settings = self.settings
        return plan_lines(items, before, settings.min_effect, settings.runs_auto, settings.margin)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A session that only planned succeeded: exit 0, not pytest's "no tests ran" (5), so a
        CI step that plans passes. Anything else (a load error, a failed test) keeps its status."""
        from pytest_plugin_evals.engine.gates import plan_gate

        settle(session, [plan_gate(bool(self.lines))])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.section("plugin evals plan")
        for line in self.lines:
            terminalreporter.write_line(line)


def register_plan(config: pytest.Config, settings: EvalSettings) -> None:
    """Register the plan's hooks under ``--eval-plan`` (in one process only)."""
    if not settings.plan:
        return
    workers = getattr(config.option, "numprocesses", None)
    if workers not in (None, 0, "0"):
        raise pytest.UsageError("--eval-plan starts no agent and runs in one process: leave out -n")
    config.pluginmanager.register(PlanHooks(config, settings), "plugin-evals-plan")
