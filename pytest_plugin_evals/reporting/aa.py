"""``--eval-aa``: what an A/A session measures (pure).

In an A/A session both arms load the plugin under test (the second arm is the baseline arm,
whose baseline is the plugin itself), so no case has a true Δ: every case the verdicts call
better or worse is a false call. :func:`calibrate` counts them over the cases that have a
verdict — the verdicts as a with/without session gives them, after the false discovery rate
control — with the exact (Clopper–Pearson) 95% interval of that rate, beside the nominal level
of a case's verdict (a 95% interval: 5%).

It also finds the session's *wiring faults*: an arm that did not get what the other got.

* ``plugin_not_loaded``: runs of an arm whose agent reported the plugin not loaded (the
  ``plugin_load`` infrastructure error: Claude Code's init event did not list the plugin, or
  listed it without its skills or commands).
* ``skill_never_fired``: one arm fired a skill of the plugin (a ``Skill`` call that loaded, or
  a read of its ``SKILL.md``) in every graded run and the other arm in none. Two arms of the
  same plugin that fire a skill with any one chance ``p`` part that way with a chance of
  ``2 pⁿ (1 − p)ⁿ ≤ 2 / 4ⁿ`` for ``n`` runs per arm: 3.1% at 3 runs, 0.2% at 5.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.model import fired_skill
from pytest_plugin_evals.stats.intervals import Interval, clopper_pearson

if TYPE_CHECKING:
    from pytest_plugin_evals.model import RunResult
    from pytest_plugin_evals.records import RunRecord
    from pytest_plugin_evals.reporting.result import CaseResult, SessionResult

#: The chance a case with no effect is called better or worse that each verdict is built for
#: (its 95% interval).
NOMINAL = 0.05
#: The differences called.
CALLS = ("better", "worse")


@dataclass(frozen=True)
class WiringFault:
    """An arm of a case that did not get what the other arm got."""

    case: str
    #: The arm at fault, as its runs name it: ``with`` or ``baseline`` (the second arm).
    arm: str
    kind: str
    message: str
    agent: str | None = None


@dataclass(frozen=True)
class Calibration:
    """An A/A session's false calls and wiring faults."""

    #: The cases that have a verdict on their Δ.
    verdicts: int
    #: ``(case label, verdict)`` of each case called better or worse: a false call.
    called: tuple[tuple[str, str], ...]
    #: The false-call rate's exact 95% interval (None: no case has a verdict).
    interval: Interval | None
    #: The suite's mean Δ verdict (None: none).
    suite_verdict: str | None
    faults: tuple[WiringFault, ...] = ()
    nominal: float = NOMINAL

    @property
    def rate(self) -> float | None:
        return len(self.called) / self.verdicts if self.verdicts else None

    @property
    def suite_called(self) -> bool:
        return self.suite_verdict in CALLS

    @property
    def above_nominal(self) -> bool:
        """The measured rate is above the nominal level beyond chance (its interval is)."""
        return self.interval is not None and self.interval[0] > self.nominal


def calibrate(result: SessionResult) -> Calibration | None:
    """The A/A session's calibration (None: not an A/A session)."""
    if not result.suite.aa:
        return None
    cases = [c for c in result.cases if c.two_arm and not c.trigger_query]
    decided = [c for c in cases if c.aggregates.delta_decision is not None]
    called = tuple(
        (c.label, verdict)
        for c in decided
        if c.aggregates.delta_decision is not None
        and (verdict := c.aggregates.delta_decision.verdict) in CALLS
    )
    suite = result.aggregates.mean_delta_decision
    return Calibration(
        verdicts=len(decided),
        called=called,
        interval=clopper_pearson(len(called), len(decided)),
        suite_verdict=None if suite is None else suite.verdict,
        faults=tuple(f for c in cases for f in wiring_faults(c)),
    )


