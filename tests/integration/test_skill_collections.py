"""Plugins as their authors lay them out, run from their folders with no file moved
(``tests/fixtures``, written for these tests): a skill collection — ``<skill>/SKILL.md``
folders at the top, no manifest, root ``evals/`` files naming their skill (skill-creator's
``evals.json``, a ``<skill>-evals.json``, a 20-query ``trigger_eval.json``) — loads as a plugin
of its skills in the with arm; a plugin of seven skills, three agents and a command runs the
evals kept in its skills' folders; ``init`` drafts for the collection; and a JSON/YAML file
under ``evals/`` that is no suite is one line saying why it was not read.

The OpenAI SDK is imported by a module-scoped fixture, once for the module, before any session:
the judge imports it only when chosen, which here is inside an in-process session, and each such
session drops the modules first imported in it, so every session would import it again."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import ScriptedModel
from pytest_plugin_evals.testing.rules_file import read_rules
from tests.helpers import run_command

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
AGENT = ROOT / "tests" / "agents" / "skill_agent.py"
RULES = ROOT / "examples" / "scripted-rules" / "judge-and-init.yaml"


@pytest.fixture(scope="module", autouse=True)
def _sdk_imported() -> None:
    """Import the OpenAI SDK before the first session (see the module's docstring)."""
    import openai  # noqa: F401


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The ``openai`` judge against the scripted model, answered by the shipped rules."""
    rules = read_rules(RULES)
    with ScriptedModel(rules.rules, default_text=rules.default_text) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield ["--eval-judge", "openai", "--eval-judge-model", "scripted"]


def copy(pytester: pytest.Pytester, name: str) -> Path:
    target = pytester.path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def agent() -> str:
    return "cmd:" + shlex.join([sys.executable, str(AGENT)])


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["name"]: case for case in doc["cases"]}


def test_a_skill_collection_runs_in_both_arms_with_no_file_moved(
    pytester: pytest.Pytester, judge: list[str], read_doc: Any
) -> None:
    kit = copy(pytester, "text-tools")
    before = sorted(p.relative_to(kit) for p in kit.rglob("*"))
    result = pytester.runpytest(
        "text-tools/evals", "-p", "no:cacheprovider", "--eval-agent", agent(), *judge,
        "--eval-runs", "1", "--eval-json", "out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=26)
    result.stdout.fnmatch_lines(
        ["PLUGIN: text-tools at *a skill collection (<skill>/SKILL.md folders, no plugin*"]
    )
    doc = read_doc()
    (plugin,) = doc["suite"]["plugins"]
    assert plugin["name"] == "text-tools" and plugin["layout"] == "collection"
    cases = by_name(doc)
    assert len(cases) == 23
    # The directory case and the skill-creator files: both arms, the skill only in the with arm.
    sales = cases["summarise-sales"]
    assert sales["aggregates"]["delta"] == 1.0
    # Each skill's evals count from 1: a root file's cases are named for its skill.
    for name in ("summarise-sales", "csv-summary-eval-1", "slugify-eval-1"):
        assert set(cases[name]["arms"]) == {"with", "without"}, name
    # The 20 queries of the root trigger_eval.json test word-count, in the with arm only.
    triggers = [c for c in doc["cases"] if c["source"] == "trigger_eval"]
    assert len(triggers) == 20
    assert all(list(c["arms"]) == ["with"] for c in triggers)
    assert all(c["aggregates"]["score"] == 1.0 for c in triggers)
    # Nothing was written in the collection but its results.
    after = sorted(p.relative_to(kit) for p in kit.rglob("*") if "results" not in p.parts)
    assert after == [p for p in before if "results" not in p.parts]


def test_a_plugin_of_seven_skills_runs_its_evals_where_they_are(
    pytester: pytest.Pytester, judge: list[str], read_doc: Any
) -> None:
    copy(pytester, "project-kit")
    result = pytester.runpytest(
        "project-kit/evals", "project-kit/skills", "-p", "no:cacheprovider",
        "--eval-agent", agent(), *judge, "--eval-runs", "1", "--eval-json", "out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    doc = read_doc()
    (plugin,) = doc["suite"]["plugins"]
    assert plugin["name"] == "project-kit" and plugin.get("layout", "manifest") == "manifest"
    cases = by_name(doc)
    assert cases["notes-for-2-0"]["aggregates"]["delta"] == 1.0
    assert {c["source"] for c in doc["cases"]} == {"prose", "skill_creator", "trigger_eval"}
    assert all(
        c["aggregates"]["score"] == 1.0 for c in doc["cases"] if c["source"] == "trigger_eval"
    )


def test_init_drafts_for_a_skill_collection(pytester: pytest.Pytester, judge: list[str]) -> None:
    kit = copy(pytester, "text-tools")
    done = run_command(kit, "init", *judge, "--no-pilot")
    assert done.ret == 0, done.stdout.str() + done.stderr.str()
    lines = done.outlines
    assert lines[0] == (
        "init: read text-tools: 3 skills (csv-summary, slugify, word-count), no commands, "
        "no agents, no MCP servers"
    )
    for skill in ("csv-summary", "slugify", "word-count"):
        assert (kit / "evals" / f"{skill}-asks-for-it" / "prompt.md").is_file()
        assert (kit / skill / "evals" / "trigger_eval.json").is_file()
    assert "  and for trigger accuracy: pytest word-count/evals/" in lines


def test_a_file_under_evals_that_is_no_suite_is_one_line_saying_why(
    pytester: pytest.Pytester, judge: list[str]
) -> None:
    kit = copy(pytester, "text-tools")
    (kit / "evals" / "notes.json").write_text('{"owner": "me"}\n', encoding="utf-8")
    (kit / "evals" / "data").mkdir()
    (kit / "evals" / "data" / "rows.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    (kit / "evals" / "trigger_eval.json").write_text(
        '[{"query": "Word count of a.txt", "should_trigger": true}]\n', encoding="utf-8"
    )
    result = pytester.runpytest(
        "text-tools/evals", "-p", "no:cacheprovider", "--eval-agent", agent(), *judge,
        "--eval-runs", "1", "--eval-case", "summarise*",
    )  # fmt: skip
    result.assert_outcomes(passed=2, errors=1)  # a case filter keeps load errors visible
    result.stdout.fnmatch_lines(
        [
            "text-tools/evals/data/rows.yaml: not read: it is a list, not a suite — a suite is "
            "a mapping with a cases: list, skill-creator's evals.json (an evals list), or a "
            "trigger_eval.json",
            "text-tools/evals/notes.json: not read: it is a mapping without a cases: or evals: "
            "list (its keys: owner), not a suite — *",
        ],
        consecutive=False,
    )
    # A trigger list at a collection's root must name its skill: one line that says how.
    result.stdout.fnmatch_lines(
        [
            'text-tools/evals/trigger_eval.json:1: name the skill it tests: {"skill_name": '
            '"<skill>", "queries": [[]...[]]} (the skills of text-tools: csv-summary, slugify, '
            "word-count)"
        ]
    )
    assert "Traceback" not in result.stdout.str()
