"""``--eval-agent copilot`` end to end: the real GitHub Copilot CLI against the scripted model.

Copilot speaks the Anthropic Messages API to a custom provider, so the scripted model serves it
as it is: the operator's usual Copilot variables (``COPILOT_PROVIDER_*``, ``COPILOT_MODEL``)
point it there, offline. Each test builds a small plugin with pytester and runs ``pytest evals``
as a plugin author would.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

import json

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.conftest import agent_cli
from tests.e2e.conftest import Run
from tests.e2e.release_kit import SKILL_MD, make_plugin, meta


def test_a_refused_key_is_an_auth_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run
) -> None:
    make_plugin(pytester, "", {"answer": "---\ntype: regex\npattern: x\n---\n"})
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_copilot("--eval-ablation", "none")
    result.assert_outcomes(errors=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "auth", run
    assert "401" in run["error"]


def test_max_turns_stops_a_run_that_goes_on(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run
) -> None:
    make_plugin(
        pytester,
        "allowed_tools: [Skill]\nmax_turns: 2\n",
        {"skill-fired": "---\ntype: tool_used\ntool: Skill\n---\n"},
    )
    # The model asks for the skill again and again: Copilot itself has no turn limit.
    scripted_model.add(Rule(reply=tool_use("skill", {"skill": "next-version"})))
    result, doc = run_copilot("--eval-ablation", "none")
    result.assert_outcomes(passed=1)  # graded on what it did
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["error"] == "reached max_turns (2): the run was stopped", run
    assert run["turns"] == 2
    assert 2 <= len(scripted_model.message_requests) <= 4  # not the endless loop it asked for


def test_a_package_json_case_that_lists_no_tools_still_gets_the_skill(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run
) -> None:
    """As Claude Code offers its Skill tool whatever a case lists; and the suite at the
    plugin's root must not hide the plugin from the with arm."""
    pytester.makefile(
        ".json",
        **{".claude-plugin/plugin": json.dumps({"name": "release-helper", "version": "1.2.0"})},
    )
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})
    evals = [
        {
            "name": "uses-the-skill",
            "input": "@release-helper We fixed two bugs since v1.4.0. What to release next?",
            "expected": [{"callsTool": "Skill"}, {"includes": "1.4.1"}],
        }
    ]
    pytester.makefile(
        ".json", package=json.dumps({"name": "release-helper", "ai": {"evals": evals}})
    )
    scripted_model.add(
        Rule(when_prompt="Bump the patch part", reply=text("1.4.1: fixes only.")),
        Rule(when_prompt="release next", reply=tool_use("skill", {"skill": "next-version"})),
    )
    result = pytester.runpytest(
        "package.json", "-p", "no:cacheprovider", "--eval-agent", "copilot",
        f"--eval-copilot-bin={agent_cli('copilot')}", "--eval-json", "out.json",
        "--eval-ablation", "none",
    )  # fmt: skip
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["error"] is None, run
    assert all(g["passed"] for g in run["graders"]), run["graders"]
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["isError"]) == ("Skill", False)
    result.assert_outcomes(passed=1)
