"""``--eval-agent gemini`` end to end: the real Gemini CLI against the scripted model, offline.

Gemini CLI speaks the Gemini API (``streamGenerateContent``), which the scripted model serves
too; the operator's usual variables (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``) point it
there. Each test builds a small plugin with pytester and runs ``pytest evals`` as a plugin
author would.
"""

from __future__ import annotations

import json

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, first_requests
from tests.e2e.release_kit import SKILL_LISTING
from tests.e2e.release_kit import make_skill_plugin as make_plugin
from tests.helpers import FENCE_DONE, assert_fenced, fence_probe

#: What Gemini CLI sends back when a skill loaded (its body inside).
ACTIVATED = '<activated_skill name="next-version">'
#: What it sends back when the skill asked for is not one it has.
UNKNOWN_SKILL = "must be equal to one of the allowed values"


def test_the_skill_fires_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    make_plugin(pytester)
    scripted_model.add(
        Rule(when_tool_result=ACTIVATED, reply=text("1.4.1: fixes only.")),
        Rule(when_tool_result=UNKNOWN_SKILL, reply=text("Let us say 2.0.0.")),
        Rule(
            when_prompt="release next", reply=tool_use("activate_skill", {"name": "next-version"})
        ),
    )
    result, doc = run_gemini("-n0")
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    fired = {g["name"]: g for g in with_run["graders"]}["skill-fired"]
    assert fired["passed"] is True
    (call,) = with_run["toolCallList"]
    assert call["name"] == "Skill" and call["originalName"] == "activate_skill"
    # Claude Code's form is added, so an input_match written for claude means the same here.
    assert json.loads(call["input"]) == {
        "name": "next-version",
        "skill": "release-helper:next-version",
    }
    assert with_run["inputTokens"] == 2 * scripted_model.usage[0]
    # The with arm's first request lists the plugin's skill; the without arm's does not.
    firsts = first_requests(scripted_model.gemini_requests)
    assert len(firsts) == 2
    listed = [SKILL_LISTING in r["system"] for r in firsts]
    assert sorted(listed) == [False, True]
    assert all(r["model"] == "gemini-2.5-flash" for r in scripted_model.gemini_requests)
    results = [r["tool_result"] for r in scripted_model.gemini_requests if r["tool_result"]]
    assert any(ACTIVATED in t and "Bump the patch part" in t for t in results)
    assert any(UNKNOWN_SKILL in t for t in results)


