"""``--eval-reuse last|DIR``: take the without arm's and a baseline arm's runs from an earlier
session when nothing that shapes them changed (see :mod:`pytest_plugin_evals.reuse`).

Every process that makes runs stamps each run of those arms it made (with or without
``--eval-reuse``: the next session may reuse it), and, under ``--eval-reuse``, looks for the
same run in the earlier results folder before making one: run N of a case's arm reuses that
arm's recorded run N, so every process decides alone, the same way at ``-n 0`` and ``-n 2``,
and runs the earlier session did not make are made (topped up). The engine decides
(:class:`~pytest_plugin_evals.engine.reuse.ReuseStamps`); a reused run is graded again here
with today's graders (the ``replay:`` agent reads it back); its agent cost is the recorded one,
spent when it was made, not in this session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_plugin_evals.agents.replay import ReplayAgent
from pytest_plugin_evals.engine.reuse import NOT_REUSED, ReuseStamps
from pytest_plugin_evals.reuse import Fingerprint
from pytest_plugin_evals.runner import execute_run

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.making import RunMaker
    from pytest_plugin_evals.plugin.items import EvalItem
    from pytest_plugin_evals.runner import RunOutcome


class Reuse(ReuseStamps):
    """One process's stamps and look-ups (held by its :class:`RunMaker`), and its reused runs
    graded again."""

    def take(
        self, maker: RunMaker, item: EvalItem, agent: Agent, judge: Judge | None
    ) -> tuple[RunOutcome | None, Fingerprint | None, str | None]:
        """The item's run reused from the earlier session, when it may be; else None, with the
        fingerprint to stamp the run made with and the note it gets (why it is not reused)."""
        found, fingerprint, note = self.look(item, agent)
        if found is None or fingerprint is None:
            return None, fingerprint, note
        source, recorded = found
        outcome = execute_run(
            item.run_target(),
            agent=ReplayAgent(source),
            run_root=maker.root / f"reused-{item.arm}-{item.run}-{next(maker.made)}",
            options=maker.options(item, judge),
        )
        if outcome.result.infra_error is not None:
            return None, fingerprint, f"{NOT_REUSED}: {outcome.result.error}"
        outcome.result = replace(outcome.result, reused_from=str(source))
        made_at, origin = recorded.stamp.made_at, recorded.stamp.origin
        self.stamp(maker.results_for(item), item, fingerprint, made_at, origin)
        return outcome, fingerprint, None
