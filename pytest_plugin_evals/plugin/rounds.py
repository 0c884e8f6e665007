"""``--eval-runs auto``: the controller decides which runs are still needed.

Collection makes MAX runs per arm of every two-arm case and orders them round by round (run 1
of every case's arms, then run 2 …). Before any run starts (in its item's setup, or ahead of
it), the process making it asks the session's controller — the one process at ``-n 0``, else
pytest-xdist's controller — whether it is needed: a case whose Δ is decided, or that can no
longer be decided within its budget, gets its remaining items skipped with the reason
(``decided after 4 runs: better``). The controller also holds the cost ceiling for these
runs, from the spend the runs' reports carry.

Under xdist each worker talks to the controller over a channel of the execnet gateway xdist
already opened to it: the controller makes the channel in ``pytest_configure_node`` and hands
it over in ``workerinput`` (execnet carries channels), so it works the same for ``popen``,
``socket`` and ``ssh`` workers on any host, with no port or file of its own.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.engine.budget import COST_CEILING, Budget
from pytest_plugin_evals.model import SECOND_ARMS
from pytest_plugin_evals.plugin.keys import positions_key
from pytest_plugin_evals.plugin.nodeids import case_unit
from pytest_plugin_evals.plugin.reported import record_of
from pytest_plugin_evals.records import RunRecord, SkippedRun
from pytest_plugin_evals.rounds import WAIT, Rounds

if TYPE_CHECKING:
    from pytest_plugin_evals.plugin.settings import EvalSettings
    from pytest_plugin_evals.stats import Stop

#: A run item's label: the agent (under --eval-agents), the arm, the run.
_LABEL = re.compile(r"\[(?:[A-Za-z][A-Za-z0-9_.]*-)?(with|without|baseline)-(\d+)\]$")
#: The key ``workerinput`` carries the channel under.
CHANNEL_KEY = "eval_rounds"
#: How long a worker waits for the controller's answer (seconds).
ANSWER_SECONDS = 300.0
#: What a skipped run's record says it was (not counted as a run that could not start).
NOT_NEEDED = "not_needed"
#: The skip reasons as (message, recorded reason); None: make the run.
Answer = tuple[str, str | None] | None

_rounds_gate_key: pytest.StashKey[Any] = pytest.StashKey()


def parse(nodeid: str) -> tuple[tuple[str, str | None], bool, int] | None:
    """A two-arm run item's case unit, whether it is the first arm, and its run."""
    found = _LABEL.search(nodeid)
    unit = case_unit(nodeid)
    if found is None or unit is None:
        return None
    return unit, found.group(1) not in SECOND_ARMS, int(found.group(2))


#: The longest an item waits for its case's last look to report before it runs anyway.
WAIT_SECONDS = 120.0


def ask(config: pytest.Config, nodeid: str, *, ahead: bool = False) -> Answer:
    """Whether this process may start the run of ``nodeid`` (None), or why it is skipped.
    While a look of the case before its round is out, an item's setup waits for it (at most
    :data:`WAIT_SECONDS`); a run to be made ahead of its item (``ahead``) is not started yet:
    the look may wait on the very item whose setup is starting it."""
    gate = config.stash.get(_rounds_gate_key, None)
    if gate is None:
        return None
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        over = time.monotonic() >= deadline
        answer: Answer = gate.ask(nodeid, over)
        if answer is None or answer[0] != WAIT:
            return answer
        if ahead or threading.current_thread() is not threading.main_thread():
            return answer  # ahead of its item: not started now
        time.sleep(0.05)


#: skill-creator's trigger evals (:mod:`pytest_plugin_evals.suites.trigger_eval`).
_TRIGGER_FILE = "trigger_eval.json"


def _trigger_file(nodeid: str) -> bool:
    """Whether the item is a trigger query's (``trigger_eval.json``): its rate needs every run,
    in an A/B too, so no round stops it."""
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1] == _TRIGGER_FILE


class Decider:
    """The controller's side: the session's :class:`~pytest_plugin_evals.rounds.Rounds`, the
    runs issued, and their spend (for ``--eval-max-cost-usd``)."""

    def __init__(self, settings: EvalSettings) -> None:
        self.settings = settings
        self.lock = threading.Lock()
        self.rounds: Rounds | None = None
        self.granted: set[str] = set()
        self.reported: set[str] = set()
        self.costs: list[float] = []
        self.channels: list[Any] = []
        #: The rounds completed when the runs still to make were last put in order.
        self.ordered_at = 0

    def expect(self, nodeids: Iterable[str]) -> None:
        """The selected items (once): every two-arm case, and its most runs per arm."""
        with self.lock:
            if self.rounds is not None:
                return
            most: dict[tuple[str, str | None], int] = {}
            second: set[tuple[str, str | None]] = set()
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
            self.rounds = Rounds(cases, self.settings.margin)

    def ask(self, nodeid: str, wait_over: bool = False) -> Answer:
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
        flying = len(self.granted - self.reported)
        refused = Budget(self.settings.max_cost_usd).refusal(spent, flying, each)
        return None if refused is None else refused.reason

    def take(self, report: pytest.TestReport) -> None:
        """A run's report: its score (and spend) for its case's sequence."""
        if report.when not in ("setup", "call") or self.rounds is None:
            return
        record = record_of(report)
        if not isinstance(record, (RunRecord, SkippedRun)) or report.nodeid in self.reported:
            return
        if report.when == "setup" and isinstance(record, RunRecord) and report.passed:
            return  # the call report follows (it carries the same record)
        parsed = parse(report.nodeid)
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
            self.reported.add(report.nodeid)
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

    def stops(self) -> dict[tuple[str, str | None], tuple[int, int, Stop | None]]:
        """Each case: the rounds it took, its most, and why it stopped (None: it ran them
        all without a stop, or is still running)."""
        if self.rounds is None:
            return {}
        out: dict[tuple[str, str | None], tuple[int, int, Stop | None]] = {}
        for key, case in self.rounds.cases.items():
            if isinstance(key, tuple):
                out[key] = (case.cs.n, case.most, case.stop)
        return out


