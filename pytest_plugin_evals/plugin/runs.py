"""Making the runs of this process's eval items: in an item's setup, or ahead of it.

An agent that is a process of its own spends most of a run waiting on the model, so while a
process makes one item's run it starts the runs of the items it runs next, as long as the CPUs
have had time to spare lately: up to two new runs per idle CPU at each item's start, and at
most :func:`runs_in_flight` runs in flight in the process (``--eval-run-ahead always`` does
not look at the CPUs; ``off``, or a cost ceiling, keeps one run per process). The items a
process runs next are known to it (the session's next items, or an xdist worker's queue); each
run is made in a background thread with the same checks, options and agent as in its setup,
and its setup takes the finished run. A run started ahead that no item takes (``-x``, an
interruption) is stopped at the end of the session.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.limits import NoRoom, Ticket, process_share
from pytest_plugin_evals.engine.starts import AUTH_STOP, Sign, Skip, skip_case, stopped_result
from pytest_plugin_evals.engine.wire import BudgetGone
from pytest_plugin_evals.plugin.interrupts import interrupted, terminate_as_interrupt
from pytest_plugin_evals.plugin.items import EvalItem
from pytest_plugin_evals.plugin.keys import (
    agent_key,
    agents_key,
    judge_key,
    positions_key,
    second_judge_key,
    session_tag,
    shared_key,
    stamp_key,
    stop_key,
)
from pytest_plugin_evals.plugin.limiter import rate_limits
from pytest_plugin_evals.recording.folders import tell_chosen
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir
from pytest_plugin_evals.util.process import IdleMeter, stop_all

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.agents.confine.bounds import Bounds
    from pytest_plugin_evals.agents.confine.network import Endpoint
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.runner import RunOptions, RunOutcome

#: config: this process's run maker, and its runs made ahead of their items' setup.
maker_key: pytest.StashKey[RunMaker] = pytest.StashKey()
run_ahead_key: pytest.StashKey[RunAhead] = pytest.StashKey()


class NotStarted(Exception):
    """Raised by :meth:`RunMaker.make` when the run may not start after all (another process
    took the room under the cost ceiling after :meth:`RunMaker.skip` had found some)."""

    def __init__(self, skip: Skip) -> None:
        super().__init__(skip.message)
        self.skip = skip


#: The run options that are not the settings' field of the same name, each made from the
#: settings' fields it names. Every other run option is the settings' field of its name, but
#: :data:`RUN_GIVEN` (tests/unit/test_run_options.py checks that each is one or the other).
RUN_DERIVED: dict[str, tuple[tuple[str, ...], Callable[[EvalSettings], Any]]] = {
    "model_override": (("model",), lambda s: s.model),
    "judge_claude_bin": (("claude_bin",), lambda s: s.claude_bin),
    "judge_kind": (("judge", "no_judge"), lambda s: None if s.no_judge else s.judge),
    "no_judge_reason": (("no_judge",), lambda s: "--eval-no-judge" if s.no_judge else None),
    "bounds": (("bounds",), lambda s: _bounds(s.bounds)),
    "allow_network": (("allow_network",), lambda s: _endpoints(s.allow_network)),
}
#: The run options the run maker gives each run: not settings.
RUN_GIVEN = frozenset({"runs_dir", "judge", "second_judge", "session_tag"})


def run_options(settings: EvalSettings) -> RunOptions:
    """The options every run of the session shares, from its settings (``RUN_GIVEN`` left at
    their defaults, for :meth:`RunMaker.options` to give)."""
    from pytest_plugin_evals.runner import RunOptions

    names = {f.name for f in fields(RunOptions)} - set(RUN_DERIVED) - RUN_GIVEN
    values = {name: getattr(settings, name) for name in names}
    values.update({name: make(settings) for name, (_, make) in RUN_DERIVED.items()})
    return RunOptions(**values)


def _bounds(given: Sequence[tuple[str, int]]) -> Bounds:
    from pytest_plugin_evals.agents.confine.bounds import Bounds

    return Bounds(**dict(given))


def _endpoints(given: Sequence[str]) -> tuple[Endpoint, ...]:
    from pytest_plugin_evals.agents.confine.network import Endpoint

    return tuple(e for e in (Endpoint.parse(v) for v in given) if e is not None)


class RunMaker:
    """Makes runs: one folder each in this process's runs folder, the session's options."""

    def __init__(self, config: pytest.Config, settings: EvalSettings, root: Path) -> None:
        self.config = config
        self.settings = settings
        self.root = root
        self.made = itertools.count(1)
        #: The session's one results folder, once chosen (see :meth:`results_for`).
        self.results: Path | None = None
        self._refusal: str | None = None
        self.limits = rate_limits(config, settings)
        self.limits.halted = lambda: interrupted(config)
        from pytest_plugin_evals.plugin.reuse import Reuse

        self.reuse = Reuse(settings, config.stash[stamp_key])
        terminate_as_interrupt(config)  # this process makes runs: SIGTERM must not orphan them
        #: The options every run of the session shares, read from the settings once.
        self.run_options = run_options(settings)

    def _sign(self) -> Sign | None:
        """The session's stop sign, if it is up (``engine.starts``)."""
        stop = self.config.stash.get(stop_key, None)
        return stop.read() if stop is not None else None

    def results_for(self, item: EvalItem) -> Path:
        """The session's results folder, the same for every format and in every process: it
        is chosen from the suites of all selected items (each xdist worker selects the same),
        held for the session, and a runs folder an earlier session left there is cleared
        first (see :meth:`refusal` when another session is using it)."""
        if self.results is None:
            from pytest_plugin_evals.recording import FolderBusy, claim_runs_folder

            roots = [i.case.suite_root for i in item.session.items if isinstance(i, EvalItem)]
            root = common_suite_root(roots) or item.case.suite_root
            results = results_dir(self.settings, root, self.config.stash[stamp_key])
            folder = getattr(self.config.stash.get(agent_key, None), "folder", None)
            replayed = {Path(folder).resolve()} if folder is not None else set()
            for _, spec in self.settings.agents:  # --eval-agents: its replays, made or not
                if spec.startswith("replay:"):
                    replayed.add(Path(spec.removeprefix("replay:")).expanduser().resolve())
            if results.resolve() not in replayed:
                try:
                    claim_runs_folder(results / "runs", session_tag(self.config))
                except FolderBusy as exc:
                    self._refusal = str(exc)
            self.results = results
            tell_chosen(self.config.stash[shared_key], results, root)
        return self.results

    def refusal(self, item: EvalItem) -> str | None:
        """Why no run of this session can be made here, if none can: its results folder is
        another session's (one line, the same for every item)."""
        self.results_for(item)
        return self._refusal

    def skip(self, item: EvalItem, *, ahead: bool = False) -> Skip | None:
        """Why the item's run is not started, if it is not (``ahead``: now, ahead of its
        item's setup; under ``--eval-runs auto`` a run whose round waits on a look is not)."""
        settings = self.settings
        skip = skip_case(item.case, self._sign(), scaffold=settings.scaffold)
        if skip is not None:
            return skip
        if settings.max_cost_usd is not None:
            try:
                refused = self.limits.budget.refused()
            except BudgetGone as exc:
                return Skip(str(exc))
            if refused is not None:
                return Skip(refused.reason, refused.kind)
        if settings.runs_auto is not None:  # --eval-runs auto: the controller says
            from pytest_plugin_evals.plugin.rounds import ask

            answer = ask(self.config, item.nodeid, ahead=ahead)
            if answer is not None:
                return Skip(*answer)
        return None

    def options(self, item: EvalItem, judge: Judge | None) -> RunOptions:
        """The item's run options: the session's, with its runs folder, judge and token."""
        return replace(
            self.run_options,
            runs_dir=self.results_for(item) / "runs",
            judge=judge,
            second_judge=self.config.stash.get(second_judge_key, None) if judge else None,
            session_tag=session_tag(self.config),
        )

    def make(self, item: EvalItem, agent: Agent, judge: Judge | None) -> RunOutcome:
        """Make the item's run (the checks of :meth:`skip` passed): when the session's budget
        lets it start, and again while the provider refuses it (see :mod:`.limiter`). Raises
        :class:`NotStarted` when the cost ceiling leaves it no room after all, or the budget
        cannot be reached."""
        try:
            with self.limits.reserved() as ticket:
                return self._make_reserved(item, agent, judge, ticket)
        except NoRoom as exc:
            raise NotStarted(Skip(exc.refused.reason, exc.refused.kind)) from None
        except BudgetGone as exc:
            raise NotStarted(Skip(str(exc))) from None

    def _make_reserved(
        self, item: EvalItem, agent: Agent, judge: Judge | None, ticket: Ticket
    ) -> RunOutcome:
        """Make the item's run, its cost reserved: what it spent is set on ``ticket``."""
        reused, fingerprint, note = self.reuse.take(self, item, agent, judge)
        began = time.time()
        outcome = reused or self.limits.make(
            lambda: self._make_once(item, agent, judge, ticket.room),
            timeout=item.case.timeout_seconds,
            may_retry=lambda: self.skip(item) is None,
        )
        if reused is None and fingerprint is not None and outcome.result.graded:
            self.reuse.stamp(self.results_for(item), item, fingerprint, began)
        if note is not None:
            notes = (*outcome.result.notes, note)
            outcome.result = replace(outcome.result, notes=notes)
        from pytest_plugin_evals.agents import capabilities_of

        # A replay's agent cost is history (a reused run's too): only its judge calls were
        # spent now.
        result = outcome.result
        spends = capabilities_of(agent).spends and reused is None
        ticket.spent = result.cost_usd if spends else result.judge_cost_usd
        return outcome

    def _make_once(
        self, item: EvalItem, agent: Agent, judge: Judge | None, room: float | None
    ) -> RunOutcome:
        """One attempt at the item's run (``room``: what the cost ceiling leaves it)."""
        from pytest_plugin_evals.runner import execute_run

        prefix = f"{item.agent_label}-" if item.agent_label is not None else ""
        outcome = execute_run(
            item.run_target(),
            agent=agent,
            run_root=self.root / f"{prefix}{item.arm}-{item.run}-{next(self.made)}",
            options=self.options(item, judge),
            paid_budget=room,
        )
        result = stopped_result(outcome.result, self._sign())
        if result is not outcome.result:
            outcome = replace(outcome, result=result)
        if outcome.result.infra_error == "auth" and stop_key in self.config.stash:
            # Every remaining run would be refused the same way: none is started.
            self.config.stash[stop_key].put("auth_failed", AUTH_STOP)
        return outcome


