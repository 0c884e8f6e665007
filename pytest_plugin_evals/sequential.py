"""Sequential runs (``--eval-runs auto``): a confidence sequence for a case's Δ (pure).

A case's arms run in rounds: round ``r`` is run ``r`` of each arm, and its paired difference
``d_r = score(with) − score(without)`` lies in ``[−1, 1]``. After every round the case's Δ
gets an **anytime-valid confidence sequence** (Waudby-Smith & Ramdas 2023, "Estimating means
of bounded random variables by betting", JRSS-B): for each candidate Δ = m on a grid, a
gambler bets against "the mean is m" with the predictable aGRAPA bet, on both sides (the
hedged capital ``½ K⁺ + ½ K⁻``, a nonnegative martingale when the mean is m). By Ville's
inequality the chance that the capital of the true Δ ever reaches ``1/α`` is at most α, so
``{m : the capital of m never reached 1/α}`` covers the true Δ at every round at once — the
case may be looked at after each round and stopped by any rule (decided, futile, the budget,
the cost ceiling, an interruption) and the interval still holds. The running intersection
makes the sequence only narrow: once decided, a case stays decided whatever later runs bring.

The verdict reads that interval as :mod:`pytest_plugin_evals.decisions` reads any other
(better / worse / equivalent inside ``±margin`` / inconclusive), and its p-value is the
smallest α at which the claim holds (an anytime-valid p-value), so the session's false
discovery rate control applies to it unchanged. :func:`should_stop` is the stopping rule; the
controller applies the same control across the session's cases before it calls a case
decided, so a case that stopped as decided keeps its verdict in the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pytest_plugin_evals import decisions, stats
from pytest_plugin_evals.decisions import Decision
from pytest_plugin_evals.stats import Interval

#: The grid of candidate Δ: −1 … +1 in steps of :data:`STEP`.
STEP = 0.01
_GRID = [round(-1.0 + i * STEP, 10) for i in range(round(2 / STEP) + 1)]
#: The largest share of the capital a bet may risk (WSR's truncation ``c``).
BET_CAP = 0.75
#: The default most rounds per case under ``--eval-runs auto``.
DEFAULT_MAX_RUNS = 20
#: The fewest rounds before a case may stop for futility.
MIN_ROUNDS_FUTILE = 3
_BIG = 1e300


@dataclass
class ConfidenceSequence:
    """The betting confidence sequence of the mean of paired differences in ``[−1, 1]``."""

    n: int = 0
    _sum: float = 0.0
    _sq: float = 0.0
    _up: list[float] = field(default_factory=lambda: [1.0] * len(_GRID))
    _down: list[float] = field(default_factory=lambda: [1.0] * len(_GRID))
    #: The largest hedged capital each candidate has reached so far.
    peak: list[float] = field(default_factory=lambda: [1.0] * len(_GRID))

    def add(self, d: float) -> None:
        """One round's paired difference (clipped to ``[−1, 1]``)."""
        z = (min(1.0, max(-1.0, float(d))) + 1.0) / 2.0  # on [0, 1]
        # Predictable estimates (from the rounds before this one), WSR's regularised ones.
        mean = (0.5 + self._sum) / (self.n + 1)
        var = (0.25 + self._sq) / (self.n + 1)
        for i, m in enumerate(_GRID):
            mu = (m + 1.0) / 2.0
            gap = mean - mu
            bet = gap / (var + gap * gap)
            up = min(max(bet, 0.0), BET_CAP / mu if mu > 0 else _BIG)
            down = max(min(bet, 0.0), -BET_CAP / (1.0 - mu) if mu < 1 else -_BIG)
            self._up[i] = min(_BIG, self._up[i] * max(0.0, 1.0 + up * (z - mu)))
            self._down[i] = min(_BIG, self._down[i] * max(0.0, 1.0 + down * (z - mu)))
            hedged = 0.5 * (self._up[i] + self._down[i])
            if hedged > self.peak[i]:
                self.peak[i] = hedged
        self.n += 1
        self._sum += z
        new_mean = (0.5 + self._sum) / (self.n + 1)
        self._sq += (z - new_mean) ** 2

    def interval(self, alpha: float = 1 - stats.LEVEL) -> Interval | None:
        """The ``1 − α`` interval of Δ at this round (widened by one grid step), None before
        the first round; empty sets (possible only by chance) give the nearest point."""
        if self.n == 0:
            return None
        limit = 1.0 / max(alpha, 1e-300)
        kept = [m for m, peak in zip(_GRID, self.peak, strict=True) if peak < limit]
        if not kept:
            best = min(range(len(_GRID)), key=lambda i: self.peak[i])
            kept = [_GRID[best]]
        return (round(max(-1.0, kept[0] - STEP), 10), round(min(1.0, kept[-1] + STEP), 10))

    def interval_at(self, z: float) -> Interval | None:
        return self.interval(stats.two_sided_p(z))


