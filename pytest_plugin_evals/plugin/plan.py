"""``--eval-plan``: print how many runs and cases a decision needs, and start no agent.

Once collection is done, the eval items are deselected (no run is made) and the plan made of
the selected runs (:func:`~..engine.selected.session_plan`). The summary prints it, and a
session that only planned exits 0.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.engine.selected import session_plan
from pytest_plugin_evals.plugin.keys import stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.plugin.session import settle
from pytest_plugin_evals.settings import EvalSettings


class PlanHooks:
    """Deselects the eval items and says the plan (``reporting.plan``)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        evals = eval_items(items)
        if not evals:
            return
        runs = [(i.nodeid, i.case, i.agent_label, i.run, i.two_arm) for i in evals]
        self.lines = session_plan(runs, self.settings, self.config.stash[stamp_key])
        self.config.hook.pytest_deselected(items=evals)
        dropped = {id(i) for i in evals}
        items[:] = [i for i in items if id(i) not in dropped]

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
