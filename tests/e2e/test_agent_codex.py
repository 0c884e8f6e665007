"""``--eval-agent codex`` end to end: the real Codex CLI against the scripted model, offline.

Codex speaks only the OpenAI Responses API, which the scripted model serves too:
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (the operator's usual variables, through the
allowlist) become the run's model provider. Each test builds a small plugin with pytester and
runs ``pytest evals`` as a plugin author would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import CODEX_KEY as KEY
from tests.e2e.conftest import Run, by_session
from tests.e2e.release_kit import make_plugin, meta

#: How Codex lists the plugin's skill to the model (its developer message).
LISTED = "release-helper:next-version: Work out the next semantic version"
#: The skill's file, from the run's working directory (``home/cwd``) to its ``CODEX_HOME``
#: (``config/codex``), where the with arm installed the plugin: the model reads it with the
#: shell, as Codex tells it to.
SKILL_FILE = (
    "../../config/codex/plugins/cache/eval/release-helper/1.2.0/skills/next-version/SKILL.md"
)


def sessions(model: ScriptedModel) -> list[list[dict[str, Any]]]:
    """The logged Responses requests by Codex session (its ``session-id`` header)."""
    return list(by_session(model.responses_requests, "session-id").values())


def test_the_skill_fires_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    make_plugin(
        pytester,
        "allowed_tools: [Skill]\n",
        {
            "answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
            "skill-fired": "---\ntype: tool_used\ntool: Skill\n"
            "input_match: release-helper:next-version\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="Bump the patch part", reply=text("1.4.1: fixes only.")),
        # The without arm has no such file: any other tool result.
        Rule(when_tool_result="", reply=text("Let us say 2.0.0.")),
        Rule(
            when_prompt="release next",
            reply=tool_use("exec_command", {"cmd": f"cat {SKILL_FILE}"}),
        ),
    )
    result, doc = run_codex("-n0")
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    fired = {g["name"]: g for g in with_run["graders"]}["skill-fired"]
    assert fired["passed"] is True, fired
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    # Codex reports the tokens of both requests (1200 in, 40 out each) and no price.
    assert with_run["inputTokens"] == 2400 and with_run["outputTokens"] == 80
    assert with_run["costUsd"] == 0 and with_run["costUnknown"] is True
    assert doc["costUnknown"] is True
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Skill", "exec_command")
    # Codex runs the command in the user's shell: bash, wherever the sandbox's PATH has it.
    shell, _, command = call["input"]["command"].partition(" ")
    assert shell.endswith("/bash") and command == f"-lc 'cat {SKILL_FILE}'"
    assert call["input"]["skill"] == "release-helper:next-version"
    assert call["isError"] is False and "Bump the patch part" in call["output"]
    (missed,) = meta(without_run)["toolCalls"]
    assert (missed["name"], missed["originalName"]) == ("Bash", "exec_command")
    assert missed["isError"] is True
    # Two sessions; each starts with the prompt, and only the with arm's first request lists
    # the plugin's skill.
    runs = sessions(scripted_model)
    assert len(runs) == 2
    firsts = [r[0] for r in runs]
    assert all("release next" in r["prompt"] for r in firsts)
    assert all("exec_command" in r["tools"] for r in firsts)
    assert sorted(LISTED in r["system"] for r in firsts) == [False, True]


def test_the_default_model_calls_tools_from_code_and_they_are_recorded(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    """Codex's default model gets one freeform JavaScript tool, ``exec`` (code mode), through
    which it calls ``exec_command`` and ``apply_patch``; the scripted model turns the rules'
    ``tool_use`` into such scripts, and each nested call is recorded by its canonical name."""
    make_plugin(
        pytester,
        "allowed_tools: [Skill, Write]\n",
        {
            "skill-fired": "---\ntype: tool_used\ntool: Skill\n"
            "input_match: release-helper:next-version\n---\n",
            "wrote": "---\ntype: tool_used\ntool: Write\n---\n",
            "notes": "---\ntype: file_exists\npath: NOTES.md\n---\n",
        },
    )
    patch = "*** Begin Patch\n*** Add File: NOTES.md\n+1.4.1: fixes only.\n*** End Patch\n"
    scripted_model.add(
        Rule(
            when_tool_result="Bump the patch part",
            reply=tool_use("apply_patch", {"input": patch}),
            times=1,
        ),
        Rule(when_tool_result="", reply=text("1.4.1: fixes only.")),
        Rule(
            when_prompt="release next",
            when_tool_offered="exec_command",
            reply=tool_use("exec_command", {"cmd": f"cat {SKILL_FILE}"}),
        ),
    )
    result, doc = run_codex(
        "--eval-ablation", "none", "--eval-allow-tools", "Write", model=None
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["score"] == 1.0, run["graders"]
    calls = [(c["name"], c["originalName"]) for c in meta(run)["toolCalls"]]
    assert calls == [("Skill", "exec_command"), ("Write", "apply_patch")]
    assert "NOTES.md" in run["filesCreated"]
    # What Codex offered: ``exec`` (in an ``additional_tools`` input item, no ``tools``), the
    # others only from inside it; the calls went back as ``exec`` scripts.
    first, second, third = scripted_model.responses_requests
    assert "exec" in first["tools"] and "exec_command" not in first["tools"]
    assert {"exec_command", "apply_patch"} <= set(first["nested_tools"])
    assert not first["body"].get("tools")
    assert first["model"] != "fake-model"
    (call,) = [i for i in second["body"]["input"] if i.get("type") == "custom_tool_call"]
    assert call["name"] == "exec"
    assert call["input"].startswith("const result = await tools.exec_command(")
    assert "Bump the patch part" in second["tool_result"]
    assert third["tool_result"].startswith("Script completed")


def test_a_shell_call_is_recorded_and_the_operator_secret_stays_out(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_codex: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "codex-e2e-secret-4815162342"
    monkeypatch.setenv("PLUGIN_EVAL_TEST_SECRET_TOKEN", secret)
    make_plugin(
        pytester,
        "allowed_tools: [Bash]\n",
        {
            "shell": "---\ntype: tool_used\ntool: Bash\n---\n",
            "made": "---\ntype: file_exists\npath: made.txt\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="PWD=", reply=text("Done.")),
        Rule(
            when_prompt="release next",
            reply=tool_use("exec_command", {"cmd": "env; echo made > made.txt"}),
        ),
    )
    result, doc = run_codex("--eval-ablation", "none", "--eval-allow-tools", "Bash")
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Bash", "exec_command")
    assert "echo made > made.txt" in call["input"]["command"]
    assert "PWD=" in call["output"] and call["isError"] is False
    assert run["answer"] == "Done."
    # Neither the secret nor the API key reached the model: not in any request's body, and
    # the key only as the (redacted) authorization header.
    bodies = [json.dumps(r["body"]) for r in scripted_model.requests]
    assert len(bodies) == 2
    assert all(secret not in b and KEY not in b for b in bodies)
    assert all(r["headers"]["authorization"] == "<redacted>" for r in scripted_model.requests)


def test_the_shell_is_confined_to_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    """Codex's sandbox leaves reads open; bubblewrap around the whole CLI hides the operator's
    files (a file beside the project, the evals folder) and keeps writes in the run."""
    planted = pytester.path.parent / f"{pytester.path.name}-operator-notes.txt"
    planted.write_text("operator-only-7d1c", encoding="utf-8")
    make_plugin(
        pytester,
        "allowed_tools: [Bash, Write]\n",
        {"made": "---\ntype: file_exists\npath: made.txt\n---\n"},
    )
    outside = pytester.path / "escaped.txt"
    command = (
        f"echo made > made.txt; cat {planted} 2>&1; ls {pytester.path / 'evals'} 2>&1; "
        f"echo x > {outside} 2>&1; echo end"
    )
    scripted_model.add(
        Rule(when_tool_result="end", reply=text("Done.")),
        Rule(when_prompt="release next", reply=tool_use("exec_command", {"cmd": command})),
    )
    result, doc = run_codex(
        "--eval-ablation", "none", "--eval-allow-tools", "Bash", "--eval-allow-tools", "Write"
    )
    result.assert_outcomes(passed=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    (call,) = meta(run)["toolCalls"]
    assert "operator-only-7d1c" not in call["output"]
    assert "next" not in call["output"]  # the evals folder is empty, no case in it
    assert not outside.exists()
    assert "made.txt" in run["filesCreated"]


def test_a_rate_limit_is_an_infrastructure_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    make_plugin(pytester, "", {"any": "---\ntype: regex\npattern: x\n---\n"})
    scripted_model.add(Rule(reply=error(429)))
    result, doc = run_codex("--eval-ablation", "none", "--eval-rate-limit-retries", "1")
    result.assert_outcomes(errors=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "rate_limit"
    assert "429" in run["error"]
    # The session made the run twice; Codex itself did not retry (one request per run).
    assert [r["status"] for r in scripted_model.requests] == [429, 429]
