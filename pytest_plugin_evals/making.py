"""Making a session's runs: their options from the settings, the session's judges and results
folder, and the run maker, which makes an item's run when the budget lets it start (the
pytest shell, ``plugin/runs.py``, says what it reads of the session and calls it)."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_plugin_evals.agents import capabilities_of
from pytest_plugin_evals.agents.confine.bounds import Bounds
from pytest_plugin_evals.agents.confine.network import Endpoint
from pytest_plugin_evals.engine.limits import NoRoom, RateLimits, Ticket, process_share
from pytest_plugin_evals.engine.starts import AUTH_STOP, Sign, Skip, skip_case, stopped_result
from pytest_plugin_evals.engine.wire import BudgetGone
from pytest_plugin_evals.recording import FolderBusy, claim_runs_folder
from pytest_plugin_evals.runner import RunOptions, RunOutcome, RunTarget, execute_run
from pytest_plugin_evals.settings import EvalSettings, results_dir

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


class RunItem(Protocol):
    """What the run maker reads of an item: its case, and which run it is."""

    @property
    def case(self) -> Case: ...
    def run_target(self) -> RunTarget: ...


class RunMaker:
    """Makes runs: one folder each under ``root``, the session's options. What it reads of the
    session (its results folder, whether ``--eval-runs auto`` holds a run back, the second
    judge) is what the shell's subclass says."""

    def __init__(
        self,
        settings: EvalSettings,
        root: Path,
        limits: RateLimits,
        reuse: Any,  # plugin.reuse.Reuse: its take and stamp
        stop: StopSign | None,
        tag: str,
    ) -> None:
        self.settings = settings
        self.root = root
        self.limits = limits
        self.reuse = reuse
        self.stop = stop
        self.tag = tag
        self.made: Iterator[int] = itertools.count(1)
        #: The options every run of the session shares, read from the settings once.
        self.run_options = run_options(settings)

    def sign(self) -> Sign | None:
        """The session's stop sign, if it is up (``engine.starts``)."""
        return self.stop.read() if self.stop is not None else None

    def results_for(self, item: RunItem) -> Path:
        """The session's results folder (the same for every item)."""
        raise NotImplementedError

    def held_back(self, item: RunItem, ahead: bool) -> Skip | None:
        """Why ``--eval-runs auto`` does not start the item's run now, if it does not."""
        return None

    def second_judge(self) -> Judge | None:
        """The session's second judge, once made."""
        return None

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
            second_judge=self.second_judge() if judge else None,
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
        # A replay's agent cost is history (a reused run's too): only its judge calls were
        # spent now.
        result = outcome.result
        spends = capabilities_of(agent).spends and reused is None
        ticket.spent = result.cost_usd if spends else result.judge_cost_usd
        return outcome

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
