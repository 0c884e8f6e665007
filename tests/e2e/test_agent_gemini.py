"""``--eval-agent gemini`` end to end: the real Gemini CLI against the scripted model, offline.

Gemini CLI speaks the Gemini API (``streamGenerateContent``), which the scripted model serves
too; the operator's usual variables (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``) point it
there. Each test builds a small plugin with pytester and runs ``pytest evals`` as a plugin
author would.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own. A case that
lists a shell it is not granted, and ``--eval-disallow-tools Skill``, are tested on the MCP
sessions of ``test_mocks_gemini.py`` (a Gemini CLI run costs seconds of CPU).
"""

from __future__ import annotations

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, first_requests
from tests.e2e.contract_kit import GEMINI_ACTIVATED as ACTIVATED
from tests.e2e.release_kit import make_skill_plugin as make_plugin


def test_the_skill_is_offered_unlisted_a_rate_limit_is_waited_out_and_no_run_is_held_back(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """Three runs of a case that lists no tools, the first refused once (429):

    * the skill tool is offered all the same, as Claude Code offers its Skill tool whatever a
      case lists, and the skill fires in every run;
    * the session waits the rate limit out and makes the refused run again (Gemini CLI gives
      up at the first 429 itself);
    * ``gemini extensions link`` can exit holding its project registry's lock; the run's CLI
      would wait 10 s for it to go stale before its first request (about every other run).
      The runs are compared with each other, not with a fixed time: on a loaded machine a run
      that waits for nothing takes more than 10 s too, but its sibling runs take about as
      long. The runs are made one at a time (``--eval-run-ahead off``): runs in flight
      together take longer than one alone, and the refused run is made again alone (a
      retried run's duration is its last attempt's)."""
    make_plugin(pytester, tools="[]")
    scripted_model.add(
        Rule(reply=error(429), times=1),
        Rule(when_tool_result=ACTIVATED, reply=text("1.4.1: fixes only.")),
        Rule(
            when_tool_offered="activate_skill",
            reply=tool_use("activate_skill", {"name": "next-version"}),
        ),
    )
    result, doc = run_gemini(
        "--eval-ablation", "none", "--eval-runs", "3", "--eval-run-ahead", "off"
    )
    result.assert_outcomes(passed=3)
    runs = doc["cases"][0]["arms"]["with"]
    assert [r["score"] for r in runs] == [1.0, 1.0, 1.0]
    for run in runs:
        verdicts = {g["name"]: g["passed"] for g in run["graders"]}
        assert verdicts == {"answer": True, "skill-fired": True}, run
        assert run["infraError"] is None, run
    # The rate limit: one run made again, once; Gemini CLI made one call in its refused
    # attempt (the session retries, not the CLI), then two in each run (the skill, the answer).
    assert sorted(r["retries"] for r in runs) == [0, 0, 1]
    assert [r["status"] for r in scripted_model.gemini_requests] == [429] + [200] * 6
    # The skill tool was offered in every attempt, the refused one too.
    firsts = first_requests(scripted_model.gemini_requests)
    assert len(firsts) == 4
    for first in firsts:
        assert "activate_skill" in first["tools"], first["tools"]
    durations = [r["durationSeconds"] for r in runs]
    assert max(durations) - min(durations) < 8, durations
