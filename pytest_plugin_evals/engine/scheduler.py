"""``--eval-runs auto``'s scheduler, held by the controller: which runs are still needed, in
which order, and what the cost ceiling leaves (pure: node ids and run records in, answers out).

Collection makes MAX runs per arm of every two-arm case and orders them round by round
(:func:`round_order`). Before a run starts, the process making it asks :meth:`Scheduler.ask`;
a case whose Δ is decided, or that can no longer be decided within its budget, gets its
remaining runs refused with the reason (``decided after 4 runs: better``). Each run's record
is given to :meth:`Scheduler.take`, which feeds its score to the case's
:class:`~pytest_plugin_evals.engine.rounds.Rounds`; once a round completes, the runs still to
make are put in :meth:`Scheduler.order_key`'s order (each round first, then the least certain
case first). A worker asks over a channel to the controller (:class:`RemoteScheduler`, answered
by :func:`answering`); the shell opens it on xdist's gateway and moves the items.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pytest_plugin_evals.engine.budget import COST_CEILING, Budget
from pytest_plugin_evals.engine.nodeids import case_unit
from pytest_plugin_evals.engine.rounds import WAIT, Rounds
from pytest_plugin_evals.model import SECOND_ARMS
from pytest_plugin_evals.records import Record, RunRecord, SkippedRun
from pytest_plugin_evals.stats import CaseStop

#: A run item's label: the agent (under --eval-agents), the arm, the run.
_LABEL = re.compile(r"\[(?:[A-Za-z][A-Za-z0-9_.]*-)?(with|without|baseline)-(\d+)\]$")
#: What a skipped run's record says it was (not counted as a run that could not start).
NOT_NEEDED = "not_needed"
#: skill-creator's trigger evals (:mod:`pytest_plugin_evals.suites.trigger_eval`).
_TRIGGER_FILE = "trigger_eval.json"

#: The longest a run's item waits for its case's last look to report before it runs anyway.
WAIT_SECONDS = 120.0
#: How long a worker waits for the controller's answer (seconds).
ANSWER_SECONDS = 300.0

#: The skip reasons as (message, recorded reason); None: make the run.
Answer = tuple[str, str | None] | None
#: A case on one agent: its node id group and its agent's label.
Unit = tuple[str, str | None]


def parse(nodeid: str) -> tuple[Unit, bool, int] | None:
    """A two-arm run item's case unit, whether it is the first arm, and its run."""
    found = _LABEL.search(nodeid)
    unit = case_unit(nodeid)
    if found is None or unit is None:
        return None
    return unit, found.group(1) not in SECOND_ARMS, int(found.group(2))


def _trigger_file(nodeid: str) -> bool:
    """Whether the item is a trigger query's (``trigger_eval.json``): its rate needs every run,
    in an A/B too, so no round stops it."""
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1] == _TRIGGER_FILE


def round_order(nodeids: Sequence[str | None]) -> list[int]:
    """The collection's indexes in round order: run 1 of every two-arm case's arms first, then
    run 2 …, so each case gains a round before any case gains two (None: not a two-arm item;
    those go first, in their order)."""
    first_seen: dict[Unit, int] = {}
    keys: list[tuple[int, int, int]] = []
    for index, nodeid in enumerate(nodeids):
        parsed = parse(nodeid) if nodeid is not None else None
        if parsed is None:
            keys.append((0, index, index))
            continue
        unit, _, run = parsed
        keys.append((run, first_seen.setdefault(unit, index), index))
    return sorted(range(len(nodeids)), key=keys.__getitem__)