#: The share of CPU time that must have gone unused lately for a run to be started ahead.
MIN_IDLE = 0.05


def runs_in_flight(config: pytest.Config, cap: int | None) -> int:
    """The most runs this process keeps in flight (:func:`~pytest_plugin_evals.engine.limits.
    process_share` among xdist's workers)."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    return process_share(cap, os.cpu_count() or 1, int(workers))


def upcoming(item: pytest.Item, nextitem: pytest.Item | None, limit: int) -> list[pytest.Item]:
    """The items this process runs after ``item`` (at most ``limit``), in order: the next one
    (pytest's ``nextitem``), then the session's following items, or under xdist the items
    already in the worker's queue (none beyond the next one under ``--dist worksteal``,
    whose items may go to another worker)."""
    if nextitem is None or limit < 1:
        return []
    config, items = item.config, item.session.items
    found: list[pytest.Item] = [nextitem]
    if not hasattr(config, "workerinput"):
        index = _positions(item.session).get(nextitem.nodeid)
        if index is not None:
            found += items[index + 1 : index + limit]
        return found[:limit]
    if getattr(config.option, "dist", None) == "worksteal":
        return found
    for plugin in config.pluginmanager.get_plugins():
        queue: Any = getattr(plugin, "torun", None)
        if type(plugin).__name__ == "WorkerInteractor" and hasattr(queue, "lock"):
            with queue.lock() as queued:
                indices = [i for i in queued if isinstance(i, int)][: limit - 1]
            found += [items[i] for i in indices if 0 <= i < len(items)]
            break
    return found


def _positions(session: pytest.Session) -> dict[str, int]:
    """Each item's place in the session (computed once)."""
    positions = session.stash.get(positions_key, None)
    if positions is None or len(positions) != len(session.items):
        positions = {it.nodeid: i for i, it in enumerate(session.items)}
        session.stash[positions_key] = positions
    return positions


