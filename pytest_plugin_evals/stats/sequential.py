"""Sequential runs (``--eval-runs auto``): a group-sequential design for a case's Δ (pure).

A case's arms run in rounds: round ``r`` is run ``r`` of each arm. The case is analysed at a
fixed schedule of **looks** (:func:`looks`: after rounds 2, 3, 6, 10 and 20 for a budget of
20 runs per arm), and at each look its Δ gets Newcombe's interval (the one every fixed-runs
case gets, :mod:`pytest_plugin_evals.stats.intervals`) at a wider level: an
**O'Brien–Fleming-shaped boundary** ``z_k = C · √(most / n_k)`` (O'Brien & Fleming 1979),
which asks an early look for overwhelming evidence and leaves the last look at almost the
level of a fixed design, so the looks cost little power. ``C`` (:data:`BOUNDARY_BY_BUDGET`)
is calibrated **exactly** for pass/fail runs, not taken from normal theory:
:func:`false_call_chance` computes, by recursion over the arms' counts at each look, the
chance that some look calls a case with no effect better or worse, and ``C`` is the smallest
value that keeps it at or below 5% for every pass rate (tests/unit/test_sequential.py
recomputes some). Below 5% (a false discovery rate level, a p-value's search) the boundary is
scaled with the normal quantile.

Stopping for **futility** is where the runs are saved, and where power is lost if it comes
too early: at a look before the last, a case stops as inconclusive when its *conditional
power* — the chance that its last look would decide it if its arms' means stayed where they
are — is below :data:`FUTILITY_POWER`, at the level the session's false discovery rate
control would ask of it (Benjamini–Hochberg's ``q · (decided + 1) / cases``: the level of one
more discovery), not at 5%. Two guards keep it from throwing power away: no case stops for
futility before :data:`FUTILITY_FROM` of its budget (round 3 of 20), and a **tie** (both arms
with the same sum) is never futile by itself: it stops only when a lead of one run either
way would be futile too.

The **default budget's design** (:data:`SEARCHED`: ``C`` 1.88, futility below a conditional
power of 0.6) was chosen by an exact search with the futility rule applied
(``bench/bench_design_search.py``, :mod:`pytest_plugin_evals.stats.operating`): at every
true Δ of 0–0.4 it decides at least as often as fixed 10 runs, for fewer runs per arm on
average (9.8), with at most 3.9% false calls at any pass rate. For it futility is
**binding**: without the rule its ``C`` would let 8.5% of no-effect cases through, so the
session always applies it (judged at 5% or stricter, which only stops more). For the other
budgets futility only removes looks, and the calibrated ``C`` holds without it.

Why not an anytime-valid confidence sequence (a betting one, Waudby-Smith & Ramdas 2023):
both were simulated on the benchmark suite; with 20 runs per arm at most, the betting
sequence decided almost nothing once the session's false discovery rate control was applied
(it pays for looking after every single round). Why not Pocock's boundary (the same at every
look): it spends the error rate evenly, so the last look, where most verdicts are reached,
needs z ≈ 2.4–2.6 instead of 2.00 (both calibrated without futility); on the benchmark it
decided fewer cases with more runs.

The verdict at a look reads that interval as :mod:`pytest_plugin_evals.stats.decisions`
reads any other (better / worse / equivalent inside ``±margin`` / inconclusive); its p-value
is the largest level at which the claim holds, so the session's false discovery rate control
applies unchanged. A case's final verdict is the one of its last look, the one its stopping
rule read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pytest_plugin_evals.stats.decisions import DEFAULT_MARGIN, Decision, classify, runs_to_decide
from pytest_plugin_evals.stats.decisions import decide as decide_interval
from pytest_plugin_evals.stats.intervals import (
    LEVEL,
    Z95,
    Interval,
    excludes_zero,
    newcombe,
    normal_quantile,
    two_sided_p,
)

#: The shares of the budget at which a case is looked at.
LOOK_SHARES = (0.1, 0.15, 0.3, 0.5, 1.0)
#: ``C`` of the boundary ``C · √(most / n)`` at a two-sided 5%, for each budget ``most``: the
#: smallest, in steps of 0.02 from 1.96, at which :func:`false_call_chance` (no futility stop)
#: stays at or below 5% for every pass rate 0.025, 0.05 … 0.975 (computed once; tests
#: recompute a few). The default budget's ``C`` in force is :data:`SEARCHED`'s.
BOUNDARY_BY_BUDGET: dict[int, float] = {
    2: 2.20, 3: 1.96, 4: 2.28, 5: 2.08, 6: 1.98, 7: 2.22, 8: 2.10, 9: 2.02, 10: 1.96,
    11: 2.18, 12: 2.08, 13: 2.02, 14: 2.04, 15: 2.00, 16: 2.16, 17: 2.10, 18: 2.04,
    19: 2.04, 20: 2.00, 21: 1.98, 22: 2.14, 23: 2.10, 24: 2.06, 25: 2.04, 26: 2.04,
    27: 2.00, 28: 1.98, 29: 1.98, 30: 2.08, 31: 2.06, 32: 2.04, 33: 2.04, 34: 2.02,
    35: 2.00, 36: 2.02, 37: 2.00, 38: 2.08, 39: 2.06, 40: 2.04, 41: 2.02, 42: 2.02,
    43: 2.02, 44: 2.00, 45: 2.00, 46: 2.00, 47: 2.08, 48: 2.06, 49: 2.04, 50: 2.28,
}  # fmt: skip
#: Below this conditional power at a look before the last, a case stops for futility.
FUTILITY_POWER = 0.5
#: The default budget's design, ``C`` and futility threshold, chosen by an exact search with
#: the futility rule applied (``bench/bench_design_search.py``): other budgets keep the table's
#: ``C``, calibrated without futility, and :data:`FUTILITY_POWER`.
SEARCHED: dict[int, tuple[float, float]] = {20: (1.88, 0.6)}
#: No case stops for futility before this share of its budget.
FUTILITY_FROM = 0.15
#: The default most runs per arm under ``--eval-runs auto``.
DEFAULT_MAX_RUNS = 20
#: The fewest rounds before the first look.
FIRST_LOOK = 2


def looks(most: int) -> tuple[int, ...]:
    """The rounds at which a case with a budget of ``most`` rounds is analysed."""
    found = sorted({max(FIRST_LOOK, min(most, round(most * share))) for share in LOOK_SHARES})
    return tuple(found)


def boundary(most: int, z: float = Z95, look: int | None = None) -> float:
    """The ``z`` of Newcombe's interval at the look after ``look`` rounds (the last look
    when None): ``C · √(most / look)``, scaled to the level of ``z``."""
    n = most if look is None else max(1, min(most, look))
    return constant(most) * math.sqrt(most / n) * z / Z95


def constant(most: int) -> float:
    """``C`` for a budget of ``most`` rounds (beyond the table: its largest, conservative)."""
    if most in SEARCHED:
        return SEARCHED[most][0]
    return BOUNDARY_BY_BUDGET.get(most, max(BOUNDARY_BY_BUDGET.values()))


def binomial(n: int, p: float) -> list[float]:
    """The chance of each number of passes, 0 to ``n``, in ``n`` runs that pass with ``p``."""
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def advance(
    alive: dict[tuple[int, int], float], step: int, p_with: float, p_without: float
) -> dict[tuple[int, int], float]:
    """The chance of each pair of the arms' pass counts after ``step`` more runs per arm,
    from the chances ``alive`` of the pairs before them."""
    wa, wb = binomial(step, p_with), binomial(step, p_without)
    grown: dict[tuple[int, int], float] = {}
    for (a, b), w in alive.items():
        for i, wi in enumerate(wa):
            for j, wj in enumerate(wb):
                grown[(a + i, b + j)] = grown.get((a + i, b + j), 0.0) + w * wi * wj
    return grown


def false_call_chance(most: int, p: float, z: float = Z95, futility: bool = False) -> float:
    """The exact chance that some look calls a case better or worse when both arms pass with
    probability ``p`` (pass/fail runs, the boundary at the level of ``z``): the arms' pass
    counts are followed look by look, a count pair that crosses the boundary is a false call
    and leaves the recursion; with ``futility``, so does a pair the futility rule stops
    (judged at the level of ``z``, as the session judges it at the level a case needs)."""
    alpha = two_sided_p(z)
    alive = {(0, 0): 1.0}
    before = 0
    wrong = 0.0
    for n in looks(most):
        grown = advance(alive, n - before, p, p)
        alive = {}
        zn = boundary(most, z, n)
        for (a, b), w in grown.items():
            if excludes_zero(newcombe(a, n, b, n, zn)):
                wrong += w
            elif not futility or not futile(state_at(most, n, a, b), DEFAULT_MARGIN, alpha):
                alive[(a, b)] = w
        before = n
    return wrong


def state_at(most: int, n: int, a: int, b: int) -> ConfidenceSequence:
    """The state of a case at the look after ``n`` rounds with ``a`` and ``b`` passes."""
    return ConfidenceSequence(most, n, float(a), float(b), n, (float(a), float(b)))


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
        return newcombe(a, self.looked, b, self.looked, boundary(self.most, z, self.looked))

    def interval(self) -> Interval | None:
        return self.interval_at(Z95)

    def spread(self) -> float:
        """How uncertain Δ is now: the width of its 95% interval over every round so far (not
        only at the looks), 2 (the widest) before the first round."""
        found = newcombe(self.with_sum, self.n, self.without_sum, self.n) if self.n else None
        return 2.0 if found is None else found[1] - found[0]


def sequence_of(pairs: Sequence[tuple[float, float]], most: int) -> ConfidenceSequence:
    """The design's state after ``(with score, without score)`` pairs, in round order."""
    cs = ConfidenceSequence(most)
    for with_score, without_score in pairs:
        cs.add(with_score, without_score)
    return cs


