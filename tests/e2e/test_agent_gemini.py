"""``--eval-agent gemini`` end to end: the real Gemini CLI against the scripted model, offline.

Gemini CLI speaks the Gemini API (``streamGenerateContent``), which the scripted model serves
too; the operator's usual variables (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``) point it
there. Each test builds a small plugin with pytester and runs ``pytest evals`` as a plugin
author would.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, first_requests
from tests.e2e.contract_kit import GEMINI_ACTIVATED as ACTIVATED
from tests.e2e.release_kit import make_skill_plugin as make_plugin


def test_a_linked_extension_does_not_hold_the_run_back_and_an_ungranted_shell_is_not_offered(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """``gemini extensions link`` can exit holding its project registry's lock; the run's CLI
    would wait 10 s for it to go stale before its first request (about every other run). The
    runs are compared with each other, not with a fixed time: on a loaded machine a run that
    waits for nothing takes more than 10 s too, but its sibling runs take about as long.

    The same runs' case lists Bash, which the session does not grant (no
    ``--eval-allow-tools``): no run is offered the shell."""
    make_plugin(
        pytester, tools="[Bash, Skill]", graders={"ok": "---\ntype: regex\npattern: OK\n---\n"}
    )
    result, doc = run_gemini("--eval-ablation", "none", "--eval-runs", "3")
    result.assert_outcomes(passed=3)
    runs = doc["cases"][0]["arms"]["with"]
    assert [r["score"] for r in runs] == [1.0, 1.0, 1.0]
    durations = [r["durationSeconds"] for r in runs]
    assert max(durations) - min(durations) < 8, durations
    firsts = first_requests(scripted_model.gemini_requests)
    assert len(firsts) == 3
    for first in firsts:
        assert "run_shell_command" not in first["tools"]
        assert {"activate_skill", "read_file", "glob"} <= set(first["tools"])


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
