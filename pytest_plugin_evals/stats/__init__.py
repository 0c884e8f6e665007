"""The statistics, pure and in one room (docs/explanation/statistics.md says which method lives
where):

* :mod:`.intervals`: the 95% intervals (Wilson, Newcombe, MOVER, cluster-robust), Student's t
  and the normal quantiles, p-values of claims about an interval, percentiles;
* :mod:`.decisions`: the three-way verdicts on a difference and the false discovery rate
  control (Benjamini–Hochberg);
* :mod:`.sequential`: ``--eval-runs auto``'s group-sequential design (looks, boundary,
  futility, the stopping rule);
* :mod:`.planning`: ``--eval-plan``'s runs and cases needed to detect a Δ, its table of
  operating characteristics, what a design cannot decide;
* :mod:`.operating`: a design's exact operating characteristics for pass/fail runs;
* :mod:`.efficiency`: cost, tokens, turns and time with/without, ratios on a log scale;
* :mod:`.agreement`: the judges' agreement, Cohen's κ with a bootstrap interval.

The names below are the ones other rooms use; the modules import one another by their own
names, never through this package.
"""

from __future__ import annotations

from pytest_plugin_evals.stats import decisions, sequential
from pytest_plugin_evals.stats.decisions import (
    DEFAULT_MARGIN,
    FDR,
    MOST_RUNS,
    VERDICTS,
    Decision,
    counts,
    describe,
)
from pytest_plugin_evals.stats.intervals import (
    Interval,
    difference_interval,
    excludes_zero,
    f1_interval,
    mean_delta_interval,
    mover,
    new_case_interval,
    paired_phi,
    percentile,
    runs_for_width,
    score_interval,
    width,
    wilson,
)
from pytest_plugin_evals.stats.planning import (
    DEFAULT_COST_USD,
    DEFAULT_SECONDS,
    WORST_VARIANCE,
    CaseHistory,
    plan_case,
    plan_suite,
)
from pytest_plugin_evals.stats.sequential import (
    DEFAULT_MAX_RUNS,
    CaseStop,
    ConfidenceSequence,
    Stop,
    case_verdict,
    paired_differences,
)

__all__ = [
    "DEFAULT_COST_USD",
    "DEFAULT_MARGIN",
    "DEFAULT_MAX_RUNS",
    "DEFAULT_SECONDS",
    "FDR",
    "MOST_RUNS",
    "VERDICTS",
    "WORST_VARIANCE",
    "CaseHistory",
    "CaseStop",
    "ConfidenceSequence",
    "Decision",
    "Interval",
    "Stop",
    "case_verdict",
    "counts",
    "decisions",
    "describe",
    "difference_interval",
    "excludes_zero",
    "f1_interval",
    "mean_delta_interval",
    "mover",
    "new_case_interval",
    "paired_differences",
    "paired_phi",
    "percentile",
    "plan_case",
    "plan_suite",
    "runs_for_width",
    "score_interval",
    "sequential",
    "width",
    "wilson",
]
