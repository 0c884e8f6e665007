"""The session's one :class:`~pytest_plugin_evals.engine.budget.Budget`, made by the process that
holds it (the controller, or the only process at ``-n 0``): a worker reaches it over the
channel of :mod:`pytest_plugin_evals.engine.wire` (``plugin.runs``). Light, for the xdist
controller's hooks, which every ``-n`` session loads."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.engine.budget import Budget
from pytest_plugin_evals.plugin.keys import budget_key
from pytest_plugin_evals.settings import EvalSettings


def session_budget(config: pytest.Config, settings: EvalSettings) -> Budget:
    """The session's one budget, made once by the process that holds it (the controller)."""
    budget = config.stash.get(budget_key, None)
    if budget is None:
        budget = Budget(settings.max_cost_usd, settings.max_concurrency)
        config.stash[budget_key] = budget
    return budget


def session_wait_seconds(config: pytest.Config) -> float:
    """How long the session was paused for rate limits in all (seconds)."""
    budget = config.stash.get(budget_key, None)
    return 0.0 if budget is None else budget.paused_seconds()
