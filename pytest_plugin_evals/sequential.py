"""Sequential runs (``--eval-runs auto``): a group-sequential design for a case's Δ (pure).

A case's arms run in rounds: round ``r`` is run ``r`` of each arm. The case is analysed at a
fixed schedule of **looks** (:func:`looks`: three for a budget of 20 runs per arm, after
rounds 3, 10 and 20), and at each look its Δ gets Newcombe's interval (the one every
fixed-runs case gets, :mod:`pytest_plugin_evals.stats`) at a wider level: **Pocock's
group-sequential boundary** (Pocock 1977), which keeps the chance of a wrong "better" or
"worse" over all the looks together at 5% although the case is looked at several times. It
is taken for two looks more than the case has (2.413, five looks' constant, for three
looks): Pocock's constants assume normal increments, and with pass/fail runs and few runs
per arm the three-look constant (2.289) let 5.8% of null cases through in simulation.
Below 5% (a false discovery rate level, a p-value's search) the boundary is scaled with the
normal quantile, which is conservative (Pocock's own constants grow more slowly). The simulation in
``bench/bench_decisions.py`` shows the error rate it keeps.

Why this and not an anytime-valid confidence sequence (a betting one, Waudby-Smith & Ramdas
2023): both were simulated on the benchmark suite; with 20 runs per arm at most, the betting
sequence decided almost nothing once the session's false discovery rate control was applied
(it pays for looking after every single round), while three planned looks keep the power of a
fixed design (more looks stop a little earlier but decide less). Stopping for futility, a
budget or a cost ceiling only removes looks (non-binding), which can only lower the error
rate.

The verdict at a look reads that interval as :mod:`pytest_plugin_evals.decisions` reads any
other (better / worse / equivalent inside ``±margin`` / inconclusive); its p-value is the
largest level at which the claim holds, so the session's false discovery rate control applies
unchanged. A case's final verdict is the one of its last look, the one its stopping rule read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pytest_plugin_evals import decisions, stats
from pytest_plugin_evals.decisions import Decision
from pytest_plugin_evals.stats import Interval

#: Pocock's boundary (two-sided 5%) for K equally weighted looks.
POCOCK = {1: 1.960, 2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413}
#: The shares of the budget at which a case is looked at.
LOOK_SHARES = (0.15, 0.5, 1.0)
#: The default most runs per arm under ``--eval-runs auto``.
DEFAULT_MAX_RUNS = 20
#: The fewest rounds before the first look.
FIRST_LOOK = 2


def looks(most: int) -> tuple[int, ...]:
    """The rounds at which a case with a budget of ``most`` rounds is analysed."""
    found = sorted({max(FIRST_LOOK, min(most, round(most * share))) for share in LOOK_SHARES})
    return tuple(found)


#: How many looks' worth of Pocock's boundary a case's looks get: two more than it has.
#: Pocock's constants assume normal increments; with pass/fail runs and a few runs per arm
#: three looks at their own constant (2.289) let 5.8% of null cases through at p = 0.5
#: (simulated, 4000 cases), the constant of five looks (2.413) 4.2%.
EXTRA_LOOKS = 2


def boundary(most: int, z: float = stats.Z95) -> float:
    """The ``z`` of Newcombe's interval at a look: Pocock's (for :data:`EXTRA_LOOKS` more
    looks than the case has), scaled to the level of ``z``."""
    return POCOCK[min(len(POCOCK), len(looks(most)) + EXTRA_LOOKS)] * z / stats.Z95


@dataclass
class ConfidenceSequence:
    """A case's paired rounds and its interval at its latest look (group-sequential)."""

    most: int = DEFAULT_MAX_RUNS
    n: int = 0
    with_sum: float = 0.0
    without_sum: float = 0.0
    #: The rounds of the latest look, and the arms' sums then.
    looked: int = 0
    at_look: tuple[float, float] = field(default=(0.0, 0.0))

    def add(self, with_score: float, without_score: float) -> bool:
        """One round's pair of scores (clipped to ``[0, 1]``); True when it makes a look."""
        self.n += 1
        self.with_sum += min(1.0, max(0.0, float(with_score)))
        self.without_sum += min(1.0, max(0.0, float(without_score)))
        if self.n in looks(self.most):
            self.looked, self.at_look = self.n, (self.with_sum, self.without_sum)
            return True
        return False

    def interval_at(self, z: float) -> Interval | None:
        """Δ's interval at the latest look, at the level of ``z`` (None before the first)."""
        if self.looked == 0:
            return None
        a, b = self.at_look
        return stats.newcombe(a, self.looked, b, self.looked, boundary(self.most, z))

    def interval(self) -> Interval | None:
        return self.interval_at(stats.Z95)


