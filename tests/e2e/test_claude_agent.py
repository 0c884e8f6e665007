"""The default agent end to end: the real ``claude`` binary against the scripted model, offline.

Each test builds a small plugin with pytester, points the binary at a scripted model on
127.0.0.1 and runs ``pytest evals`` as a plugin author would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, error, text, tool_use
from tests.helpers import trace_diffs

SKILL = "release-helper:next-version"
LAUNCHED = f"Launching skill: {SKILL}"

SKILL_MD = """---
name: next-version
description: Work out the next semantic version. Use when asked which version to release.
---
Bump the patch part for fixes, the minor part for features.
"""

SESSION_HOOK = {
    "hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": 'env > "$PWD/agent-env.txt"'}]}]
    }
}


def make_plugin(
    pytester: pytest.Pytester,
    name: str = "release-helper",
    hooks: bool = False,
    prompt_extra: str = "",
    graders: dict[str, str] | None = None,
) -> None:
    pytester.makefile(
        ".json", **{".claude-plugin/plugin": json.dumps({"name": name, "version": "1.2.0"})}
    )
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})
    if hooks:
        pytester.makefile(".json", **{"hooks/hooks": json.dumps(SESSION_HOOK)})
    pytester.makefile(
        ".md",
        **{
            "evals/next/prompt": (
                "---\nruns: 1\nallowed_tools: [Skill]\n" + prompt_extra + "---\n"
                "We fixed two bugs since v1.4.0. Which version should we release next?\n"
            )
        },
    )
    for grader, body in (
        graders
        or {
            "answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
            "skill-fired": "---\ntype: tool_used\ntool: Skill\n---\n",
        }
    ).items():
        pytester.makefile(".md", **{f"evals/next/graders/{grader}": body})


def skill_rules() -> list[Rule]:
    return [
        Rule(when_tool_result=LAUNCHED, reply=text("1.4.1: fixes only.")),
        Rule(when_tool_result="Unknown skill", reply=text("Let us say 2.0.0.")),
        Rule(when_prompt="release next", reply=tool_use("Skill", {"skill": SKILL})),
    ]


def test_skill_fires_and_delta_is_right(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """Claude Code's session under two workers: the runs, graded in the workers, reach the
    controller's document and report."""
    make_plugin(pytester)
    scripted_model.add(*skill_rules())
    result, doc = run_evals("-n2", "--eval-report=report.html")
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    fired = {g["name"]: g for g in with_run["graders"]}["skill-fired"]
    assert fired["passed"] is True and fired["scored"] is False
    assert fired["explanation"] == "Skill called 1x (expected 1..∞)"
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    assert with_run["costUsd"] > 0
    # The without arm tried the skill and the binary had no such skill to give it.
    tool_results = [r["tool_result"] for r in scripted_model.message_requests if r["tool_result"]]
    assert any("Unknown skill" in t for t in tool_results)
    assert any(t.startswith(LAUNCHED) for t in tool_results)
    # The report's trace diff: the two runs part at the skill, then in their answers.
    (diff,) = trace_diffs((pytester.path / "report.html").read_text(encoding="utf-8")).values()
    assert diff["caption"].endswith("the most typical run of each arm. They part at step 0.")
    (first, with_skill, without_skill), answers = diff["rows"]
    assert (first, with_skill) == ("0 first divergence", f"skill loaded {SKILL}")
    assert without_skill.startswith(f'tool Skill {{"skill":"{SKILL}"}} error Unknown skill')
    assert answers == ["1 differs", "answer 1.4.1: fixes only.", "answer Let us say 2.0.0."]


def test_agent_cannot_read_a_grader_file(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_plugin(pytester)
    grader = pytester.path / "evals" / "next" / "graders" / "answer.md"
    scripted_model.add(
        Rule(when_tool_result="1.4.1", reply=text("I read the grader: 1.4.1")),
        Rule(when_tool_result="", reply=text("I could not read it.")),
        Rule(when_prompt="release next", reply=tool_use("Read", {"file_path": str(grader)})),
    )
    _, doc = run_evals("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["answer"] == "I could not read it."
    results = [r["tool_result"] for r in scripted_model.message_requests if r["tool_result"]]
    assert results and all("1\\.4\\.1" not in r for r in results)
    assert any("denied" in r for r in results)


def test_a_secret_of_the_operator_is_invisible_to_the_agent(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A SessionStart hook of the plugin writes the agent's environment into its cwd.
    make_plugin(
        pytester,
        hooks=True,
        prompt_extra="env: {EVAL_GREETING: hello}\n",
        graders={
            "no-secret": "---\ntype: regex\npattern: MY_SECRET_TOKEN\nmatch: not_contains\n"
            "target: {source: file, path: agent-env.txt}\n---\n",
            "case-env": "---\ntype: regex\npattern: EVAL_GREETING=hello\n"
            "target: {source: file, path: agent-env.txt}\n---\n",
        },
    )
    monkeypatch.setenv("MY_SECRET_TOKEN", "s3cr3t-value")
    scripted_model.add(Rule(reply=text("done")))
    result, doc = run_evals("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    verdicts = {g["name"]: g for g in run["graders"]}
    assert verdicts["no-secret"]["passed"] is True, verdicts
    assert verdicts["case-env"]["passed"] is True, verdicts
    kept = Path(run["tracePath"]).parent / "files" / "agent-env.txt"
    env_text = kept.read_text(encoding="utf-8")
    assert "s3cr3t-value" not in env_text
    home = next(line for line in env_text.splitlines() if line.startswith("HOME="))
    assert home.endswith("/home"), home  # the run's own home folder
    result.assert_outcomes(passed=1)


def test_timeout_kills_the_run_and_grades_what_it_produced(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_plugin(pytester, prompt_extra="timeout_seconds: 3\n")
    scripted_model.add(Rule(reply=text("too late") + delay(20)))
    result, doc = run_evals("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["error"] == "timed out after 3s"
    assert run["graders"], "a timed-out run is still graded"
    assert run["durationSeconds"] < 15
    result.assert_outcomes(failed=1)


def test_a_rate_limit_is_an_error_not_a_score(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """A rate limit (a refused key, the other kind, is tests/e2e/test_auth.py's)."""
    make_plugin(pytester)
    scripted_model.add(Rule(reply=error(429)))
    # Not made again (tests/e2e/test_rate_limits.py waits a burst out).
    result, doc = run_evals("--eval-ablation", "none", "--eval-rate-limit-retries", "0")
    result.assert_outcomes(errors=1)
    assert doc["partial"] is True
    assert doc["errors"] == {"rate_limit": 1}
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "rate_limit"
    assert doc["cases"][0]["aggregates"]["score"] is None
    assert result.ret != 0


def test_cost_ceiling_skips_the_rest_and_exits_2(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_plugin(pytester)
    scripted_model.add(*skill_rules())
    result, doc = run_evals(
        "--eval-ablation", "none", "--eval-runs", "3", "--eval-max-cost-usd", "0.001"
    )
    assert result.ret == 2
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*cost ceiling $0.001 reached*"])
    assert doc["partial"] is True and doc["partialReason"] == "cost_ceiling"
    assert len(doc["cases"][0]["arms"]["with"]) == 1


def test_a_plugin_that_does_not_load_is_an_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    # Claude Code refuses this manifest's name and runs without the plugin.
    make_plugin(pytester, name="Release Helper")
    scripted_model.add(*skill_rules())
    result, doc = run_evals()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*plugin Release Helper was not loaded*"])
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "plugin_load"
