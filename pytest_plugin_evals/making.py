"""Making a session's runs: their options from the settings, the session's judges and results
folder, and the run maker, which makes an item's run when the budget lets it start, takes it
from an earlier session under ``--eval-reuse`` and makes the next items' runs ahead (the pytest
shell, ``plugin/runs.py``, says what it reads of the session and calls it)."""

from __future__ import annotations

import functools
import itertools
import operator
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_plugin_evals.agents import capabilities_of
from pytest_plugin_evals.agents.confine.bounds import Bounds
from pytest_plugin_evals.agents.confine.network import Endpoint
from pytest_plugin_evals.agents.replay import ReplayAgent
from pytest_plugin_evals.engine.limits import NoRoom, RateLimits, Ticket, process_share
from pytest_plugin_evals.engine.reuse import NOT_REUSED, ReusedRun, ReuseStamps
from pytest_plugin_evals.engine.run_ahead import RunAhead
from pytest_plugin_evals.engine.starts import AUTH_STOP, Sign, Skip, skip_case, stopped_result
from pytest_plugin_evals.engine.wire import BudgetGone, Reachable
from pytest_plugin_evals.recording import FolderBusy, claim_runs_folder
from pytest_plugin_evals.recording.folders import tell_chosen
from pytest_plugin_evals.reuse import Fingerprint
from pytest_plugin_evals.runner import RunOptions, RunOutcome, RunTarget, execute_run
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.judges import Judge
    from pytest_plugin_evals.model import Case
    from pytest_plugin_evals.util.stop_sign import StopSign

#: The run options that are not the settings' field of the same name, each made from the
#: settings' fields it names. Every other run option is the settings' field of its name, but
#: :data:`RUN_GIVEN` (tests/unit/test_run_options.py checks that each is one or the other).
RUN_DERIVED: dict[str, tuple[tuple[str, ...], Callable[[EvalSettings], Any]]] = {
    "model_override": (("model",), lambda s: s.model),
    "judge_claude_bin": (("claude_bin",), lambda s: s.claude_bin),
    "judge_kind": (("judge", "no_judge"), lambda s: None if s.no_judge else s.judge),
    "no_judge_reason": (("no_judge",), lambda s: "--eval-no-judge" if s.no_judge else None),
    "bounds": (("bounds",), lambda s: Bounds(**dict(s.bounds))),
    "allow_network": (("allow_network",), lambda s: _endpoints(s.allow_network)),
}
#: The run options the run maker gives each run: not settings.
RUN_GIVEN = frozenset({"runs_dir", "judge", "second_judge", "session_tag"})


def run_options(settings: EvalSettings) -> RunOptions:
    """The options every run of the session shares, from its settings (``RUN_GIVEN`` left at
    their defaults, for :meth:`RunMaker.options` to give)."""
    names = {f.name for f in fields(RunOptions)} - set(RUN_DERIVED) - RUN_GIVEN
    values = {name: getattr(settings, name) for name in names}
    values.update({name: make(settings) for name, (_, make) in RUN_DERIVED.items()})
    return RunOptions(**values)


def _endpoints(given: Sequence[str]) -> tuple[Endpoint, ...]:
    return tuple(e for e in (Endpoint.parse(v) for v in given) if e is not None)


def session_judges(settings: EvalSettings) -> tuple[Judge | None, Judge | None]:
    """The session's judge and its second judge (``--eval-judge-second``: recorded, never
    scored). None under ``--eval-no-judge``, or when the default judge is not available here
    (paid graders then say "no judge configured"); :class:`~pytest_plugin_evals.judges.
    JudgeSetupError` (one line) when a judge asked for cannot be made."""
    from pytest_plugin_evals.judges import JudgeSetupError, make_judge, second_judge_spec

    if settings.no_judge:
        return None, None
    try:
        judge = make_judge(settings.judge, settings.judge_model, claude_bin=settings.claude_bin)
    except JudgeSetupError:
        if settings.judge_given:
            raise
        return None, None
    if settings.judge_second is None:
        return judge, None
    kind, model = second_judge_spec(settings.judge_second, settings.judge)
    try:
        return judge, make_judge(kind, model, claude_bin=settings.claude_bin)
    except JudgeSetupError as exc:
        raise JudgeSetupError(f"--eval-judge-second: {exc}") from None


