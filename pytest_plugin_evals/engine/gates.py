"""What decides a session's exit status, as data: each gate is a pure function of the session's
result returning a :class:`Gate` (or None where it does not apply), and :func:`exit_status`
combines them, in order, with the status pytest decided. The shell applies the result in one
place (``plugin.session.settle``). The statuses are docs/reference/exit-statuses.md's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_plugin_evals.model import ExitStatus
from pytest_plugin_evals.reporting.efficiency import ratio_text, suite_efficiency
from pytest_plugin_evals.reporting.result import SessionResult, session_gate
from pytest_plugin_evals.reporting.triggers import trigger_results
from pytest_plugin_evals.reporting.verdicts import verdict_gate
from pytest_plugin_evals.stats.efficiency import above_with_evidence

#: pytest's status when no item was selected.
NO_TESTS_COLLECTED = 5

#: What credentials a claude run can use (said when one was rejected).
CREDENTIALS_HINT = (
    "Runs use ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) or a cloud "
    "provider's variables; a /login session is not carried into a run's isolated home."
)

_ONLY_OK = frozenset({int(ExitStatus.OK)})


@dataclass(frozen=True)
class Gate:
    """A gate's exit status and its one line. It turns only the statuses in ``replaces`` into
    its own (by default only OK: a failed gate does not hide a worse status, and a gate that
    passed, status OK, changes nothing); ``None`` replaces any status."""

    status: int
    reason: str
    replaces: frozenset[int] | None = _ONLY_OK


def exit_status(status: int, gates: Iterable[Gate | None]) -> int:
    """The session's exit status: pytest's ``status`` with each gate applied in turn."""
    for gate in gates:
        if gate is not None and (gate.replaces is None or status in gate.replaces):
            status = gate.status
    return status


def shard_gate(result: SessionResult) -> Gate | None:
    """``--eval-shard``: a shard none of the selected cases fell to exits 0 for want of tests
    (the other shards run them) and is gated no further."""
    shard = result.shard
    if shard is None or shard.cases_of(shard.index):
        return None
    replaces = frozenset() if result.cases else frozenset({NO_TESTS_COLLECTED})
    return Gate(ExitStatus.OK, "no selected case fell to this shard", replaces)


def plan_gate(planned: bool) -> Gate | None:
    """``--eval-plan``: a session that only planned exits 0, not pytest's "no tests ran" (a
    load error, a failed test keep their status)."""
    if not planned:
        return None
    return Gate(ExitStatus.OK, "the session planned", frozenset({NO_TESTS_COLLECTED}))


def partial_gate(
    result: SessionResult, max_cost_usd: float | None, timed_out: float | None = None
) -> Gate | None:
    """A result partial for want of runs: the cost ceiling or a rejected credential exit 2
    whatever else happened; an interruption or ``-x``/``--maxfail`` turn only OK into 2.
    ``timed_out``: the ``--eval-session-timeout`` that interrupted the session, if one did."""
    reason = result.partial_reason
    partial = int(ExitStatus.PARTIAL)
    if reason == "cost_ceiling":
        return Gate(
            partial,
            f"cost ceiling ${max_cost_usd:g} reached: the remaining runs were not started; "
            f"the result is partial (exit status {partial})",
            None,
        )
    if reason == "auth_failed":
        return Gate(
            partial,
            "a run could not authenticate: the remaining runs were not started; the result "
            f"is partial (exit status {partial}). {CREDENTIALS_HINT}",
            None,
        )
    if reason not in ("interrupted", "maxfail"):
        return None
    why = "the session was interrupted" if reason == "interrupted" else "-x/--maxfail"
    if timed_out is not None:
        why = f"--eval-session-timeout {timed_out:g}s reached"
    return Gate(
        partial,
        f"{why}: {result.aggregates.runs_not_started} selected run(s) of "
        f"{len(result.not_started)} case(s) were not started; the result is partial and no "
        "threshold is met",
    )


def threshold_gate(result: SessionResult, threshold: float) -> Gate | None:
    """The threshold: a case below it turns OK into 1. A gate that passed says so (status OK)
    where there is something to say: no case is gated, or the threshold is below 1."""
    verdict, ungated = session_gate(result.cases, result.threshold)
    if ungated is not None:
        return Gate(ExitStatus.OK, ungated)
    if not verdict.met:
        return Gate(ExitStatus.FAILED, verdict.message)
    if threshold < 1:
        return Gate(ExitStatus.OK, f"every case's mean score meets the threshold {threshold:g}")
    return None


def trigger_gate(result: SessionResult, least: float | None) -> Gate | None:
    """``--eval-trigger-threshold``: a skill whose trigger F1 is below it turns OK into 1."""
    if least is None or result.partial:
        return None
    below = []
    for skill in trigger_results(result.cases):
        f1 = skill.metrics()["f1"][0]
        if f1 is None or f1 < least - 1e-9:
            below.append(f"{skill.skill} ({'—' if f1 is None else f'{f1:.2f}'})")
    if not below:
        return None
    return Gate(
        ExitStatus.FAILED,
        f"--eval-trigger-threshold {least:g}: the trigger F1 of {len(below)} skill(s) is "
        "below it: " + ", ".join(below),
    )


def regression_gate(result: SessionResult, fail_on_regression: bool) -> Gate | None:
    """``--eval-fail-on-regression``: a case that regressed turns OK into 1."""
    comparison = result.comparison
    if comparison is None or not comparison.regressed or not fail_on_regression:
        return None
    names = ", ".join(c.name for c in comparison.regressions)
    since = comparison.against_started_at or comparison.against
    return Gate(
        ExitStatus.FAILED,
        f"--eval-fail-on-regression: {len(comparison.regressions)} case(s) worse "
        f"since {since}: {names}",
    )


def verdicts_gate(result: SessionResult, gate: str | None) -> Gate | None:
    """``--eval-gate not-worse|better``: verdicts that fail it turn OK into 1."""
    failed = None if gate is None else verdict_gate(result, gate)
    return None if failed is None else Gate(ExitStatus.FAILED, failed)


def cost_gate(result: SessionResult, most: float | None) -> Gate | None:
    """``--eval-fail-on-cost-regression RATIO``: the suite's agent cost with/without above
    RATIO with evidence (its 95% interval's lower bound above RATIO) turns OK into 1."""
    found = None if most is None else suite_efficiency(result.cases)
    if most is None or found is None or not above_with_evidence(found.of("cost"), most):
        return None
    return Gate(
        ExitStatus.FAILED,
        f"--eval-fail-on-cost-regression {most:g}: the plugin's runs cost "
        f"{ratio_text(found.of('cost'))} what they cost without it (95% interval above "
        f"×{most:g}, {found.cases} case(s))",
    )