def sequence_of(pairs: Sequence[tuple[float, float]]) -> ConfidenceSequence:
    """The confidence sequence of ``(with score, without score)`` pairs, in round order."""
    cs = ConfidenceSequence()
    for with_score, without_score in pairs:
        cs.add(with_score - without_score)
    return cs


def decide(cs: ConfidenceSequence, margin: float) -> Decision | None:
    """The verdict of the sequence's 95% interval, with its anytime-valid p-value."""
    return decisions.decide(cs.interval_at, margin)


def _projected(cs: ConfidenceSequence, pairs: Sequence[float], rounds: int) -> ConfidenceSequence:
    """The sequence if the next ``rounds`` rounds repeated the differences seen so far."""
    ahead = ConfidenceSequence(cs.n, cs._sum, cs._sq, list(cs._up), list(cs._down), list(cs.peak))
    for k in range(rounds):
        ahead.add(pairs[k % len(pairs)])
    return ahead


def futile(
    cs: ConfidenceSequence, diffs: Sequence[float], most: int, margin: float, alpha: float
) -> bool:
    """Whether the case can no longer be decided within ``most`` rounds if its runs went on
    as they went (the differences so far, repeated): deciding at level ``alpha`` would take
    more rounds than the budget has left. Stopping for futility never makes a verdict wrong
    (the sequence holds at any stop); it only gives up runs that would likely decide
    nothing."""
    if cs.n < MIN_ROUNDS_FUTILE or cs.n >= most or not diffs:
        return cs.n >= most
    ahead = _projected(cs, diffs, most - cs.n)
    return decisions.classify(ahead.interval(alpha), margin) == "inconclusive"


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
    cs: ConfidenceSequence, diffs: Sequence[float], most: int, margin: float, decided: bool
) -> Stop | None:
    """The stopping rule after a round: ``decided`` (its verdict holds, and passes the
    session's false discovery rate control: the controller says), futile when it can no
    longer be decided within ``most`` rounds, spent at ``most``."""
    if decided:
        return Stop("decided", cs.n, decisions.classify(cs.interval(), margin))
    if cs.n >= most:
        return Stop("budget", cs.n)
    if futile(cs, diffs, most, margin, 1 - stats.LEVEL):
        return Stop("futility", cs.n)
    return None


def uncertainty(cs: ConfidenceSequence) -> float:
    """How unsure the case is (its 95% interval's width; 2 before any round): the undecided
    case with the most goes first."""
    return stats.width(cs.interval()) or 2.0


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
    pairs: Sequence[tuple[float, float]], margin: float
) -> tuple[Interval | None, Decision | None]:
    """A sequential case's Δ interval and verdict: its confidence sequence's, the one its
    stopping rule read (an inconclusive one says how many more runs a fixed design would
    likely need, as a hint)."""
    cs = sequence_of(pairs)
    decision = decide(cs, margin)
    if decision is not None and not decision.decided and pairs:
        more = decisions.runs_to_decide([a for a, _ in pairs], [b for _, b in pairs], margin)
        decision = replace(decision, more_runs=more)
    return cs.interval(), decision