def decide(cs: ConfidenceSequence, margin: float) -> Decision | None:
    """The verdict at the latest look, with its p-value (None before the first look)."""
    return decide_interval(cs.interval_at, margin)


def futile(cs: ConfidenceSequence, margin: float, alpha: float = 1 - LEVEL) -> bool:
    """Whether the case can likely no longer be decided within its budget: at a look from
    :data:`FUTILITY_FROM` of the budget on and before the last, its conditional power under
    the current trend (its arms' means staying where they are) is below
    :data:`FUTILITY_POWER` at the level ``alpha`` it needs — and, when its arms tie, it would
    be with either arm one run ahead too (one more pass in it, or at the ceiling one fewer in
    the other): a tie is never futile by itself. It stops a case early, never changes a
    verdict."""
    if cs.looked == 0 or cs.n >= cs.most or cs.n < FUTILITY_FROM * cs.most:
        return False
    a, b = cs.with_sum, cs.without_sum
    if not _low_power(a, b, cs.n, cs.most, margin, alpha):
        return False
    if abs(a - b) > 1e-9:
        return True
    n, most = cs.n, cs.most
    ahead = (a + 1, b) if a + 1 <= n else (a, b - 1)  # the arm with the plugin one run ahead
    behind = (a, b + 1) if b + 1 <= n else (a - 1, b)
    return _low_power(*ahead, n, most, margin, alpha) and _low_power(
        *behind, n, most, margin, alpha
    )


