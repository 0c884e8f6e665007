"""``--eval-agent qwen`` end to end: the real Qwen Code against the scripted model, offline.

Qwen Code speaks the OpenAI chat completions API, which the scripted model serves; the
operator's usual variables (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``) point it
there. Each test builds a small plugin with pytester and runs ``pytest evals`` as a plugin
author would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import CODEX_KEY, Run, first_requests
from tests.e2e.release_kit import SKILL_LISTING
from tests.e2e.release_kit import make_skill_plugin as make_plugin
from tests.e2e.tracker_kit import CREATE, SEARCH, make_tracker, markers
from tests.helpers import FENCE_DONE, assert_fenced, fence_probe

#: What Qwen Code sends back when the skill loaded (its body inside).
LOADED = "Bump the patch part"


@pytest.mark.parametrize("workers", ["-n0", "-n2"])
def test_the_skill_fires_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run, workers: str
) -> None:
    make_plugin(pytester)
    scripted_model.add(
        Rule(when_tool_result=LOADED, reply=text("1.4.1: fixes only.")),
        Rule(when_tool_result="not found", reply=text("Let us say 2.0.0.")),
        Rule(
            when_prompt="release next",
            reply=tool_use("skill", {"skill": "release-helper:next-version"}),
        ),
    )
    result, doc = run_qwen(workers)
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    (call,) = with_run["toolCallList"]
    assert call["name"] == "Skill" and call["originalName"] == "skill"
    # Qwen Code's skill input is Claude Code's form already.
    assert json.loads(call["input"]) == {"skill": "release-helper:next-version"}
    assert with_run["inputTokens"] and with_run["outputTokens"]
    # It reports tokens and no price: the run says so.
    assert with_run["costUnknown"] is True
    assert "cost unknown: qwen reports tokens, no price" in with_run["notes"]
    # The with arm's first request lists the plugin's skill; the without arm's does not.
    firsts = first_requests(scripted_model.chat_requests)
    assert len(firsts) == 2
    listed = sorted(SKILL_LISTING in json.dumps(r["body"]) for r in firsts)
    assert listed == [False, True]
    assert all(r["model"] == "fake-model" for r in scripted_model.chat_requests)


def test_only_the_tools_the_run_may_use_are_offered(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    make_plugin(
        pytester, tools="[Bash, Skill]", graders={"ok": "---\ntype: regex\npattern: OK\n---\n"}
    )
    result, doc = run_qwen("--eval-ablation", "none")
    result.assert_outcomes(passed=1)
    firsts = [r for r in first_requests(scripted_model.chat_requests) if r["tools"]]
    assert firsts
    for first in firsts:
        offered = set(first["tools"])
        assert {"skill", "read_file", "glob", "grep_search"} <= offered
        assert not offered & {"run_shell_command", "write_file", "edit", "web_fetch", "agent"}
    (run,) = doc["cases"][0]["arms"]["with"]
    assert "not granted (add --eval-allow-tools): Bash" in run["notes"]


def test_a_shell_call_is_recorded_as_bash_and_confined(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    """Qwen Code's sandbox needs a container runtime: bubblewrap around the whole CLI holds
    the fences instead."""
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
    result, doc = run_qwen("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = run["toolCallList"]
    assert call["name"] == "Bash" and call["originalName"] == "run_shell_command"
    shown = [r["tool_result"] for r in scripted_model.chat_requests if r["tool_result"]]
    assert shown
    assert_fenced(shown[0], outside, "next")


def test_its_key_is_redacted_and_another_secret_is_invisible(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_qwen: Run,
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
        Rule(when_tool_result="HOME=", reply=text("done")),
        Rule(when_prompt="environment", reply=tool_use("run_shell_command", {"command": "env"})),
    )
    result, doc = run_qwen("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    shown = [r["tool_result"] for r in scripted_model.chat_requests if r["tool_result"]]
    assert shown and "HOME=" in shown[0]  # the environment did reach the model
    assert "s3cr3t-d3pl0y-value" not in json.dumps(scripted_model.requests)
    (run,) = doc["cases"][0]["arms"]["with"]
    kept = (Path(run["tracePath"]).parent / "meta.json").read_text(encoding="utf-8")
    assert "OPENAI_BASE_URL=" in kept  # the shell's environment is in the kept run …
    assert CODEX_KEY not in kept and CODEX_KEY not in json.dumps(doc)  # … its key is not
    assert "DEPLOY_SECRET" not in kept


def test_stand_ins_answer_with_claude_codes_names_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    """The plugin's servers (``.mcp.json``, its manifest's) are served by their stand-ins in
    the with arm, none of them starts for real; the standalone mock is there in both arms."""
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Found 1 page", reply=text("I found a page, no tracker.")),
        Rule(
            when_tool_offered="mcp__tracker__create_issue",
            reply=tool_use(
                "mcp__tracker__create_issue", {"title": "Crash on start", "priority": "high"}
            ),
        ),
        Rule(when_tool_offered="mcp__kb__search", reply=tool_use("mcp__kb__search", {"q": "x"})),
    )
    result, doc = run_qwen()
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["error"] is None and without_run["error"] is None, (with_run, without_run)
    result.assert_outcomes(passed=2)
    (call,) = with_run["toolCallList"]
    assert call["name"] == CREATE and call["originalName"] == "mcp__tracker__create_issue"
    (served,) = with_run["mockCalls"]
    assert served["tool"] == CREATE and "Created issue #4821: Crash on start" in served["output"]
    (call,) = without_run["toolCallList"]
    assert call["name"] == SEARCH
    offered = [set(r["tools"]) for r in first_requests(scripted_model.chat_requests) if r["tools"]]
    with_tools = [t for t in offered if "mcp__tracker__create_issue" in t]
    without_tools = [t for t in offered if "mcp__tracker__create_issue" not in t]
    assert len(with_tools) == len(without_tools) == 1
    assert "mcp__kb__search" in without_tools[0]
    assert not {t for t in without_tools[0] if t.startswith(("mcp__tracker", "mcp__people"))}
    # Strict mocks: no real server started, in either arm.
    assert markers(with_run) == markers(without_run) == set()


def test_a_rejected_key_is_an_infrastructure_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    make_plugin(pytester, graders={"ok": "---\ntype: regex\npattern: OK\n---\n"})
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_qwen("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "auth", run
    result.assert_outcomes(errors=1)
