"""``--eval-aa`` with the real ``claude`` binary against the scripted model: both arms load the
plugin under test (a ``Skill`` call loads it in either arm), the session reports its false-call
rate in the terminal, the JSON document and the HTML report, and gates on nothing else; a
session whose second arm never fires the skill shows that arm's wiring fault and fails."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_plugin_evals.stats.intervals import clopper_pearson
from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from pytest_plugin_evals.testing.rules import Request
from tests.helpers import write_tree

SKILL = "---\nname: greet\ndescription: Greets the user.\n---\nSay hello.\n"
FIRE = tool_use("Skill", {"skill": "kit:greet"})


@dataclass(frozen=True)
class InArm(Rule):
    """A rule that holds in one arm's runs only: Claude Code names the run's working
    directory in its system text, and it lies in the run's folder, named for its arm
    (``baseline-2-…``)."""

    arm: str = ""

    def matches(self, request: Request) -> bool:
        return f"/{self.arm}-" in request.system and super().matches(request)


def aa_suite(pytester: pytest.Pytester) -> None:
    """A plugin with one skill and one case whose grader passes in every run (a greeting, two
    runs per arm): no case has an effect in an A/A, whatever the arms do."""
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
            "skills/greet/SKILL.md": SKILL,
            "evals/hello/prompt.md": "---\nruns: 2\n---\nGreet me.\n",
            "evals/hello/graders/hello.md": "---\ntype: regex\npattern: Hello\n---\n",
        },
    )


def aa_session(
    pytester: pytest.Pytester, model: ScriptedModel, run_evals: Any, *first: Rule
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """An A/A session of :func:`aa_suite` whose model calls the skill for the greeting (unless
    a rule of ``first`` answers first) and greets once it loaded; its result and document."""
    aa_suite(pytester)
    model.add(
        Rule(when_tool_result="Launching skill: kit:greet", reply=text("Hello, with the skill.")),
        *first,
        Rule(when_prompt="Greet me", reply=FIRE),
    )
    result: pytest.RunResult
    doc: dict[str, Any]
    result, doc = run_evals("-n0", "--eval-aa", "--eval-report", "report.html")
    return result, doc


def skills_fired(doc: dict[str, Any], arm: str) -> list[bool]:
    (case,) = doc["cases"]
    return [
        any(c["name"] == "Skill" and not c.get("isError") for c in run["toolCallList"])
        for run in case["arms"][arm]
    ]


def test_an_aa_session_reports_its_false_calls_and_gates_on_nothing_else(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """In one process (the controller gathering an A/A's figures from two workers is
    tests/integration/test_aa_session.py's)."""
    result, doc = aa_session(pytester, scripted_model, run_evals)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=4)
    # Both arms loaded the plugin under test: the skill loaded in every run of each.
    assert doc["suite"]["aa"] is True and doc["suite"]["ablation"] == "with-baseline"
    assert skills_fired(doc, "with") == [True] * 2
    assert skills_fired(doc, "baseline") == [True] * 2
    aa = doc["aa"]
    assert (aa["casesWithVerdict"], aa["casesCalled"], aa["wiringFaults"]) == (1, 0, [])
    assert aa["falseCallRate"] == 0.0
    assert aa["falseCallInterval"] == pytest.approx(list(clopper_pearson(0, 1) or ()))
    result.stdout.fnmatch_lines(
        [
            "BASE: the plugin under test again (--eval-aa: an A/A) · Δ = WITH − BASE",
            "--eval-aa: 0 of 1 case(s) with a verdict called a difference; false-call rate "
            "0.0% (exact 95% interval 0.0% to 97.5%) against the nominal 5%; *",
            "--eval-aa: an A/A session gates on its wiring faults only (none found)*",
        ]
    )
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert '<section id="aa">' in html and "No wiring fault" in html


def test_an_arm_that_never_fires_the_skill_is_a_wiring_fault(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    never = InArm(when_prompt="Greet me", arm="baseline", reply=text("Hello."))
    result, doc = aa_session(pytester, scripted_model, run_evals, never)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(passed=4)  # every run passed its graders: the wiring fails it
    assert skills_fired(doc, "with") == [True] * 2
    assert skills_fired(doc, "baseline") == [False] * 2
    (fault,) = doc["aa"]["wiringFaults"]
    assert (fault["case"], fault["arm"], fault["kind"]) == (
        "hello",
        "baseline",
        "skill_never_fired",
    )
    result.stdout.fnmatch_lines(
        [
            "--eval-aa wiring fault: case hello: the plugin's skill never fired in the baseline "
            "arm (0 of 2 run(s)), and fired in every run of the other (2 of 2)",
            "--eval-aa: 1 wiring fault(s) in 1 case(s) (hello): *",
        ]
    )
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert 'data-arm="baseline">Wiring fault: case hello' in html