def test_a_linked_extension_does_not_hold_the_run_back(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """``gemini extensions link`` can exit holding its project registry's lock; the run's CLI
    would wait 10 s for it to go stale before its first request (about every other run)."""
    make_plugin(pytester, graders={"ok": "---\ntype: regex\npattern: OK\n---\n"})
    result, doc = run_gemini("--eval-ablation", "none", "--eval-runs", "3")
    result.assert_outcomes(passed=3)
    runs = doc["cases"][0]["arms"]["with"]
    assert [r["score"] for r in runs] == [1.0, 1.0, 1.0]
    assert all(r["durationSeconds"] < 9 for r in runs), [r["durationSeconds"] for r in runs]


def test_the_skill_tool_is_offered_when_the_case_lists_no_tools(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """As Claude Code offers its Skill tool whatever a case lists; disallowing it removes it."""
    make_plugin(pytester, tools="[]")
    scripted_model.add(
        Rule(when_tool_result=ACTIVATED, reply=text("1.4.1: fixes only.")),
        Rule(
            when_tool_offered="activate_skill",
            reply=tool_use("activate_skill", {"name": "next-version"}),
        ),
    )
    result, doc = run_gemini("--eval-ablation", "none")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert {g["name"]: g["passed"] for g in run["graders"]} == {"answer": True, "skill-fired": True}
    (first,) = first_requests(scripted_model.gemini_requests)
    assert "activate_skill" in first["tools"]
    _, doc = run_gemini("--eval-ablation", "none", "--eval-disallow-tools", "Skill")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["toolCallList"] == [] and run["answer"] == "OK"
    _, first = first_requests(scripted_model.gemini_requests)
    assert "activate_skill" not in first["tools"] and "read_file" in first["tools"]


def test_a_shell_call_is_recorded_as_bash(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    make_plugin(
        pytester,
        tools="[Bash]",
        graders={"ran": "---\ntype: tool_used\ntool: Bash\n---\n"},
        prompt="Say hello from the shell.",
    )
    scripted_model.add(
        Rule(when_tool_result="hello-from-shell", reply=text("The shell said hello.")),
        Rule(
            when_prompt="hello from the shell",
            reply=tool_use("run_shell_command", {"command": "echo hello-from-shell"}),
        ),
    )
    result, doc = run_gemini("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = run["toolCallList"]
    assert call["name"] == "Bash" and call["originalName"] == "run_shell_command"
    assert json.loads(call["input"]) == {"command": "echo hello-from-shell"}
    assert run["answer"] == "The shell said hello."
    (first,) = first_requests(scripted_model.gemini_requests)
    assert "run_shell_command" in first["tools"]
    assert "write_file" not in first["tools"]  # not listed by the case: not offered


def test_the_shell_is_confined_to_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """Gemini's sandbox needs a container runtime: bubblewrap around the whole CLI holds the
    fences instead."""
    make_plugin(
        pytester,
        tools="[Bash]",
        graders={"ran": "---\ntype: tool_used\ntool: Bash\n---\n"},
        prompt="Try the fences.",
    )
    command, _, outside = fence_probe(pytester.path)
    scripted_model.add(
        Rule(when_tool_result=FENCE_DONE, reply=text("Done.")),
        Rule(when_prompt="fences", reply=tool_use("run_shell_command", {"command": command})),
    )
    result, _ = run_gemini("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    shown = [r["tool_result"] for r in scripted_model.gemini_requests if r["tool_result"]]
    assert shown
    assert_fenced(shown[0], outside, "next")


def test_without_a_grant_the_shell_is_not_offered(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    make_plugin(
        pytester, tools="[Bash, Skill]", graders={"ok": "---\ntype: regex\npattern: OK\n---\n"}
    )
    result, _ = run_gemini("--eval-ablation", "none")
    result.assert_outcomes(passed=1)
    (first,) = first_requests(scripted_model.gemini_requests)
    assert "run_shell_command" not in first["tools"]
    assert {"activate_skill", "read_file", "glob"} <= set(first["tools"])


def test_a_secret_of_the_operator_is_invisible_to_the_agent(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_gemini: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEPLOY_SECRET", "s3cr3t-d3pl0y-value")
    make_plugin(
        pytester,
        tools="[Bash]",
        graders={"ok": "---\ntype: regex\npattern: done\n---\n"},
        prompt="Show me your environment.",
    )
    scripted_model.add(
        Rule(when_tool_result="GEMINI_CLI_HOME=", reply=text("done")),
        Rule(when_prompt="environment", reply=tool_use("run_shell_command", {"command": "env"})),
    )
    result, _ = run_gemini("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    shown = [r["tool_result"] for r in scripted_model.gemini_requests if r["tool_result"]]
    assert shown and "HOME=" in shown[0]  # the environment did reach the model
    assert "s3cr3t-d3pl0y-value" not in json.dumps(scripted_model.requests)
    assert "DEPLOY_SECRET" not in shown[0]


def test_a_rate_limit_is_waited_out_by_the_session(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    make_plugin(pytester, graders={"ok": "---\ntype: regex\npattern: OK\n---\n"})
    scripted_model.add(Rule(reply=error(429), times=1))
    result, doc = run_gemini("--eval-ablation", "none")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["retries"] == 1 and run["infraError"] is None
    # Gemini CLI gave up at the first 429 (the session retries): two calls in all.
    assert [r["status"] for r in scripted_model.gemini_requests] == [429, 200]