def _low_power(a: float, b: float, n: int, most: int, margin: float, alpha: float) -> bool:
    """Whether arms with sums ``a`` and ``b`` after ``n`` rounds have a conditional power
    below :data:`FUTILITY_POWER`. That power is ``Φ((Z_n / √t − c) / √(1 − t))``
    (``t = n / most``, ``c`` the last look's boundary), so it is below ``γ`` exactly when the
    interval of the means projected to ``most`` rounds, at ``c + √(1 − t) · Φ⁻¹(γ)``, stays
    inconclusive."""
    last = boundary(most, normal_quantile(1 - alpha / 2))
    power = SEARCHED[most][1] if most in SEARCHED else FUTILITY_POWER
    shift = math.sqrt(1 - n / most) * normal_quantile(power)
    projected = newcombe(a / n * most, most, b / n * most, most, max(1e-6, last + shift))
    return classify(projected, margin) == "inconclusive"


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
    cs: ConfidenceSequence, margin: float, decided: bool, alpha: float = 1 - LEVEL
) -> Stop | None:
    """The stopping rule at a look: ``decided`` (its verdict holds, and passes the session's
    false discovery rate control: the controller says), futile when it can no longer be
    decided within its budget, spent at its most rounds."""
    if decided:
        return Stop("decided", cs.n, classify(cs.interval(), margin))
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
        more = runs_to_decide([a for a, _ in pairs], [b for _, b in pairs], margin)
        decision = replace(decision, more_runs=more)
    return cs.interval(), decision
