"""``--eval-plan``: how many runs and cases it takes to detect a Δ, and what that costs (pure).

For a case with run-score variances ``σ²_with`` and ``σ²_without`` (per run), Δ estimated from
``n`` runs per arm has a variance of ``(σ²_with + σ²_without) / n``. Detecting a Δ of ``δ`` with
a two-sided 95% test at 80% power takes

    n = (z₀.₉₇₅ + z₀.₈)² · (σ²_with + σ²_without) / δ²

runs per arm (the normal approximation the Wilson and Newcombe intervals share at these n).
The suite's mean Δ over ``C`` cases adds the spread of the true Δ between cases (``τ²``), which
more runs do not shrink:

    Var(mean Δ) = (τ² + (σ²_with + σ²_without) / n) / C

so the cases needed at ``n`` runs per arm are ``(z₀.₉₇₅ + z₀.₈)² · (τ² + σ²_Δ / n) / δ²``, and
the smallest Δ a suite detects is ``(z₀.₉₇₅ + z₀.₈) · √Var(mean Δ)``. The variances come from an
earlier session's runs of the same case (at least two per arm; ``n`` runs that all agreed count
as if one more had disagreed, ``n / (n + 1)²``); without them, the worst case of a score in
``[0, 1]`` (σ² = 0.25, a coin flip) is assumed, and said so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_plugin_evals.stats.decisions import DEFAULT_MARGIN, decide_difference
from pytest_plugin_evals.stats.intervals import newcombe, normal_quantile
from pytest_plugin_evals.stats.sequential import decide, sequence_of

#: ``--eval-min-effect``'s default: the Δ the plan is made to detect.
DEFAULT_MIN_EFFECT = 0.2
POWER = 0.8
#: The variance of a run's score when no earlier run says otherwise: the largest a score in
#: [0, 1] can have.
WORST_VARIANCE = 0.25
#: Stated defaults for cost and latency per run when no earlier session reported them.
DEFAULT_COST_USD = 0.05
DEFAULT_SECONDS = 30.0
#: The runs per arm the suite line tabulates.
RUNS_SHOWN = (3, 5, 10, 20)


def _z() -> float:
    return normal_quantile(0.975) + normal_quantile(POWER)


def variance(scores: Sequence[float]) -> float | None:
    """The sample variance of run scores (None with fewer than two)."""
    if len(scores) < 2:
        return None
    m = sum(scores) / len(scores)
    return sum((s - m) ** 2 for s in scores) / (len(scores) - 1)


@dataclass(frozen=True)
class CaseHistory:
    """What an earlier session says of one case: its arms' run scores, costs and durations."""

    with_scores: tuple[float, ...] = ()
    without_scores: tuple[float, ...] = ()
    costs: tuple[float, ...] = ()
    seconds: tuple[float, ...] = ()


@dataclass(frozen=True)
class CasePlan:
    name: str
    runs_now: int
    arms: int
    var_with: float
    var_without: float
    #: The variances came from an earlier session (else the worst case is assumed).
    measured: bool
    runs_needed: int
    cost_per_run: float
    seconds_per_run: float

    @property
    def cost(self) -> float:
        return self.runs_needed * self.arms * self.cost_per_run

    @property
    def seconds(self) -> float:
        return self.runs_needed * self.arms * self.seconds_per_run


def _mean(values: Sequence[float], default: float) -> tuple[float, bool]:
    return (sum(values) / len(values), True) if values else (default, False)


def _floor(v: float | None, n: int) -> float:
    """A measured variance, kept off zero: ``n`` runs that all agreed say the spread is small,
    not nil; they get the variance they would have with one more run that disagreed
    (``n / (n + 1)²``, the sample variance of ``n`` zeros and a one, times ``n / (n + 1)``)."""
    return WORST_VARIANCE if v is None else max(v, n / (n + 1) ** 2)


def plan_case(
    name: str, runs_now: int, two_arm: bool, history: CaseHistory | None, effect: float
) -> CasePlan:
    h = history or CaseHistory()
    v_with, v_without = variance(h.with_scores), variance(h.without_scores)
    measured = v_with is not None and (v_without is not None or not two_arm)
    var_with = _floor(v_with, len(h.with_scores))
    var_without = _floor(v_without, len(h.without_scores)) if two_arm else 0.0
    total = var_with + var_without
    needed = max(2, math.ceil(_z() ** 2 * total / effect**2))
    cost, _ = _mean(h.costs, DEFAULT_COST_USD)
    seconds, _ = _mean(h.seconds, DEFAULT_SECONDS)
    return CasePlan(
        name=name,
        runs_now=runs_now,
        arms=2 if two_arm else 1,
        var_with=var_with,
        var_without=var_without,
        measured=measured,
        runs_needed=needed,
        cost_per_run=cost,
        seconds_per_run=seconds,
    )


@dataclass(frozen=True)
class SuitePlan:
    cases: int
    runs_now: int
    #: The spread of the true Δ between cases (estimated from an earlier session, else 0).
    tau2: float
    tau_measured: bool
    #: The smallest mean Δ the suite detects as it is (cases × runs now).
    detectable_now: float
    #: Cases needed at each of :data:`RUNS_SHOWN` runs per arm (None: never, τ alone is too big).
    cases_needed: tuple[tuple[int, int | None], ...]


