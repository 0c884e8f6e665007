"""``--eval-agent opencode`` end to end: the real opencode CLI against the scripted model.

opencode's built-in Anthropic provider speaks the Messages API, so the scripted model serves it
as it is: ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (the operator's usual variables,
through the allowlist) point it there, offline. Each test builds a plugin with MCP servers (and
their stand-ins), an agent and a hook with pytester, and runs ``pytest evals`` as a plugin
author would; sessions with the same options hold several cases, each with its own prompt and
rules, whose outcomes are asserted case by case.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, by_session
from tests.e2e.release_kit import meta
from tests.e2e.tracker_kit import CREATE, CREATE_MD, files_bug


def sessions(model: ScriptedModel) -> dict[str, list[dict[str, Any]]]:
    """The logged requests by opencode session (its ``x-session-id`` header), oldest first."""
    return by_session(model.message_requests, "x-session-id")


# MCP servers and the plugin's agents. The tracker plugin declares two servers (``tracker`` in
# ``.mcp.json``, ``people`` inline) that leave a marker file if they ever start, an agent and a
# hook; its mocks shadow both servers and add a standalone one (``kb``). opencode names an MCP
# tool ``<server>_<tool>``; the run's transcript carries Claude Code's name.

TRIAGER_MD = """---
name: triager
description: Files bugs in the tracker. Use for every bug report.
tools: Read, mcp__plugin_tracker-kit_tracker__create_issue
model: inherit
---
You triage bugs and file them.
"""


#: What a real server of the tracker leaves in the run's working directory (where opencode
#: starts it; the confined CLI can write nowhere else) when it starts.
MARKER = "real-server-started"


def case(name: str, prompt: str, front: str = "") -> dict[str, str]:
    """A case ``name`` asking ``prompt`` (for ``pytester.makefile(".md", **…)``), graded as
    ``files-bug`` is: on the tracker's mock call and the answer."""
    return {
        f"evals/{name}/prompt": f"---\nruns: 1\n{front}---\n{prompt}\n",
        f"evals/{name}/graders/created": (
            "---\ntype: regex\npattern: 'create_issue.*Crash on start'\ntarget: mock_calls\n---\n"
        ),
        f"evals/{name}/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
    }


def make_tracker(pytester: pytest.Pytester, cases: dict[str, str]) -> None:
    """tracker-kit with its servers, agent, hook and mocks, and ``cases`` (:func:`case`,
    :func:`~tests.e2e.tracker_kit.files_bug`)."""
    real = {"command": "sh", "args": ["-c", f"touch {MARKER}; exit 1"]}
    manifest = {"name": "tracker-kit", "version": "0.3.0", "mcpServers": {"people": real}}
    pytester.makefile(".json", **{".claude-plugin/plugin": json.dumps(manifest)})
    pytester.makefile(".json", **{".mcp": json.dumps({"mcpServers": {"tracker": real}})})
    pytester.makefile(".json", **{"hooks/hooks": json.dumps({"hooks": {}})})
    pytester.makefile(
        ".md",
        **{
            "agents/triager": TRIAGER_MD,
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/mocks/people/lookup": "alice is on call",
            "evals/mocks/kb/search": "No known issue.",
            **cases,
        },
    )


def first_requests(model: ScriptedModel, prompt: str) -> list[dict[str, Any]]:
    """The first request of each session whose prompt holds ``prompt``: what it was offered."""
    return [rs[0] for rs in sessions(model).values() if prompt in rs[0]["prompt"]]


def outcomes(result: pytest.RunResult) -> dict[str, str]:
    """Each item's outcome by its id (``evals/<case>::<case>[with-1]``), from ``-rA``'s lines."""
    found: dict[str, str] = {}
    for line in result.outlines:
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and rest.startswith("evals/"):
            found[rest.split(" - ", 1)[0]] = word
    return found


def agent_listed(request: dict[str, Any]) -> bool:
    """Whether the task tool of a first ``request`` offers the plugin's agent, as Claude Code
    names it."""
    task = [t for t in request["body"]["tools"] if t["name"] == "task"]
    return "tracker-kit:triager" in json.dumps(task)