def sequence_of(pairs: Sequence[tuple[float, float]], most: int) -> ConfidenceSequence:
    """The design's state after ``(with score, without score)`` pairs, in round order."""
    cs = ConfidenceSequence(most)
    for with_score, without_score in pairs:
        cs.add(with_score, without_score)
    return cs


def decide(cs: ConfidenceSequence, margin: float) -> Decision | None:
    """The verdict at the latest look, with its p-value (None before the first look)."""
    return decisions.decide(cs.interval_at, margin)


def futile(cs: ConfidenceSequence, margin: float, alpha: float = 1 - stats.LEVEL) -> bool:
    """Whether the case can no longer be decided within its budget if its arms' means stayed
    where they are: at the last look (``most`` rounds) their interval at the level ``alpha``
    it needs (the session's false discovery rate control asks more than 5% of a case) would
    still be inconclusive. Checked at a look; it stops a case early, never changes a
    verdict."""
    if cs.looked == 0 or cs.n >= cs.most:
        return False
    pa, pb, most = cs.with_sum / cs.n, cs.without_sum / cs.n, cs.most
    z = stats.normal_quantile(1 - alpha / 2)
    projected = stats.newcombe(pa * most, most, pb * most, most, boundary(most, z))
    return decisions.classify(projected, margin) == "inconclusive"


@dataclass(frozen=True)
class Stop:
    """Why a case's runs stopped: ``decided`` (with its verdict), ``futility``, or ``budget``
    (it reached its most rounds), and after how many rounds."""

    why: str
    rounds: int
    verdict: str | None = None

    def reason(self) -> str:
        """``decided after 4 runs: better``, ``futility after 3 runs: …``."""
        if self.why == "decided":
            return f"decided after {self.rounds} runs: {self.verdict}"
        if self.why == "futility":
            return (
                f"stopped after {self.rounds} runs as inconclusive: more runs within its "
                "budget would likely not decide it (futility)"
            )
        if self.why == "cost":
            return f"stopped after {self.rounds} runs: the cost ceiling was reached"
        return f"stopped after {self.rounds} runs: its budget of runs is spent (inconclusive)"


def should_stop(
    cs: ConfidenceSequence, margin: float, decided: bool, alpha: float = 1 - stats.LEVEL
) -> Stop | None:
    """The stopping rule at a look: ``decided`` (its verdict holds, and passes the session's
    false discovery rate control: the controller says), futile when it can no longer be
    decided within its budget, spent at its most rounds."""
    if decided:
        return Stop("decided", cs.n, decisions.classify(cs.interval(), margin))
    if cs.n >= cs.most:
        return Stop("budget", cs.n)
    if futile(cs, margin, alpha):
        return Stop("futility", cs.n)
    return None


@dataclass(frozen=True)
class CaseStop:
    """What the JSON says of a case under ``--eval-runs auto``: the rounds (runs per arm) it
    took, its most, and why it stopped (None: it was still running when the session ended)."""

    rounds: int
    most: int
    stop: Stop | None = None

    @property
    def stopped(self) -> str | None:
        return None if self.stop is None else self.stop.why

    @property
    def reason(self) -> str | None:
        return None if self.stop is None else self.stop.reason()


def paired_differences(
    with_runs: Sequence[tuple[int, float | None]], without_runs: Sequence[tuple[int, float | None]]
) -> list[tuple[float, float]]:
    """The rounds whose two runs were both graded, in round order: ``(with, without)``."""
    second = {run: score for run, score in without_runs if score is not None}
    return [
        (score, second[run])
        for run, score in sorted(with_runs)
        if score is not None and run in second
    ]


def case_verdict(
    pairs: Sequence[tuple[float, float]], margin: float, most: int
) -> tuple[Interval | None, Decision | None]:
    """A sequential case's Δ interval and verdict: those of its last look, the one its
    stopping rule read (an inconclusive one says how many more runs a fixed design would
    likely need, as a hint)."""
    cs = sequence_of(pairs, most)
    decision = decide(cs, margin)
    if decision is not None and not decision.decided and pairs:
        more = decisions.runs_to_decide([a for a, _ in pairs], [b for _, b in pairs], margin)
        decision = replace(decision, more_runs=more)
    return cs.interval(), decision
