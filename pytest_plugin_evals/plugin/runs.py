"""Making the runs of this process's eval items, in an item's setup or ahead of it: the core's
run maker (:mod:`pytest_plugin_evals.making`) told what it reads of the session, and the items
this process runs next (the session's next items, or an xdist worker's queue), whose runs
:class:`~pytest_plugin_evals.engine.run_ahead.RunAhead` starts ahead of their setup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals import making
from pytest_plugin_evals.engine.run_ahead import RunAhead, may_start_ahead
from pytest_plugin_evals.engine.starts import Skip
from pytest_plugin_evals.making import results_folder
from pytest_plugin_evals.plugin.interrupts import interrupted, terminate_as_interrupt
from pytest_plugin_evals.plugin.items import EvalItem
from pytest_plugin_evals.plugin.keys import (
    agent_key,
    agents_key,
    judge_key,
    next_item_key,
    positions_key,
    second_judge_key,
    session_tag,
    shared_key,
    stamp_key,
    stop_key,
)
from pytest_plugin_evals.plugin.limiter import rate_limits
from pytest_plugin_evals.recording.folders import tell_chosen
from pytest_plugin_evals.settings import EvalSettings, common_suite_root

if TYPE_CHECKING:
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.runner import RunOutcome

#: config: this process's run maker, and its runs made ahead of their items' setup.
maker_key: pytest.StashKey[RunMaker] = pytest.StashKey()
run_ahead_key: pytest.StashKey[RunAhead[EvalItem, RunOutcome | Skip]] = pytest.StashKey()


class RunMaker(making.RunMaker):
    """This process's run maker (:class:`~pytest_plugin_evals.making.RunMaker`), reading the
    session from pytest: its selected items, its stash, ``--eval-runs auto``'s answers."""

    def __init__(self, config: pytest.Config, settings: EvalSettings, root: Path) -> None:
        limits = rate_limits(config, settings)
        limits.halted = lambda: interrupted(config)
        from pytest_plugin_evals.plugin.reuse import Reuse

        stop = config.stash.get(stop_key, None)
        super().__init__(
            settings,
            root,
            limits,
            Reuse(settings, config.stash[stamp_key]),
            stop,
            session_tag(config),
        )
        self.config = config
        #: The session's one results folder, once chosen (see :meth:`results_for`).
        self.results: Path | None = None
        self._refusal: str | None = None
        terminate_as_interrupt(config)  # this process makes runs: SIGTERM must not orphan them

    def results_for(self, item: Any) -> Path:
        """The session's results folder, the same for every format and in every process: it
        is chosen from the suites of all selected items (each xdist worker selects the same),
        held for the session (see :meth:`refusal` when another session is using it)."""
        if self.results is None:
            roots = [i.case.suite_root for i in item.session.items if isinstance(i, EvalItem)]
            root = common_suite_root(roots) or item.case.suite_root
            folder = getattr(self.config.stash.get(agent_key, None), "folder", None)
            replayed = Path(folder) if folder is not None else None
            stamp = self.config.stash[stamp_key]
            self.results, self._refusal = results_folder(
                self.settings, root, stamp, replayed, self.tag
            )
            tell_chosen(self.config.stash[shared_key], self.results, root)
        return self.results

    def refusal(self, item: EvalItem) -> str | None:
        """Why no run of this session can be made here, if none can: its results folder is
        another session's (one line, the same for every item)."""
        self.results_for(item)
        return self._refusal

    def held_back(self, item: Any, ahead: bool) -> Skip | None:
        if self.settings.runs_auto is None:
            return None
        from pytest_plugin_evals.plugin.rounds import ask

        answer = ask(self.config, item.nodeid, ahead=ahead)  # the controller says
        return None if answer is None else Skip(*answer)

    def second_judge(self) -> Judge | None:
        return self.config.stash.get(second_judge_key, None)

    def ahead(self, item: EvalItem) -> Callable[[], RunOutcome | Skip] | None:
        """What makes ``item``'s run ahead of its setup exactly as there, when it can be made
        now (:class:`~pytest_plugin_evals.engine.run_ahead.RunAhead`'s job)."""
        from pytest_plugin_evals.agents import capabilities_of

        stash = self.config.stash
        if item.agent_label is not None:  # --eval-agents: that agent, once an item made it
            agent = stash.get(agents_key, {}).get(item.agent_label)
        else:
            agent = stash.get(agent_key, None)
        if agent is None or not capabilities_of(agent).separate_process:
            # The session's agent is not made yet (or is your own fixture's); an in-process
            # agent would share this process's working directory.
            return None
        judge = None
        if any(spec.paid for spec in item.case.graders):
            if judge_key not in stash:
                return None  # the judge is made by the first item that needs it
            judge = stash[judge_key]
        if self.skip(item, ahead=True) is not None or self.refusal(item) is not None:
            return None
        return functools.partial(self.make, item, agent, judge)


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