class Scheduler:
    """The session's :class:`Rounds`, the runs issued, and their spend (for the ceiling)."""

    def __init__(self, margin: float, max_cost_usd: float | None, budget: int | None) -> None:
        self.margin = margin
        self.budget = Budget(max_cost_usd)
        #: ``--eval-runs auto:MAX``'s MAX (said in the summary).
        self.most = budget
        self.lock = threading.Lock()
        self.rounds: Rounds | None = None
        self.granted: set[str] = set()
        self.reported: set[str] = set()
        self.costs: list[float] = []
        #: The rounds completed when the runs still to make were last put in order.
        self.ordered_at = 0

    def expect(self, nodeids: Iterable[str]) -> None:
        """The selected items (once): every two-arm case, and its most runs per arm."""
        with self.lock:
            if self.rounds is not None:
                return
            most: dict[Unit, int] = {}
            second: set[Unit] = set()
            for nodeid in nodeids:
                parsed = parse(nodeid)
                if parsed is None or _trigger_file(nodeid):  # a query runs all its runs
                    continue
                unit, first, run = parsed
                if first:
                    most[unit] = max(most.get(unit, 0), run)
                else:
                    second.add(unit)
            cases = [(unit, n) for unit, n in most.items() if unit in second]
            self.rounds = Rounds(cases, self.margin)

    def ask(self, nodeid: str, wait_over: bool = False) -> Answer:
        """Whether the run of ``nodeid`` may start (None), else why not and the reason its
        record keeps (see :meth:`Rounds.ask <pytest_plugin_evals.engine.rounds.Rounds.ask>`)."""
        parsed = parse(nodeid)
        with self.lock:
            if self.rounds is None or parsed is None or nodeid in self.granted:
                return None
            unit, _, run = parsed
            if unit not in self.rounds.cases:
                return None
            ceiling = self._ceiling()
            if ceiling is not None and run > self.rounds.cases[unit].issued:
                return ceiling, COST_CEILING
            reason = self.rounds.ask(unit, run, wait_over)
            if reason is not None:
                return reason, NOT_NEEDED
            self.granted.add(nodeid)
            return None

    def _ceiling(self) -> str | None:
        """Why no new round may start under ``--eval-max-cost-usd`` (spent, and what the runs
        issued and not yet reported are expected to cost), if none may."""
        spent = sum(self.costs)
        each = spent / len(self.costs) if self.costs else 0.0
        refused = self.budget.refusal(spent, len(self.granted - self.reported), each)
        return None if refused is None else refused.reason

    def take(self, nodeid: str, record: Record | None, *, final: bool) -> None:
        """A run's record, from its report (``final``: no later report of the item carries
        it, as a passed setup's does): its score (and spend) for its case's sequence."""
        if self.rounds is None or nodeid in self.reported:
            return
        if not isinstance(record, (RunRecord, SkippedRun)):
            return
        if isinstance(record, RunRecord) and not final:
            return  # the call report follows (it carries the same record)
        parsed = parse(nodeid)
        if parsed is None:
            return
        unit, first, run = parsed
        score = None
        if isinstance(record, RunRecord):
            result = record.result
            score = result.score if result.graded else None
            self.costs.append(max(0.0, float(result.cost_usd or 0.0)))
        elif record.reason == NOT_NEEDED:
            return  # a skipped round: nothing to take
        with self.lock:
            self.reported.add(nodeid)
            self.rounds.report(unit, first, run, score)

    def reordered(self) -> bool:
        """Whether a round completed since the runs still to make were last put in order
        (and note that they are now)."""
        with self.lock:
            if self.rounds is None or self.rounds.completed == self.ordered_at:
                return False
            self.ordered_at = self.rounds.completed
            return True

    def order_key(self, nodeid: str, index: int) -> tuple[int, float, int]:
        """Where a run still to make goes: its round first (every case gains a round before any
        gains two), then the least certain case first (the widest Δ interval), then its
        place in the collection. Another item keeps its place ahead of them."""
        parsed = parse(nodeid)
        if self.rounds is None or parsed is None or parsed[0] not in self.rounds.cases:
            return (0, 0.0, index)
        unit, _, run = parsed
        return (run, -self.rounds.uncertainty(unit, run), index)

    def pending_order(self, nodeids: Sequence[str]) -> list[int]:
        """The indexes of the runs still to make, in :meth:`order_key`'s order; those granted
        already (made ahead) keep their places in front."""
        started = [i for i, n in enumerate(nodeids) if n in self.granted]
        waiting = [i for i, n in enumerate(nodeids) if n not in self.granted]
        keyed = sorted(range(len(waiting)), key=lambda k: self.order_key(nodeids[waiting[k]], k))
        return started + [waiting[k] for k in keyed]

    def stops(self) -> dict[Unit, CaseStop]:
        """Each case: the rounds it took, its most, and why it stopped (None: it ran them
        all without a stop, or is still running)."""
        if self.rounds is None:
            return {}
        return {
            key: CaseStop(case.cs.n, case.most, case.stop)
            for key, case in self.rounds.cases.items()
            if isinstance(key, tuple)
        }

    def summary(self) -> str | None:
        """``sequential runs (auto:20): 30 cases, 212 of 1200 runs made — decided 9, …``."""
        stops = self.stops()
        if not stops:
            return None
        whys: Counter[str] = Counter()
        made = 0
        most_all = 0
        for stop in stops.values():
            made += 2 * stop.rounds
            most_all += 2 * stop.most
            whys[stop.stopped or "not stopped"] += 1
        said = ", ".join(f"{why} {n}" for why, n in sorted(whys.items()))
        return (
            f"sequential runs (auto:{self.most}): {len(stops)} case(s), {made} of {most_all} "
            f"runs made — stopped: {said}"
        )


class RemoteScheduler:
    """A worker's side: asks the controller's :class:`Scheduler` over the channel (any object
    with ``send`` and ``receive(timeout)``, an execnet channel under xdist), once per item."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self.lock = threading.Lock()
        self.answers: dict[str, Answer] = {}

    def ask(self, nodeid: str, wait_over: bool = False) -> Answer:
        with self.lock:
            if nodeid in self.answers:
                return self.answers[nodeid]
            self.channel.send([nodeid, wait_over])
            got = self.channel.receive(timeout=ANSWER_SECONDS)
            answer: Answer = None if got is None else (str(got[0]), got[1])
            if answer is None or answer[0] != WAIT:
                self.answers[nodeid] = answer
            return answer


def answering(scheduler: Scheduler, channel: Any) -> Callable[[Any], None]:
    """The callback the controller sets on its channel to a worker: each question answered."""

    def answer(message: Any) -> None:
        got = scheduler.ask(str(message[0]), bool(message[1]))
        channel.send(None if got is None else list(got))

    return answer


def wait_answer(gate: Scheduler | RemoteScheduler, nodeid: str, *, may_wait: bool) -> Answer:
    """Whether the run of ``nodeid`` may start (None), or why it is skipped. While a look of
    the case before its round is out, a run whose item's setup is starting it (``may_wait``)
    waits for the look (at most :data:`WAIT_SECONDS`); a run to be made ahead of its item is
    not started yet: the look may wait on the very item whose setup is starting it."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        answer = gate.ask(nodeid, time.monotonic() >= deadline)
        if answer is None or answer[0] != WAIT or not may_wait:
            return answer
        time.sleep(0.05)