def test_stand_ins_answer_and_the_real_servers_are_withheld(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """Both arms, under two workers: the stand-ins answer in the with arm; the without arm
    has the standalone mock only; the plugin's own servers start in neither; the plugin's
    agent is offered to the task tool (the case grants it) in the with arm only."""
    make_tracker(pytester, files_bug("allowed_tools: [Task]\n"))
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="", reply=text("I could not file it.")),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("tracker_create_issue", {"title": "Crash on start", "priority": "high"}),
        ),
    )
    result, doc = run_opencode("-n2")
    (arms,) = [c["arms"] for c in doc["cases"]]
    with_run, without_run = arms["with"][0], arms["without"][0]
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["created"]["passed"] is True, verdicts
    assert verdicts["answer"]["passed"] is True
    mocks = with_run["mocks"]
    kinds = {s["server"]: s["kind"] for s in mocks["servers"]}
    assert kinds == {"tracker": "shadow", "people": "shadow", "kb": "standalone"}, kinds
    assert mocks["calls"]["total"] == 1 and mocks["calls"]["errors"] == 0
    assert [c["tool"] for c in with_run["mockCalls"]] == [CREATE]
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == (CREATE, "tracker_create_issue")
    assert call["isError"] is False and "#4821" in call["output"]
    # The without arm does not load the plugin: no shadow there, the standalone mock is.
    assert without_run["answer"] == "I could not file it."
    (missed,) = meta(without_run)["toolCalls"]
    assert missed["isError"] is True or "unavailable tool" in (missed["output"] or "")
    firsts = first_requests(scripted_model, "File a bug")
    offered = sorted(tuple(r["tools"]) for r in firsts)
    assert offered == [
        (
            "glob",
            "grep",
            "kb_search",
            "people_lookup",
            "read",
            "skill",
            "task",
            "tracker_create_issue",
        ),
        ("glob", "grep", "kb_search", "read", "skill", "task"),
    ], offered
    # The plugin's agent: in the with arm's task tool only.
    listed = sorted(agent_listed(r) for r in firsts)
    assert listed == [False, True], listed
    # Strict: the plugin's own servers never started, in either arm.
    assert MARKER not in with_run["filesCreated"] + without_run["filesCreated"]
    # The plugin's hooks have no opencode form: the with arm says so.
    assert any("hooks" in n and "opencode" in n for n in with_run["notes"]), with_run["notes"]
    result.assert_outcomes(passed=2)


#: The cases of the session that runs the with arm only: ``aborts`` calls the tracker's
#: mocked tool against its ``expect``; ``delegates`` hands the bug to the plugin's agent,
#: which calls it.
URGENT = "Report an urgent crash: the app crashes on start."
DELEGATE = "Delegate this bug: the app crashes on start."
TASK = {
    "description": "file the bug",
    "prompt": "Triage: the app crashes on start",
    "subagent_type": "tracker-kit:triager",
}