def wiring_faults(case: CaseResult) -> list[WiringFault]:
    """The case's arms that did not get what the other arm got (see the module's words)."""
    arms = (("with", case.with_runs), (case.second_arm, case.without_runs))
    found = []
    for arm, runs in arms:
        failed = sum(1 for r in runs if r.result.infra_error == "plugin_load")
        if failed:
            found.append(
                WiringFault(
                    case.label,
                    arm,
                    "plugin_not_loaded",
                    f"case {case.label}: the plugin did not load in {failed} of {len(runs)} "
                    f"{arm}-arm run(s)",
                    case.agent,
                )
            )
    first, second = (_fired(runs) for _, runs in arms)
    for arm, (fires, graded), (other, other_graded) in (
        (arms[0][0], first, second),
        (arms[1][0], second, first),
    ):
        if graded and other_graded and fires == 0 and other == other_graded:
            found.append(
                WiringFault(
                    case.label,
                    arm,
                    "skill_never_fired",
                    f"case {case.label}: the plugin's skill never fired in the {arm} arm (0 of "
                    f"{graded} run(s)), and fired in every run of the other ({other} of "
                    f"{other_graded})",
                    case.agent,
                )
            )
    return found


def _fired(runs: tuple[RunRecord, ...]) -> tuple[int, int]:
    """How many of the graded runs fired a skill of their plugin, and how many were graded."""
    graded = [r for r in runs if r.result.graded]
    plugin = graded[0].plugin.name if graded and graded[0].plugin is not None else None
    return sum(1 for r in graded if fires_skill(r.result, plugin)), len(graded)


def fires_skill(run: RunResult, plugin: str | None) -> bool:
    """Whether the run loaded a skill: of ``plugin`` when the call names its plugin."""
    for call in run.tool_call_list:
        try:
            given: Any = json.loads(call.input)
        except ValueError:
            given = None
        skill = fired_skill(call.name, given, call.is_error)
        if skill is None:
            continue
        owner, sep, _ = skill.rpartition(":")
        if not sep or plugin is None or owner == plugin:
            return True
    return False


def calibration_json(found: Calibration) -> dict[str, Any]:
    """The document's ``aa`` object."""
    return {
        "nominalLevel": found.nominal,
        "casesWithVerdict": found.verdicts,
        "casesCalled": len(found.called),
        "falseCallRate": found.rate,
        "falseCallInterval": None if found.interval is None else list(found.interval),
        "calledCases": [{"case": case, "verdict": verdict} for case, verdict in found.called],
        "suiteVerdict": found.suite_verdict,
        "suiteCalled": found.suite_called,
        "wiringFaults": [
            {
                "case": f.case,
                **({"agent": f.agent} if f.agent is not None else {}),
                "arm": f.arm,
                "kind": f.kind,
                "message": f.message,
            }
            for f in found.faults
        ],
    }


def suite_said(found: Calibration) -> str:
    """``the suite's mean Δ is better (a false call)``, or that it has no verdict."""
    if found.suite_verdict is None:
        return "the suite's mean Δ has no verdict"
    called = " (a false call)" if found.suite_called else ""
    return f"the suite's mean Δ is {found.suite_verdict}{called}"


def calibration_line(found: Calibration) -> str:
    """The terminal's line on the false calls."""
    suite = suite_said(found)
    if not found.verdicts or found.interval is None or found.rate is None:
        return f"--eval-aa: no case has a verdict on its Δ: no false-call rate; {suite}"
    low, high = found.interval
    above = " — above it beyond chance" if found.above_nominal else ""
    names = ", ".join(f"{case} ({verdict})" for case, verdict in found.called[:5])
    more = f" and {len(found.called) - 5} more" if len(found.called) > 5 else ""
    return (
        f"--eval-aa: {len(found.called)} of {found.verdicts} case(s) with a verdict called a "
        f"difference{': ' + names + more if names else ''}; false-call rate {found.rate:.1%} "
        f"(exact 95% interval {low:.1%} to {high:.1%}) against the nominal "
        f"{found.nominal:.0%}{above}; {suite}"
    )
