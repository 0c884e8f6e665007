"""Operating characteristics of a design, computed exactly for pass/fail runs (pure).

A case's two arms pass with probabilities ``p_with`` and ``p_without``; each run passes or
fails. For a fixed design of ``n`` runs per arm the verdict depends only on the two pass
counts, so its chances are a sum over the ``(n + 1)²`` count pairs, each weighted by the
product of two binomial probabilities. For ``--eval-runs auto:MAX`` the counts are followed
look by look (:func:`pytest_plugin_evals.stats.sequential.looks`): at each look every count
pair still running is read by the very stopping rule the session applies to a case
(:func:`pytest_plugin_evals.stats.sequential.should_stop`, for a session of one case: no
other case's discoveries), and a pair that stops leaves the recursion with its verdict and
its runs. Nothing is simulated.

What comes out (:class:`Characteristics`): the chance of each verdict and the expected runs
per arm. The *correct* verdict is ``better`` for a true Δ > 0, ``worse`` for Δ < 0, and not
``better`` or ``worse`` (``equivalent`` or ``inconclusive``) for Δ = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_plugin_evals.stats.decisions import DEFAULT_MARGIN, classify
from pytest_plugin_evals.stats.intervals import Z95, newcombe
from pytest_plugin_evals.stats.sequential import (
    advance,
    binomial,
    looks,
    should_stop,
    state_at,
)

#: The true Δ the published table is computed at, and the base (without-arm) pass rates.
EFFECTS = (0.0, 0.1, 0.2, 0.4)
BASES = (0.1, 0.3, 0.5, 0.7, 0.9)


@dataclass(frozen=True)
class Characteristics:
    """A design's chances of each verdict, and its expected runs per arm, at one truth."""

    better: float
    worse: float
    equivalent: float
    runs: float

    @property
    def false_call(self) -> float:
        """The chance of calling a case better or worse (a false call when Δ = 0)."""
        return self.better + self.worse

    def correct(self, delta: float) -> float:
        if delta > 0:
            return self.better
        if delta < 0:
            return self.worse
        return 1.0 - self.false_call


def fixed(n: int, p_with: float, p_without: float, z: float = Z95) -> Characteristics:
    """A fixed design of ``n`` runs per arm, Newcombe's interval at ``z``."""
    wa, wb = binomial(n, p_with), binomial(n, p_without)
    found = {"better": 0.0, "worse": 0.0, "equivalent": 0.0, "inconclusive": 0.0}
    for a, pa in enumerate(wa):
        for b, pb in enumerate(wb):
            found[classify(newcombe(a, n, b, n, z), DEFAULT_MARGIN)] += pa * pb
    return Characteristics(found["better"], found["worse"], found["equivalent"], float(n))


def sequential_design(most: int, p_with: float, p_without: float) -> Characteristics:
    """``--eval-runs auto:most`` for a session of one case (pass/fail runs): the stopping
    rule at every look, followed exactly over the arms' pass counts."""
    alive = {(0, 0): 1.0}
    before = 0
    found = {"better": 0.0, "worse": 0.0, "equivalent": 0.0, "inconclusive": 0.0}
    runs = 0.0
    for n in looks(most):
        grown = advance(alive, n - before, p_with, p_without)
        alive = {}
        for (a, b), w in grown.items():
            cs = state_at(most, n, a, b)
            verdict = classify(cs.interval(), DEFAULT_MARGIN)
            stop = should_stop(cs, DEFAULT_MARGIN, verdict != "inconclusive")
            if stop is None:
                alive[(a, b)] = w
                continue
            found[verdict if stop.why == "decided" else "inconclusive"] += w
            runs += w * n
        before = n
    return Characteristics(found["better"], found["worse"], found["equivalent"], runs)


def design(label: str, p_with: float, p_without: float) -> Characteristics:
    """``auto:20`` or ``fixed:10`` (a design's label in the table)."""
    kind, _, most = label.partition(":")
    if kind == "auto":
        return sequential_design(int(most), p_with, p_without)
    return fixed(int(most), p_with, p_without)


def truths(delta: float, bases: tuple[float, ...] = BASES) -> list[tuple[float, float]]:
    """``(p_with, p_without)`` for a true Δ at each base pass rate it fits (``p_with ≤ 1``)."""
    return [(round(b + delta, 10), b) for b in bases if b + delta <= 1.0 + 1e-9]


@dataclass(frozen=True)
class Row:
    """A design at one true Δ, over the base pass rates: the worst (smallest) and mean
    chance of the correct verdict, the largest false-call chance, the mean expected runs."""

    design: str
    delta: float
    worst_correct: float
    mean_correct: float
    worst_false_call: float
    mean_runs: float


def row(label: str, delta: float, bases: tuple[float, ...] = BASES) -> Row:
    found = [design(label, pw, pb) for pw, pb in truths(delta, bases)]
    correct = [c.correct(delta) for c in found]
    return Row(
        label,
        delta,
        min(correct),
        sum(correct) / len(correct),
        max(c.false_call for c in found),
        sum(c.runs for c in found) / len(found),
    )


def looks_false_call(schedule: tuple[int, ...], p: float, z: float = Z95) -> float:
    """The exact chance that a case with no effect (both arms pass with ``p``) is called better
    or worse at some point of ``schedule`` when its fixed-design verdict (Newcombe's interval at
    ``z``) is read after each: what topping a case up from 3 to 6 runs per arm and reading it
    again does to its error rate (``schedule`` ``(3, 6)``)."""
    alive = {(0, 0): 1.0}
    before = 0
    wrong = 0.0
    for n in schedule:
        grown = advance(alive, n - before, p, p)
        alive = {}
        for (a, b), weight in grown.items():
            if classify(newcombe(a, n, b, n, z), DEFAULT_MARGIN) in ("better", "worse"):
                wrong += weight
            else:
                alive[(a, b)] = weight
        before = n
    return wrong


def top_up_warning(before: int, now: int, cases: int) -> str:
    """The line a session says when it topped up ``cases`` case(s) from ``before`` reused runs
    per arm to ``now``: the earlier verdict and this one are two looks at overlapping runs,
    and their error rate is no longer 5%. The chance that a case with no effect is called
    better or worse at one of them lies between the two looks sharing every run (the first
    ``before`` of both arms) and the two being independent (a with arm made again); the line
    gives the larger, the worst over pass rates 0.1 … 0.9 (pass/fail runs)."""
    worst = 0.0
    for p in (i / 10 for i in range(1, 10)):
        apart = 1 - (1 - fixed(before, p, p).false_call) * (1 - fixed(now, p, p).false_call)
        worst = max(worst, apart, looks_false_call((before, now), p))
    return (
        f"top-up: {cases} case(s) went from {before} reused run(s) per arm to {now}; read after "
        f"{before} and again after {now}, a case with no effect is called better or worse at "
        f"one of the two up to {worst:.1%} of the time (pass/fail runs), not 5%: the earlier "
        "verdict's error rate no longer holds once this one is read with it"
    )
