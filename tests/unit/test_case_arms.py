"""``suites.arms.plan_arms``: which arms a case runs and how many runs, called directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.suites.arms import ArmPlan, NoArms, plan_arms

ROOT = Path("/evals")


def case(source: str = "prose", **given: object) -> Case:
    return Case("c", "p", source, ROOT / "c" / "prompt.md", ROOT / "c", ROOT, **given)  # type: ignore[arg-type]


def plan(c: Case, *, has_plugin: bool = True, ab: bool = False, **given: Any) -> ArmPlan | NoArms:
    """The plan under the session's settings (``ab``: a baseline plugin is given)."""
    chosen = {"ablation": "auto", "aa": False, "runs": None, "runs_auto": None, **given}
    return plan_arms(c, has_plugin=has_plugin, ab=ab, **chosen)


def test_auto_ablation_runs_two_arms_with_a_plugin_and_one_without() -> None:
    two = plan(case())
    assert isinstance(two, ArmPlan) and two.two_arm and two.runs == 3
    assert two.arms(baseline=False) == ("with", "without")
    assert two.arms(baseline=True) == ("with", "baseline")
    one = plan(case(), has_plugin=False)
    assert isinstance(one, ArmPlan) and one.arms(baseline=False) == ("single",)


def test_a_history_case_runs_one_arm_under_auto() -> None:
    got = plan(case(history_file="h.jsonl"))
    assert isinstance(got, ArmPlan) and not got.two_arm


def test_with_without_needs_a_plugin() -> None:
    got = plan(case(line=7), has_plugin=False, ablation="with-without")
    assert isinstance(got, NoArms) and got.once is None
    assert "needs a plugin" in got.error.message and got.error.line == 7


def test_runs_auto_sets_the_most_runs_of_a_two_arm_case_only() -> None:
    got = plan(case(), runs=5, runs_auto=12)
    assert isinstance(got, ArmPlan) and got.runs == 12
    one = plan(case(), has_plugin=False, runs=5, runs_auto=12)
    assert isinstance(one, ArmPlan) and one.runs == 5


def test_a_trigger_case_runs_two_arms_only_in_an_ab() -> None:
    alone = plan(case("trigger_eval"))
    assert isinstance(alone, ArmPlan) and alone.trigger and not alone.two_arm
    ab = plan(case("trigger_eval"), ab=True)
    assert isinstance(ab, ArmPlan) and ab.two_arm
    none = plan(case("trigger_eval"), ab=True, ablation="none")
    assert isinstance(none, ArmPlan) and not none.two_arm
    missing = plan(case("trigger_eval"), has_plugin=False)
    assert isinstance(missing, NoArms) and "trigger case needs" in missing.error.message


@pytest.mark.parametrize(
    ("source", "given", "once", "why"),
    [
        ("trigger_eval", {}, "/evals/c/prompt.md", "with arm only"),
        ("prose", {"ablation": "none"}, "/evals/c/prompt.md:c", "runs one arm"),
        ("prose", {"has_plugin": False}, "/evals/c/prompt.md:c", "runs one arm"),
    ],
)
def test_aa_refuses_a_case_without_two_arms_of_the_plugin(
    source: str, given: dict[str, Any], once: str, why: str
) -> None:
    got = plan(case(source), aa=True, **given)
    assert isinstance(got, NoArms) and got.once == once
    assert got.error.message.startswith("--eval-aa needs two arms") and why in got.error.message


def test_aa_runs_two_arms_when_the_plugin_resolves() -> None:
    got = plan(case(), aa=True)
    assert isinstance(got, ArmPlan) and got.two_arm
