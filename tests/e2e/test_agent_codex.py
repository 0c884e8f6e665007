"""``--eval-agent codex`` end to end: the real Codex CLI against the scripted model, offline.

Codex speaks only the OpenAI Responses API, which the scripted model serves too:
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (the operator's usual variables, through the
allowlist) become the run's model provider. Each test builds a small plugin with pytester and
runs ``pytest evals`` as a plugin author would.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run
from tests.e2e.contract_kit import CODEX_SKILL_FILE as SKILL_FILE
from tests.e2e.release_kit import make_plugin, meta

#: The session's second case, refused by the provider (429) at every request.
LIMITED = "Which version did we release last?"


def test_the_default_model_calls_tools_from_code_and_a_rate_limit_is_an_infrastructure_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_codex: Run
) -> None:
    """Codex's default model gets one freeform JavaScript tool, ``exec`` (code mode), through
    which it calls ``exec_command`` and ``apply_patch``; the scripted model turns the rules'
    ``tool_use`` into such scripts, and each nested call is recorded by its canonical name.

    The session's second case, ``limited``, is refused (429) at every request: the session
    makes it once more (``--eval-rate-limit-retries 1``), then it is an infrastructure error;
    Codex itself does not retry."""
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
    pytester.makefile(
        ".md",
        **{
            "evals/limited/prompt": f"---\nruns: 1\n---\n{LIMITED}\n",
            "evals/limited/graders/any": "---\ntype: regex\npattern: x\n---\n",
        },
    )
    patch = "*** Begin Patch\n*** Add File: NOTES.md\n+1.4.1: fixes only.\n*** End Patch\n"
    scripted_model.add(
        Rule(when_prompt=LIMITED, reply=error(429)),
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
        "--eval-ablation", "none", "--eval-allow-tools", "Write",
        "--eval-rate-limit-retries", "1", model=None,
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=1)
    cases = {c["name"]: c for c in doc["cases"]}
    (run,) = cases["next"]["arms"]["with"]
    assert run["score"] == 1.0, run["graders"]
    calls = [(c["name"], c["originalName"]) for c in meta(run)["toolCalls"]]
    assert calls == [("Skill", "exec_command"), ("Write", "apply_patch")]
    assert "NOTES.md" in run["filesCreated"]
    # What Codex offered: ``exec`` (in an ``additional_tools`` input item, no ``tools``), the
    # others only from inside it; the calls went back as ``exec`` scripts.
    first, second, third = by_prompt(scripted_model, "release next")
    assert "exec" in first["tools"] and "exec_command" not in first["tools"]
    assert {"exec_command", "apply_patch"} <= set(first["nested_tools"])
    assert not first["body"].get("tools")
    assert first["model"] != "fake-model"
    (call,) = [i for i in second["body"]["input"] if i.get("type") == "custom_tool_call"]
    assert call["name"] == "exec"
    assert call["input"].startswith("const result = await tools.exec_command(")
    assert "Bump the patch part" in second["tool_result"]
    assert third["tool_result"].startswith("Script completed")

    (run,) = cases["limited"]["arms"]["with"]
    assert run["infraError"] == "rate_limit"
    assert "429" in run["error"]
    # The session made the run twice; Codex itself did not retry (one request per run).
    assert [r["status"] for r in by_prompt(scripted_model, LIMITED)] == [429, 429]


def by_prompt(model: ScriptedModel, words: str) -> list[dict[str, Any]]:
    """The logged requests of the runs whose prompt holds ``words``."""
    return [r for r in model.requests if words in (r["prompt"] or "")]