def plan_suite(
    plans: Sequence[CasePlan], earlier_deltas: Sequence[float], effect: float
) -> SuitePlan:
    """The suite's plan: what it detects now, and the cases it needs at several run counts."""
    count = len(plans)
    sigma2 = sum(p.var_with + p.var_without for p in plans) / max(1, count)
    runs_now = round(sum(p.runs_now for p in plans) / max(1, count)) or 1
    tau2, tau_measured = 0.0, False
    spread = variance(earlier_deltas)
    if spread is not None:
        # The observed spread of Δ between cases, less what their runs' own noise explains.
        tau2, tau_measured = max(0.0, spread - sigma2 / runs_now), True
    z = _z()
    now = z * math.sqrt((tau2 + sigma2 / runs_now) / max(1, count))
    needed = []
    for runs in RUNS_SHOWN:
        cases = z**2 * (tau2 + sigma2 / runs) / effect**2
        needed.append((runs, max(2, math.ceil(cases)) if math.isfinite(cases) else None))
    return SuitePlan(count, runs_now, tau2, tau_measured, now, tuple(needed))


# -- what a design can decide -----------------------------------------------------------------

#: The operating characteristics ``bench/bench_operating_characteristics.py --table`` computed
#: exactly for pass/fail runs (one case, no other discoveries): for each design, at a true Δ
#: of each of :data:`OC_EFFECTS`, the chance of the correct verdict (``better`` for Δ > 0;
#: not ``better`` or ``worse`` for Δ = 0), averaged over base pass rates 0.1, 0.3 … 0.9, and
#: the expected runs per arm. tests/unit/test_sequential_operating.py recomputes them.
OC_EFFECTS = (0.0, 0.1, 0.2, 0.4)
OPERATING: dict[str, tuple[tuple[float, float], ...]] = {
    "fixed:3": ((0.986, 3.0), (0.014, 3.0), (0.031, 3.0), (0.100, 3.0)),
    "fixed:5": ((0.961, 5.0), (0.043, 5.0), (0.101, 5.0), (0.290, 5.0)),
    "fixed:10": ((0.973, 10.0), (0.044, 10.0), (0.134, 10.0), (0.454, 10.0)),
    "fixed:20": ((0.964, 20.0), (0.089, 20.0), (0.293, 20.0), (0.796, 20.0)),
    "auto:10": ((0.988, 3.6), (0.020, 3.7), (0.063, 4.1), (0.252, 5.4)),
    "auto:20": ((0.975, 7.9), (0.057, 8.4), (0.182, 10.1), (0.592, 13.0)),
    "auto:50": ((0.991, 15.8), (0.098, 20.6), (0.275, 24.8), (0.791, 31.5)),
}


def operating_lines(design: str) -> list[str]:
    """The table's rows for ``design`` (``fixed:3``, ``auto:20``), and fixed 10's and
    ``auto:20``'s to compare."""
    shown = [d for d in dict.fromkeys((design, "fixed:10", "auto:20")) if d in OPERATING]
    head = "".join(f"{f'TRUE Δ {e:.1f}':<16}" for e in OC_EFFECTS)
    lines = [f"{'DESIGN':10}{head}".rstrip()]
    for d in shown:
        cells = "".join(f"{f'{c:.1%} ({r:.1f})':<16}" for c, r in OPERATING[d])
        lines.append(f"{d:10}{cells}".rstrip())
    return lines


def equivalent_from(margin: float, most: int = 500) -> int | None:
    """The fewest runs per arm at which any case can be called ``equivalent`` within
    ``±margin``: the narrowest interval those runs allow (every run of both arms passing)
    lies inside it. None: not within ``most``."""
    for n in range(1, most + 1):
        found = newcombe(n, n, n, n)
        if found is not None and -margin <= found[0] and found[1] <= margin:
            return n
    return None


def lone_limit(smallest_p: float, q: float) -> int:
    """The most cases among which a single case, however clear, can still be called: its
    p-value must pass Benjamini–Hochberg's first rank, ``q / cases``."""
    return math.floor(q / smallest_p + 1e-9) if smallest_p > 0 else 0


def cannot_decide(runs: int, cases: int, smallest_p: float, q: float) -> str | None:
    """Why a design cannot call a case better (or worse) on its own before a session runs
    (None when it can): ``smallest_p`` is the p-value of the clearest result ``runs`` runs
    per arm allow (every run of one arm passing, every run of the other failing)."""
    if smallest_p > 0.05:
        return f"with {runs} run(s) per arm no case can be called better or worse at all"
    limit = lone_limit(smallest_p, q)
    if cases <= limit:
        return None
    together = math.ceil(cases * smallest_p / q - 1e-9)
    return (
        f"with {runs} run(s) per arm and {cases} cases (more than {limit}), no case can be "
        f"called better or worse alone: even its clearest result (p {smallest_p:.4f}) is "
        f"called only with at least {together} cases as clear"
    )


def clearest_p(runs: int, auto: bool = False) -> float:
    """The p-value of the clearest result ``runs`` runs per arm allow (every run of one arm
    passing, every run of the other failing), at a fixed design's interval, or under
    ``auto`` at the last look of ``auto:runs``; 1 when even that is not decided."""
    if auto:
        found = decide(sequence_of([(1.0, 0.0)] * runs, runs), DEFAULT_MARGIN)
    else:
        found = decide_difference([1.0] * runs, [0.0] * runs, DEFAULT_MARGIN)
    return found.p_value if found is not None and found.decided else 1.0
