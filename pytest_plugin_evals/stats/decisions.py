"""Three-way verdicts on a difference: better, worse, equivalent or inconclusive (pure).

A verdict reads a 95% interval of a difference (a case's Δ, the suite's mean Δ, a change
since an earlier session) against 0 and against the margin ``±m`` (``--eval-margin``):

* ``equivalent``: the interval lies inside ``[-m, +m]``: whatever the difference is, it is
  too small to matter (checked first: a difference of +0.02 ± 0.03 is not "better");
* ``better`` / ``worse``: the interval lies wholly above / below 0;
* ``inconclusive``: neither; :func:`decide_difference` then says about how many more runs
  per arm would likely decide it, if the arms' means stayed where they are.

Each verdict carries the p-value of its claim
(:func:`pytest_plugin_evals.stats.intervals.p_value`: the largest confidence level at which
the claim still holds). :func:`control_fdr` applies
the Benjamini–Hochberg procedure to a family of verdicts (the cases of a session): a decided
verdict whose p-value does not pass at the false discovery rate ``q`` is withdrawn to
``inconclusive``, so that among the cases called better, worse or equivalent, the expected
share called so by chance stays at or below ``q``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pytest_plugin_evals.stats.intervals import (
    Z95,
    Interval,
    mean_delta_interval,
    newcombe,
    p_value,
)

#: The verdicts, in the order counts are given.
VERDICTS = ("better", "worse", "equivalent", "inconclusive")
#: The claims a verdict can make (every verdict but inconclusive).
CLAIMS = ("better", "worse", "equivalent")
#: ``--eval-margin``'s default: differences within ±0.1 are "equivalent" when shown to be.
DEFAULT_MARGIN = 0.1
#: The false discovery rate the verdicts of a session's cases are held to.
FDR = 0.05
#: The most runs per arm a projection looks at ("more runs would decide it").
MOST_RUNS = 500
_EPS = 1e-12


@dataclass(frozen=True)
class Decision:
    """A verdict on a difference, the p-value of its claim, and what would decide it."""

    verdict: str
    #: The claim the p-value is of: the verdict's, or for ``inconclusive`` the nearest one.
    claim: str
    p_value: float
    #: ``inconclusive``: about how many more runs per arm would likely decide it (None: more
    #: than :data:`MOST_RUNS`, or runs alone would not; see ``more_cases``).
    more_runs: int | None = None
    #: Decided at 95% on its own, withdrawn by the false discovery rate control.
    fdr_withdrawn: bool = False
    #: The verdict before the false discovery rate control withdrew it.
    unadjusted: str | None = None

    @property
    def decided(self) -> bool:
        return self.verdict != "inconclusive"


def classify(interval: Interval | None, margin: float) -> str:
    """The verdict an interval gives against 0 and ``±margin``."""
    if interval is None:
        return "inconclusive"
    low, high = interval
    if margin > 0 and low >= -margin - _EPS and high <= margin + _EPS:
        return "equivalent"
    if low > _EPS:
        return "better"
    if high < -_EPS:
        return "worse"
    return "inconclusive"


def _holds(claim: str, margin: float) -> Callable[[Interval], bool]:
    """The claim alone (monotone in the interval's width, as the p-value's search needs)."""
    if claim == "better":
        return lambda interval: interval[0] > _EPS
    if claim == "worse":
        return lambda interval: interval[1] < -_EPS
    return lambda interval: interval[0] >= -margin - _EPS and interval[1] <= margin + _EPS


def decide(interval_at: Callable[[float], Interval | None], margin: float) -> Decision | None:
    """The verdict of the 95% interval ``interval_at(Z95)`` (``interval_at(z)`` gives the
    interval at any ``z``), with its claim's p-value; None when there is no interval."""
    if interval_at(Z95) is None:
        return None
    verdict = classify(interval_at(Z95), margin)
    claims = [verdict] if verdict != "inconclusive" else list(CLAIMS)
    scored = [(p_value(_holds(c, margin), interval_at), c) for c in claims]
    p, claim = min(scored)
    if verdict != "inconclusive":
        p = min(p, 0.05)  # the claim holds at 95%: its p-value is below 0.05 (bisection noise)
    return Decision(verdict=verdict, claim=claim, p_value=p)


def runs_to_decide(a: Sequence[float], b: Sequence[float], margin: float) -> int | None:
    """About how many more runs per arm would decide ``mean(a) − mean(b)`` if the means
    stayed as they are (None: not within :data:`MOST_RUNS` per arm)."""
    now = max(len(a), len(b))
    pa, pb = sum(a) / len(a), sum(b) / len(b)

    def decided(n: int) -> bool:
        return classify(newcombe(pa * n, n, pb * n, n), margin) != "inconclusive"

    return None if now >= MOST_RUNS else _more_runs(decided, now)