class Asker:
    """A worker's side: asks the controller over the channel, once per item."""

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


class RoundsHooks:
    """The controller's hooks (registered at ``-n 0`` and on the xdist controller)."""

    def __init__(self, decider: Decider, config: pytest.Config) -> None:
        self.decider = decider
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(session.config, "workerinput") and session.items:
            self.decider.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.decider.expect(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        channel = node.gateway.newchannel()
        decider = self.decider

        def answer(message: Any) -> None:
            got = decider.ask(str(message[0]), bool(message[1]))
            channel.send(None if got is None else list(got))

        channel.setcallback(answer)
        self.decider.channels.append(channel)
        node.workerinput[CHANNEL_KEY] = channel

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Any:
        yield
        self.decider.take(report)
        if self.config.pluginmanager.has_plugin("dsession") and self.decider.reordered():
            reorder_pending(self.config, self.decider)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        yield
        if nextitem is not None and self.decider.reordered():
            reorder_session(item.session, nextitem, self.decider)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        line = summary_line(self.decider)
        if line is not None:
            terminalreporter.write_line(line)


def summary_line(decider: Decider) -> str | None:
    """``sequential runs (auto:20): 30 cases, 212 of 1200 runs made — decided 9, …``."""
    stops = decider.stops()
    if not stops:
        return None
    whys: Counter[str] = Counter()
    made = 0
    most_all = 0
    for rounds, most, stop in stops.values():
        made += 2 * rounds
        most_all += 2 * most
        whys[stop.why if stop is not None else "not stopped"] += 1
    said = ", ".join(f"{why} {n}" for why, n in sorted(whys.items()))
    budget = decider.settings.runs_auto
    return (
        f"sequential runs (auto:{budget}): {len(stops)} case(s), {made} of {most_all} runs made"
        f" — stopped: {said}"
    )


def order_rounds(items: list[pytest.Item]) -> None:
    """Run 1 of every two-arm case's arms first, then run 2 …: each case gains a round before
    any case gains two, and the cases stop one by one."""
    first_seen: dict[tuple[str, str | None], int] = {}
    keys: list[tuple[int, int, int]] = []
    for index, item in enumerate(items):
        parsed = parse(item.nodeid) if getattr(item, "two_arm", False) else None
        if parsed is None:
            keys.append((0, index, index))
            continue
        unit, _, run = parsed
        keys.append((run, first_seen.setdefault(unit, index), index))
    order = sorted(range(len(items)), key=keys.__getitem__)
    items[:] = [items[i] for i in order]


def reorder_session(session: pytest.Session, nextitem: pytest.Item, decider: Decider) -> None:
    """At ``-n 0``: the items after the next one put in :meth:`Decider.order_key`'s order;
    those whose runs were already granted (made ahead) keep their places in front."""
    items = session.items
    try:
        start = items.index(nextitem) + 1
    except ValueError:
        return
    rest = items[start:]
    started = [item for item in rest if item.nodeid in decider.granted]
    waiting = [item for item in rest if item.nodeid not in decider.granted]
    keyed = sorted(range(len(waiting)), key=lambda i: decider.order_key(waiting[i].nodeid, i))
    items[start:] = started + [waiting[i] for i in keyed]
    session.stash[positions_key] = {it.nodeid: i for i, it in enumerate(items)}


def reorder_pending(config: pytest.Config, decider: Decider) -> None:
    """Under xdist (``--dist load``): the items the controller has not yet handed to a
    worker put in :meth:`Decider.order_key`'s order (those a worker already holds keep
    theirs)."""
    dsession = config.pluginmanager.getplugin("dsession")
    sched = getattr(dsession, "sched", None)
    pending, collection = getattr(sched, "pending", None), getattr(sched, "collection", None)
    if not isinstance(pending, list) or not collection:
        return
    pending.sort(key=lambda i: decider.order_key(collection[i], i))


def register(config: pytest.Config, settings: EvalSettings) -> None:
    """Set up ``--eval-runs auto`` in this process: the decider on the controller, the asker
    on an xdist worker."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        channel = workerinput.get(CHANNEL_KEY)
        if channel is not None:
            config.stash[_rounds_gate_key] = Asker(channel)
        return
    decider = Decider(settings)
    config.stash[_rounds_gate_key] = decider
    config.stash[decider_key] = decider
    config.pluginmanager.register(RoundsHooks(decider, config), "plugin-evals-rounds")


#: The controller's decider (read by the session to write each case's stop).
decider_key: pytest.StashKey[Decider] = pytest.StashKey()
