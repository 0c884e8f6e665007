"""Making the runs of this process's eval items, in an item's setup or ahead of it: the core's
run maker (:mod:`pytest_plugin_evals.making`) told what it reads of the session, over the
session's one budget (a worker's over the channel the controller gave it), and the items this
process runs next (the session's next items, or an xdist worker's queue), whose runs it makes
ahead of their setup.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals import making
from pytest_plugin_evals.engine.run_ahead import may_start_ahead
from pytest_plugin_evals.engine.starts import Skip
from pytest_plugin_evals.engine.wire import BUDGET_CHANNEL, Reachable, RemoteBudget
from pytest_plugin_evals.plugin.interrupts import interrupted, terminate_as_interrupt
from pytest_plugin_evals.plugin.items import EvalItem
from pytest_plugin_evals.plugin.keys import (
    agent_key,
    agents_key,
    judge_key,
    next_item_key,
    positions_key,
    second_judge_key,
    shared_key,
    stamp_key,
    stop_key,
)
from pytest_plugin_evals.plugin.limiter import session_budget
from pytest_plugin_evals.settings import EvalSettings

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.judges import Judge

#: config: this process's run maker.
maker_key: pytest.StashKey[RunMaker] = pytest.StashKey()


class RunMaker(making.RunMaker):
    """This process's run maker (:class:`~pytest_plugin_evals.making.RunMaker`), reading the
    session from pytest: its selected items, its stash, ``--eval-runs auto``'s answers."""

    def __init__(self, config: pytest.Config, settings: EvalSettings, root: Path) -> None:
        workerinput, stash = getattr(config, "workerinput", None), config.stash
        budget: Reachable = (  # the budget itself, else the channel the controller gave
            session_budget(config, settings)
            if workerinput is None
            else RemoteBudget(workerinput.get(BUDGET_CHANNEL))
        )
        stop = stash.get(stop_key, None)
        super().__init__(settings, root, budget, stash[shared_key], stash[stamp_key], stop)
        self.limits.halted = lambda: interrupted(config)
        self.config = config
        terminate_as_interrupt(config)  # this process makes runs: SIGTERM must not orphan them

    def suite_roots(self, item: Any) -> list[Path]:
        return [i.case.suite_root for i in item.session.items if isinstance(i, EvalItem)]

    def replayed(self) -> Path | None:
        folder = getattr(self.config.stash.get(agent_key, None), "folder", None)
        return Path(folder) if folder is not None else None

    def made_agent(self, item: Any) -> Agent | None:
        if item.agent_label is not None:  # --eval-agents: that agent, once an item made it
            return self.config.stash.get(agents_key, {}).get(item.agent_label)
        return self.config.stash.get(agent_key, None)

    def made_judges(self) -> tuple[Judge | None, Judge | None] | None:
        stash = self.config.stash
        return (stash[judge_key], stash[second_judge_key]) if judge_key in stash else None

    def held_back(self, item: Any, ahead: bool) -> Skip | None:
        if self.settings.runs_auto is None:
            return None
        from pytest_plugin_evals.plugin.rounds import ask

        answer = ask(self.config, item.nodeid, ahead=ahead)  # the controller says
        return None if answer is None else Skip(*answer)


def upcoming(item: EvalItem, limit: int) -> list[EvalItem]:
    """The eval items among those this process runs after ``item`` (at most ``limit``), in
    order, when the next one is an eval item: the next one (pytest's ``nextitem``), then the
    session's following items, or under xdist the items already in the worker's queue (none
    beyond the next one under ``--dist worksteal``, whose items may go to another worker).
    Under ``-x`` only those of its case (``engine.run_ahead.may_start_ahead``)."""
    nextitem = item.stash.get(next_item_key, None)
    if not isinstance(nextitem, EvalItem) or limit < 1:
        return []
    config, items = item.config, item.session.items
    found: list[pytest.Item] = [nextitem]
    if not hasattr(config, "workerinput"):
        index = _positions(item.session).get(nextitem.nodeid)
        if index is not None:
            found += items[index + 1 : index + limit]
    elif getattr(config.option, "dist", None) != "worksteal":
        for plugin in config.pluginmanager.get_plugins():
            queue: Any = getattr(plugin, "torun", None)
            if type(plugin).__name__ == "WorkerInteractor" and hasattr(queue, "lock"):
                with queue.lock() as queued:
                    indices = [i for i in queued if isinstance(i, int)][: limit - 1]
                found += [items[i] for i in indices if 0 <= i < len(items)]
                break
    maxfail = int(getattr(config.option, "maxfail", 0) or 0)
    return [
        i
        for i in found[:limit]
        if isinstance(i, EvalItem) and may_start_ahead(item.case, i.case, maxfail)
    ]


def _positions(session: pytest.Session) -> dict[str, int]:
    """Each item's place in the session (computed once)."""
    positions = session.stash.get(positions_key, None)
    if positions is None or len(positions) != len(session.items):
        positions = {it.nodeid: i for i, it in enumerate(session.items)}
        session.stash[positions_key] = positions
    return positions