def _more_runs(decided: Callable[[int], bool], now: int) -> int | None:
    """How many runs past ``now`` the fewest that ``decided`` lie (bisected up to
    :data:`MOST_RUNS`); None when not even :data:`MOST_RUNS` decide."""
    if not decided(MOST_RUNS):
        return None
    low, high = now, MOST_RUNS  # undecided at low (or now), decided at high: bisect
    while high - low > 1:
        mid = (low + high) // 2
        if decided(mid):
            high = mid
        else:
            low = mid
    return high - now


def decide_difference(a: Sequence[float], b: Sequence[float], margin: float) -> Decision | None:
    """The verdict on ``mean(a) − mean(b)`` (run scores in ``[0, 1]``; Newcombe's interval)."""
    if not a or not b:
        return None
    kept_a = [min(1.0, max(0.0, v)) for v in a]
    kept_b = [min(1.0, max(0.0, v)) for v in b]
    sa, na, sb, nb = sum(kept_a), len(kept_a), sum(kept_b), len(kept_b)
    decision = decide(lambda z: newcombe(sa, na, sb, nb, z), margin)
    if decision is None or decision.decided:
        return decision
    return replace(decision, more_runs=runs_to_decide(kept_a, kept_b, margin))


def decide_mean(
    deltas: Sequence[float],
    bounds: Sequence[Interval],
    margin: float,
    runs: int = 0,
    means: Sequence[tuple[float, float]] | None = None,
) -> Decision | None:
    """The verdict on the suite's mean Δ (its cluster-robust interval; ``bounds`` are the
    cases' Δ intervals). ``runs`` are the cases' runs per arm: when inconclusive, the
    projection narrows the cases' own intervals as more runs would — the Newcombe interval
    of each case's two arm ``means`` at n runs, as a case's own projection does, or without
    them as 1/√n — while the spread between cases stays: past a point only more cases help."""
    if not deltas:
        return None
    decision = decide(lambda z: mean_delta_interval(deltas, bounds, z), margin)
    if decision is None or decision.decided or runs <= 0 or len(bounds) != len(deltas):
        return decision

    arms = list(means) if means is not None and len(means) == len(deltas) else None

    def narrowed(n: int) -> list[Interval]:
        if arms is not None:
            projected = [newcombe(pa * n, n, pb * n, n) for pa, pb in arms]
            return [p if p is not None else b for p, b in zip(projected, bounds, strict=True)]
        scale = (runs / n) ** 0.5
        return [
            (d - (d - b[0]) * scale, d + (b[1] - d) * scale)
            for d, b in zip(deltas, bounds, strict=True)
        ]

    def decided(n: int) -> bool:
        interval = mean_delta_interval(deltas, narrowed(n))
        return classify(interval, margin) != "inconclusive"

    more = _more_runs(decided, runs)
    return decision if more is None else replace(decision, more_runs=more)


def control_fdr(decisions: Sequence[Decision | None], q: float = FDR) -> list[Decision | None]:
    """Benjamini–Hochberg at ``q`` over the decided verdicts among ``decisions`` (one per
    case; None stays None): the ``k`` smallest p-values are kept, ``k`` being the largest
    rank whose p-value is at most ``k · q / m`` (``m`` the decisions there are); every other
    decided verdict is withdrawn to ``inconclusive``."""
    present = [(d.p_value, i) for i, d in enumerate(decisions) if d is not None]
    m = len(present)
    keep: set[int] = set()
    ranked = sorted(present)
    for rank, (p, _) in enumerate(ranked, start=1):
        if p <= rank * q / m + _EPS:
            keep = {index for _, index in ranked[:rank]}
    out: list[Decision | None] = []
    for index, decision in enumerate(decisions):
        if decision is None or not decision.decided or index in keep:
            out.append(decision)
        else:
            out.append(
                replace(
                    decision,
                    verdict="inconclusive",
                    fdr_withdrawn=True,
                    unadjusted=decision.verdict,
                )
            )
    return out


def counts(decisions: Sequence[Decision | None]) -> dict[str, int]:
    """How many of each verdict (None counted nowhere)."""
    out = dict.fromkeys(VERDICTS, 0)
    for decision in decisions:
        if decision is not None:
            out[decision.verdict] += 1
    return out


def describe(
    decision: Decision, unit: str = "run(s) per arm", beyond: str = "runs alone would not"
) -> str:
    """``better (p 0.003)``, ``inconclusive — about 6 more run(s) per arm would likely decide
    it``, ``inconclusive — worse alone at 95%, withdrawn by the false discovery rate control``."""
    if decision.fdr_withdrawn:
        return (
            f"inconclusive — {decision.unadjusted} alone at 95% (p {decision.p_value:.3f}), "
            "not beyond the false discovery rate"
        )
    if decision.decided:
        return f"{decision.verdict} (p {decision.p_value:.3f})"
    if decision.more_runs is not None:
        return f"inconclusive — about {decision.more_runs} more {unit} would likely decide it"
    return f"inconclusive — not within {MOST_RUNS} {unit}: {beyond}"
