"""``--eval-aa`` in the core, called directly: the false-call rate and its exact interval,
the wiring faults, the gates of an A/A session, and the kind ``--eval-compare last`` and
``--eval-reuse last`` tell apart."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from pytest_plugin_evals.engine.aa import UNGATED
from pytest_plugin_evals.engine.controller import SessionRules, settle
from pytest_plugin_evals.engine.gates import exit_status
from pytest_plugin_evals.model import Case, ExitStatus, PluginInfo, ToolCallBrief
from pytest_plugin_evals.reporting.aa import calibrate, calibration_json, calibration_line
from pytest_plugin_evals.reporting.document import document_json
from pytest_plugin_evals.reporting.earlier import Wanted, why_not
from pytest_plugin_evals.reporting.result import NotStarted
from pytest_plugin_evals.scoring import ScoringRules
from pytest_plugin_evals.stats.intervals import clopper_pearson
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
PLUGIN = PluginInfo(name="demo", version="1.0.0", path=Path("/suite"))
SKILL = ToolCallBrief("Skill", '{"skill":"demo:greet"}')
UNKNOWN = ToolCallBrief("Skill", '{"skill":"demo:greet"}', is_error=True)


def case(name: str) -> Case:
    return Case(
        name=name, prompt="p", source="prose", path=ROOT / name / "prompt.md",
        dir=ROOT / name, suite_root=ROOT,
    )  # fmt: skip


def runs(
    name: str,
    arm: str,
    scores: list[float],
    calls: tuple[ToolCallBrief, ...] = (SKILL,),
    infra: str | None = None,
    fired: list[bool] | None = None,
) -> list[Any]:
    """The runs of one arm; each fires the skill (``calls``) unless ``fired`` says not."""
    made = []
    for n, score in enumerate(scores, 1):
        record = run_record(case(name), arm, n, score=score, plugin=PLUGIN, infra=infra)
        shown = calls if fired is None or fired[n - 1] else ()
        made.append(replace(record, result=replace(record.result, tool_call_list=shown)))
    return made


def aa_result(*records: list[Any], aa: bool = True, **kw: Any) -> Any:
    flat = [r for group in records for r in group]
    return summary(flat, threshold=1.0, ablation="with-baseline", aa=aa, **kw)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (0, 4), (1, 4), (4, 4), (3, 20), (7, 30)])
def test_the_exact_interval_is_clopper_pearsons(k: int, n: int) -> None:
    assert clopper_pearson(k, n) == pytest.approx(proportion_confint(k, n, method="beta"), abs=1e-8)
    assert clopper_pearson(1, 0) is None


def test_the_false_call_rate_counts_cases_called_over_cases_with_a_verdict() -> None:
    result = aa_result(
        runs("apart", "with", [1.0] * 6),
        runs("apart", "baseline", [0.0] * 6),
        runs("alike", "with", [1.0, 0.0, 1.0]),
        runs("alike", "baseline", [1.0, 0.0, 1.0]),
        runs("same", "with", [1.0] * 3),
        runs("same", "baseline", [1.0] * 3),
    )
    found = calibrate(result)
    assert found is not None
    assert found.verdicts == 3
    assert found.called == (("apart", "better"),)
    assert found.rate == pytest.approx(1 / 3)
    assert found.interval == pytest.approx(proportion_confint(1, 3, method="beta"), abs=1e-8)
    assert found.faults == ()
    doc = calibration_json(found)
    assert doc["casesCalled"] == 1 and doc["calledCases"] == [
        {"case": "apart", "verdict": "better"}
    ]
    assert document_json(result)["aa"] == doc
    assert document_json(result)["suite"]["aa"] is True
    line = calibration_line(found)
    assert "1 of 3 case(s) with a verdict called a difference: apart (better)" in line
    assert "false-call rate 33.3% (exact 95% interval 0.8% to 90.6%) against the nominal 5%" in line
    # A with/without session has no calibration, and its document no "aa".
    plain = aa_result(runs("same", "with", [1.0]), runs("same", "without", [1.0]), aa=False)
    assert calibrate(plain) is None and "aa" not in document_json(plain)


def test_an_arm_that_never_fired_the_skill_is_a_wiring_fault() -> None:
    result = aa_result(
        runs("cut", "with", [1.0] * 3),
        runs("cut", "baseline", [1.0] * 3, calls=(UNKNOWN,)),  # the call failed: no skill
        runs("some", "with", [1.0] * 3),
        runs("some", "baseline", [1.0] * 3, fired=[True, False, False]),
        runs("down", "with", [1.0] * 3),
        runs("down", "baseline", [0.0] * 3, infra="plugin_load"),
    )
    found = calibrate(result)
    assert found is not None
    faults = {(f.case, f.arm, f.kind) for f in found.faults}
    assert faults == {
        ("cut", "baseline", "skill_never_fired"),
        ("down", "baseline", "plugin_not_loaded"),
    }
    (cut,) = [f for f in found.faults if f.case == "cut"]
    assert cut.message == (
        "case cut: the plugin's skill never fired in the baseline arm (0 of 3 run(s)), and "
        "fired in every run of the other (3 of 3)"
    )


def test_a_skill_fired_now_and_then_in_one_arm_is_chance_not_a_fault() -> None:
    """Only a complete split (every run against none) is a fault: a skill firing 2 of 3 times
    in one arm and never in the other is what the same plugin does by chance."""
    result = aa_result(
        runs("chance", "with", [1.0] * 3, fired=[True, True, False]),
        runs("chance", "baseline", [1.0] * 3, calls=()),
    )
    found = calibrate(result)
    assert found is not None and found.faults == ()


def test_an_aa_session_gates_on_its_wiring_faults_only() -> None:
    rules = SessionRules(
        scoring=ScoringRules(threshold=1.0), fail_on_regression=True, verdict_gate="not-worse"
    )
    # Every case below the threshold, one called worse: no gate but the wiring's.
    fine = aa_result(
        runs("low", "with", [0.0] * 6),
        runs("low", "baseline", [1.0] * 6),
    )
    settled = settle(fine, rules)
    assert exit_status(int(ExitStatus.OK), settled.gates) == ExitStatus.OK
    assert settled.first == UNGATED and settled.failed == ()
    faulty = aa_result(
        runs("cut", "with", [1.0] * 3),
        runs("cut", "baseline", [1.0] * 3, calls=()),
    )
    settled = settle(faulty, rules)
    assert exit_status(int(ExitStatus.OK), settled.gates) == ExitStatus.FAILED
    (line,) = settled.failed
    assert line.startswith("--eval-aa: 1 wiring fault(s) in 1 case(s) (cut)")


def test_an_aa_session_is_a_kind_of_its_own_for_last() -> None:
    aa = aa_result(runs("a", "with", [1.0]), runs("a", "baseline", [1.0]))
    both = aa_result(runs("a", "with", [1.0]), runs("a", "without", [1.0]), aa=False)
    doc: dict[str, Any] = {"loadErrors": []}
    with_without = Wanted(same_arms=True)
    assert why_not(doc, aa, with_without) == "an A/A session"
    assert why_not(doc, both, with_without) is None
    assert why_not(doc, aa, Wanted(same_arms=True, aa=True)) is None
    assert why_not(doc, both, Wanted(same_arms=True, aa=True)) == "a with/without session"
    partial = replace(both, partial=True, partial_reason="interrupted")
    assert why_not(doc, partial, with_without) == "it was interrupted"
    assert why_not(doc, partial, Wanted(same_arms=True, partial=True)) is None


def test_trigger_queries_never_started_are_not_cases() -> None:
    result = summary(
        runs("ran", "with", [1.0]) + runs("ran", "without", [1.0]),
        not_started=[
            NotStarted("evals/gone::gone", "gone", 2),
            NotStarted("skills/x/evals/trigger_eval.json::q-1", "q-1", 1),
            NotStarted("skills/x/evals/x_trigger_eval.json::q-2", "q-2", 1),
        ],
        partial_reason="interrupted",
    )
    assert result.aggregates.cases_total == 2
