"""A bare skill (no plugin manifest) is the plugin under test, as ``claude plugin eval`` and
Claude Code's ``--plugin-dir`` load it: the real ``claude`` binary, two arms, Δ.

The skill is shaped like the ``pdf`` skill of the public skills repository (a folder holding
``SKILL.md`` and a ``forms.md`` it points to), written here: that skill's licence allows no copy.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

SKILL_MD = """---
name: pdf
description: Fill, merge and split PDF files. Use when the user works with a PDF form.
---
Read forms.md before filling a form. Always end with FORM-FILLED.
"""

FORMS_MD = "To fill a form: list its fields, then write the values. FIELDS-LISTED\n"

PROMPT = "---\nruns: 1\nallowed_tools: [Skill]\n---\nFill the fields of the PDF form intake.pdf\n"
GRADER = "---\ntype: regex\npattern: FORM-FILLED\n---\n"


def layout(pytester: pytest.Pytester, kind: str) -> None:
    """The skill in one of the layouts, its evals in ``evals/`` beside it."""
    where = {
        "skill": "",
        "skills": "skills/pdf/",
        "claude-skills": ".claude/skills/pdf/",
        "collection": "pdf/",
    }[kind]
    pytester.makefile(".md", **{f"{where}SKILL": SKILL_MD, f"{where}forms": FORMS_MD})
    pytester.makefile(".md", **{"evals/fill/prompt": PROMPT, "evals/fill/graders/done": GRADER})


def rules(model: ScriptedModel) -> None:
    model.add(
        Rule(when_tool_result="Launching skill", reply=text("All fields written. FORM-FILLED")),
        Rule(when_tool_result="Unknown skill", reply=text("I cannot fill PDF forms.")),
        Rule(when_prompt="PDF form", reply=tool_use("Skill", {"skill": "pdf"})),
    )


@pytest.mark.parametrize(
    ("kind", "workers", "named", "told"),
    [
        ("skill", "-n0", None, "a skill folder (SKILL.md, no plugin manifest)"),
        ("skills", "-n0", None, "a folder of skills (skills/*/SKILL.md, no plugin manifest)"),
        ("claude-skills", "-n0", ".claude", "a project's skills (.claude/skills/*/SKILL.md)"),
        ("collection", "-n2", None, "a skill collection (<skill>/SKILL.md folders, no plugin"),
    ],
)
def test_a_bare_skill_runs_in_two_arms(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Any,
    kind: str,
    workers: str,
    named: str | None,
    told: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (pytester's home is the project folder; a home's own .claude/skills is never a plugin)
    monkeypatch.setenv("HOME", str(pytester.path / "elsewhere"))
    layout(pytester, kind)
    rules(scripted_model)
    result, doc = run_evals(workers)
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    assert doc["suite"]["ablation"] == "with-without"
    (plugin,) = doc["suite"]["plugins"]
    name = named or pytester.path.name
    assert plugin["name"] == name and plugin["layout"] == kind
    assert case["aggregates"]["delta"] == 1.0
    assert case["arms"]["with"][0]["score"] == 1.0
    assert case["arms"]["without"][0]["score"] == 0.0
    # The with arm was offered the skill under the plugin's name, the without arm not at all.
    listed = [r for r in scripted_model.message_requests if f"{name}:pdf" in str(r["body"])]
    assert len(listed) == 2  # the with arm's two requests
    result.stdout.fnmatch_lines([f"PLUGIN: {name} at *{told}*; loaded in the with arm"])
    result.stdout.no_fnmatch_line("*no plugin found*")


def test_the_skill_reads_its_own_files(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    layout(pytester, "skill")
    forms = str(pytester.path / "forms.md")
    scripted_model.add(
        Rule(when_tool_result="FIELDS-LISTED", reply=text("FORM-FILLED")),
        Rule(when_tool_result="Launching skill", reply=tool_use("Read", {"file_path": forms})),
        Rule(when_prompt="PDF form", reply=tool_use("Skill", {"skill": "pdf"})),
    )
    _, doc = run_evals("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["score"] == 1.0, run


def test_no_plugin_is_one_line(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    # The home folder's own skills (pytester's home is the project folder) are not a plugin.
    pytester.makefile(".md", **{".claude/skills/pdf/SKILL": SKILL_MD})
    pytester.makefile(".md", **{"evals/fill/prompt": PROMPT, "evals/fill/graders/done": GRADER})
    rules(scripted_model)
    result, doc = run_evals()
    assert doc["suite"]["ablation"] == "none" and doc["suite"]["plugins"] == []
    lines = [line for line in result.outlines if "no plugin found" in line]
    assert len(lines) == 1
    assert lines[0].startswith("no plugin found: no .claude-plugin/plugin.json at or above ")
    assert "every case ran in one arm, with no plugin loaded (no Δ)" in lines[0]
