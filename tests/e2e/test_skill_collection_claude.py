"""The skill collection of ``tests/fixtures/text-tools`` under the real ``claude`` binary: its
staged skills are what Claude Code lists in the with arm (as ``<collection>:<skill>``), the root
``trigger_eval.json`` that names its skill measures that skill, and skill-creator's files run in
both arms, judged offline by the project's shipped rules (``--eval-judge openai``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from pytest_plugin_evals.testing.rules_file import read_rules

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "text-tools"
RULES = ROOT / "examples" / "scripted-rules" / "judge-and-init.yaml"


def test_a_skill_collection_under_claude_code(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (pytester's home is the project folder; a home folder is never a collection)
    monkeypatch.setenv("HOME", str(pytester.path / "elsewhere"))
    shutil.copytree(FIXTURE, pytester.path, dirs_exist_ok=True)
    # Two of the trigger file's twenty queries, one of each kind: what a trigger case is does
    # not depend on how many there are.
    trigger = pytester.path / "evals" / "trigger_eval.json"
    suite = json.loads(trigger.read_text(encoding="utf-8"))
    kept = [q for kind in (True, False) for q in suite["queries"] if q["should_trigger"] is kind]
    suite["queries"] = kept[:1] + kept[-1:]
    trigger.write_text(json.dumps(suite), encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scripted_model.add(*read_rules(RULES).rules)
    scripted_model.add(
        Rule(when_tool_result="Launching skill: ", reply=text("Done. CSV-SUMMARISED")),
        Rule(when_tool_result="Unknown skill", reply=text("I have no such skill.")),
        Rule(
            when_prompt=re.compile("(?i)word count"),
            reply=tool_use("Skill", {"skill": "word-count"}),
        ),
        Rule(when_prompt="csv summary", reply=tool_use("Skill", {"skill": "csv-summary"})),
    )
    result, doc = run_evals(
        "--eval-runs", "1", "--eval-judge", "openai", "--eval-judge-model", "scripted"
    )
    result.assert_outcomes(passed=8)
    (plugin,) = doc["suite"]["plugins"]
    name = pytester.path.name
    assert plugin["name"] == name and plugin["layout"] == "collection"
    cases = {c["name"]: c for c in doc["cases"]}
    assert cases["summarise-sales"]["aggregates"]["delta"] == 1.0
    triggers = [c for c in doc["cases"] if c["source"] == "trigger_eval"]
    assert len(triggers) == 2 and all(c["aggregates"]["score"] == 1.0 for c in triggers)
    # The with arm's requests list the collection's three skills under its name.
    listed = {
        skill
        for r in scripted_model.message_requests
        for skill in ("csv-summary", "slugify", "word-count")
        if f"{name}:{skill}" in str(r["body"])
    }
    assert listed == {"csv-summary", "slugify", "word-count"}
