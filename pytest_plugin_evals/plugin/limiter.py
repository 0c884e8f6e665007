"""The shell's side of the session's budget: the one :class:`~pytest_plugin_evals.engine.budget.
Budget`, made by the process that holds it (the controller, or the only process at ``-n 0``),
and each process's :class:`~pytest_plugin_evals.engine.limits.RateLimits` over it (over the
channel of :mod:`pytest_plugin_evals.engine.wire` on a worker)."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.engine.budget import Budget
from pytest_plugin_evals.engine.limits import RateLimits
from pytest_plugin_evals.engine.wire import BUDGET_CHANNEL, Reachable, RemoteBudget
from pytest_plugin_evals.plugin.keys import budget_key
from pytest_plugin_evals.settings import EvalSettings


def session_budget(config: pytest.Config, settings: EvalSettings) -> Budget:
    """The session's one budget, made once by the process that holds it (the controller)."""
    budget = config.stash.get(budget_key, None)
    if budget is None:
        budget = Budget(settings.max_cost_usd, settings.max_concurrency)
        config.stash[budget_key] = budget
    return budget


def rate_limits(config: pytest.Config, settings: EvalSettings) -> RateLimits:
    """This process's side of the session's budget: the budget itself on the controller (and
    at ``-n 0``), else the channel to it the controller gave this worker."""
    workerinput = getattr(config, "workerinput", None)
    budget: Reachable = (
        session_budget(config, settings)
        if workerinput is None
        else RemoteBudget(workerinput.get(BUDGET_CHANNEL))
    )
    return RateLimits(
        budget,
        settings.rate_limit_retries,
        ceiling=settings.max_cost_usd is not None,
        max_concurrency=settings.max_concurrency,
        max_wait=settings.max_rate_limit_wait,
    )


def session_wait_seconds(config: pytest.Config) -> float:
    """How long the session was paused for rate limits in all (seconds)."""
    budget = config.stash.get(budget_key, None)
    return 0.0 if budget is None else budget.paused_seconds()
