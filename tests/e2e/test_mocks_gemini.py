"""MCP servers and their stand-ins under ``--eval-agent gemini``: the real Gemini CLI, confined
in bubblewrap, against the scripted model, through ``pytest evals`` as a plugin author runs it.

A tracker plugin declares three real servers (``tracker`` in ``.mcp.json``, ``people`` and
``wiki`` in its manifest) that only leave a marker file in the run's working folder when they
start; ``tracker`` and ``people`` have mocks, ``kb`` is a standalone mock. Gemini CLI names an
MCP tool ``mcp_<server>_<tool>``: the runs must record Claude Code's names.

Two sessions here also hold what Gemini CLI does with the tools a case lists (a Gemini CLI run
costs seconds of CPU): the mocks-off session's plugin has a skill, and the session disallows
it; the real-server session has a second case, whose call violates ``expect`` and which lists a
shell it is not granted.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.conftest import Run, first_requests
from tests.e2e.release_kit import SKILL_MD
from tests.e2e.tracker_kit import CREATE, LOOKUP, SEARCH, make_tracker, markers, people_server

#: The second case of the real-server session: its call violates ``expect``.
URGENT = "File an urgent bug: the app will not start."


def test_stand_ins_answer_with_claude_codes_names_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Found 1 page", reply=text("I found a page, no tracker.")),
        Rule(
            when_tool_offered="mcp_tracker_create_issue",
            reply=tool_use(
                "mcp_tracker_create_issue", {"title": "Crash on start", "priority": "high"}
            ),
        ),
        Rule(when_tool_offered="mcp_kb_search", reply=tool_use("mcp_kb_search", {"q": "crash"})),
    )
    result, doc = run_gemini()
    result.assert_outcomes(passed=2)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["error"] is None and without_run["error"] is None
    # The with arm: the shadow answered, under Claude Code's name, and was graded.
    (call,) = with_run["toolCallList"]
    assert call["name"] == CREATE and call["originalName"] == "mcp_tracker_create_issue"
    assert call["isError"] is False
    (served,) = with_run["mockCalls"]
    assert served["tool"] == CREATE and "Created issue #4821: Crash on start" in served["output"]
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["created"]["passed"] is True and verdicts["answer"]["passed"] is True
    assert with_run["mocks"]["calls"]["total"] == 1
    assert {s["server"]: s.get("withheld", False) for s in with_run["mocks"]["servers"]} == {
        "tracker": False,
        "people": False,
        "kb": False,
        "wiki": True,
    }
    # The without arm: only the standalone mock, which it called.
    (call,) = without_run["toolCallList"]
    assert call["name"] == SEARCH and call["originalName"] == "mcp_kb_search"
    (served,) = without_run["mockCalls"]
    assert served["tool"] == SEARCH and served["output"] == "Found 1 page for crash"
    # What each arm's first request offered.
    offered = [set(r["tools"]) for r in first_requests(scripted_model.gemini_requests)]
    with_tools = [t for t in offered if "mcp_tracker_create_issue" in t]
    without_tools = [t for t in offered if "mcp_tracker_create_issue" not in t]
    assert len(with_tools) == len(without_tools) == 1
    assert {"mcp_people_lookup", "mcp_kb_search"} <= with_tools[0]
    assert "mcp_kb_search" in without_tools[0]
    assert not {t for t in without_tools[0] if t.startswith(("mcp_tracker", "mcp_people"))}
    # Strict mocks: no real server started, in either arm (wiki had no mocks: withheld).
    assert markers(with_run) == markers(without_run) == set()


def test_mocks_off_starts_the_plugins_own_servers_and_a_disallowed_skill_is_not_offered(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """``--eval-mocks off``: the plugin's own servers start, the stand-ins and the standalone
    mock are off. The plugin has a skill too, which ``--eval-disallow-tools Skill`` removes
    (it is offered whatever a case lists, see ``test_agent_gemini.py``): not offered, so the
    model, which would call it, does not."""
    make_tracker(pytester)
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})
    scripted_model.add(
        Rule(
            when_tool_offered="activate_skill",
            reply=tool_use("activate_skill", {"name": "next-version"}),
        ),
        Rule(reply=text("nothing to do")),
    )
    _, doc = run_gemini(
        "--eval-ablation", "none", "--eval-mocks", "off", "--eval-disallow-tools", "Skill"
    )
    (run,) = doc["cases"][0]["arms"]["with"]
    assert markers(run) == {"real-tracker-started", "real-people-started", "real-wiki-started"}
    created = {g["name"]: g for g in run["graders"]}["created"]
    assert created["passed"] is False
    assert created["explanation"].startswith("no mock stand-ins were active")
    (first,) = first_requests(scripted_model.gemini_requests)
    assert not [t for t in first["tools"] if t.startswith("mcp_")]  # the mock kb is off too
    # The disallowed skill tool.
    assert "activate_skill" not in first["tools"] and "read_file" in first["tools"]
    assert run["toolCallList"] == [] and run["answer"] == "nothing to do"


def by_prompt(requests: list[dict[str, Any]], words: str) -> list[dict[str, Any]]:
    """The logged requests of the runs whose prompt holds ``words``."""
    return [r for r in requests if words in (r["prompt"] or "")]


def test_a_real_server_offers_only_the_tools_listed_and_granted_and_expect_aborts_a_call(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_gemini: Run
) -> None:
    """``--eval-allow-real-servers``: people (no mocks) is real, and Gemini CLI offers only
    the tool the case lists and the operator grants (``includeTools``).

    The session's second case, ``files-urgent``, calls the tracker's stand-in with a priority
    its ``expect`` refuses: the stand-in kills the run's processes (those carrying its token),
    Gemini CLI stops at the call, the run is ungraded. That case lists Bash and Skill, and the
    session grants neither: the shell is not offered, the skill tool is."""
    make_tracker(
        pytester,
        people=people_server("people"),
    )
    pytester.makefile(".md", **{"skills/next-version/SKILL": SKILL_MD})
    prompt = pytester.path / "evals" / "files-bug" / "prompt.md"
    prompt.write_text(
        prompt.read_text().replace("runs: 1\n", f"runs: 1\nallowed_tools: [{LOOKUP}]\n")
    )
    pytester.makefile(
        ".md",
        **{
            "evals/files-urgent/prompt": (
                f"---\nruns: 1\nallowed_tools: [Bash, Skill]\n---\n{URGENT}\n"
            ),
            "evals/files-urgent/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="(real)", reply=text("alice is on call.")),
        Rule(
            when_prompt="crashes on start",
            when_tool_offered="mcp_people_lookup",
            reply=tool_use("mcp_people_lookup", {}),
        ),
        Rule(when_prompt=URGENT, when_tool_result="", reply=text("Filed it anyway.")),
        Rule(
            when_prompt=URGENT,
            when_tool_offered="mcp_tracker_create_issue",
            reply=tool_use("mcp_tracker_create_issue", {"title": "Crash", "priority": "urgent"}),
        ),
    )
    result, doc = run_gemini(
        "--eval-ablation", "none", "--eval-allow-real-servers", "--eval-allow-tools", LOOKUP
    )
    cases = {c["name"]: c for c in doc["cases"]}
    (run,) = cases["files-bug"]["arms"]["with"]
    (call,) = run["toolCallList"]
    assert call["name"] == LOOKUP and call["originalName"] == "mcp_people_lookup"
    assert call["isError"] is False and run["answer"] == "alice is on call."
    asked = by_prompt(scripted_model.gemini_requests, "crashes on start")
    results = [r["tool_result"] for r in asked if r["tool_result"]]
    assert len(results) == 1 and "alice is on call (real)" in results[0]
    (first,) = first_requests(asked)
    assert "mcp_tracker_create_issue" in first["tools"]  # the stand-in still replaces tracker
    assert "mcp_people_delete_person" not in first["tools"]  # not listed: not offered
    # people started, confined (its marker is in the run's folder); wiki too (real allowed).
    assert markers(run) == {"real-people-started", "real-wiki-started"}

    (run,) = cases["files-urgent"]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None
    assert cases["files-urgent"]["aggregates"]["passed"] is False
    # Stopped at the call: the model never saw an answer to it.
    asked = by_prompt(scripted_model.gemini_requests, URGENT)
    assert asked and not [r for r in asked if r["tool_result"]]
    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])
    # Listed, not granted: no shell; the skill tool, and the readers, offered.
    (first,) = first_requests(asked)
    assert "run_shell_command" not in first["tools"]
    assert {"activate_skill", "read_file", "glob"} <= set(first["tools"])
    # files-bug fails too: nothing was filed.
    result.assert_outcomes(failed=2)
