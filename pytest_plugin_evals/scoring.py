"""Scoring: which graders count in which arm, run scores, case and suite aggregates, the gate.

Everything here is pure and typed: the aggregate functions work on the
:class:`~pytest_plugin_evals.model.RunResult` of each run, as the controller decoded them from the
workers' records.

The rules (the reference's, see the scoring docs):

* In a two-arm run, a ``tool_used`` grader on the ``Skill`` tool with no ``arm`` and every
  ``arm: with-only`` grader is an *indicator*: evaluated in the with-arm but not scored, and not
  evaluated at all in the without-arm, so the arms stay comparable.
* If every grader of a case is an indicator, all are scored normally in both arms.
* ``arm: both`` forces scoring. A single-arm run scores everything.
* A grader that did not judge (``Verdict.passed is None``, e.g. a paid grader skipped under a cost
  ceiling) is never scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from pytest_plugin_evals import stats
from pytest_plugin_evals.model import Arm, GraderSpec, RunResult, Verdict
from pytest_plugin_evals.stats import CaseStop, Decision, Interval, decisions

#: Scores are compared with this tolerance (weights such as 0.1 + 0.2 do not add up exactly).
EPSILON = 1e-9


def _is_indicator(spec: GraderSpec, *, shadow_mocks_only: bool) -> bool:
    """Whether a grader only shows that the plugin fired (cannot pass without the plugin)."""
    if spec.arm == "with-only":
        return True
    if spec.arm is not None:
        return False
    if spec.type == "tool_used" and spec.config.get("tool") == "Skill":
        return True
    # Graders of mocked calls, when every active mock stands in for a plugin server.
    targets = (spec.config.get("target"), spec.config.get("focus"))
    return shadow_mocks_only and "mock_calls" in targets


def plan_graders(
    graders: Sequence[GraderSpec],
    arm: Arm,
    two_arm: bool,
    *,
    shadow_mocks_only: bool = False,
) -> list[tuple[GraderSpec, bool, bool]]:
    """The graders to evaluate in ``arm``, each as ``(spec, scored, with_only)``.

    ``shadow_mocks_only`` says that the case's active mocks all stand in for the plugin's own
    servers (none standalone): ``mock_calls`` graders without an ``arm`` are indicators then.
    """
    if not two_arm or arm == "single":
        return [(spec, True, False) for spec in graders]
    flags = [_is_indicator(spec, shadow_mocks_only=shadow_mocks_only) for spec in graders]
    if all(flags):
        # Nothing would be left to score: every grader counts, in both arms.
        return [(spec, True, False) for spec in graders]
    if arm == "with":
        return [(spec, not flag, flag) for spec, flag in zip(graders, flags, strict=True)]
    return [(spec, True, False) for spec, flag in zip(graders, flags, strict=True) if not flag]


def run_score(verdicts: Sequence[Verdict], *, run_ok: bool = True) -> tuple[float, bool]:
    """``(score, passed)`` of one run: the weighted share of scored, judged verdicts that passed.

    With nothing to score the run scores 1.0 when it succeeded (a case without checks passes
    when its run did) and 0.0 when it did not.
    """
    judged = [v for v in verdicts if v.counts]
    total = sum(v.weight for v in judged)
    if total <= 0:
        score = 1.0 if run_ok else 0.0
    else:
        score = sum(v.weight for v in judged if v.passed) / total
        score = min(1.0, max(0.0, score))
    return score, score >= 1.0 - EPSILON


# --------------------------------------------------------------------------------------------
# Aggregates over run results


def clean(x: float | None) -> float | None:
    """Strip float noise (``0.30000000000000004`` → ``0.3``); None stays None."""
    return None if x is None else round(float(x), 10)


def mean(values: Sequence[float]) -> float | None:
    return clean(sum(values) / len(values)) if values else None


# --------------------------------------------------------------------------------------------
# Reducers: how a case's runs become its verdict

#: The reducers by name; ``at-least:M`` is written with its number.
REDUCERS = ("mean", "all", "any", "at-least:M")


def parse_reducer(text: str) -> str:
    """The reducer ``text`` names, normalised (``mean``, ``all``, ``any``, ``at-least:M``);
    :class:`ValueError` with what is accepted otherwise."""
    name = text.strip().lower()
    if name in ("mean", "all", "any"):
        return name
    if name.startswith("at-least:"):
        number = name.partition(":")[2].strip()
        if number.isdigit() and int(number) >= 1:
            return f"at-least:{int(number)}"
    raise ValueError(
        f'must be mean, all, any or at-least:M with M a whole number from 1 (got "{text}")'
    )


def reduce_runs(reducer: str, scores: Sequence[float], threshold: float) -> bool | None:
    """Whether a case passes under ``reducer``, from its graded runs' scores (None: no run).

    ``mean``: the mean score meets the threshold (the reference's rule). The others count the
    runs whose own score meets the threshold: ``all`` (pass^k) every one, ``any`` (pass@k) at
    least one, ``at-least:M`` at least M (more than the runs made can never pass).
    """
    if not scores:
        return None
    if reducer == "mean":
        return sum(scores) / len(scores) >= threshold - EPSILON
    passing = sum(1 for s in scores if s >= threshold - EPSILON)
    if reducer == "all":
        return passing == len(scores)
    if reducer == "any":
        return passing >= 1
    return passing >= int(reducer.partition(":")[2])


@dataclass(frozen=True)
class ScoringRules:
    """How a session's cases become verdicts: the threshold, the reducers and the margin."""

    #: The least score a case needs (``--eval-threshold``).
    threshold: float = 1.0
    #: How a case's runs become its verdict (``--eval-reducer``) ...
    reducer: str = "mean"
    #: ... and ``(glob, reducer)`` for the cases that have their own (the first match wins).
    case_reducers: tuple[tuple[str, str], ...] = ()
    #: Differences within ±margin are "equivalent" when shown to be (``--eval-margin``).
    margin: float = decisions.DEFAULT_MARGIN

    def reducer_for(self, case_name: str) -> str:
        """The reducer of the case called ``case_name``: the first matching glob's, else the
        session's."""
        for pattern, reducer in self.case_reducers:
            if fnmatchcase(case_name, pattern):
                return reducer
        return self.reducer


@dataclass(frozen=True)
class CaseVerdict:
    """Whether a case passes, and why not."""

    #: None: the case has no graded run (it cannot meet the threshold, nor fail it).
    passed: bool | None
    #: Why it did not pass: a clause (:func:`case_verdict`) or the sentence its report says
    #: (``reporting.result.decide_case``); empty when it passed.
    why: str = ""


def below_rule(reducer: str, threshold: float) -> str:
    """How a case fails ``threshold`` under ``reducer``, as the gate says it of several."""
    if reducer == "mean":
        return f"below the threshold {threshold:.2f}"
    return f"failed under the {reducer} reducer (threshold {threshold:.2f} per run)"


def case_verdict(scores: Sequence[float], threshold: float, reducer: str = "mean") -> CaseVerdict:
    """The one decision of whether a case passes, from its graded with-arm runs' scores (see
    :func:`reduce_runs`), and why not: the case's aggregates, the report of its last run and
    the session's gate all read it."""
    passed = reduce_runs(reducer, scores, threshold)
    if passed is not False:
        return CaseVerdict(passed)
    if reducer == "mean":
        why = f"mean score {sum(scores) / len(scores):.2f} is below the threshold {threshold:.2f}"
    else:
        why = below_rule(reducer, threshold)
    return CaseVerdict(False, why)


@dataclass(frozen=True)
class Timing:
    """Latency, tokens and turns of a set of runs: latency over the runs that report a
    duration, tokens summed over those that report them (None when none does)."""

    runs: int = 0
    latency_mean: float | None = None
    latency_p50: float | None = None
    latency_p95: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    turns_mean: float | None = None


def timing(runs: Sequence[RunResult]) -> Timing:
    durations = [r.duration_seconds for r in runs if r.duration_seconds is not None]
    inputs = [r.input_tokens for r in runs if r.input_tokens is not None]
    outputs = [r.output_tokens for r in runs if r.output_tokens is not None]
    return Timing(
        runs=len(runs),
        latency_mean=mean(durations),
        latency_p50=clean(stats.percentile(durations, 50)),
        latency_p95=clean(stats.percentile(durations, 95)),
        input_tokens=sum(inputs) if inputs else None,
        output_tokens=sum(outputs) if outputs else None,
        turns_mean=mean([float(r.turns) for r in runs]),
    )


@dataclass(frozen=True)
class ArmStats:
    """Score and pass rate of one arm of one case, over its graded runs."""

    score: float | None
    pass_rate: float | None
    graded: int
    #: Paid graders were skipped by the cost ceiling: the arm was graded under other rules.
    ceiling_skipped: bool = False
    #: The graded runs' scores, in run order.
    scores: tuple[float, ...] = ()
    score_interval: Interval | None = None
    pass_rate_interval: Interval | None = None

    @property
    def unstable(self) -> bool:
        """Whether the arm's runs disagree: some passed and some did not."""
        passes = {s >= 1.0 - EPSILON for s in self.scores}
        return len(passes) > 1


def arm_stats(runs: Sequence[RunResult]) -> ArmStats:
    graded = [r for r in runs if r.graded]
    scores = tuple(r.score for r in graded)
    passes = [1.0 if r.passed else 0.0 for r in graded]
    return ArmStats(
        score=mean(scores),
        pass_rate=mean(passes),
        graded=len(graded),
        scores=scores,
        score_interval=stats.score_interval(scores),
        pass_rate_interval=stats.score_interval(passes),
        # Only the cost ceiling grades the two arms under different rules; --eval-no-judge
        # skips the same graders everywhere, so Δ stays comparable.
        ceiling_skipped=any(
            r.skipped_paid_graders and any(v.skipped == "cost ceiling" for v in r.verdicts)
            for r in graded
        ),
    )


#: Why a case has no Δ although both arms have a score.
DELTA_NOT_COMPARABLE = "cost ceiling: arms graded under different rules"


@dataclass(frozen=True)
class CaseAggregates:
    """A case's numbers: the with (or single) arm's score and pass rate, the without arm's,
    Δ when both exist and are comparable, whether it meets the threshold, and run counts."""

    score: float | None
    pass_rate: float | None
    passed: bool
    score_without: float | None = None
    pass_rate_without: float | None = None
    delta: float | None = None
    #: Why there is no Δ although both arms scored.
    delta_note: str | None = None
    runs_graded: int = 0
    runs_errored: int = 0
    runs_not_made: int = 0
    #: 95% intervals (see :mod:`pytest_plugin_evals.stats`); None where there is no estimate.
    score_interval: Interval | None = None
    pass_rate_interval: Interval | None = None
    score_without_interval: Interval | None = None
    pass_rate_without_interval: Interval | None = None
    delta_interval: Interval | None = None
    #: Whether Δ's interval excludes 0 (None without a Δ interval).
    delta_significant: bool | None = None
    #: Δ's verdict (better, worse, equivalent, inconclusive); the session's false discovery
    #: rate control may withdraw it (see :mod:`pytest_plugin_evals.stats.decisions`).
    delta_decision: Decision | None = None
    #: How the runs became the verdict ``passed`` (see :func:`reduce_runs`).
    reducer: str = "mean"
    #: The arms whose runs disagree (some passed, some did not): ``with``, ``without``.
    unstable: tuple[str, ...] = ()
    #: Latency, tokens and turns of the case's graded runs (both arms).
    timing: Timing = field(default_factory=Timing)
    #: Under ``--eval-runs auto``: the rounds it took and why it stopped.
    sequential: CaseStop | None = None


def case_aggregates(
    with_runs: Sequence[RunResult],
    without_runs: Sequence[RunResult] | None,
    threshold: float,
    reducer: str = "mean",
    margin: float = decisions.DEFAULT_MARGIN,
) -> CaseAggregates:
    with_ = arm_stats(with_runs)
    score_without = pass_rate_without = delta = None
    decision: Decision | None = None
    score_without_interval = pass_rate_without_interval = delta_interval = None
    delta_note = None
    unstable = ["with"] if with_.unstable else []
    if without_runs is not None:
        without = arm_stats(without_runs)
        if without.unstable:
            unstable.append("without")
        if without.score is not None:
            score_without, pass_rate_without = without.score, without.pass_rate
            score_without_interval = without.score_interval
            pass_rate_without_interval = without.pass_rate_interval
            if with_.score is not None:
                if with_.ceiling_skipped or without.ceiling_skipped:
                    delta_note = DELTA_NOT_COMPARABLE
                else:
                    delta = clean(with_.score - without.score)
                    delta_interval = stats.difference_interval(with_.scores, without.scores)
                    decision = decisions.decide_difference(with_.scores, without.scores, margin)
    every = [*with_runs, *(without_runs or ())]
    return CaseAggregates(
        score=with_.score,
        pass_rate=with_.pass_rate,
        passed=bool(case_verdict(with_.scores, threshold, reducer).passed),
        score_without=score_without,
        pass_rate_without=pass_rate_without,
        delta=delta,
        delta_note=delta_note,
        runs_graded=sum(1 for r in every if r.graded),
        runs_errored=sum(1 for r in every if r.graded and r.error),
        runs_not_made=sum(1 for r in every if not r.graded),
        score_interval=with_.score_interval,
        pass_rate_interval=with_.pass_rate_interval,
        score_without_interval=score_without_interval,
        pass_rate_without_interval=pass_rate_without_interval,
        delta_interval=delta_interval,
        delta_significant=None if delta_interval is None else stats.excludes_zero(delta_interval),
        delta_decision=decision,
        reducer=reducer,
        unstable=tuple(unstable),
        timing=timing([r for r in every if r.graded]),
    )


@dataclass(frozen=True)
class Gate:
    """Whether every case met the threshold."""

    met: bool
    below: list[str] = field(default_factory=list)
    message: str = ""
    #: Cases with no graded run at all (every run could not be made): they cannot meet it.
    ungraded: list[str] = field(default_factory=list)


def gate(
    scores: Sequence[tuple[str, float | None]],
    threshold: float,
    *,
    reducer: str = "mean",
    passed: Sequence[bool] | None = None,
) -> Gate:
    """Apply ``threshold`` to ``(case name, score)`` pairs (pure).

    ``passed`` are the cases' verdicts under another ``reducer`` than ``mean`` (one per pair):
    a case fails the gate when its verdict failed, whatever its mean score.
    """
    below: list[str] = []
    shown: list[str] = []
    ungraded: list[str] = []
    for index, (name, score) in enumerate(scores):
        if score is None:
            ungraded.append(name)
        elif (not passed[index]) if passed is not None else score < threshold - EPSILON:
            below.append(name)
            shown.append(f"{name} ({score:.2f})")
    met = not below and not ungraded
    total = len(scores)
    if not scores:
        message = "no eval case ran"
    elif met:
        message = f"all {total} case(s) scored at or above the threshold {threshold:.2f}"
    else:
        parts = []
        if below:
            rule = below_rule("mean" if passed is None else reducer, threshold)
            parts.append(f"{len(below)} of {total} case(s) {rule}: " + ", ".join(shown))
        if ungraded:
            parts.append(f"{len(ungraded)} case(s) have no graded run: " + ", ".join(ungraded))
        message = "; ".join(parts)
    return Gate(met=met, below=below, message=message, ungraded=ungraded)