def results_folder(
    settings: EvalSettings, root: Path, stamp: str, replayed: Path | None, tag: str
) -> tuple[Path, str | None]:
    """The session's results folder under the suite root ``root``, and why no run can be made
    in it (another session uses it), if none can. A runs folder an earlier session left there
    is cleared first, unless the folder is one the session replays (``replayed``: the agent's
    folder, or one of ``--eval-agents``'s ``replay:`` agents, made or not)."""
    results = results_dir(settings, root, stamp)
    folders = {replayed.resolve()} if replayed is not None else set()
    for _, spec in settings.agents:
        if spec.startswith("replay:"):
            folders.add(Path(spec.removeprefix("replay:")).expanduser().resolve())
    if results.resolve() in folders:
        return results, None
    try:
        claim_runs_folder(results / "runs", tag)
    except FolderBusy as exc:
        return results, str(exc)
    return results, None


def ahead_depth(settings: EvalSettings, processes: int) -> int | None:
    """How many runs one of the session's ``processes`` keeps in flight, its item's included
    (:func:`~pytest_plugin_evals.engine.limits.process_share`), or None when no run is made
    ahead: under ``--eval-run-ahead off``, or a cost ceiling (every run waits for the spend of
    the runs before it to be known)."""
    if settings.run_ahead == "off" or settings.max_cost_usd is not None:
        return None
    return process_share(settings.max_concurrency, os.cpu_count() or 1, processes)


def needs_judge(case: Case) -> bool:
    """Whether a run of ``case`` asks for the session's judge: one of its graders is paid."""
    return any(spec.paid for spec in case.graders)


def close_judges(*judges: Judge | None) -> None:
    """Close the session's judges (those that hold a client)."""
    for judge in judges:
        close = getattr(judge, "close", None)
        if callable(close):
            close()


class RunItem(ReusedRun, Protocol):
    """What the run maker reads of an item: what reuse reads, its node id (what names a run
    made ahead), and which run it is."""

    @property
    def nodeid(self) -> str: ...
    def run_target(self) -> RunTarget: ...


#: What names a run made ahead: its item's node id.
_NODEID = operator.attrgetter("nodeid")


