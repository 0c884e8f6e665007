"""Trigger accuracy on the public ``math-olympiad`` plugin's ``trigger_eval.json`` (a fixture,
with its licence), with the real ``claude`` binary: the with arm only, the confusion matrix, a
failed ``Skill`` call that does not count as firing, a sibling skill that fired instead."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Reply, Rule, ScriptedModel, text, tool_use

FIXTURE = Path(__file__).parent.parent / "fixtures" / "math-olympiad"
SIBLING = "---\nname: proof-notes\ndescription: Tidy up and simplify proofs.\n---\nNotes.\n"


def skill(name: str) -> Reply:
    return tool_use("Skill", {"skill": name})


@pytest.mark.parametrize("workers", ["-n2"])
def test_the_math_olympiad_trigger_suite(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any, workers: str
) -> None:
    shutil.copytree(FIXTURE, pytester.path, dirs_exist_ok=True)
    pytester.makefile(".md", **{"skills/proof-notes/SKILL": SIBLING})
    scripted_model.add(
        Rule(when_tool_result="Launching skill", reply=text("Working on it.")),
        Rule(when_tool_result="Unknown skill", reply=text("I could not load it.")),
        Rule(when_prompt="Find a counterexample", reply=text("Here is one.")),
        Rule(when_prompt="gap in this competition", reply=skill("math-olympiad:wrong-name")),
        Rule(when_prompt="Simplify this proof", reply=skill("math-olympiad:proof-notes")),
        Rule(when_prompt="Verify my solution to AIME", reply=skill("math-olympiad")),
        Rule(when_prompt="similar to AIME level", reply=skill("math-olympiad:math-olympiad")),
        *(
            Rule(when_prompt=word, reply=skill("math-olympiad:math-olympiad"))
            for word in (
                "Solve this IMO",
                "Putnam proof",
                "olympiad inequality",
                "USAMO",
                "conjecture from a math",
                "present this olympiad",
            )
        ),
        Rule(reply=text("Sure.")),
    )
    # The plugin ships the file in its skill's evals/ folder: collected from the plugin's root.
    (pytester.path / "evals").mkdir()
    result, doc = run_evals(workers, "--eval-runs", "1", "skills/math-olympiad/evals")
    (triggers,) = doc["triggers"]
    assert triggers["skill"] == "math-olympiad"
    assert triggers["matrix"] == {"tp": 7, "fp": 1, "fn": 3, "tn": 9}
    assert triggers["precision"]["value"] == pytest.approx(7 / 8)
    assert triggers["recall"]["value"] == pytest.approx(0.7)
    assert triggers["accuracy"]["value"] == pytest.approx(0.8)
    assert triggers["f1"]["value"] == pytest.approx(14 / 18)
    low, high = triggers["accuracy"]["interval"]
    assert low < 0.8 < high
    assert triggers["firedInstead"] == {"math-olympiad:proof-notes": 1}
    # The with arm only, one case per query.
    assert len(doc["cases"]) == 20
    assert all(set(c["arms"]) == {"with"} for c in doc["cases"])
    result.stdout.fnmatch_lines(
        [
            "TRIGGERS math-olympiad: 20 queries · TP 7 FP 1 FN 3 TN 9",
            "  precision 0.88 [[]0.53, 0.98] · recall 0.70 [[]0.40, 0.89] · "
            "f1 0.78 [[]0.52, 0.92] · accuracy 0.80 [[]0.58, 0.92]",
            "  fired instead: math-olympiad:proof-notes (1 run(s))",
        ]
    )
    result.stdout.fnmatch_lines(["  ✗ should trigger, rate 0/1: I think there's a gap*"])
