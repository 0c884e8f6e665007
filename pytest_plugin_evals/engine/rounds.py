"""Which runs a session under ``--eval-runs auto`` still makes, decided in one place (pure).

The controller (the xdist controller, or the one process at ``-n 0``) holds one
:class:`Rounds` for the session. Before a run starts, its process asks :meth:`Rounds.ask`;
when a run reports, :meth:`Rounds.report` takes its score. A round (run ``r`` of each arm of
a case) is issued whole: the first of its runs to ask issues it, and its other arm runs
whatever is decided meanwhile, so every difference is paired. After each complete round the
case's confidence sequence (:mod:`pytest_plugin_evals.stats.sequential`) takes the difference and
the stopping rule is applied, with the session's false discovery rate control across all
cases (a case counts as decided only when its verdict survives Benjamini–Hochberg over every
case's current p-value, cases not yet measured counting as p = 1). A running case's p-value
can rise as well as fall from look to look, so a case that stopped as decided keeps its
verdict in the document unless a case that helped it pass ended with a larger p-value.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

from pytest_plugin_evals.stats import ConfidenceSequence, Decision, Stop, decisions, sequential

#: :meth:`Rounds.ask`'s answer while a look of the case before the round has not reported.
WAIT = "wait: a look of the case before this round has not reported yet"


@dataclass
class CaseRounds:
    """One case's rounds: the scores reported, its sequence, and why it stopped."""

    most: int
    issued: int = 0
    scores: dict[int, dict[bool, float | None]] = field(default_factory=dict)
    cs: ConfidenceSequence = field(default_factory=ConfidenceSequence)
    #: The next round the sequence waits for (rounds are taken in order).
    next_round: int = 1
    decision: Decision | None = None
    stop: Stop | None = None
    #: The spread of its Δ after each round that entered its sequence.
    spreads: list[float] = field(default_factory=list)


class Rounds:
    """The session's sequential state: one :class:`CaseRounds` per two-arm case."""

    def __init__(self, cases: Iterable[tuple[Hashable, int]], margin: float) -> None:
        self.cases: dict[Hashable, CaseRounds] = {
            key: CaseRounds(most, cs=ConfidenceSequence(most)) for key, most in cases
        }
        self.margin = margin
        #: How many rounds have entered a sequence: what the order of the runs still to make
        #: depends on (:meth:`uncertainty`).
        self.completed = 0

    def ask(self, key: Hashable, run: int, wait_over: bool = False) -> str | None:
        """None when run ``run`` of the case is to be made (issuing its round), else why not
        (``decided after 4 runs: better``), or :data:`WAIT` while a look before it has not
        reported (``wait_over``: it waited long enough, run it). A case this does not hold
        always runs."""
        case = self.cases.get(key)
        if case is None or run <= case.issued:
            return None
        if case.stop is not None:
            return case.stop.reason()
        if run > case.most:
            return f"beyond its budget of {case.most} runs"
        pending = [n for n in sequential.looks(case.most) if case.next_round <= n < run]
        if pending and not wait_over:
            return WAIT  # a look before it is still out: its result decides whether it runs
        case.issued = run
        return None

    def uncertainty(self, key: Hashable, run: int) -> float:
        """How uncertain the case is, for the place of its run ``run`` among the runs still
        to make (the least certain first): the width of its Δ's 95% interval after round
        ``run − 2`` (the last round every case has completed when run ``run`` is put in its
        place: rounds run in order, and the next item is fixed one ahead; so all cases are
        compared after the same rounds), 2 (the widest) before then, 0 once it stopped (its
        runs are not made)."""
        case = self.cases.get(key)
        if case is None or case.stop is not None:
            return 0.0
        known = min(run - 2, len(case.spreads))
        return case.spreads[known - 1] if known >= 1 else 2.0

    def stop_all(self, reason: Stop) -> None:
        """No case issues another round (the cost ceiling): each says it stopped so."""
        for case in self.cases.values():
            if case.stop is None:
                case.stop = Stop(reason.why, case.cs.n)

    def report(self, key: Hashable, first_arm: bool, run: int, score: float | None) -> bool:
        """A run's score (None: the run was not graded, its round is lost). True when the
        case stopped with this report."""
        case = self.cases.get(key)
        if case is None:
            return False
        case.scores.setdefault(run, {})[first_arm] = score
        changed = False
        while len(pair := case.scores.get(case.next_round, {})) == 2:
            a, b = pair[True], pair[False]
            if a is not None and b is not None:
                changed = case.cs.add(a, b) or changed
                case.spreads.append(case.cs.spread())
                self.completed += 1
            case.next_round += 1
        if not changed or case.stop is not None:
            return False
        case.decision = sequential.decide(case.cs, self.margin)
        case.stop = sequential.should_stop(case.cs, self.margin, self._survives(key), self._level())
        return case.stop is not None

    def _level(self) -> float:
        """The level a case's futility is judged at: Benjamini–Hochberg's for one more
        discovery than the cases decided so far."""
        decided = sum(c.stop is not None and c.stop.why == "decided" for c in self.cases.values())
        return decisions.FDR * (decided + 1) / len(self.cases)

    def _survives(self, key: Hashable) -> bool:
        """Whether the case's verdict is decided and passes Benjamini–Hochberg over every
        case's current decision (p = 1 for a case not yet measured)."""
        mine = self.cases[key].decision
        if mine is None or not mine.decided:
            return False
        keys = list(self.cases)
        family = [self.cases[k].decision or Decision("inconclusive", "better", 1.0) for k in keys]
        adjusted = decisions.control_fdr(family)
        found = adjusted[keys.index(key)]
        return found is not None and found.decided
