"""Agreement between two raters of pass/fail verdicts: Cohen's κ with a 95% interval.

Two raters (two judges, or a judge and a person) each gave a verdict on the same items.
:func:`agreement` gives the share of items they agree on, Cohen's κ (agreement beyond what
their own pass rates give by chance) and a 95% interval for κ.

The interval is a percentile bootstrap over the items (:data:`BOOTSTRAP` resamples, a fixed
seed, so the same verdicts give the same interval). From 40 items on it covered the true κ in
91–95% of simulated samples, where the normal interval from the large-sample standard error
(Fleiss, Cohen and Everitt 1969; :func:`kappa_se`) covered 87–94%; at 20 items the bootstrap
covered 83–92% and at 10 items 79–89% (docs/how-to/judges.md gives the figures and how they
were measured). Under :data:`FEW` items the interval is still given, and said to be rough.

κ is undefined when chance agreement is 1 (both raters gave one and the same verdict every
time): then ``kappa`` and ``interval`` are None, and the raw share says what there is.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_plugin_evals.stats.intervals import Interval, percentile

#: Resamples of the bootstrap interval.
BOOTSTRAP = 2000
#: The bootstrap's seed: the same verdicts always give the same interval.
SEED = 20240607
#: Under this many items an interval is rough (reports say so).
FEW = 40
#: κ under this is flagged: Landis and Koch (1977) call 0.41–0.60 "moderate" and 0.61–0.80
#: "substantial"; a judge that agrees only moderately with another, or with people, decides
#: too many verdicts by its own reading of the rubric to be trusted alone.
LOW_KAPPA = 0.6

#: One item: (first rater's verdict, second rater's verdict).
Pair = tuple[bool, bool]


@dataclass(frozen=True)
class Agreement:
    """How two raters agreed on ``n`` items."""

    n: int
    agreed: int
    kappa: float | None
    interval: Interval | None

    @property
    def share(self) -> float | None:
        """The share of items both raters gave the same verdict (None: no items)."""
        return round(self.agreed / self.n, 4) if self.n else None

    @property
    def low(self) -> bool:
        """Whether κ is known and under :data:`LOW_KAPPA`."""
        return self.kappa is not None and self.kappa < LOW_KAPPA

    @property
    def rough(self) -> bool:
        """Whether there are too few items for the interval to be more than rough."""
        return self.n < FEW


def _table(pairs: Sequence[Pair]) -> tuple[int, int, int, int]:
    """(both pass, first only, second only, both fail)."""
    both = sum(1 for a, b in pairs if a and b)
    first = sum(1 for a, b in pairs if a and not b)
    second = sum(1 for a, b in pairs if b and not a)
    return both, first, second, len(pairs) - both - first - second


def kappa_of(table: tuple[int, int, int, int]) -> float | None:
    """Cohen's κ of a 2×2 table (both pass, first only, second only, both fail); None when
    there are no items or chance agreement is 1."""
    a, b, c, d = table
    n = a + b + c + d
    if n == 0:
        return None
    p1, p2 = (a + b) / n, (a + c) / n  # each rater's pass rate
    expected = p1 * p2 + (1 - p1) * (1 - p2)
    if expected >= 1:
        return None
    return ((a + d) / n - expected) / (1 - expected)


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    """Cohen's κ of two raters' pass/fail verdicts on the same items."""
    return kappa_of(_table(pairs))


def kappa_se(table: tuple[int, int, int, int]) -> float | None:
    """The large-sample standard error of κ (Fleiss, Cohen and Everitt 1969), for comparison
    with the bootstrap; None where κ is undefined."""
    kappa = kappa_of(table)
    if kappa is None:
        return None
    a, b, c, d = table
    n = a + b + c + d
    p = [[a / n, b / n], [c / n, d / n]]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    expected = rows[0] * cols[0] + rows[1] * cols[1]
    diagonal = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in (0, 1))
    off = sum(p[i][1 - i] * (cols[i] + rows[1 - i]) ** 2 for i in (0, 1)) * (1 - kappa) ** 2
    variance = (diagonal + off - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2)
    return float(max(variance, 0.0) ** 0.5)


def kappa_interval(pairs: Sequence[Pair], resamples: int = BOOTSTRAP) -> Interval | None:
    """A 95% percentile-bootstrap interval for κ over the items (None where κ is undefined).

    A resample whose κ is undefined (one verdict throughout) is drawn again as it stands: it
    counts as no agreement beyond chance (κ 0), which keeps the interval honest about samples
    that could have told nothing."""
    if cohen_kappa(pairs) is None:
        return None
    table = _table(pairs)
    n = len(pairs)
    rng = random.Random(SEED)
    kappas = []
    for _ in range(resamples):
        drawn = Counter(rng.choices(range(4), weights=table, k=n))
        found = kappa_of((drawn[0], drawn[1], drawn[2], drawn[3]))
        kappas.append(0.0 if found is None else found)
    low, high = percentile(kappas, 2.5), percentile(kappas, 97.5)
    assert low is not None and high is not None
    return (round(low, 4), round(high, 4))


def agreement(pairs: Sequence[Pair]) -> Agreement:
    """Agreement of two raters on ``pairs`` (each item's two verdicts)."""
    kappa = cohen_kappa(pairs)
    return Agreement(
        n=len(pairs),
        agreed=sum(1 for a, b in pairs if a == b),
        kappa=None if kappa is None else round(kappa, 4),
        interval=kappa_interval(pairs),
    )
