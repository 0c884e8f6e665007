"""Trigger accuracy on the public ``math-olympiad`` plugin's ``trigger_eval.json`` (a fixture,
with its licence), with the real ``claude`` binary: the with arm only, the confusion matrix, a
failed ``Skill`` call that does not count as firing, a sibling skill that fired instead.

Eight of its twenty queries are kept, one of each outcome the rules give (the matrix's
arithmetic over many queries is the unit tests' of ``reporting.triggers``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Reply, Rule, ScriptedModel, text, tool_use

FIXTURE = Path(__file__).parent.parent / "fixtures" / "math-olympiad"
#: The queries kept (by their first words): two fire the skill (one by its bare name), one
#: answers, one calls a wrong name, one fires the sibling, one near miss fires it, two do not.
KEPT = (
    "Solve this IMO",
    "Verify my solution to AIME",
    "Find a counterexample",
    "I think there's a gap",
    "Simplify this proof",
    "Generate 10 practice problems",
    "Compute the integral",
    "Help me verify the time complexity",
)
SIBLING = "---\nname: proof-notes\ndescription: Tidy up and simplify proofs.\n---\nNotes.\n"


def skill(name: str) -> Reply:
    return tool_use("Skill", {"skill": name})


def test_the_math_olympiad_trigger_suite(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """In one process (the trigger figures under two workers are
    tests/integration/test_trigger_baseline.py's)."""
    shutil.copytree(FIXTURE, pytester.path, dirs_exist_ok=True)
    queries = pytester.path / "skills" / "math-olympiad" / "evals" / "trigger_eval.json"
    every = json.loads(queries.read_text(encoding="utf-8"))
    kept = [q for q in every if q["query"].startswith(KEPT)]
    assert len(kept) == len(KEPT)
    queries.write_text(json.dumps(kept), encoding="utf-8")
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
    result, doc = run_evals("--eval-runs", "1", "skills/math-olympiad/evals")
    (triggers,) = doc["triggers"]
    assert triggers["skill"] == "math-olympiad"
    assert triggers["matrix"] == {"tp": 2, "fp": 1, "fn": 3, "tn": 2}
    assert triggers["precision"]["value"] == pytest.approx(2 / 3)
    assert triggers["recall"]["value"] == pytest.approx(0.4)
    assert triggers["accuracy"]["value"] == pytest.approx(0.5)
    assert triggers["f1"]["value"] == pytest.approx(0.5)
    low, high = triggers["accuracy"]["interval"]
    assert low < 0.5 < high
    assert triggers["firedInstead"] == {"math-olympiad:proof-notes": 1}
    # The with arm only, one case per query.
    assert len(doc["cases"]) == 8
    assert all(set(c["arms"]) == {"with"} for c in doc["cases"])
    result.stdout.fnmatch_lines(
        [
            "TRIGGERS math-olympiad: 8 queries · TP 2 FP 1 FN 3 TN 2",
            "  precision 0.67 [[]0.21, 0.94] · recall 0.40 [[]0.12, 0.77] · "
            "f1 0.50 [[]0.18, 0.82] · accuracy 0.50 [[]0.22, 0.78]",
            "  fired instead: math-olympiad:proof-notes (1 run(s))",
        ]
    )
    result.stdout.fnmatch_lines(["  ✗ should trigger, rate 0/1: I think there's a gap*"])