class RunAhead:
    """The runs of the items this process runs next, made in the background while the current
    item's goes on: at most ``depth`` in flight, the current item's included."""

    def __init__(self, maker: RunMaker, *, check_cpus: bool = True, depth: int = 2) -> None:
        self.maker = maker
        self.check_cpus = check_cpus
        self.depth = max(2, depth)
        # The current item's run (made ahead) and the next ones go on side by side.
        self.pool = ThreadPoolExecutor(max_workers=self.depth, thread_name_prefix="evals-ahead")
        self.pending: dict[str, Future[RunOutcome]] = {}
        #: When each run in ``pending`` started (monotonic).
        self.started: dict[str, float] = {}
        self.meter = IdleMeter()
        self.cpus = os.cpu_count() or 1

    def fill(self, items: Sequence[pytest.Item]) -> int:
        """Start the runs of ``items`` (the next ones first) while fewer than ``depth`` runs are
        in flight here, the current item's counted; under ``on``, only when the CPUs had time to
        spare lately, and at most two new runs per idle CPU. Returns how many were started."""
        busy = 1 + sum(1 for future in self.pending.values() if not future.done())
        room = self.depth - busy
        if room <= 0:
            return 0
        if self.check_cpus:
            idle = self.meter.idle()
            if idle is not None:
                if idle < MIN_IDLE:
                    return 0  # the CPUs are busy: more runs would only slow these down
                room = min(room, math.ceil(2 * idle * self.cpus))
        started = 0
        for item in items:
            if started >= room:
                break
            if isinstance(item, EvalItem) and item.nodeid not in self.pending:
                started += self.start(item, check_cpus=False)
        return started

    def start(self, item: EvalItem, *, check_cpus: bool | None = None) -> bool:
        """Start ``item``'s run now, when it can be made ahead of its setup exactly as there."""
        from pytest_plugin_evals.agents import capabilities_of

        stash = self.maker.config.stash
        if item.agent_label is not None:  # --eval-agents: that agent, once an item made it
            agent = stash.get(agents_key, {}).get(item.agent_label)
        else:
            agent = stash.get(agent_key, None)
        if agent is None or item.nodeid in self.pending:
            return False  # the session's agent is not made yet (or is your own fixture's)
        if not capabilities_of(agent).separate_process:
            return False  # an in-process agent would share this process's working directory
        judge = None
        if any(spec.paid for spec in item.case.graders):
            if judge_key not in stash:
                return False  # the judge is made by the first item that needs it
            judge = stash[judge_key]
        if self.maker.skip(item, ahead=True) is not None or self.maker.refusal(item) is not None:
            return False
        check = self.check_cpus if check_cpus is None else check_cpus
        idle = self.meter.idle() if check else None
        if idle is not None and idle < MIN_IDLE:
            return False  # the CPUs are busy: a second run would only slow this one down
        self.started[item.nodeid] = time.monotonic()
        self.pending[item.nodeid] = self.pool.submit(self.maker.make, item, agent, judge)
        return True

    def take(self, item: EvalItem) -> Future[RunOutcome] | None:
        self.started.pop(item.nodeid, None)
        return self.pending.pop(item.nodeid, None)

    def in_flight(self) -> list[list[Any]]:
        """The runs made ahead that are still going, as ``[node id, seconds since it began]``
        (what a report carries to the session's progress line, see ``keys.AHEAD_ATTRIBUTE``)."""
        now = time.monotonic()
        return [
            [nodeid, round(now - self.started.get(nodeid, now), 3)]
            for nodeid, future in list(self.pending.items())
            if not future.done()
        ]

    def close(self) -> None:
        """Stop the runs no item took, and wait for them to end."""
        self.maker.limits.stopping.set()  # no run waits any more, nor is made again
        futures = list(self.pending.values())
        self.pending.clear()
        self.started.clear()
        for future in futures:
            future.cancel()
        # A run that was still being set up starts its agent after a first stop: stop again.
        while not all(future.done() for future in futures):
            stop_all()
            time.sleep(0.02)
        self.pool.shutdown(wait=True)