def test_an_expect_violation_aborts_the_run_and_the_plugin_agent_is_a_subagent(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """One session, the with arm only, two cases. ``aborts``: the stand-in kills the run's
    processes (those carrying its token) at the call that violates ``expect``: opencode stops
    at the call, the run is ungraded, its item fails. ``delegates``: the plugin's agent runs
    within the run, with its own prompt and only the tools its ``tools`` lists that the run
    allows (that it is offered in the with arm only: the stand-ins' test)."""
    make_tracker(
        pytester,
        {**case("aborts", URGENT), **case("delegates", DELEGATE, "allowed_tools: [Task]\n")},
    )
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Filed as", reply=text("The triager filed #4821.")),
        Rule(when_prompt="urgent", when_tool_result="", reply=text("Filed it anyway.")),
        Rule(when_tool_result="", reply=text("No triager here.")),
        Rule(
            when_prompt="Triage:",
            reply=tool_use("tracker_create_issue", {"title": "Crash on start", "priority": "low"}),
        ),
        Rule(when_prompt="Delegate", reply=tool_use("task", TASK)),
        Rule(
            when_prompt="urgent",
            reply=tool_use("tracker_create_issue", {"title": "Crash", "priority": "urgent"}),
        ),
    )
    result, doc = run_opencode("-n0", "--eval-ablation", "none", "-rA")
    cases = {c["name"]: c for c in doc["cases"]}
    assert sorted(cases) == ["aborts", "delegates"], sorted(cases)

    # aborts: the call that violates expect aborts the run.
    (run,) = cases["aborts"]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }, run["aborted"]
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None, run
    # Stopped at the call: the model never saw an answer to it.
    (stopped,) = [rs for rs in sessions(scripted_model).values() if URGENT in rs[0]["prompt"]]
    assert all(r["tool_result"] is None for r in stopped), stopped
    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])

    # delegates: the plugin's agent is a subagent within the run.
    (run,) = cases["delegates"]["arms"]["with"]
    assert run["answer"] == "The triager filed #4821.", run["answer"]
    assert [c["tool"] for c in run["mockCalls"]] == [CREATE], run["mockCalls"]
    assert {g["name"]: g["passed"] for g in run["graders"]}["created"] is True, run["graders"]
    calls = {c["name"]: c for c in meta(run)["toolCalls"]}
    assert calls["Task"]["input"]["subagent_type"] == "tracker-kit:triager", calls
    (main,) = first_requests(scripted_model, DELEGATE)
    assert agent_listed(main), main["body"]["tools"]
    (sub,) = first_requests(scripted_model, "Triage:")
    assert "You triage bugs and file them." in sub["system"], sub["system"]
    # Read and the one mocked tool it lists: not glob, skill, task or the other servers'.
    assert sub["tools"] == ["read", "tracker_create_issue"], sub["tools"]
    assert MARKER not in run["filesCreated"]

    assert outcomes(result) == {
        "evals/aborts::aborts[1]": "FAILED",
        "evals/delegates::delegates[1]": "PASSED",
    }, outcomes(result)


def test_mocks_off_a_read_outside_the_run_and_a_refused_key(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """One session, mocks off, the with arm only. ``files-bug``: the plugin's own servers start
    when mocks are off, and the model's read of a file outside the run (a grader of the case)
    is refused. ``refused-key``: a 401 from the provider is the run's auth error (a refused key
    stops the session's later runs: the case sorts, and runs, last)."""
    make_tracker(
        pytester,
        {**files_bug(), **case("refused-key", "Refused: which version should we release?")},
    )
    grader = pytester.path / "evals" / "files-bug" / "graders" / "answer.md"
    scripted_model.add(
        Rule(when_prompt="Refused:", reply=error(401)),
        Rule(when_tool_result="#4821", reply=text("I read the grader: #4821")),
        Rule(when_tool_result="", reply=text("I could not read it.")),
        Rule(when_prompt="File a bug", reply=tool_use("read", {"filePath": str(grader)})),
    )
    result, doc = run_opencode("-n0", "--eval-ablation", "none", "--eval-mocks", "off", "-rA")
    cases = {c["name"]: c for c in doc["cases"]}

    # files-bug: the real servers started; the read outside the run was refused.
    (run,) = cases["files-bug"]["arms"]["with"]
    created = {g["name"]: g for g in run["graders"]}["created"]
    assert created["passed"] is False, created
    assert created["explanation"].startswith("no mock stand-ins were active"), created
    assert MARKER in run["filesCreated"], ("mocks off: the real servers start", run["filesCreated"])
    assert run["answer"] == "I could not read it.", run["answer"]
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"], call["isError"]) == ("Read", "read", True), call

    # refused-key: the 401 is an auth error, the item an error.
    (refused,) = cases["refused-key"]["arms"]["with"]
    assert refused["infraError"] == "auth", refused
    assert "401" in refused["error"] or "authentication" in refused["error"].lower(), refused
    assert outcomes(result) == {
        "evals/files-bug::files-bug[1]": "FAILED",
        "evals/refused-key::refused-key[1]": "ERROR",
    }, outcomes(result)
