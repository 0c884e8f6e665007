"""Scoring: which graders count in which arm, run scores, case and suite aggregates, the gate.

Everything here is pure. The aggregate functions work on run records (``RunResult.to_dict()``),
because under pytest-xdist the controller only ever sees what the workers sent.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .model import Arm, GraderSpec, Verdict

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
    judged = [v for v in verdicts if v.scored and v.passed is not None]
    total = sum(v.weight for v in judged)
    if total <= 0:
        score = 1.0 if run_ok else 0.0
    else:
        score = sum(v.weight for v in judged if v.passed) / total
        score = min(1.0, max(0.0, score))
    return score, score >= 1.0 - EPSILON


# --------------------------------------------------------------------------------------------
# Aggregates over run records (builtins)


def clean(x: float | None) -> float | None:
    """Strip float noise (``0.30000000000000004`` → ``0.3``); None stays None."""
    return None if x is None else round(float(x), 10)


def mean(values: Sequence[float]) -> float | None:
    return clean(sum(values) / len(values)) if values else None


def is_graded(run: Mapping[str, Any]) -> bool:
    """A run that was made and graded (infrastructure failures and skipped runs are not)."""
    return not run.get("infraError") and not run.get("skipped")


@dataclass(frozen=True)
class ArmStats:
    """Score and pass rate of one arm of one case, over its graded runs."""

    score: float | None
    pass_rate: float | None
    graded: int
    skipped_paid_graders: bool = False


def arm_stats(runs: Sequence[Mapping[str, Any]]) -> ArmStats:
    graded = [r for r in runs if is_graded(r)]
    return ArmStats(
        score=mean([float(r.get("score") or 0.0) for r in graded]),
        pass_rate=mean([1.0 if r.get("passed") else 0.0 for r in graded]),
        graded=len(graded),
        # Only the cost ceiling grades the two arms under different rules; --eval-no-judge
        # skips the same graders everywhere, so Δ stays comparable.
        skipped_paid_graders=any(
            r.get("skippedPaidGraders")
            and any(v.get("skipped") == "cost ceiling" for v in r.get("graders") or [])
            for r in graded
        ),
    )


#: Why a case has no Δ although both arms have a score.
DELTA_NOT_COMPARABLE = "cost ceiling: arms graded under different rules"


def case_aggregates(
    with_runs: Sequence[Mapping[str, Any]],
    without_runs: Sequence[Mapping[str, Any]] | None,
    threshold: float,
) -> dict[str, Any]:
    """A case's ``aggregates``: ``score``/``passRate`` of the with (or single) arm, the
    without-arm's, ``delta`` when both exist and are comparable, and ``passed``."""
    with_ = arm_stats(with_runs)
    out: dict[str, Any] = {"score": with_.score, "passRate": with_.pass_rate}
    if without_runs is not None:
        without = arm_stats(without_runs)
        if without.score is not None:
            out["scoreWithout"] = without.score
            out["passRateWithout"] = without.pass_rate
            if with_.score is not None:
                if with_.skipped_paid_graders or without.skipped_paid_graders:
                    out["deltaNote"] = DELTA_NOT_COMPARABLE
                else:
                    out["delta"] = clean(with_.score - without.score)
    out["passed"] = with_.score is not None and with_.score >= threshold - EPSILON
    every = [*with_runs, *(without_runs or ())]
    out["runsGraded"] = sum(1 for r in every if is_graded(r))
    out["runsErrored"] = sum(1 for r in every if is_graded(r) and r.get("error"))
    out["runsNotMade"] = sum(1 for r in every if r.get("infraError"))
    return out


@dataclass(frozen=True)
class Gate:
    """Whether every case met the threshold."""

    met: bool
    below: list[str] = field(default_factory=list)
    message: str = ""
    #: Cases with no graded run at all (every run could not be made): they cannot meet it.
    ungraded: list[str] = field(default_factory=list)


def gate(document: Mapping[str, Any], threshold: float) -> Gate:
    """Apply ``threshold`` to the case scores of a result document (pure)."""
    cases = document.get("cases") or []
    below: list[str] = []
    shown: list[str] = []
    ungraded: list[str] = []
    for case in cases:
        score = (case.get("aggregates") or {}).get("score")
        if score is None:
            ungraded.append(case["name"])
        elif score < threshold - EPSILON:
            below.append(case["name"])
            shown.append(f"{case['name']} ({score:.2f})")
    met = not below and not ungraded
    if not cases:
        message = "no eval case ran"
    elif met:
        message = f"all {len(cases)} case(s) scored at or above the threshold {threshold:.2f}"
    else:
        parts = []
        if below:
            parts.append(
                f"{len(below)} of {len(cases)} case(s) below the threshold {threshold:.2f}: "
                + ", ".join(shown)
            )
        if ungraded:
            parts.append(f"{len(ungraded)} case(s) have no graded run: " + ", ".join(ungraded))
        message = "; ".join(parts)
    return Gate(met=met, below=below, message=message, ungraded=ungraded)
