"""``--eval-agent copilot`` end to end: the real GitHub Copilot CLI against the scripted model.

Copilot speaks the Anthropic Messages API to a custom provider, so the scripted model serves it
as it is: the operator's usual Copilot variables (``COPILOT_PROVIDER_*``, ``COPILOT_MODEL``)
point it there, offline. Each test builds a small plugin with pytester and runs ``pytest evals``
as a plugin author would.
"""

from __future__ import annotations

import base64
import json

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from pytest_plugin_evals.testing.server import TEST_API_KEY
from tests.conftest import agent_cli
from tests.e2e.conftest import Run
from tests.e2e.release_kit import SKILL_LISTING, SKILL_MD, make_plugin, meta


def test_the_skill_fires_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run
) -> None:
    make_plugin(
        pytester,
        "allowed_tools: [Skill]\n",
        {
            "answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
            "skill-fired": "---\ntype: tool_used\ntool: Skill\n---\n",
        },
    )
    scripted_model.add(
        # The without arm has no such skill.
        Rule(when_tool_result="not found", reply=text("Let us say 2.0.0.")),
        # The with arm: Copilot sends the skill's body as a user message after the result.
        Rule(when_prompt="Bump the patch part", reply=text("1.4.1: fixes only.")),
        Rule(when_prompt="release next", reply=tool_use("skill", {"skill": "next-version"})),
    )
    result, doc = run_copilot("-n0")
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    fired = {g["name"]: g for g in with_run["graders"]}["skill-fired"]
    assert fired["passed"] is True, fired
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    # Copilot reports no tokens for a custom provider: unknown, not zero.
    assert with_run["inputTokens"] is None and with_run["outputTokens"] is None
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Skill", "skill")
    assert call["isError"] is False
    (missed,) = meta(without_run)["toolCalls"]
    assert missed["isError"] is True and "not found" in missed["output"]
    # Each arm's first request: only the with arm's lists the plugin's skill.
    firsts = [r for r in scripted_model.message_requests if r["tool_result"] is None]
    firsts = [r for r in firsts if "release next" in (r["prompt"] or "")]
    listed = [SKILL_LISTING in json.dumps(r["body"]) for r in firsts]
    assert sorted(listed) == [False, True], listed


def test_a_shell_call_is_recorded_and_the_operator_secret_stays_out(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_copilot: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_plugin(
        pytester,
        "allowed_tools: [Bash]\n",
        {"ran": "---\ntype: tool_used\ntool: Bash\n---\n"},
    )
    monkeypatch.setenv("MY_SECRET_TOKEN", "s3cr3t-value")
    monkeypatch.setenv("PLAIN_SETTING", "plain-value-42")
    scripted_model.add(
        Rule(when_tool_result="HOME=", reply=text("listed")),
        Rule(
            when_prompt="release next",
            reply=tool_use("bash", {"command": "env", "description": "List the environment"}),
        ),
    )
    result, doc = run_copilot("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Bash", "bash")
    assert call["input"]["command"] == "env"
    output = call["output"]
    home = next(line for line in output.splitlines() if line.startswith("HOME="))
    assert home.endswith("/home"), home  # the run's own home folder
    sent = json.dumps([r["body"] for r in scripted_model.message_requests])
    assert "HOME=" in sent  # the shell's output did reach the model
    # Not allowlisted: never reaches the agent, so never the model.
    assert "s3cr3t-value" not in sent and "plain-value-42" not in sent
    # The provider key reaches Copilot but not its shell (--secret-env-vars).
    assert "COPILOT_PROVIDER_API_KEY" not in output and TEST_API_KEY not in sent


def test_the_shell_is_confined_to_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_copilot: Run
) -> None:
    """The whole CLI runs inside bubblewrap: a file beside the project and the evals folder
    are out of sight, and nothing outside the run can be written."""
    planted = pytester.path.parent / f"{pytester.path.name}-operator-notes.txt"
    planted.write_text("operator-only-7d1c", encoding="utf-8")
    outside = pytester.path / "escaped.txt"
    make_plugin(
        pytester, "allowed_tools: [Bash]\n", {"ran": "---\ntype: tool_used\ntool: Bash\n---\n"}
    )
    script = (
        f"echo made > made.txt; cat {planted} 2>&1; ls {pytester.path / 'evals'} 2>&1; "
        f"echo x > {outside} 2>&1; echo end"
    )
    # Encoded, so Copilot's own path checks cannot see (and refuse) it: bubblewrap must hold.
    command = f"echo {base64.b64encode(script.encode()).decode()} | base64 -d | sh"
    scripted_model.add(
        Rule(when_tool_result="end", reply=text("Done.")),
        Rule(
            when_prompt="release next",
            reply=tool_use("bash", {"command": command, "description": "Try the fences"}),
        ),
    )
    result, doc = run_copilot("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = meta(run)["toolCalls"]
    assert "end" in call["output"]
    assert "operator-only-7d1c" not in call["output"]
    assert "next" not in call["output"]  # the evals folder is empty, no case in it
    assert not outside.exists()
    assert "made.txt" in run["filesCreated"]


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