class RunMaker:
    """Makes runs: one folder each under ``root``, the session's options, each process's side
    of the session's ``budget`` (:class:`~pytest_plugin_evals.engine.limits.RateLimits`) and
    its reuse stamps (``stamp``: the session's). What it reads of the session (the selected
    items' suites, the agent and judges made, whether ``--eval-runs auto`` holds a run back) is
    what the shell's subclass says; ``shared`` is the session's shared folder."""

    def __init__(
        self,
        settings: EvalSettings,
        root: Path,
        budget: Reachable,
        shared: Path,
        stamp: str,
        stop: StopSign | None,
    ) -> None:
        self.settings = settings
        self.root = root
        self.limits = RateLimits(
            budget,
            settings.rate_limit_retries,
            ceiling=settings.max_cost_usd is not None,
            max_concurrency=settings.max_concurrency,
            max_wait=settings.max_rate_limit_wait,
        )
        self.reuse = ReuseStamps(settings, stamp)
        self.shared, self.stamp, self.stop = shared, stamp, stop
        #: The session's token in every run's environment: its shared folder's unique name.
        self.tag = shared.name
        self.made: Iterator[int] = itertools.count(1)
        #: The options every run of the session shares, read from the settings once.
        self.run_options = run_options(settings)
        #: The session's one results folder, once chosen (see :meth:`results_for`).
        self.results: Path | None = None
        self._refusal: str | None = None
        #: The runs made ahead of their items' setup, once :meth:`start_ahead` started them.
        self.run_ahead: RunAhead[RunItem, RunOutcome | Skip] | None = None

    def sign(self) -> Sign | None:
        """The session's stop sign, if it is up (``engine.starts``)."""
        return self.stop.read() if self.stop is not None else None

    def suite_roots(self, item: RunItem) -> list[Path]:
        """The suite roots of the session's selected items (``item`` one of them)."""
        return [item.case.suite_root]

    def replayed(self) -> Path | None:
        """The folder the session's agent replays, if it replays one."""
        return None

    def made_agent(self, item: RunItem) -> Agent | None:
        """The agent the item's run is made with, once made here (None: not yet)."""
        return None

    def made_judges(self) -> tuple[Judge | None, Judge | None] | None:
        """The session's judge and second judge, once made here (None: not yet)."""
        return None

    def held_back(self, item: RunItem, ahead: bool) -> Skip | None:
        """Why ``--eval-runs auto`` does not start the item's run now, if it does not."""
        return None

    def results_for(self, item: RunItem) -> Path:
        """The session's results folder, the same for every format and in every process: it
        is chosen from the suites of all selected items (each xdist worker selects the same),
        held for the session (see :meth:`refusal` when another session is using it)."""
        if self.results is None:
            root = common_suite_root(self.suite_roots(item)) or item.case.suite_root
            self.results, self._refusal = results_folder(
                self.settings, root, self.stamp, self.replayed(), self.tag
            )
            tell_chosen(self.shared, self.results, root)
        return self.results

    def refusal(self, item: RunItem) -> str | None:
        """Why no run of this session can be made here, if none can: its results folder is
        another session's (one line, the same for every item)."""
        self.results_for(item)
        return self._refusal

    def skip(self, item: RunItem, *, ahead: bool = False) -> Skip | None:
        """Why the item's run is not started, if it is not (``ahead``: now, ahead of its
        item's setup; under ``--eval-runs auto`` a run whose round waits on a look is not)."""
        skip = skip_case(item.case, self.sign(), scaffold=self.settings.scaffold)
        if skip is not None:
            return skip
        if self.settings.max_cost_usd is not None:
            try:
                refused = self.limits.budget.refused()
            except BudgetGone as exc:
                return Skip(str(exc))
            if refused is not None:
                return Skip(refused.reason, refused.kind)
        return self.held_back(item, ahead)

    def options(self, item: RunItem, judge: Judge | None) -> RunOptions:
        """The item's run options: the session's, with its runs folder, judge and token."""
        return replace(
            self.run_options,
            runs_dir=self.results_for(item) / "runs",
            judge=judge,
            second_judge=(self.made_judges() or (None, None))[1] if judge else None,
            session_tag=self.tag,
        )

    def make(self, item: RunItem, agent: Agent, judge: Judge | None) -> RunOutcome | Skip:
        """Make the item's run (the checks of :meth:`skip` passed): when the session's budget
        lets it start, and again while the provider refuses it (``engine.limits``). A
        :class:`Skip` when the cost ceiling leaves it no room after all (another process took
        it after :meth:`skip` had found some), or the budget cannot be reached."""
        try:
            with self.limits.reserved() as ticket:
                return self._make_reserved(item, agent, judge, ticket)
        except NoRoom as exc:
            return Skip(exc.refused.reason, exc.refused.kind)
        except BudgetGone as exc:
            return Skip(str(exc))

    def _make_reserved(
        self, item: RunItem, agent: Agent, judge: Judge | None, ticket: Ticket
    ) -> RunOutcome:
        """Make the item's run, its cost reserved: what it spent is set on ``ticket``."""
        reused, fingerprint, note = self._reused(item, agent, judge)
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
        # A replay's agent cost is history (a reused run's too): only its judge calls were
        # spent now.
        result = outcome.result
        spends = capabilities_of(agent).spends and reused is None
        ticket.spent = result.cost_usd if spends else result.judge_cost_usd
        return outcome

    def _reused(
        self, item: RunItem, agent: Agent, judge: Judge | None
    ) -> tuple[RunOutcome | None, Fingerprint | None, str | None]:
        """The item's run reused from the earlier session (``--eval-reuse``), when it may be:
        graded again with today's graders (the ``replay:`` agent reads it back) and stamped;
        else None, with the fingerprint to stamp the run made with and the note it gets (why
        it is not reused)."""
        found, fingerprint, note = self.reuse.look(item, agent)
        if found is None or fingerprint is None:
            return None, fingerprint, note
        source, recorded = found
        outcome = execute_run(
            item.run_target(),
            agent=ReplayAgent(source),
            run_root=self.root / f"reused-{item.arm}-{item.run}-{next(self.made)}",
            options=self.options(item, judge),
        )
        if outcome.result.infra_error is not None:
            return None, fingerprint, f"{NOT_REUSED}: {outcome.result.error}"
        outcome.result = replace(outcome.result, reused_from=str(source))
        made_at, origin = recorded.stamp.made_at, recorded.stamp.origin
        self.reuse.stamp(self.results_for(item), item, fingerprint, made_at, origin)
        return outcome, fingerprint, None

    def _make_once(
        self, item: RunItem, agent: Agent, judge: Judge | None, room: float | None
    ) -> RunOutcome:
        """One attempt at the item's run (``room``: what the cost ceiling leaves it)."""
        target = item.run_target()
        prefix = f"{target.agent_label}-" if target.agent_label is not None else ""
        outcome = execute_run(
            target,
            agent=agent,
            run_root=self.root / f"{prefix}{target.arm}-{target.run}-{next(self.made)}",
            options=self.options(item, judge),
            paid_budget=room,
        )
        result = stopped_result(outcome.result, self.sign())
        if result is not outcome.result:
            outcome = replace(outcome, result=result)
        if outcome.result.infra_error == "auth" and self.stop is not None:
            # Every remaining run would be refused the same way: none is started.
            self.stop.put("auth_failed", AUTH_STOP)
        return outcome

    # -- runs made ahead of their items' setup (``engine.run_ahead``) ------------------------

    def start_ahead(self, processes: int) -> RunAhead[RunItem, RunOutcome | Skip] | None:
        """Make runs ahead of their items' setup from now on, if the settings let one of the
        session's ``processes`` (:func:`ahead_depth`); the runs made ahead, or None."""
        depth = ahead_depth(self.settings, processes)
        if depth is not None:
            on = self.settings.run_ahead == "on"
            stopping = self.limits.stopping
            self.run_ahead = RunAhead(self.ahead, _NODEID, stopping, check_cpus=on, depth=depth)
        return self.run_ahead

    def ahead(self, item: RunItem) -> Callable[[], RunOutcome | Skip] | None:
        """What makes ``item``'s run ahead of its setup exactly as there, when it can be made
        now: its agent is made, and a process of its own (an in-process agent would share this
        process's working directory), its judge too if it needs one (the first item that
        needs it makes it), and no check holds it back."""
        agent = self.made_agent(item)
        if agent is None or not capabilities_of(agent).separate_process:
            return None
        judges = self.made_judges() if needs_judge(item.case) else (None, None)
        if judges is None:
            return None
        if self.skip(item, ahead=True) is not None or self.refusal(item) is not None:
            return None
        return functools.partial(self.make, item, agent, judges[0])

    def outcome(
        self,
        item: RunItem,
        agent: Agent,
        judge: Callable[[], Judge | None],
        upcoming: Callable[[int], Sequence[RunItem]],
    ) -> tuple[RunOutcome | Skip, bool]:
        """The item's run, in its setup, and whether it was made ahead of it: the run made
        ahead if one was, else made now (the checks of :meth:`skip` first; ``judge`` asked for
        only when the case needs one). Meanwhile the runs of the next items (``upcoming(n)``:
        at most ``n`` of them) go on ahead."""
        ahead = self.run_ahead
        started = ahead.take(item.nodeid) if ahead is not None else None
        if ahead is not None:
            ahead.fill(upcoming(ahead.depth - 1))
        if started is not None:
            outcome = started.result()
            return outcome, not isinstance(outcome, Skip)
        skip = self.skip(item)  # before the judge is asked for: a skipped run needs none
        if skip is not None:
            return skip, False
        return self.make(item, agent, judge() if needs_judge(item.case) else None), False
